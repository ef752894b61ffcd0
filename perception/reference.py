"""The one reader of referring expressions: what a person's words designate.

An instruction's argument ("the box that is not red", "the glass on my right") and a person's
reply to "which one?" ("not the one in the sink", "the golden one", "either") are read by the
same two functions, in the style of CLEVR-Ref+'s functional programs:

- :func:`read` turns the words into a :class:`Reference`, a small program: coordinated
  :class:`Part`\\ s ("the red box or the blue box"), each a *core* description (type, colour,
  state and relations to landmarks: "the drawer under the sink"), the selections applied to it
  (sides and distances in a named frame, ordinals, superlatives, sizes) and what it excludes
  ("not", "-n't", "except", "other than", "but not", "rather than", "instead of"), with a
  quantifier ("any", "either", "whichever", "you choose": any member; "both", "all": several);
- :func:`designate` runs the program over a domain (the scene's objects, or a question's
  candidates) and returns the :class:`Designation`: the objects the words allow, whether one,
  any or several are meant, and the words it could not read.

**Every word is accounted for.** A word is consumed by the program or is on
:data:`~bt_raider.perception.reference_words.IGNORED` (words that cannot change the referent:
"please", "the", "now" ...). Any other word (a negator, quantifier, comparative, possessive, conditional or unknown modifier)
is *unread*: the designation is then unclear, never a choice (``Designation.unclear``).

**Frames.** "my left", "in front of me", "near me" are read from the speaker (``speaker``: a
:class:`~bt_raider.perception.attributes.Viewer`, a person's ``position`` and ``rotation``);
"your left", "behind you", "closest to you", "on the left" from the robot. A speaker frame
whose person or heading is unknown is unclear: never a guess.

The core of a part (its type, colours, states, relations) is grounded by the caller's ``core``
function, so the check grounds it through its perception tools and a reply through the same
grounder (:func:`bt_raider.checking.designation.designate` wires both); the grammar is here.
Public API: :func:`read`, :func:`designate`, :class:`Reference`, :class:`Part`,
:class:`~bt_raider.perception.reference_words.Select`, :class:`Designation`, :class:`Core`,
:func:`speaker_view`; the word lists (:data:`~bt_raider.perception.reference_words.IGNORED`,
:data:`~bt_raider.perception.reference_words.LEAD_INS`) in
:mod:`~bt_raider.perception.reference_words`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

from bt_raider.perception import attributes
from bt_raider.perception.attributes import Viewer
from bt_raider.perception.reference_words import (
    ALL_WORDS,
    ANY_PHRASES,
    ANY_WORDS,
    CONDITIONS,
    DESIGNATORS,
    EXCLUDERS,
    IGNORED,
    LEAD_INS,
    LEADING,
    NOISE,
    NOT_AFTER,
    NOT_BEFORE,
    NUMBER_WORDS,
    POSSESSIVES,
    RELATION_STARTS,
    SAYING,
    Select,
    axis_ordinals,
    by_head,
    first_at,
    select_at,
    tokens,
)

__all__ = [
    "Core",
    "Designation",
    "Part",
    "Reference",
    "designate",
    "read",
    "speaker_view",
]

Mode = Literal["one", "any", "several"]

#: How much nearer (m) one object must be than the next for "the nearest" to mean it.
DISTANCE_MARGIN = 0.15
#: How much bigger (ratio of volumes) one object must be than the next for "the big one".
SIZE_RATIO = 1.25


# --------------------------------------------------------------------------- the program
class Part(NamedTuple):
    """One description: a core, the selections on it and what it excludes.

    Attributes:
        core: the words the caller's ``core`` grounds (type, colour, state, relations); empty:
            every object of the domain.
        selects: selections applied after the core, in order.
        excluded: descriptions whose objects are removed.
        ids: objectIds said outright ("Cup|+00.20|..."): the part is one of them.
    """

    core: str
    selects: tuple[Select, ...] = ()
    excluded: tuple[Part, ...] = ()
    ids: tuple[str, ...] = ()


class Reference(NamedTuple):
    """A phrase read as a program.

    Attributes:
        text: the phrase as given.
        parts: the coordinated descriptions ("A or B", "A and B": two); each a :class:`Part`.
        quantifier: ``one``, ``any`` (any member will do) or ``all`` (several are meant).
        unread: words that could change the referent and that the program does not read.
        other: "the other one": the caller knows other than what (a reply's correction).
    """

    text: str
    parts: tuple[Part, ...]
    quantifier: Literal["one", "any", "all"] = "one"
    unread: tuple[str, ...] = ()
    other: bool = False


class Core(NamedTuple):
    """What the caller's ``core`` function grounded a core description to.

    Attributes:
        objects: the objects it fits (any order; the domain's order is kept).
        unread: words of the core the caller could not read (an unknown modifier).
        reason: why nothing fits, for a person.
        certain: of ``objects``, those that fit for certain (an object whose colour the scene
            does not give may be red: it fits "red", but not for certain); None: all of them.
            An exclusion removes only what it excludes for certain ("not the blue one" keeps
            a cup of unknown colour, so two may be left: a question).
    """

    objects: Sequence[Any] = ()
    unread: tuple[str, ...] = ()
    reason: str = ""
    certain: Sequence[Any] | None = None


class Designation(NamedTuple):
    """What a phrase designates in a domain.

    Attributes:
        ids: the objects the words allow, in the domain's order.
        mode: ``one`` (exactly one is meant: several is a question), ``any`` (any member is
            acceptable) or ``several`` (several are meant, never one of them).
        unclear: why the words cannot be read for certain ("I did not understand 'unless it is
            cold'"); empty when they can.
        unread: the words left over (part of ``unclear``).
        reason: when ``ids`` is empty, why; when several fit, what could not tell them apart.
    """

    ids: tuple[str, ...]
    mode: Mode = "one"
    unclear: str = ""
    unread: tuple[str, ...] = ()
    reason: str = ""
    reference: Reference | None = None

    @property
    def single(self) -> str | None:
        """The one object meant, when the words are clear and designate exactly one."""
        if self.unclear or self.mode == "several" or len(self.ids) != 1:
            return None
        return self.ids[0]


# --------------------------------------------------------------------------- read
#: The phrase lists :func:`read` looks for at each word, by their first word (the keys of
#: ``_EXCLUDERS`` are the words an exclusion starts with).
_SAYING = by_head(SAYING)
_LEAD_INS = by_head(lead.split() for lead in LEAD_INS)
_ANY_PHRASES = by_head(ANY_PHRASES)
_EXCLUDERS = by_head(EXCLUDERS)


def read(text: str) -> Reference:
    """Read a phrase or a reply into a :class:`Reference` (pure text: no scene).

    Never raises on text: what it cannot read is in :attr:`Reference.unread`.
    """
    toks = tokens(text)
    words = [w for w, _ in toks]
    # "..., I would say the red one": what is said after it is the answer; before it, a preamble.
    for k in range(len(words) - 1, -1, -1):
        said = first_at(words, k, _SAYING)
        if said is not None and k + len(said) < len(words):
            toks, words = toks[k + len(said) :], words[k + len(said) :]
            break
    # Lead-ins at the start only ("take the red one"): a verb inside would be read.
    k = 0
    moved = True
    while moved:
        moved = False
        phrase = first_at(words, k, _LEAD_INS)
        if phrase is not None:
            k += len(phrase)
            moved = True
        while k < len(words) and (words[k] in LEADING or words[k] == ","):
            k += 1
            moved = True  # "please pick up the cup": a lead-in after "please"
    toks, words = toks[k:], words[k:]
    quantifier: Literal["one", "any", "all"] = "one"
    unread: list[str] = []
    # Quantifier phrases first: "it does not matter" holds a "not" that excludes nothing.
    keep: list[int] = []
    i = 0
    while i < len(words):
        said = first_at(words, i, _ANY_PHRASES)
        if said is not None:
            quantifier = "any"
            i += len(said)
            continue
        keep.append(i)
        i += 1
    toks = [toks[j] for j in keep]
    words = [words[j] for j in keep]
    # Clauses: a condition runs to its clause's end, and is unread.
    kept: list[tuple[str, str]] = []
    i = 0
    while i < len(toks):
        if words[i] in CONDITIONS:
            end = next((j for j in range(i + 1, len(words)) if words[j] == ","), len(words))
            unread.append(" ".join(o for _, o in toks[i:end]))
            i = end
            continue
        kept.append(toks[i])
        i += 1
    parts_toks = _split(kept, ("or", "and", "nor", "plus", "&"))
    parts: list[Part] = []
    other = False
    for ptoks in parts_toks:
        part, q, left, is_other = _read_part(ptoks)
        other = other or is_other
        if q != "one":
            quantifier = "all" if "all" in (q, quantifier) else q
        unread += left
        if part is not None:
            parts.append(part)
    if not parts:
        parts.append(Part(""))
    return Reference(str(text), tuple(parts), quantifier, tuple(unread), other)


def _split(toks: list[tuple[str, str]], joints: Sequence[str]) -> list[list[tuple[str, str]]]:
    """``toks`` split at top-level coordination (not inside an exclusion's clause)."""
    out: list[list[tuple[str, str]]] = [[]]
    excluding = False
    for w, o in toks:
        if w == ",":
            excluding = False
        if w in _EXCLUDERS and w not in ("other", "anything", "but"):
            excluding = True
        if w in joints and not excluding and out[-1]:
            out.append([])
            continue
        out[-1].append((w, o))
    return [p for p in out if any(w != "," for w, _ in p)]


def _read_part(
    toks: list[tuple[str, str]],
) -> tuple[Part | None, Literal["one", "any", "all"], list[str], bool]:
    """One description: its exclusions, then its selections, then the core left."""
    words = [w for w, _ in toks]
    quantifier: Literal["one", "any", "all"] = "one"
    # Exclusions: from a marker to the clause's end (a comma, or "but").
    base: list[tuple[str, str]] = []
    excluded: list[list[tuple[str, str]]] = []
    i = 0
    while i < len(toks):
        marker = first_at(words, i, _EXCLUDERS)
        if marker is not None:
            # "that is not", "I do not want": glue before and after the marker.
            while base and base[-1][0] in NOT_BEFORE:
                base.pop()
            j = i + len(marker)
            while j < len(words) and words[j] in NOT_AFTER:
                j += 1
            end = next(
                (m for m in range(j, len(words)) if words[m] == "," or words[m] == "but"),
                len(words),
            )
            excluded.append(toks[j:end])
            i = end
            continue
        base.append(toks[i])
        i += 1
    unread: list[str] = []
    selects: list[Select] = []
    core: list[tuple[str, str]] = []
    ids = [o for w, o in base if "|" in w]
    if ids and len(ids) < len([w for w, _ in base if w not in IGNORED and w != ","]):
        # "Cup|1, next to the plant": that one, and it must be next to the plant.
        base = [("one", "one") if "|" in w else (w, o) for w, o in base]
    elif ids:
        ids = []  # an objectId alone is the core: the grounder finds it
    other = False
    bwords = [w for w, _ in base]
    n = len(base)
    i = 0
    while i < n:
        w = bwords[i]
        if w == ",":
            i += 1
            continue
        if w in ANY_WORDS:
            quantifier = "any"
            i += 1
            continue
        if w in ALL_WORDS:
            quantifier = "all"
            i += 2 if bwords[i + 1 : i + 2] == ["of"] else 1
            continue
        found = select_at(bwords, i)
        if found is not None:
            sel, used = found
            if sel is None:
                unread.append(" ".join(o for _, o in base[i : i + used]))
            else:
                selects.append(sel)
            i += used
            continue
        if w in ("other", "another") and all(x in IGNORED or x == "," for x in bwords[:i]):
            rest = [x for x in bwords[i + 1 :] if x not in IGNORED]
            if len(rest) <= 1:
                other = True  # "the other one", "the other cup": the caller says which
                core.extend(base[i + 1 :])
                break
        if w == "next" and bwords[i + 1 : i + 2] == ["to"]:
            core.append(base[i])  # "next to the bowl": a relation, read in the core
            i += 1
            continue
        if w in POSSESSIVES or w in DESIGNATORS or (w.endswith("'s") and "|" not in w):
            unread.append(base[i][1])
            i += 1
            continue
        if w in NUMBER_WORDS and i + 1 < n and bwords[i + 1] not in ("or", ","):
            unread.append(base[i][1])  # "the two cups": how many, not which
            i += 1
            continue
        core.append(base[i])
        i += 1
    ex_parts: list[Part] = []
    for etoks in excluded:
        part, _q, left, _o = _read_part(etoks)
        unread += left
        ex_parts.append(part if part is not None else Part(""))
    if excluded and not any(etoks for etoks in excluded):
        unread.append("not")  # "not" with nothing after it
    selects = axis_ordinals(selects, unread)
    # The core keeps its glue ("on the left of the sink"); only-ignorable words are no core.
    core = [(w, o) for w, o in core if w != "," and w not in NOISE]
    while core and core[0][0] in ("the", "a", "an", "that", "which", "is", "are"):
        core = core[1:]
    if core and core[0][0] in RELATION_STARTS:
        core = [("one", "one"), *core]  # "(not) in the sink": any one in the sink
    core_text = " ".join(o for _, o in core) if any(w not in IGNORED for w, _ in core) else ""
    if not (core_text or selects or ex_parts or ids or other) and quantifier == "one":
        return None, quantifier, unread, other
    return Part(core_text, tuple(selects), tuple(ex_parts), tuple(ids)), quantifier, unread, other


# --------------------------------------------------------------------------- evaluate
CoreFn = Callable[[str], Core]


def designate(
    reference: Reference | str,
    domain: Sequence[Any],
    core: CoreFn,
    *,
    scene: Any = None,
    order: Sequence[str] | None = None,
    speaker: Viewer | None = None,
) -> Designation:
    """Run a reference over ``domain``.

    Args:
        reference: a :class:`Reference` or the words (read with :func:`read`).
        domain: the objects in scope (``id``, ``xyz``, ``raw``): the scene's, or a question's
            candidates.
        core: grounds a core description to objects (:class:`Core`); called once per part.
        scene: the scene (the robot's pose, for sides and distances); None: a side or distance
            in the robot's frame is unclear.
        order: the ids in the order a question listed them ("the first one" counts in it);
            None: an ordinal without an axis is unclear.
        speaker: the speaker's position and heading, for "my left", "near me"
            (:func:`speaker_view`); None: the speaker is unknown, and what is said from the
            speaker's view is unclear.

    Returns:
        The :class:`Designation` (never raises on words; a bad scene value is a
        :class:`~bt_raider.errors.SceneError` for the caller to fail closed on).
    """
    ref = read(reference) if isinstance(reference, str) else reference
    unread = list(ref.unread)
    unclear: list[str] = []
    reasons: list[str] = []
    chosen: list[Any] = []
    ev = _Eval(domain, core, scene, order, speaker)
    for part in ref.parts:
        got, why, left, unsure = ev.part(part)
        unread += left
        unclear += unsure
        if why:
            reasons.append(why)
        for obj in got:
            if all(obj.id != c.id for c in chosen):
                chosen.append(obj)
    rank = {o.id: k for k, o in enumerate(domain)}
    ids = tuple(o.id for o in sorted(chosen, key=lambda o: rank.get(o.id, len(rank))))
    mode: Mode = "one"
    if ref.quantifier == "any":
        mode = "any"
    elif ref.quantifier == "all" or len(ref.parts) > 1:
        mode = "several"
    said = ""
    if unread:
        said = "I did not understand " + " and ".join(f"'{u}'" for u in dict.fromkeys(unread))
    if ref.other:
        unclear.append("other than which one?")
    text = "; ".join(x for x in (said, *dict.fromkeys(unclear)) if x)
    reason = "; ".join(dict.fromkeys(reasons))
    return Designation(ids, mode, text, tuple(dict.fromkeys(unread)), reason, ref)


class _Eval:
    """One evaluation: the domain, the core grounder, the frames."""

    def __init__(
        self,
        domain: Sequence[Any],
        core: CoreFn,
        scene: Any,
        order: Sequence[str] | None,
        speaker: Viewer | None,
    ) -> None:
        self.domain = list(domain)
        self.core = core
        self.scene = scene
        self.order = list(order) if order is not None else None
        self.speaker = speaker

    def part(self, part: Part) -> tuple[list[Any], str, list[str], list[str]]:
        """``(objects, reason, unread, unclear)`` of one part."""
        pool, _sure, reason, unread, unclear = self._part(part)
        return pool, reason, unread, unclear

    def _part(self, part: Part) -> tuple[list[Any], set[str], str, list[str], list[str]]:
        """``(objects it may mean, ids it means for certain, reason, unread, unclear)``."""
        unread: list[str] = []
        unclear: list[str] = []
        if part.core:
            found = self.core(part.core)
            unread += found.unread
            ids = {o.id for o in found.objects}
            pool = [o for o in self.domain if o.id in ids]
            sure = ids if found.certain is None else {o.id for o in found.certain} & ids
            reason = found.reason
        else:
            pool, reason = list(self.domain), ""
            sure = {o.id for o in pool}
        if part.ids:
            pool = [o for o in pool if o.id in part.ids]
            if len(set(part.ids)) > 1:
                pool = []  # "Cup|1 Cup|2" is no one object
                reason = "two names for one object"
        for ex in part.excluded:
            maybe, certain, _why, left, unsure = self._part(ex)
            unread += left
            unclear += unsure
            # Only what is excluded for certain goes; what may be excluded is no longer sure.
            pool = [o for o in pool if o.id not in certain]
            sure -= {o.id for o in maybe}
        for sel in part.selects:
            if sel.kind == "skip":
                continue
            pool, why, unsure_sel = self.select(sel, pool)
            unclear += unsure_sel
            if why:
                reason = why
            if len(pool) > 1 or unsure_sel:
                # "the one on the right" of three on the right: none is it for certain, so
                # "not the one on the right" excludes none of them.
                sure = set()
        if not pool and not reason:
            reason = "nothing fits"
        return pool, sure & {o.id for o in pool}, reason, unread, unclear

    def viewer(self, frame: str, words: str, *, facing: bool = True) -> tuple[Viewer | None, str]:
        """The viewer of a frame, or why it is unknown (``facing``: its heading is needed)."""
        if frame == "speaker":
            if self.speaker is None:
                return None, f"I do not know who is speaking, so I cannot tell what '{words}' means"
            if facing and not self.speaker.facing:
                return None, (
                    f"I do not know which way you face, so I cannot tell what '{words}' means"
                )
            return self.speaker, ""
        if self.scene is None:
            return None, f"I cannot see '{words}' from here"
        return None, ""

    def select(self, sel: Select, pool: list[Any]) -> tuple[list[Any], str, list[str]]:
        """``(kept, reason, unclear)``."""
        if sel.kind == "ordinal":
            return self.ordinal(sel, pool)
        if sel.kind == "size":
            return self.size(sel, pool)
        viewer, why = self.viewer(sel.frame, sel.words, facing=sel.kind != "distance")
        if why:
            return pool, "", [why]
        if sel.kind in ("side", "side?"):
            kept, reason = attributes.on_side(self.scene, pool, str(sel.value), viewer)
            if sel.kind == "side?" and {o.id for o in kept} != {o.id for o in pool}:
                # A side, or "at once": the two readings designate different objects.
                return pool, "", [f"I am not sure whether '{sel.words}' means on the right"]
            if sel.kind == "side?":
                return pool, "", []  # both readings designate the same objects
            if viewer is None and not attributes.heading_known(self.scene) and len(kept) > 1:
                return pool, "", [reason]  # which way the robot faces is unknown: never a guess
            return kept, reason, []
        if sel.kind == "distance":
            return self.distance(sel, pool, viewer)
        return self.extreme(sel, pool, viewer)

    def _origin(self, viewer: Viewer | None) -> tuple[float, float]:
        if viewer is not None:
            return viewer.x, viewer.z
        x, _, z = self.scene.agent_xyz
        return float(x), float(z)

    def _lateral(self, viewer: Viewer | None, obj: Any) -> float:
        ox, oz = self._origin(viewer)
        if viewer is not None:
            yaw = math.radians(viewer.yaw)
            rx, rz = math.cos(yaw), -math.sin(yaw)
        else:
            rx, rz = self.scene.right_xz()
        x, _, z = obj.xyz
        return (x - ox) * rx + (z - oz) * rz

    def distance(
        self, sel: Select, pool: list[Any], viewer: Viewer | None
    ) -> tuple[list[Any], str, list[str]]:
        if len(pool) <= 1:
            return pool, "", []
        ox, oz = self._origin(viewer)
        ranked = sorted((math.hypot(o.xyz[0] - ox, o.xyz[2] - oz), k) for k, o in enumerate(pool))
        if sel.value == "far":
            ranked.reverse()
        if abs(ranked[1][0] - ranked[0][0]) <= DISTANCE_MARGIN:
            return pool, f"'{sel.words}' cannot tell them apart: they are about as far", []
        return [pool[ranked[0][1]]], "", []

    def extreme(
        self, sel: Select, pool: list[Any], viewer: Viewer | None
    ) -> tuple[list[Any], str, list[str]]:
        if len(pool) <= 1:
            return pool, "", []
        if viewer is None and not attributes.heading_known(self.scene):
            return pool, "", [f"I do not know which way I face, so '{sel.words}' is unclear"]
        ranked = sorted((self._lateral(viewer, o), k) for k, o in enumerate(pool))
        margin = 0.05
        if sel.value == "middle":
            if len(ranked) % 2 == 0:
                return pool, f"no one of them is in the middle ({len(pool)} of them)", []
            mid = len(ranked) // 2
            ok = min(ranked[mid][0] - ranked[mid - 1][0], ranked[mid + 1][0] - ranked[mid][0])
            if ok <= margin:
                return pool, f"'{sel.words}' cannot tell them apart", []
            return [pool[ranked[mid][1]]], "", []
        if sel.value == "rightmost":
            ranked.reverse()
        if abs(ranked[1][0] - ranked[0][0]) <= margin:
            return pool, f"'{sel.words}' cannot tell them apart", []
        return [pool[ranked[0][1]]], "", []

    def size(self, sel: Select, pool: list[Any]) -> tuple[list[Any], str, list[str]]:
        if len(pool) <= 1:
            return pool, "", []
        volumes = [_volume(o) for o in pool]
        if any(v is None for v in volumes):
            return pool, "", [f"the scene does not give their sizes, so '{sel.words}' is unclear"]
        ranked = sorted(((v or 0.0), k) for k, v in enumerate(volumes))
        if sel.value == "big":
            ranked.reverse()
            ok = ranked[0][0] > ranked[1][0] * SIZE_RATIO
        else:
            ok = ranked[1][0] > ranked[0][0] * SIZE_RATIO
        if not ok:
            return pool, f"'{sel.words}' cannot tell them apart: they are about as big", []
        return [pool[ranked[0][1]]], "", []

    def ordinal(self, sel: Select, pool: list[Any]) -> tuple[list[Any], str, list[str]]:
        value = int(sel.value)
        if sel.frame == "list":
            if self.order is None:
                return pool, "", [f"I cannot count '{sel.words}': I listed nothing to count"]
            index = len(self.order) - 1 if value == -1 else value - 1
            if not 0 <= index < len(self.order):
                return [], f"there is no '{sel.words}' of {len(self.order)}", []
            picked = self.order[index]
            return [o for o in pool if o.id == picked], "", []
        side, _, frame = sel.frame.partition(":")
        viewer, why = self.viewer(frame, sel.words)
        if why:
            return pool, "", [why]
        if viewer is None and not attributes.heading_known(self.scene):
            return pool, "", [f"I do not know which way I face, so '{sel.words}' is unclear"]
        ranked = sorted((self._lateral(viewer, o), k) for k, o in enumerate(pool))
        if side == "right":
            ranked.reverse()
        index = len(ranked) - 1 if value == -1 else value - 1
        if not 0 <= index < len(ranked):
            return [], f"there is no '{sel.words}' of {len(ranked)}", []
        gaps = [abs(ranked[k + 1][0] - ranked[k][0]) for k in range(len(ranked) - 1)]
        if any(g <= 0.05 for g in gaps[max(0, index - 1) : index + 1]):
            # Unclear, not a reason: a later word ("on the left") must not narrow a tie to one.
            return pool, "", [f"'{sel.words}' cannot tell them apart"]
        return [pool[ranked[index][1]]], "", []


def _volume(obj: Any) -> float | None:
    """The volume of an object's ``axisAlignedBoundingBox.size`` (m³), or None."""
    box = obj.raw.get("axisAlignedBoundingBox") if isinstance(obj.raw, dict) else None
    size = box.get("size") if isinstance(box, dict) else None
    if not isinstance(size, dict):
        return None
    try:
        dims = [float(size[a]) for a in ("x", "y", "z")]
    except (KeyError, TypeError, ValueError):
        return None
    if not all(math.isfinite(d) and d >= 0 for d in dims):
        return None
    return dims[0] * dims[1] * dims[2]


def speaker_view(scene: Any, who: str | None = None) -> Viewer | None:
    """Who speaks, as a viewer: the person ``who`` (id or recognised name: the person the
    robot talks to), else the one marked ``"user": true``, else the only person in the scene;
    None when it cannot be known (nobody, or several and none marked).

    Raises:
        SceneError: the speaker's position or heading is not a finite number.
    """
    people = list(getattr(scene, "humans", []) or [])
    if who is not None:
        key = str(who).strip().lower()
        named = [h for h in people if h.id.lower() == key or str(h.name or "").lower() == key]
        return attributes.person_view(named[0]) if len(named) == 1 else None
    users = [h for h in people if h.raw.get("user") is True]
    if len(users) == 1:
        return attributes.person_view(users[0])
    if len(people) == 1 and not users:
        return attributes.person_view(people[0])
    return None
