"""unified-planning bridge: PDDL in, plan out, plan -> py_trees tree, checks, replanning."""
