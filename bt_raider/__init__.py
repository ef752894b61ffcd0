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
    "Verdict": "bt_raider.checking.verdict",
    "Category": "bt_raider.checking.verdict",
    "Response": "bt_raider.checking.verdict",
    "ToolCall": "bt_raider.checking.verdict",
    "Query": "bt_raider.checking.contract",
    "Checker": "bt_raider.checking.contract",
    "check": "bt_raider.checking.registry",
    "make_checker": "bt_raider.checking.registry",
    "register_checker": "bt_raider.checking.registry",
    "Robot": "bt_raider.runtime.actions",
    "ActionBehaviour": "bt_raider.runtime.actions",
    "Var": "bt_raider.runtime.actions",
    "SyncRobot": "bt_raider.runtime.actions",
    "Progress": "bt_raider.runtime.actions",
    "ActionState": "bt_raider.runtime.actions",
    "ResolvedAction": "bt_raider.runtime.retarget",
    "Retargetable": "bt_raider.runtime.retarget",
    "Scene": "bt_raider.perception.scene",
    "RaiderAgent": "bt_raider.checking.agent",
    "make_chat": "bt_raider.llm.chat",
    "SymbolicReasoner": "bt_raider.checking.symbolic",
    "RaiderGuard": "bt_raider.runtime.guards",
    "guard_tree": "bt_raider.runtime.guards",
    "LookAhead": "bt_raider.runtime.lookahead",
    "SceneForecaster": "bt_raider.runtime.lookahead",
    "Forecast": "bt_raider.runtime.lookahead",
    "Recovery": "bt_raider.recovery.pipeline",
    "SymbolicRecovery": "bt_raider.recovery.symbolic",
    "LLMRecovery": "bt_raider.recovery.llm",
    "ScriptedHuman": "bt_raider.runtime.human",
    "ConsoleHuman": "bt_raider.runtime.human",
    "SharedGoalGuard": "bt_raider.runtime.shared_goal",
    "Validator": "bt_raider.cooperation.validator",
    "Message": "bt_raider.cooperation.messaging",
    "InProcessHub": "bt_raider.cooperation.messaging",
    "TraceRecorder": "bt_raider.viewer.recorder",
    "ViewerServer": "bt_raider.viewer.server",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bt_raider' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
