"""bt_raider: behaviour-tree guards that check, explain and recover robot actions.

Public names are imported lazily so that ``import bt_raider.errors`` (used by the ground-floor
packages) does not pull in the whole core.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "BtRaiderError": "bt_raider.errors",
    "Verdict": "bt_raider.verdict",
    "Category": "bt_raider.verdict",
    "Response": "bt_raider.verdict",
    "ToolCall": "bt_raider.verdict",
    "Query": "bt_raider.checker",
    "Checker": "bt_raider.checker",
    "check": "bt_raider.checker",
    "make_checker": "bt_raider.checker",
    "Robot": "bt_raider.actions",
    "ActionBehaviour": "bt_raider.actions",
    "Var": "bt_raider.actions",
    "Scene": "bt_raider.perception.scene",
    "RaiderAgent": "bt_raider.agent",
    "make_chat": "bt_raider.chat",
    "SymbolicReasoner": "bt_raider.symbolic",
    "RaiderGuard": "bt_raider.guards",
    "guard_tree": "bt_raider.guards",
    "Recovery": "bt_raider.recovery",
    "SymbolicRecovery": "bt_raider.recovery",
    "LLMRecovery": "bt_raider.recovery",
    "ScriptedHuman": "bt_raider.human",
    "ConsoleHuman": "bt_raider.human",
    "SharedGoalGuard": "bt_raider.shared_goal",
    "Validator": "bt_raider.validator",
    "Message": "bt_raider.messaging",
    "InProcessHub": "bt_raider.messaging",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bt_raider' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
