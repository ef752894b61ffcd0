"""PDDL planning: PDDL in, plan out, plan -> py_trees tree, checks, replanning.

Planning PDDL files or text with pyperplan needs only the ``pyperplan`` extra: the search runs in
a child process on pyperplan's own parser (:func:`bt_raider.planners.pddl.plan_files`, the
replanner from observed facts), and neither process loads unified-planning (UP). Everything that
reads PDDL into UP's model (:func:`~bt_raider.planners.pddl.load`, the simulated world, the
precondition checks, look-ahead, PDDL recovery, Fast Downward, ``engine="auto"``) needs the
``pddl`` extra, and says so in one line (:class:`~bt_raider.errors.MissingDependencyError`
naming ``pip install 'bt_raider[pddl]'``) on import or call; a missing engine says so when it
is asked for.
"""
