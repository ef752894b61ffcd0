"""Build the issue-detection case set from the real FloorPlan1 kitchen.

Writes, next to this file:

- ``variants.json``: ``{variant id: [patch op, ...]}``; each variant is the kitchen
  (``../shared/scenes/floorplan1_kitchen.json``) changed by its ops, applied in order by
  :func:`apply_patch`;
- ``cases.jsonl``: one case a line::

    {"id": "obstructed-01", "variant": "bowl_apple", "query": "pick(Bowl)",
     "category": "obstructed", "level": "AS", "form": "structured",
     "grounding": {"Bowl": ["Bowl|+00.27|+01.10|-00.75"]},
     "explain": ["Bowl", "Apple"]}

  ``grounding`` (when present) is what each argument phrase must ground to (for an ambiguity:
  every candidate); ``explain`` lists the display names (or people's names) a correct
  explanation mentions; PDDL cases add ``preconditions``, ``unsatisfied`` and ``bindings``.

Expected answers are set by construction, never by running a reasoner: the agent is placed
0.6 m from a target meant to be within reach and 1.6 m (or the kitchen's own distances) from
one meant to be out of it; left/right expectations are computed with the format doc's formula
(``side`` in ``casebook/kitchen.py``), independently of ``bt_raider.perception``, and a case
whose relation would sit within 5 cm of a threshold is refused.

The parts live in ``casebook/``: ``patch.py`` (the patch ops, which the benchmarks import
from here), ``kitchen.py`` (names, stances, left/right), ``book.py`` (the variants and cases
being written) and one module per category, called in a fixed order by :func:`build`.

Run: ``python3 benchmarks/cases/build_cases.py`` (prints the distribution).
"""

from __future__ import annotations

import importlib
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

# detect.py and recovery.py import this module as cases.build_cases; heldout_build.py and
# ``python3 build_cases.py`` see it as build_cases, with its folder first on sys.path: the
# parts are found under whichever name this module has.
_BOOK = f"{__package__}.casebook" if __package__ else "casebook"


def _part(name: str) -> ModuleType:
    return importlib.import_module(f"{_BOOK}.{name}")


_patch, _kitchen = _part("patch"), _part("kitchen")
KITCHEN, Op, apply_patch = _patch.KITCHEN, _patch.Op, _patch.apply_patch
build_scene, load_kitchen = _patch.build_scene, _patch.load_kitchen
OPEN_FLOOR, REACH_IN = _kitchen.OPEN_FLOOR, _kitchen.REACH_IN
Kitchen, side = _kitchen.Kitchen, _kitchen.side
CaseBook = _part("book").CaseBook

__all__ = [
    "KITCHEN",
    "OPEN_FLOOR",
    "REACH_IN",
    "Kitchen",
    "Op",
    "apply_patch",
    "build",
    "build_scene",
    "load_kitchen",
    "main",
    "side",
]

HERE = Path(__file__).resolve().parent

#: The categories in the order their cases are written: ids and the order of variants.json
#: follow it, and the paraphrases reuse variants the others define, so they come last.
CATEGORIES = tuple(
    _part(name)
    for name in (
        "none",
        "ambiguity",
        "not_present",
        "out_of_reach",
        "obstructed",
        "wrong_state",
        "wrong_property",
        "robot_state",
        "paraphrases",
    )
)


def build() -> tuple[dict[str, list[Op]], list[dict[str, Any]]]:
    """The variants and cases of the case set, every category's in turn."""
    book = CaseBook()
    for category in CATEGORIES:
        category.add(book)
    return book.variants, book.cases


def main(argv: list[str] | None = None) -> int:
    if not KITCHEN.is_file():  # a clone without ../shared beside it
        print(f"build_cases.py: needs {KITCHEN} (../shared), missing", file=sys.stderr)
        return 2
    variants, cases = build()
    (HERE / "variants.json").write_text(json.dumps(variants, indent=1) + "\n")
    with (HERE / "cases.jsonl").open("w") as fh:
        for c in cases:
            fh.write(json.dumps(c) + "\n")
    print(f"{len(cases)} cases, {len(variants)} variants -> {HERE}")
    for key in ("category", "level", "form"):
        counts = Counter(c[key] for c in cases)
        print(f"  {key:9}", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"  pddl      {sum(bool(c.get('pddl')) for c in cases)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
