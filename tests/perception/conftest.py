"""Fixtures shared by the perception tests."""

import pytest

from bt_raider.perception.tools import (
    default_tools,
)
from bt_raider.perception.toolset import ToolSet


@pytest.fixture
def tools() -> ToolSet:
    return default_tools()
