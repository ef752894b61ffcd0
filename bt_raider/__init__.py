"""bt_raider: behaviour-tree guards that check, explain and recover robot actions.

The names a newcomer needs first are importable from here::

    from bt_raider import RaiderGuard, Recovery, ScriptedHuman, SymbolicReasoner

Every other public name has one import path, in its subpackage (``docs/api.md``). The names
below are loaded on first use, so ``import bt_raider`` (and ``import bt_raider.errors``, which
the ground-floor packages use) costs next to nothing; type checkers read the imports under
``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bt_raider.checking.registry import check as check
    from bt_raider.checking.registry import make_checker as make_checker
    from bt_raider.checking.symbolic import SymbolicReasoner as SymbolicReasoner
    from bt_raider.checking.verdict import Verdict as Verdict
    from bt_raider.errors import BtRaiderError as BtRaiderError
    from bt_raider.recovery.pipeline import Recovery as Recovery
    from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner as SymbolicRecoveryPlanner
    from bt_raider.robot.actions import ActionBehaviour as ActionBehaviour
    from bt_raider.robot.actions import ActionState as ActionState
    from bt_raider.robot.actions import Progress as Progress
    from bt_raider.robot.actions import Robot as Robot
    from bt_raider.robot.human import ScriptedHuman as ScriptedHuman
    from bt_raider.runtime.guards import RaiderGuard as RaiderGuard
    from bt_raider.runtime.guards import guard_tree as guard_tree
    from bt_raider.testing.run import run_tree as run_tree

__version__ = "0.2.0"

#: The first names: name -> the module that defines it (its one documented path).
_EXPORTS = {
    "BtRaiderError": "bt_raider.errors",
    "check": "bt_raider.checking.registry",
    "make_checker": "bt_raider.checking.registry",
    "SymbolicReasoner": "bt_raider.checking.symbolic",
    "Verdict": "bt_raider.checking.verdict",
    "RaiderGuard": "bt_raider.runtime.guards",
    "guard_tree": "bt_raider.runtime.guards",
    "Recovery": "bt_raider.recovery.pipeline",
    "SymbolicRecoveryPlanner": "bt_raider.recovery.symbolic",
    "ScriptedHuman": "bt_raider.robot.human",
    "Robot": "bt_raider.robot.actions",
    "ActionBehaviour": "bt_raider.robot.actions",
    "ActionState": "bt_raider.robot.actions",
    "Progress": "bt_raider.robot.actions",
    "run_tree": "bt_raider.testing.run",
}

#: Names this package exported before 0.2, kept for one release with a DeprecationWarning:
#: old name -> (module, name there).
_DEPRECATED = {
    "Category": ("bt_raider.checking.verdict", "Category"),
    "Response": ("bt_raider.checking.verdict", "Response"),
    "ToolCall": ("bt_raider.checking.verdict", "ToolCall"),
    "Query": ("bt_raider.checking.contract", "Query"),
    "Checker": ("bt_raider.checking.contract", "Checker"),
    "register_checker": ("bt_raider.checking.registry", "register_checker"),
    "Var": ("bt_raider.robot.actions", "Var"),
    "SyncRobot": ("bt_raider.robot.actions", "SyncRobot"),
    "ResolvedAction": ("bt_raider.robot.retarget", "ResolvedAction"),
    "Retargetable": ("bt_raider.robot.retarget", "Retargetable"),
    "Scene": ("bt_raider.perception.scene", "Scene"),
    "RaiderAgent": ("bt_raider.checking.agent", "RaiderAgent"),
    "make_chat": ("bt_raider.llm.chat", "make_chat"),
    "LookAhead": ("bt_raider.runtime.lookahead", "LookAhead"),
    "SceneForecaster": ("bt_raider.runtime.lookahead", "SceneForecaster"),
    "Forecast": ("bt_raider.runtime.lookahead", "Forecast"),
    "SymbolicRecovery": ("bt_raider.recovery.symbolic", "SymbolicRecoveryPlanner"),
    "LLMRecovery": ("bt_raider.recovery.llm", "LLMRecoveryPlanner"),
    "ConsoleHuman": ("bt_raider.robot.human", "ConsoleHuman"),
    "SharedGoalGuard": ("bt_raider.runtime.shared_goal", "SharedGoalGuard"),
    "Validator": ("bt_raider.cooperation.validator", "Validator"),
    "Message": ("bt_raider.cooperation.messaging", "Message"),
    "InProcessHub": ("bt_raider.cooperation.messaging", "InProcessHub"),
    "TraceRecorder": ("bt_raider.viewer.recorder", "TraceRecorder"),
    "ViewerServer": ("bt_raider.viewer.server", "ViewerServer"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # the next lookup is a plain attribute
        return value
    if name in _DEPRECATED:
        module, real = _DEPRECATED[name]
        warnings.warn(
            f"bt_raider.{name} is deprecated and goes in the next release: use {module}.{real}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(module), real)
    raise AttributeError(f"module 'bt_raider' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
