"""People's commands for the memory benchmark (issue 27): the words people use at home.

Two sources, labels from each source only (never from bt_raider's extractor):

* ``cases/commands/paraphrases.json``: home commands written for this project (lights, smart
  plugs, tv, speaker, heating, fan, blinds; on/off, brighter/dimmer, louder/quieter,
  warmer/cooler; with and without a room), each intent labelled by hand (operation, device
  class, place) and phrased many ways.
* ``../shared/data`` read at run time (never copied): HuRIC commands with a
  ``Change_operational_state`` or ``Bringing`` frame and ALFRED ``ToggleObject`` steps, with
  the gold actions ``memory_data.py`` reads from their annotations.

A fifth of the commands (``sha256(text) % 5 == 0``) is held out: the development set is the
rest, and the held-out fifth is looked at once, at the end (``memory_conflicts.py --people
heldout``).

Conflict labels come from the gold actions (``memory_data.gold_conflict``: the paper's phi1,
phi2 and negation); a place is the gold action's ``loc``, which no rule reads, so commands
that differ only by their room are consistent.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from memory_data import ALFRED, HURIC, Command, Gold, gold_conflict, load_alfred, load_huric

PARAPHRASES = Path(__file__).resolve().parent / "cases" / "commands" / "paraphrases.json"
#: HuRIC frames whose commands are people's household requests of the kinds issue 27 names.
HURIC_FRAMES = ("Change_operational_state", "Bringing")
ON_OFF = ("turn_on", "turn_off")
DEGREE = ("increase", "decrease")


@dataclass(frozen=True)
class PeopleSet:
    """The people's commands, split."""

    dev: list[Command]
    heldout: list[Command]


def heldout(text: str) -> bool:
    """Whether a command belongs to the held-out fifth (by its text, stable across runs)."""
    return int(hashlib.sha256(text.strip().lower().encode()).hexdigest(), 16) % 5 == 0


def load_paraphrases(path: Path = PARAPHRASES) -> list[Command]:
    """Our written commands with our written labels."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for n, intent in enumerate(data["intents"]):
        gold = (Gold(intent["op"], intent["object"], intent.get("place")),)
        for m, text in enumerate(intent["sentences"]):
            out.append(Command(f"people-{n}-{m}", text, gold, source="people"))
    return out


def load_shared() -> list[Command]:
    """HuRIC device and bringing commands, ALFRED toggle steps (empty without ../shared)."""
    out: list[Command] = []
    if HURIC.is_file():
        for c in load_huric():
            if c.gold and any(f["frame"] in HURIC_FRAMES for f in c.frames):
                out.append(c)
    if ALFRED.is_file():
        out += [c for c in load_alfred() if c.gold and c.gold[0].op in ON_OFF]
    return out


#: The label of a command that names no device ("turn it up"): the same unnamed thing as in
#: another such command, but not known to differ from a named one.
UNNAMED = "it"


def conflict(a: Command, b: Command) -> bool:
    """Whether two commands conflict by their labels (``gold_conflict``), where an unnamed
    object is the same as another unnamed one and is never a different object (no phi2)."""
    rule = gold_conflict(a.gold, b.gold)
    if rule != "phi2":
        return rule is not None
    named = (
        tuple(g for g in a.gold if g.obj != UNNAMED),
        tuple(g for g in b.gold if g.obj != UNNAMED),
    )
    return gold_conflict(*named) is not None


def query_class(c: Command) -> str:
    """``on_off``, ``degree`` or ``other``, by the command's first gold operation."""
    op = c.gold[0].op if c.gold else ""
    return "on_off" if op in ON_OFF else "degree" if op in DEGREE else "other"


def pair_class(a: Command, b: Command) -> str | None:
    """For two consistent commands: ``place`` (same action, other room) or ``synonyms`` (same
    action and room, other words), by their labels; None otherwise."""
    if len(a.gold) != 1 or len(b.gold) != 1 or a.text == b.text:
        return None
    x, y = a.gold[0], b.gold[0]
    if x.op != y.op or x.obj != y.obj or x.neg != y.neg or x.obj is None:
        return None
    return "place" if x.loc != y.loc else "synonyms"


def load(path: Path = PARAPHRASES) -> PeopleSet:
    """Every command, split into the development set and the held-out fifth."""
    seen: set[str] = set()
    dev, held = [], []
    for c in load_paraphrases(path) + load_shared():
        key = c.text.strip().lower()
        if key in seen:
            continue  # ALFRED repeats steps word for word; one copy is enough
        seen.add(key)
        (held if heldout(c.text) else dev).append(c)
    return PeopleSet(dev, held)
