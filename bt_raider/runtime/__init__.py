"""The tree runtime: the guards users drop into their trees and what watches the plan.

- :mod:`~bt_raider.runtime.guards`: ``RaiderGuard`` and ``guard_tree``; the guard's check
  (:mod:`~bt_raider.runtime.guard_check`: phases, the verdict on the blackboard) and its
  recovery (:mod:`~bt_raider.runtime.guard_recovery`) live beside it.
- :mod:`~bt_raider.runtime.shared_goal`: ``SharedGoalGuard`` (REVECA validation before a
  shared sub-goal).
- :mod:`~bt_raider.runtime.lookahead`: ``LookAhead`` around a plan, and
  :mod:`~bt_raider.runtime.forecast`: its forecasts and the scene-level forecaster.
- :mod:`~bt_raider.runtime.scenes`: what ``scene=`` takes (a Scene, a dict, a callable).

The robot's side (actions, people, the worker, retargeting) is :mod:`bt_raider.robot`.
"""
