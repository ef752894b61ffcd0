"""The frame of a command: what changes (operation), on what (object), which quality and how
much (attribute, degree), and where (place), read with a lexicon of general English
(``data/frames.json``).

People ask for the same change many ways: *turn the volume up*, *make it louder*, *it's too
quiet*, *volume up a bit*; and name one device many ways: *light*, *lighting*, *bulb*, *lamp*.
:class:`FrameLexicon` holds that knowledge as data -- device classes and their words, graded
adjectives with the direction they ask for (*brighter*, *quieter*, *too dark*), the attribute a
degree changes and the device that has it, degree phrases (*a bit*, *all the way*, *to 40
percent*) and place words. :class:`FrameReader` applies it to the actions the symbolic
extractor read from the verbs: it reads clauses the verbs cannot (comparatives, *too* +
adjective, *more*/*less*, verbless *lights off*), puts each object into its device class, and
fills the place, attribute and degree slots. A place is where an action happens, never what it
acts on: *turn off the kitchen* turns off the kitchen's lights.

Words the lexicon does not know are left as they are: an unknown verb keeps
:data:`~bt_raider.memory.actions.UNKNOWN_OPERATION`, an unknown noun stays its own object.

Example:
    >>> from bt_raider.memory.extract import SymbolicExtractor
    >>> [a.to_json() for a in SymbolicExtractor().extract("make the kitchen lights a bit brighter")]
    [{'operation': 'increase', 'object': 'lamp', 'lu': 'brighter', 'head': 'light', 'place': 'kitchen', 'attribute': 'brightness', 'degree': 'little'}]
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from bt_raider.errors import MemoryStoreError
from bt_raider.memory.actions import UNKNOWN_OPERATION, Action
from bt_raider.memory.verbs import VerbLexicon, read_data_file
from bt_raider.words import singular

#: The directions a graded change may take.
DIRECTIONS = ("increase", "decrease")

Phrases = dict[tuple[str, ...], str]


def _phrases(groups: dict[str, list[str]], source: str, what: str) -> Phrases:
    """``class -> [words]`` as ``word tuple -> class``; a word in two classes is refused."""
    out: Phrases = {}
    for name, words in groups.items():
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise MemoryStoreError(
                f"frame lexicon {source}: {what} {name!r} has {words!r}: expected a list of words"
            )
        for word in words:
            key = tuple(word.lower().split())
            if out.get(key, name) != name:
                raise MemoryStoreError(
                    f"frame lexicon {source}: {what} word {word!r} is in both {out[key]!r} and "
                    f"{name!r}: expected one class per word"
                )
            out[key] = name
    return out


def _graded(data: dict[str, Any], source: str, what: str) -> dict[str, tuple[str, str | None]]:
    out: dict[str, tuple[str, str | None]] = {}
    for word, value in data.items():
        if (
            not isinstance(value, list)
            or len(value) != 2
            or value[0] not in DIRECTIONS
            or not (value[1] is None or isinstance(value[1], str))
        ):
            raise MemoryStoreError(
                f"frame lexicon {source}: {what} {word!r} is {value!r}: expected "
                "[direction, attribute or null] with direction one of " + ", ".join(DIRECTIONS)
            )
        out[word] = (value[0], value[1])
    return out


@dataclass(frozen=True)
class FrameLexicon:
    """Device classes, graded words, degrees and places (``data/frames.json``).

    Attributes:
        devices: words (as token tuples) -> device class.
        attributes: words -> attribute (``brightness``, ``volume`` ...).
        attribute_device: attribute -> the device that has it when none is named.
        comparatives: adjective -> (direction, attribute or None).
        too_adjectives: adjective after *too* -> (the direction asked for, attribute).
        extreme_adjectives: the same with or without *too* (*i am freezing*).
        quantity: *more* / *less* -> direction.
        verb_attributes: verb -> the attribute it changes (*dim* -> brightness).
        directions: particle -> operation in a verbless clause (*lights off*).
        degrees: degree phrases -> degree (``little``, ``max`` ...).
        degree_units: words after a number that make it a degree (*40 percent*).
        number_words: numbers written as words (*two degrees*).
        places: words -> place class.
        device_operations: operations on a device: a place as their object means its
            ``default_device``.
        default_device: what a place stands for as a device operation's object.
        device_directions: device -> graded direction -> the operation it means there
            (*raise the blinds* opens them).
        light_operations: operations of light verbs (*put*, *get*): a direction after the
            device they act on is its new state (*put the light on in the kitchen*).
        place_operations: operation on a place -> (direction, attribute) it means there
            (*warm the house up*).
        attribute_verbs: verb -> direction, when its object is an attribute (*drop the
            temperature*).
        source: where the lexicon was read from.
    """

    devices: Phrases
    attributes: Phrases
    attribute_device: dict[str, str]
    comparatives: dict[str, tuple[str, str | None]]
    too_adjectives: dict[str, tuple[str, str | None]]
    extreme_adjectives: dict[str, tuple[str, str | None]]
    quantity: dict[str, str]
    verb_attributes: dict[str, str]
    directions: dict[str, str]
    degrees: Phrases
    degree_units: frozenset[str]
    number_words: frozenset[str]
    places: Phrases
    device_operations: frozenset[str]
    default_device: str
    device_directions: dict[str, dict[str, str]]
    light_operations: frozenset[str]
    place_operations: dict[str, tuple[str, str | None]]
    attribute_verbs: dict[str, str]
    source: str = "<dict>"

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>") -> FrameLexicon:
        """A frame lexicon from parsed JSON (the layout of ``data/frames.json``)."""
        try:
            attrs = data["attributes"]
            quantity = dict(data.get("quantity", {}))
            directions = dict(data.get("directions", {}))
            for word, op in (*quantity.items(), *directions.items()):
                if not isinstance(op, str):
                    raise MemoryStoreError(
                        f"frame lexicon {source}: {word!r} maps to {op!r}: expected an operation"
                    )
            return cls(
                devices=_phrases(data["devices"], source, "device"),
                attributes=_phrases({k: v["words"] for k, v in attrs.items()}, source, "attribute"),
                attribute_device={k: str(v["device"]) for k, v in attrs.items()},
                comparatives=_graded(data.get("comparatives", {}), source, "comparative"),
                too_adjectives=_graded(data.get("too_adjectives", {}), source, "too adjective"),
                extreme_adjectives=_graded(
                    data.get("extreme_adjectives", {}), source, "extreme adjective"
                ),
                quantity=quantity,
                verb_attributes=dict(data.get("verb_attributes", {})),
                directions=directions,
                degrees={tuple(k.split()): str(v) for k, v in data.get("degrees", {}).items()},
                degree_units=frozenset(data.get("degree_units", [])),
                number_words=frozenset(data.get("number_words", [])),
                places=_phrases(data.get("places", {}), source, "place"),
                device_operations=frozenset(data.get("device_operations", [])),
                default_device=str(data["default_device"]),
                device_directions={
                    k: dict(v) for k, v in data.get("device_directions", {}).items()
                },
                light_operations=frozenset(data.get("light_verbs", [])),
                place_operations=_graded(
                    data.get("place_operations", {}), source, "place operation"
                ),
                attribute_verbs={
                    k: v for k, v in data.get("attribute_verbs", {}).items() if v in DIRECTIONS
                },
                source=source,
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise MemoryStoreError(
                f"malformed frame lexicon {source}: {exc!r}; expected the keys devices, "
                "attributes, default_device (see bt_raider/memory/data/frames.json)"
            ) from exc

    @classmethod
    def load(cls, path: str | Path | None = None) -> FrameLexicon:
        """The frame lexicon at ``path``, or the shipped one."""
        if path is None:
            return _default_frames()
        return cls.from_dict(read_data_file(path, "frame lexicon"), source=str(path))

    def device_class(self, word: str | None) -> str | None:
        """The device class a canonical object word belongs to (None: not a device word)."""
        if word is None:
            return None
        return self.devices.get((word,)) or self.devices.get((singular(word),))


@functools.lru_cache(maxsize=1)
def _default_frames() -> FrameLexicon:
    text = (resources.files("bt_raider.memory") / "data" / "frames.json").read_text("utf-8")
    return FrameLexicon.from_dict(json.loads(text), source="bt_raider/memory/data/frames.json")


def _match(toks: list[str], i: int, table: Phrases, longest: int = 3) -> tuple[str, int] | None:
    """``(value, length)`` of the longest phrase of ``table`` starting at ``i``."""
    for n in range(longest, 0, -1):
        key = tuple(toks[i : i + n])
        if len(key) == n:
            hit = table.get(key)
            if hit is None and n == 1:
                hit = table.get((singular(key[0]),))
            if hit is not None:
                return hit, n
    return None


def _find(toks: list[str], start: int, end: int, table: Phrases) -> tuple[str, int, int] | None:
    """The first phrase of ``table`` in ``toks[start:end]``: ``(value, index, length)``."""
    i = start
    while i < end:
        hit = _match(toks[:end], i, table)
        if hit is not None:
            return hit[0], i, hit[1]
        i += 1
    return None


@dataclass
class Located:
    """An action the verbs gave, with the token span of its clause.

    Attributes:
        action: the action.
        verb: index of its verb in the tokens (-1 for a frame read without a verb).
        end: the index its words run to.
    """

    action: Action
    verb: int
    end: int


class FrameReader:
    """Reads frames over the symbolic extractor's actions (see the module docstring).

    Args:
        frames: a :class:`FrameLexicon` (None: the shipped one).
        lexicon: the verb lexicon the actions were read with (for its word lists).
    """

    def __init__(self, frames: FrameLexicon | None, lexicon: VerbLexicon) -> None:
        self.frames = frames or FrameLexicon.load()
        self.lex = lexicon

    # -- degrees ------------------------------------------------------------

    def strip_degrees(self, toks: list[str]) -> tuple[list[str], dict[int, str]]:
        """The tokens without their degree phrases, and each degree by where it stood.

        Degrees are read out before the verbs so that *turn it down a bit* reads *down* as the
        particle of *turn*. A number is a degree with a unit (*40 percent*) or after *to* /
        *by* at the end of a clause (*set the heating to 21*).
        """
        out: list[str] = []
        found: dict[int, str] = {}
        i = 0
        while i < len(toks):
            hit = _match(toks, i, self.frames.degrees, longest=4)
            if hit is not None:
                found[len(out)] = hit[0]
                i += hit[1]
                continue
            lead = toks[i] in {"to", "by", "at"}
            j = i + 1 if lead else i
            if j < len(toks) and (toks[j].isdigit() or toks[j] in self.frames.number_words):
                k = j + 1
                while k < len(toks) and toks[k] in self.frames.degree_units:
                    k += 1
                at_end = k == len(toks) or toks[k] in self.lex.boundaries
                if k > j + 1 or (lead and at_end):
                    found[len(out)] = " ".join(toks[i:k])
                    i = k
                    continue
            out.append(toks[i])
            i += 1
        return out, found

    # -- clauses ------------------------------------------------------------

    def clauses(self, toks: list[str]) -> list[tuple[int, int]]:
        """``(start, end)`` of each clause: the tokens between boundary words."""
        spans, start = [], 0
        for i, t in enumerate(toks):
            if t in self.lex.boundaries:
                if i > start:
                    spans.append((start, i))
                start = i + 1
        if start < len(toks):
            spans.append((start, len(toks)))
        return spans

    def _cue(
        self, toks: list[str], start: int, end: int, verbs: set[int]
    ) -> tuple[str, str | None, str] | None:
        """``(direction, attribute, word)`` of a graded word in the clause, if any."""
        fr = self.frames
        for i in range(start, end):
            t = toks[i]
            prev = toks[i - 1] if i > start else None
            if i in verbs:
                continue
            if prev == "too" and t in fr.too_adjectives:
                d, attr = fr.too_adjectives[t]
                return d, attr, t
            nxt = toks[i + 1] if i + 1 < end else None
            if (
                t in fr.extreme_adjectives
                and prev not in self.lex.determiners
                # "i am freezing", "it's boiling in here"; not "the boiling water"
                and (nxt is None or nxt in self.lex.adverbs or nxt in {"in", "here"})
            ):
                d, attr = fr.extreme_adjectives[t]
                return d, attr, t
            if t in fr.comparatives and not (prev in self.lex.determiners and prev != "more"):
                d, attr = fr.comparatives[t]  # "the cooler" is a box, "cooler" a wish
                return d, attr, t
            if t in fr.quantity and i + 1 < end:
                hit = _match(toks[:end], i + 1, fr.attributes)
                device = _match(toks[:end], i + 1, fr.devices)
                if hit is not None:
                    return fr.quantity[t], hit[0], t
                if device is not None and device[0] in fr.attribute_device.values():
                    # "more light": the attribute whose device that is
                    attr = next(a for a, d in fr.attribute_device.items() if d == device[0])
                    return fr.quantity[t], attr, t
        return None

    # -- the frame ----------------------------------------------------------

    def refine(
        self, toks: list[str], located: list[Located], degrees: dict[int, str]
    ) -> list[Action]:
        """The actions of the sentence with their frames filled in (see the module docstring)."""
        fr = self.frames
        out: list[tuple[int, Action]] = []
        for start, end in self.clauses(toks):
            mine = [x for x in located if start <= x.verb < end]
            # A verb inside a device's name is no verb ("the smart plug"), nor is a device
            # read as an unknown verb ("lights off").
            inside = self._phrase_cover(toks, start, end)
            mine = [
                x
                for x in mine
                if x.verb not in inside
                and not (
                    x.action.operation == UNKNOWN_OPERATION
                    and (_match(toks, x.verb, fr.devices) or _match(toks, x.verb, fr.attributes))
                )
            ]
            # Each action's words run to the next verb kept, or to the end of its clause.
            mine = [
                Located(x.action, x.verb, mine[n + 1].verb if n + 1 < len(mine) else end)
                for n, x in enumerate(mine)
            ]
            degree = next((d for i, d in sorted(degrees.items()) if start <= i <= end), None)
            place = self._place(toks, start, end)
            cue = self._cue(toks, start, end, {x.verb for x in mine})
            if cue is not None:
                direction, attr, word = cue
                base = mine[0].action if mine else None
                out.append(
                    (
                        mine[0].verb if mine else start,
                        self._degree_action(
                            toks, start, end, direction, attr, word, base, place, degree
                        ),
                    )
                )
                continue
            if not mine:
                verbless = self._verbless(toks, start, end, place, degree)
                if verbless is not None:
                    out.append((start, verbless))
                continue
            for x in mine:
                out.append((x.verb, self._enrich(toks, x, place, degree)))
        # Actions whose verb stands outside every clause (none today) keep their place.
        return [a for _, a in sorted(out, key=lambda p: p[0])]

    def _phrase_cover(self, toks: list[str], start: int, end: int) -> set[int]:
        """Indices inside a multi-word device or place name, after its first word."""
        cover: set[int] = set()
        for table in (self.frames.devices, self.frames.places):
            for i in range(start, end):
                hit = _match(toks[:end], i, table)
                if hit is not None and hit[1] > 1:
                    cover.update(range(i + 1, i + hit[1]))
        return cover

    def _place(self, toks: list[str], start: int, end: int) -> str | None:
        hit = _find(toks, start, end, self.frames.places)
        return hit[0] if hit else None

    def _device(self, toks: list[str], start: int, end: int) -> tuple[str, str, int] | None:
        """``(class, head word, index after it)`` of the first device named in the clause."""
        hit = _find(toks, start, end, self.frames.devices)
        if hit is None:
            return None
        value, i, n = hit
        return value, singular(toks[i + n - 1]), i + n

    def _directed(self, op: str, obj: str | None) -> str:
        """A graded operation as the device understands it (*raise the blinds*: open)."""
        return self.frames.device_directions.get(obj or "", {}).get(op, op)

    def _degree_action(
        self,
        toks: list[str],
        start: int,
        end: int,
        direction: str,
        attr: str | None,
        word: str,
        base: Action | None,
        place: str | None,
        degree: str | None,
    ) -> Action:
        fr = self.frames
        attr_hit = _find(toks, start, end, fr.attributes)
        attr = attr or (attr_hit[0] if attr_hit else None)
        device = self._device(toks, start, end)
        obj = device[0] if device else (fr.attribute_device.get(attr) if attr else None)
        if obj is None and base is not None and base.object and base.object != word:
            obj = fr.device_class(base.object) or base.object
        if attr is None and obj is not None:
            # "set it lower" on a device with one graded quality
            attr = next((a for a, d in fr.attribute_device.items() if d == obj), None)
        return Action(
            operation=self._directed(direction, obj),
            object=obj,
            negated=base.negated if base else False,
            lu=word,
            head=device[1] if device else (attr_hit and singular(toks[attr_hit[1]])) or None,
            place=place,
            attribute=attr,
            degree=degree,
        )

    def _verbless(
        self, toks: list[str], start: int, end: int, place: str | None, degree: str | None
    ) -> Action | None:
        """*lights off*, *volume up*: a device or attribute, then a direction, no verb.

        The direction must follow the thing and end its phrase: "on the tv stand" is a place.
        """
        fr = self.frames
        device = self._device(toks, start, end)
        attr_hit = _find(toks, start, end, fr.attributes)
        if device is None and attr_hit is None:
            return None
        after = min(x for x in (device and device[2], attr_hit and attr_hit[1] + attr_hit[2]) if x)
        k = next((i for i in range(after, end) if toks[i] in fr.directions), None)
        if k is None:
            return None
        nxt = toks[k + 1] if k + 1 < end else None
        if nxt is not None and (nxt in self.lex.determiners or nxt in self.lex.pronouns):
            return None
        direction = fr.directions[toks[k]]
        attr = attr_hit[0] if attr_hit else None
        if direction in DIRECTIONS and attr is None and device is not None:
            attr = next((a for a, d in fr.attribute_device.items() if d == device[0]), None)
        obj = device[0] if device else fr.attribute_device.get(attr or "")
        return Action(
            operation=self._directed(direction, obj),
            object=obj,
            lu=toks[k],
            head=device[1] if device else None,
            place=place,
            attribute=attr if direction in DIRECTIONS else None,
            degree=degree,
        )

    def _state_after(self, toks: list[str], i: int, end: int) -> str | None:
        """The state a direction right after a device asks for, unless it opens a place
        phrase (*put the lamp on the table*)."""
        if i >= end or toks[i] not in self.frames.directions:
            return None
        state = self.frames.directions[toks[i]]
        nxt = toks[i + 1] if i + 1 < end else None
        if state in DIRECTIONS or (
            nxt is not None
            # "take the lamp out of the box", "get the lamp off the shelf": a place
            and (nxt in self.lex.determiners or nxt in self.lex.pronouns or nxt in {"of", "from"})
        ):
            return None
        return state

    def _enrich(self, toks: list[str], x: Located, place: str | None, degree: str | None) -> Action:
        """Device class, attribute, place and degree of an action the verbs gave."""
        fr = self.frames
        a = x.action
        if a.operation == UNKNOWN_OPERATION:
            return replace(a, place=place)  # what we cannot read stays unread
        graded = a.operation in DIRECTIONS
        device_op = a.operation in fr.device_operations
        obj, location, attr = a.object, a.location, None
        op = a.operation
        verb = (a.lu or "").split()[0] if a.lu else ""
        attr = fr.verb_attributes.get(verb) if graded else None
        if obj is not None and (obj,) in fr.attributes:
            if not graded and verb in fr.attribute_verbs:  # "drop the temperature"
                op, graded = fr.attribute_verbs[verb], True
            attr = fr.attributes[(obj,)] if graded else attr
            obj = fr.attribute_device.get(fr.attributes[(obj,)], obj)
        if obj is not None and (obj,) in fr.places and op in fr.place_operations:
            op, attr = fr.place_operations[op]  # "warm the house up"
            place, obj, graded = fr.places[(obj,)], fr.attribute_device.get(attr or ""), True
        device_op = device_op or op in fr.device_operations
        device = self._device(toks, x.verb + 1, x.end) if (device_op or obj) else None
        if device is not None and (device_op or fr.device_class(obj) is not None):
            obj = device[0]  # "the smart plug", "the kitchen lights": the device's class
            if op in fr.light_operations:
                state = self._state_after(toks, device[2], x.end)
                if state is not None:  # "put the light on in the kitchen", "get the tv off"
                    op, device_op = state, state in fr.device_operations
                    graded = op in DIRECTIONS
        elif fr.device_class(obj) is not None:
            obj = fr.device_class(obj)
        if device_op and obj is not None and (obj,) in fr.places:
            place, obj = fr.places[(obj,)], fr.default_device  # "turn off the kitchen"
        if device_op and location is not None and (location,) in fr.places:
            location = None  # "turn off the light in the hall": where, not whither
        if graded and obj is None and attr is not None:
            obj = fr.attribute_device.get(attr)
        if graded and attr is None and obj is not None:
            attr = next((k for k, d in fr.attribute_device.items() if d == obj), None)
        if graded:
            op = self._directed(op, obj)
            if op not in DIRECTIONS:
                attr = None
        return replace(
            a,
            operation=op,
            object=obj,
            location=location,
            place=place,
            attribute=attr,
            degree=degree if (graded or device_op) else None,
        )

    def normalise(self, a: Action) -> Action:
        """An action read elsewhere (a model's reply) put in the same frame: the object's
        device class, an attribute named as the object, a room named as the place.

        The LLM extractor calls this so that its records compare with the symbolic ones.
        """
        fr = self.frames
        if a.operation == UNKNOWN_OPERATION:
            return a
        op, obj, attr, place, location = a.operation, a.object, a.attribute, a.place, a.location
        if place is not None:
            place = fr.places.get(tuple(place.split()), place)
        degree = a.degree and fr.degrees.get(tuple(a.degree.split()), a.degree)
        if obj is not None and (obj,) in fr.attributes:
            attr = attr or fr.attributes[(obj,)]
            obj = fr.attribute_device.get(fr.attributes[(obj,)], obj)
        obj = fr.device_class(obj) or obj
        device_op = op in fr.device_operations
        if device_op and obj is not None and (obj,) in fr.places:
            place, obj = place or fr.places[(obj,)], fr.default_device
        if device_op and location is not None and (location,) in fr.places:
            place, location = place or fr.places[(location,)], None
        if op in DIRECTIONS:
            if obj is None and attr is not None:
                obj = fr.attribute_device.get(attr)
            op = self._directed(op, obj)
        return replace(
            a,
            operation=op,
            object=obj,
            attribute=attr,
            place=place,
            location=location,
            degree=degree,
        )
