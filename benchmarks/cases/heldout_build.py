"""Build the held-out issue-detection case set (red team, written blind to the reasoner).

Every expected label here comes from ``docs/scene-format.md`` (query forms, levels, spatial
relations, issue rules and their priority order) applied by hand to the real FloorPlan1 kitchen
metadata, then re-checked by the oracle of ``casebook/heldout_oracle.py`` — a small,
independent reading of the same rules that recomputes distances, relations, flags and the
priority order from the variant's scene dict. A case whose hand label and oracle disagree, or
whose geometry sits within a margin of a threshold (reach 1.1 m, near 0.5 m, left/right 5 cm,
relation range 1.0 m), is refused.

Writes, next to this file (the format of ``build_cases.py``, whose patch ops it reuses):

- ``heldout_variants.json``: ``{variant id: [patch op, ...]}``;
- ``heldout.jsonl``: one case a line (``id variant query category level form explain``, with
  ``grounding`` when the argument phrase is unambiguous, and PDDL cases adding
  ``preconditions``, ``unsatisfied`` and ``bindings`` — parameter name -> scene name).

The parts live in ``casebook/``: ``heldout_scene.py`` (ids, stances, people, batch 1's
variants), ``heldout_oracle.py``, ``heldout_book.py`` (the variants and cases being written,
each label checked by the oracle) and ``heldout_batch1.py`` / ``heldout_batch2.py``.

Run: ``python3 benchmarks/cases/heldout_build.py`` (prints the distribution), then
``python3 benchmarks/detect.py --cases benchmarks/cases/heldout.jsonl
--variants benchmarks/cases/heldout_variants.json``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

# casebook/ sits beside this script (the patch format of build_cases.py lives there).
from casebook.patch import KITCHEN, Op, apply_patch, load_kitchen

if not KITCHEN.is_file():  # a clone without ../shared beside it: one line, exit 2
    print(f"heldout_build.py: needs {KITCHEN} (../shared), missing", file=sys.stderr)
    raise SystemExit(2)

# These read the kitchen's ids when imported, so only once it is known to be there.
from casebook import heldout_batch1, heldout_batch2  # noqa: E402
from casebook.heldout_book import HeldoutBook  # noqa: E402
from casebook.heldout_scene import HOME  # noqa: E402

HERE = Path(__file__).resolve().parent


def build() -> tuple[dict[str, list[Op]], list[dict[str, Any]]]:
    """The variants and cases of the held-out set, batch 1 then batch 2."""
    book = HeldoutBook(base=[HOME])
    heldout_batch1.add(book)
    heldout_batch2.add(book)
    return book.variants, book.cases


def main(argv: list[str] | None = None) -> int:
    variants, cases = build()
    # Every variant must apply cleanly to the real kitchen (and be used).
    used = {c["variant"] for c in cases}
    for v in variants:
        apply_patch(load_kitchen(), variants[v])
    unused = set(variants) - used
    if unused:
        raise ValueError(f"unused variants: {sorted(unused)}")
    (HERE / "heldout_variants.json").write_text(json.dumps(variants, indent=1) + "\n")
    with (HERE / "heldout.jsonl").open("w") as fh:
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
