"""Shared fixtures: paths to ../shared (read-only) and fresh copies of the real scene."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
KITCHEN = SHARED / "scenes" / "floorplan1_kitchen.json"
PDDL = SHARED / "pddl"


@pytest.fixture
def kitchen_dict() -> dict:
    """A fresh dict of the real FloorPlan1 kitchen (tests may change it freely)."""
    return json.loads(KITCHEN.read_text())


@pytest.fixture
def kitchen(kitchen_dict):
    from bt_raider.perception.scene import Scene

    return Scene(kitchen_dict, source=str(KITCHEN))
