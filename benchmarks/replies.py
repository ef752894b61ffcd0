"""Replies benchmark: does the reader pick only what a person's reply designates?

For seeded, generated candidate sets (2-4 objects of one or two types, colours, states,
positions, the robot's heading), every reply of the reply grammar
(:func:`bt_raider.recovery.reply_forms.reply_forms`: by name, type, colour, state, side,
ordinal, negating, self-correcting, several, out of range, mistaken, an action, refusing,
"why?", silent, long, hostile) is read by :meth:`AnswerSpace.read`. Per kind of reply:

- **wrong**: the reader returned a candidate the reply does not designate (the target is 0);
- **resolved**: of the replies that designate one, how many the reader resolved to it (the
  rest it asks again).

``--reader FILE`` reads with another ``answers.py`` (e.g. an earlier commit's:
``git show COMMIT:bt_raider/recovery/answers.py > /tmp/answers_old.py``), for the figure
before a fix.

Usage::

    python3 benchmarks/replies.py                 # 300 candidate sets, seed 0
    python3 benchmarks/replies.py --sets 1000 --reader /tmp/answers_old.py
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any


def candidate_set(rng: random.Random) -> tuple[Any, list[str], str]:
    """A generated scene, its candidates and the one the person wants."""
    from bt_raider.perception.scene import Scene

    kinds = ["Cup", "Mug", "Apple", "Box", "Knife", "ButterKnife"]
    first = rng.choice(kinds)
    pair = [first, rng.choice([first, first, *kinds])]
    objects = []
    for i, x in enumerate(rng.sample(range(-12, 13), rng.randint(2, 4))):
        kind = pair[i % 2]
        obj: dict[str, Any] = {
            "objectId": f"{kind}|{i}",
            "objectType": kind,
            "position": {"x": x / 10, "y": 0.9, "z": 0.6 + rng.randint(0, 3) / 10},
        }
        colour = rng.choice([None, "red", "blue", "white"])
        if colour:
            obj["color"] = colour
        for flag in ("isDirty", "isOpen"):
            if rng.random() < 0.5:
                obj[flag] = rng.random() < 0.5
        objects.append(obj)
    yaw = rng.choice([0, 90, 180, 270])
    agent = {"position": {"x": 0, "y": 0.9, "z": 0}, "rotation": {"y": yaw}}
    scene = Scene({"agent": agent, "objects": objects})
    ids = [o["objectId"] for o in objects]
    return scene, ids, rng.choice(ids)


def load_reader(path: Path | None) -> Any:
    """The ``AnswerSpace`` class of ``path`` (None: the installed one)."""
    if path is None:
        from bt_raider.recovery.answers import AnswerSpace

        return AnswerSpace
    spec = importlib.util.spec_from_file_location("answers_under_test", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"replies.py: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.AnswerSpace


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=300, help="candidate sets (default 300)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reader", type=Path, help="another answers.py to read with")
    args = parser.parse_args(argv)
    from bt_raider.recovery.reply_forms import reply_forms

    space_of = load_reader(args.reader)
    rng = random.Random(args.seed)
    total, wrong, designating, resolved = Counter(), Counter(), Counter(), Counter()
    examples: dict[str, str] = {}
    start = time.perf_counter()
    for _ in range(args.sets):
        scene, ids, chosen = candidate_set(rng)
        space = space_of.objects(scene, ids)
        for form in reply_forms(scene, ids, chosen):
            reading = space.read(form.text)
            total[form.kind] += 1
            designating[form.kind] += form.designates is not None
            if reading.usable and reading.value != form.designates:
                wrong[form.kind] += 1
                examples.setdefault(form.kind, form.text)
            elif reading.usable:
                resolved[form.kind] += 1
    elapsed = time.perf_counter() - start
    print(f"{sum(total.values())} replies to {args.sets} candidate sets (seed {args.seed}), "
          f"reader {args.reader or 'bt_raider.recovery.answers'}, {elapsed:.1f} s")  # fmt: skip
    print(f"{'kind':22} {'replies':>7} {'wrong':>6} {'resolved':>12}  first wrong reply")
    for kind in sorted(total):
        share = f"{resolved[kind]}/{designating[kind]}" if designating[kind] else "-"
        print(
            f"{kind:22} {total[kind]:7d} {wrong[kind]:6d} {share:>12}  {examples.get(kind, '')[:40]}"
        )
    print(f"{'ALL':22} {sum(total.values()):7d} {sum(wrong.values()):6d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
