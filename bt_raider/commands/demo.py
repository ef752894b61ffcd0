"""``bt-raider demo NAME``: run a shipped scenario.

Each scenario is a package ``bt_raider.examples.<name>`` (dashes become underscores) with a
module ``demo`` exposing ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from types import ModuleType

from bt_raider.commands import HELP
from bt_raider.errors import need

DEMOS = {
    "medicine-delivery": "RAIDER's assistive plan: deliver a medicine, recovering from five "
    "issues (--scenario: replan when the medicine is gone, or say why no plan exists)",
    "cooperative-table": "two robots set a table together with REVECA validation",
}


#: Demos that plan as soon as they start, and the engine they plan with.
PLANS_FIRST = {"medicine-delivery": "pyperplan"}

#: Demo -> the extra it cannot run without (checked before its modules are imported). The
#: medicine delivery plans and replans with pyperplan in a child process, from PDDL text: none of
#: its options loads unified-planning (tests/examples/test_medicine_delivery.py blocks it).
NEEDS = {"medicine-delivery": "pyperplan"}


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"bt_raider.examples.{name.replace('-', '_')}.demo")


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], argv: Sequence[str] = ()
) -> None:
    """Add the ``demo`` sub-command to ``sub`` (``argv``: the words after its name)."""
    parser = sub.add_parser("demo", help=HELP["demo"])
    demos = parser.add_subparsers(dest="demo", metavar="DEMO")
    demos.required = True
    chosen = next((word for word in argv if not word.startswith("-")), None)
    for name, help_text in DEMOS.items():
        p = demos.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(run=run)
        if name != chosen:
            continue  # only the demo that runs is imported; the others are listed by name
        if name in NEEDS:  # without it: one line naming the extra (bt_raider.cli.main)
            need(NEEDS[name], f"the {name} demo")
        if name in PLANS_FIRST:
            # The planner's child starts while the demo's modules import.
            from bt_raider.planners import engines

            engines.prepare(PLANS_FIRST[name])
        try:
            _module(name).add_arguments(p)
        except ModuleNotFoundError as exc:
            # Only a demo that is not shipped is skipped; a missing dependency must surface.
            if exc.name != f"bt_raider.examples.{name.replace('-', '_')}.demo":
                raise


def run(args: argparse.Namespace) -> int:
    """Run the demo ``bt-raider demo NAME`` names; its exit status."""
    return int(_module(args.demo).run(args) or 0)
