"""Routes: a walk people describe ("turn around and walk to the stove on the left") ends at a place.

A route is read as an approach to where it ends: the last place a marker of
:data:`~bt_raider.checking.vocabulary.ROUTE_MARKERS` ("to", "towards", "in front of", "face")
names that is not a direction ("to your left", "around"). :mod:`bt_raider.checking.parse`
decides that a query is a route (:func:`is_route`) and builds the approach; this module finds
its destination (:func:`route_destination`) from the words alone, and knows nothing of scenes.

A phrase of a route ends where a new clause starts: at a clause word ("then", "and", "where"),
at the next marker, or at a comma or full stop of the text as written that a verb follows ("walk
to the table, turn right" ends at the table; "the tall, wooden shelf" is one phrase).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Protocol, TypeVar

from bt_raider.checking.vocabulary import (
    DETERMINERS,
    DIRECTION_WORDS,
    PART_OF_PREFIX,
    RELATIONS_BY_FIRST_WORD,
    ROUTE_BREAKS,
    ROUTE_CLAUSE_WORDS,
    ROUTE_MARKERS,
    ROUTE_TAIL_WORDS,
    ROUTE_VERBS,
    VERB_PHRASES,
)

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self is Python 3.11+


class Phrase(Protocol):
    """What a route needs of a parsed phrase (:class:`~bt_raider.checking.parse.ArgPhrase`)."""

    @property
    def head(self) -> str: ...

    @property
    def relation(self) -> str | None: ...

    @property
    def anchor(self) -> Self | None: ...

    @property
    def detail(self) -> Self | None: ...


#: The caller's kind of phrase: :func:`route_destination` returns one that ``phrase`` made.
P = TypeVar("P", bound=Phrase)


#: Words that start a new clause after a comma ("walk to the table, turn right").
_CLAUSE_STARTS = frozenset(
    ROUTE_VERBS | ROUTE_CLAUSE_WORDS | {p.split()[0] for p, _ in VERB_PHRASES}
)

#: Words after which "to the left side of X" says where to go, not where a thing is.
_BEFORE_SIDE = frozenset(ROUTE_VERBS | DIRECTION_WORDS | {"over", "way"})

#: Words that end a "where" clause ("where the fridge is").
_WHERE_ENDS = frozenset(ROUTE_CLAUSE_WORDS | {"is", "are", "was", "stands", "sits"})

#: Words a route may start with once its verb is gone ("turn left and to the microwave": the
#: prefix "turn left and" is read, "to the microwave" is left).
_VERBLESS_STARTS = frozenset({"to", "towards", "toward", "left", "right", "around", "straight"})

#: Relations right after the verb that say where to go: "go next to the radio".
NEAR_MARKERS = (("next", "to"), ("close", "to"), ("beside",), ("near",), ("by",))


def relation_spans(words: list[str]) -> list[tuple[int, int, str]]:
    """``(start, length, relation)`` of each relation phrase in ``words``, left to right."""
    spans: list[tuple[int, int, str]] = []
    i = 0
    while i < len(words):
        for pattern, rel in RELATIONS_BY_FIRST_WORD.get(words[i], ()):
            n = len(pattern)
            if tuple(words[i : i + n]) == pattern:
                spans.append((i, n, rel))
                i += n
                break
        else:
            i += 1
    return spans


def direction_tail(words: list[str]) -> int:
    """Where a trailing direction ("on your left", "to the right", "behind you") starts."""
    n = len(words)
    if words[n - 4 :] == ["in", "front", "of", "you"]:
        return n - 4
    for size in (4, 3, 2):
        tail = words[n - size :] if n > size else []
        if not tail:
            continue
        if (
            size > 2
            and tail[0] in ("on", "to", "at", "in")
            and tail[1] in ("your", "the", "my")
            and tail[2] in ("left", "right")
            and (size == 3 or tail[3:] == ["side"])
        ):
            return n - size
        if size == 2 and tail in (["behind", "you"], ["near", "you"]):
            return n - 2
    return n


def place_end(words: list[str]) -> int:
    """Where the place of a route phrase ends: before a trailing direction ("on your left")
    and words that say how, not where ("face the sink again", "the nightstand ahead")."""
    end = direction_tail(words)
    while end > 0 and words[end - 1] in ROUTE_TAIL_WORDS:
        end -= 1
    return end


def is_route(
    words: list[str],
    action: str | None,
    rest: list[str],
    breaks: AbstractSet[int] = frozenset(),
) -> bool:
    """Whether the words describe a walk ("turn left and go to the sink", "walk ahead to ...").

    Args:
        words: the normalised words of the query.
        action: the action its leading verb names, or None.
        rest: the words after that verb.
        breaks: indices where a new clause starts in the text as written (:func:`clause_breaks`).
    """
    if words[0] == "take" and words[1:2] == ["a"] and words[2:3] in (["step"], ["left"], ["right"]):
        return True  # "take a step to the left and face the sink"
    if action == "turnoff" and words[0] == "stop":  # "stop in front of the TV stand"
        return words[1:2] in (["in"], ["at"], ["by"], ["next"], ["near"], ["beside"])
    if action is None and words[0] in _VERBLESS_STARTS:
        return True  # "turn left and [go] to the microwave", "[turn] left again to the tub"
    if words[0] not in ROUTE_VERBS:
        return False
    if action is None:
        return True
    if action in ("turnon", "turnoff"):
        # "turn right ... on the sink", "turn to your right and go to the sink on your left"
        return len(words) > 1 and (words[1] in DIRECTION_WORDS or words[1] in ("to", "and"))
    if action == "approach":
        # "walk to the counter then turn left to the sink": the route goes on past the first.
        return (
            any(w in ROUTE_BREAKS for w in rest[1:])
            or any(w in ROUTE_CLAUSE_WORDS for w in rest)
            or direction_tail(rest) < len(rest)
            or any(words[k] in _CLAUSE_STARTS for k in breaks)
            or PART_OF_PREFIX.match(" ".join(rest[1:] if rest[:1] == ["to"] else rest) + " ")
            is not None
        )
    return False


def clause_breaks(text: str, words: list[str]) -> set[int]:
    """Indices of ``words`` (the normalised tail of ``text``) that follow a comma, semicolon
    or full stop in ``text`` as written: no phrase of a route runs across one."""
    tokens: list[tuple[str, bool]] = []
    after_stop = False
    for piece in re.findall(r"[^\s,;.!?]+|[,;.!?]", text.replace("’", "'")):
        if piece in ",;.!?":
            after_stop = True
            continue
        tokens.append((piece.lower(), after_stop))
        after_stop = False
    low = [t for t, _ in tokens]
    n = len(words)
    for start in range(len(low) - n, -1, -1):
        if low[start : start + n] == words:
            return {i for i in range(1, n) if tokens[start + i][1]}
    return set()


def directional(head: str) -> bool:
    """Whether a head names a direction, not a place ("left", "the other side", "")."""
    words = [w for w in head.split() if w not in DETERMINERS]
    return all(w in DIRECTION_WORDS or w.isdigit() for w in words)


def route_destination(
    words: list[str],
    phrase: Callable[[int, int], P | None],
    breaks: AbstractSet[int] = frozenset(),
) -> P | None:
    """Where a route ends: the phrase of its last marker that names a place, else None.

    Args:
        words: the normalised words of the route ("turn", "around", "and", "walk", "to", ...).
        phrase: parses ``words[i:j]`` into a phrase (None when empty).
        breaks: indices where a new clause starts in the text as written (:func:`clause_breaks`).
    """
    # Words of a relation ("next to", "to the left of") belong to a phrase and start none.
    in_relation = {
        k
        for start, n, rel in relation_spans(words)
        if rel != "from"
        for k in range(start, start + n)
    }
    best: P | None = None
    sought: P | None = None
    named_end = -1  # where the last phrase that named a place ended
    i = 0
    side_of = {s: n for s, n, rel in relation_spans(words) if rel in ("left of", "right of")}
    while i < len(words):
        marker = next((m for m in ROUTE_MARKERS if tuple(words[i : i + len(m)]) == m), None)
        to_side = i in side_of and words[i] == "to" and (i == 0 or words[i - 1] in _BEFORE_SIDE)
        if to_side:
            # "walk around the table to the left side of the couch": to the couch.
            marker = tuple(words[i : i + side_of[i]])
        if i == 1 and marker is None:
            # Right after the verb a relation says where to go: "go next to the radio".
            marker = next((m for m in NEAR_MARKERS if tuple(words[1 : 1 + len(m)]) == m), None)
        if marker is None or (i in in_relation and words[i] == "to" and not to_side):
            i += 1  # "to the left of" belongs to a phrase, it starts none
            continue
        start = i + len(marker)
        if start < len(words) and (words[start] in ROUTE_BREAKS or words[start] == "stand"):
            i += 1  # "to face the sink", "to stand by the sink": the next marker says where
            continue
        end = start
        while end < len(words) and words[end] not in ROUTE_CLAUSE_WORDS:
            if end > start and end in breaks and words[end] in _CLAUSE_STARTS:
                break  # "walk to the table, turn right"; not "the tall, wooden shelf"
            if end > start and words[end] in ROUTE_BREAKS:
                if end not in in_relation or words[end] != "to":
                    break
            end += 1
        lead = PART_OF_PREFIX.match(" ".join(words[start:end]) + " ")
        if lead is not None:
            start += len(lead.group(0).split())
        end = start + place_end(words[start:end])
        if marker == ("at",) and i == named_end:
            i = max(end, i + 1)  # "the desk at the foot of the bed": the desk is the place
            continue
        found = phrase(start, end)
        if found is not None and directional(found.head) and found.anchor is not None:
            found = found.anchor  # "go to the left of the sink": to the sink
        if found is not None and directional(found.head) and found.detail is not None:
            found = found.detail  # "walk to the corner with a trash bin": to the bin
        if words[end : end + 1] == ["where"]:
            stop = next(
                (k for k in range(end + 1, len(words)) if words[k] in _WHERE_ENDS), len(words)
            )
            if found is None or directional(found.head):
                found = phrase(end + 1, stop)  # "the far corner where the fridge is": the fridge
            else:
                # "the table where the apple is": the table, with the apple there.
                stop += words[stop : stop + 1] in (["is"], ["are"], ["was"], ["sits"], ["stands"])
                if words[end + 1 : end + 2] == ["there"]:  # "where there is an apple"
                    stop = next(
                        (k for k in range(stop + 1, len(words)) if words[k] in ROUTE_CLAUSE_WORDS),
                        len(words),
                    )
                found = phrase(start, stop) or found
            end = stop
        if found is not None and not directional(found.head):
            if marker in (("find",), ("locate",)):
                sought = found  # "go to the kitchen, find a glass": the kitchen first
            else:
                best = found
            named_end = end
        i = max(end, i + 1)
    if best is None and sought is None:
        # No place named but "... the table to the left of the couch": the couch is the end.
        for k in sorted((k for k in side_of if words[k] == "to"), reverse=True):
            stop = k + side_of[k]
            while stop < len(words) and words[stop] not in ROUTE_CLAUSE_WORDS:
                stop += 1
            found = phrase(k + side_of[k], k + side_of[k] + place_end(words[k + side_of[k] : stop]))
            if found is not None and not directional(found.head):
                return found
    return best or sought
