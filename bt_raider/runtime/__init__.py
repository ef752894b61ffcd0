"""The tree runtime: the guards users drop into their trees and what they run on.

- :mod:`~bt_raider.runtime.guards`: ``RaiderGuard`` and ``guard_tree``.
- :mod:`~bt_raider.runtime.shared_goal`: ``SharedGoalGuard`` (REVECA validation before a
  shared sub-goal).
- :mod:`~bt_raider.runtime.retarget`: what a passing check resolved (``ResolvedAction``) and
  how any behaviour learns it (the ``Retargetable`` protocol, the blackboard key).
- :mod:`~bt_raider.runtime.scenes`: what ``scene=`` takes (a Scene, a dict, a callable).
- :mod:`~bt_raider.runtime.actions`: the ``Robot`` protocol, ``SyncRobot`` and ``ActionBehaviour``.
- :mod:`~bt_raider.runtime.human`: asking and telling a person (console, scripted, callback).
- :mod:`~bt_raider.runtime.worker`: the worker pool checks run on, so no tick blocks.
"""
