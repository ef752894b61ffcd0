"""Sub-commands of ``bt-raider``: one module each, with ``add_parser(subparsers, argv)`` and
``run(args) -> int``.

:data:`HELP` lists them with their one-line help, so ``bt-raider --help`` and the parser of one
command are built without importing the others (a command module may import heavy things).
"""

#: Sub-command -> one-line help, in the order ``bt-raider --help`` lists them.
HELP = {
    "check": "check one action in a scene; print the verdict as JSON",
    "plan": "solve a PDDL problem, print the plan and its behaviour tree, optionally run it",
    "demo": "run a shipped scenario end to end",
    "memory": "CDR-cleaned vector memory of past successes",
    "view": "explore a recorded run (trace.json) in a local web page",
    "fleet": "keys of a signed fleet: make, list and check each robot's signing key",
}
