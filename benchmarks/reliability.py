"""Fail-closed figures in one table: bad input, damaged stores, hung checks, trickling servers.

Runs the three parts side by side, each also runnable alone:

* ``reliability_inputs.py``: malformed scenes and queries through ``bt-raider check``;
* ``reliability_memory.py``: index corruptions and SIGKILL rounds of the vector memory;
* ``reliability_deadlines.py``: hung checks against the other guards, and ``--time-limit``
  against a server that trickles its reply;
* ``reliability_round3.py``: issue 35's rows (files through one door, text that is not
  Unicode, limits, a full disk and ``ulimit -v``, a killed ``prepare``, slow viewer senders).

Usage::

    python3 benchmarks/reliability.py            # everything
    python3 benchmarks/reliability.py --only inputs memory

Each part prints its own detail; this script ends with the table of all rows. Exit status 0
when every target is met, 1 when one is missed (the row says which).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PARTS = {
    "inputs": "reliability_inputs",
    "memory": "reliability_memory",
    "exports": "reliability_exports",
    "deadlines": "reliability_deadlines",
    "planning": "reliability_planning",
    "files": "reliability_files",
    "round3": "reliability_round3",
}


def _rows(result: Any) -> list[tuple[str, str, str]]:
    """``(what, measured, target)`` rows from whatever a part's ``run()`` returned."""
    if isinstance(result, Mapping):
        result = list(result.items())
    rows = []
    for row in result or []:
        if isinstance(row, Mapping):  # {"metric"/"what", "value", "target", "ok"}
            target = str(row.get("target", ""))
            if "ok" in row:
                target = f"{target} ({'ok' if row['ok'] else 'MISSED'})".strip()
            rows.append(
                (str(row.get("metric", row.get("what", ""))), str(row.get("value", "")), target)
            )
        else:
            cells = [str(c) for c in row] + ["", "", ""]
            rows.append((cells[0], cells[1], cells[2]))
    return rows


def _missed(row: tuple[str, str, str]) -> bool:
    """A row whose target is written 'ok'/'MISSED' by its part, or a bare number target."""
    return "MISSED" in row[1] or "MISSED" in row[2]


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(PARTS), default=sorted(PARTS))
    parser.add_argument("--quick", action="store_true", help="fewer cases (a smoke run)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    sys.path.insert(0, str(HERE))  # the parts are siblings of this script
    table: list[tuple[str, str, str, str]] = []
    for part in args.only:
        module = importlib.import_module(PARTS[part])
        print(f"== {part} ({PARTS[part]}.py)", flush=True)
        start = time.perf_counter()
        result = module.run(args)
        print(f"   ({time.perf_counter() - start:.0f} s)\n", flush=True)
        table.extend((part, *row) for row in _rows(result))
    width = max((len(r[1]) for r in table), default=10)
    print(f"{'part':10} {'what':{width}}  {'measured':>22}  target")
    for part, what, value, target in table:
        print(f"{part:10} {what:{width}}  {value:>22}  {target}")
    return 1 if any(_missed(r[1:]) for r in table) else 0


if __name__ == "__main__":
    sys.exit(main())
