"""unified-planning bridge: PDDL in, plan out, plan -> py_trees tree, checks, replanning.

Needs the ``pddl`` extra: without unified-planning, importing any module of this package
raises :class:`~bt_raider.errors.MissingDependencyError`, one line naming
``pip install 'bt_raider[pddl]'`` (an engine that is missing says so when it is asked for).
Only found, not imported, here: a module that plans in a child process (pyperplan) never loads
unified-planning.
"""

from bt_raider.errors import need

need("pddl", "bt_raider.planners", modules=("unified_planning",))
