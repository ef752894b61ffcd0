"""The robot side of a tree: what runs on the robot, who answers it, where checks run.

Below recovery and the guards, above the check: a recovery subtree and a guard both use these,
and these use neither.

- :mod:`~bt_raider.robot.actions`: the ``Robot`` protocol, ``SyncRobot`` and ``ActionBehaviour``.
- :mod:`~bt_raider.robot.human`: asking and telling a person (console, scripted, callback).
- :mod:`~bt_raider.robot.retarget`: what a passing check resolved (``ResolvedAction``) and
  how any behaviour learns it (the ``Retargetable`` protocol, the blackboard key).
- :mod:`~bt_raider.robot.worker`: the worker pool checks run on, so no tick blocks.
"""
