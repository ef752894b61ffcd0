"""Parse an action query into an action name and argument phrases.

Three forms (``docs/scene-format.md`` section 2):

- structured: ``pick(Apple)``, ``place(Mug, CoffeeMachine)``, ``handover(medicine, adriana)``;
- a PDDL action instance from a plan: ``(pick tiago medicine counter)``;
- natural language: "Can you please open the microwave?", "put the apple in the fridge".

Parsing is purely syntactic: it knows verbs, prepositions, spatial relations and state
adjectives, never the scene. Deciding what a phrase refers to is
:mod:`bt_raider.checking.grounding`'s job.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from bt_raider.checking.contract import check_query_text
from bt_raider.checking.phrases import ArgPhrase, parse_phrase
from bt_raider.checking.routes import (
    clause_breaks,
    direction_tail,
    directional,
    is_route,
    place_end,
    relation_spans,
    route_destination,
)
from bt_raider.checking.vocabulary import (
    ACTIONS,
    DESTINATION_PREPOSITIONS,
    DETERMINERS,
    DIRECTION_WORDS,
    HAND_ARG,
    HAND_PARAM,
    LOCATION_ARG,
    LOCATION_PARAM,
    MIN_ARGS,
    NAME_SUFFIXES,
    NAME_TO_ACTION,
    NON_DESTINATION_RELATIONS,
    PART_OF_PREFIX,
    POLITE_PREFIXES,
    POLITE_SUFFIXES,
    POST_MODIFIERS,
    REQUEST_FRAMES,
    ROBOT_ARG,
    ROBOT_PARAM,
    ROLES,
    ROUTE_CLAUSE_WORDS,
    ROUTE_VERBS,
    SPEAKER_WORDS,
    SPLIT_PARTICLES,
    VERB_PHRASES,
    Vocab,
    state_vocab,
)
from bt_raider.errors import QueryError
from bt_raider.perception.reference_words import without_time_words

# --------------------------------------------------------------------------- data
#: The PDDL names of a query that is no PDDL instance: none, and shared read-only.
NO_NAMES: Mapping[str, str] = MappingProxyType({})


class ParsedQuery(NamedTuple):
    """A query split into its action and argument phrases (immutable: ``_replace`` copies).

    Attributes:
        action: one of :data:`ACTIONS`.
        args: the argument phrases, in :data:`ROLES` order.
        source: ``structured``, ``pddl`` or ``natural``.
        text: the query as given.
        pddl_args: for a PDDL instance, every argument as written (robot included).
        pddl_names: for a PDDL instance, PDDL object name -> the scene name it stands for.
        pddl_robots: for a PDDL instance, the arguments that name the robot or its hand.
        request: the query asks for an object for the speaker without saying what the robot
            should do ("I need the salt shaker", "get me a mug"): it is parsed as a handover to
            "me", and :meth:`as_pick` gives the pick a checker uses when the scene has no people.
        pick_args: for a request, the arguments of its pick form (object, and a source); for
            an approach read from a carry ("carry the apple to the microwave"), what is carried.
    """

    action: str
    args: list[ArgPhrase]
    source: Literal["structured", "pddl", "natural"]
    text: str = ""
    pddl_args: tuple[str, ...] = ()
    pddl_names: Mapping[str, str] = NO_NAMES
    pddl_robots: tuple[str, ...] = ()
    request: bool = False
    pick_args: tuple[ArgPhrase, ...] = ()

    def arg(self, role: str) -> ArgPhrase | None:
        """The argument with this role, or None."""
        return next((a for a in self.args if a.role == role), None)

    def as_pick(self) -> ParsedQuery:
        """A request as the pick it comes down to when nobody can be handed the object."""
        if not self.request:
            return self
        return self._replace(action="pick", args=list(self.pick_args))


# --------------------------------------------------------------------------- entry point
def parse_query(
    text: str,
    bindings: Mapping[str, str | None] | None = None,
    lexicon: Any | None = None,
) -> ParsedQuery:
    """Parse one query.

    Args:
        text: the query (structured, PDDL instance, or natural language).
        bindings: for a PDDL instance, PDDL object name -> scene name. When given, only bound
            arguments are kept (the robot and other non-object parameters are dropped), each
            replaced by its scene name; an empty value drops that argument too. Parameter
            name -> scene name, in parameter order (as :mod:`bt_raider.planners` gives them),
            works as well.
        lexicon: a :class:`~bt_raider.perception.lexicon.CategoryLexicon` whose state adjectives are
            recognised besides :data:`STATE_WORDS` (default: the bundled one).

    Raises:
        QueryError: empty query, unknown action, wrong number of arguments; the message names
            the value and lists the valid actions.
    """
    if not isinstance(text, str) or not text.strip():
        raise QueryError(
            f"a query must be a non-empty string, got {text!r}: name one action of "
            + ", ".join(ACTIONS)
        )
    check_query_text(text)  # the length cap: parsing and grounding stay cheap
    stripped = text.strip()
    vocab = state_vocab(lexicon)
    if stripped.startswith("("):
        return _parse_pddl(stripped, bindings or {}, vocab)
    match = re.fullmatch(r"\s*([A-Za-z][\w\-]*)\s*\((.*)\)\s*[.!?]?\s*", stripped, re.DOTALL)
    if match:
        return _parse_structured(stripped, match.group(1), match.group(2), vocab)
    return _parse_natural(stripped, vocab)


def action_for_name(name: str) -> str | None:
    """The action a structured or PDDL action name stands for (``pick-up`` -> ``pick``)."""
    key = re.sub(r"[\s_\-]+", "", name.lower())
    if key in NAME_TO_ACTION:
        return NAME_TO_ACTION[key]
    for suffix in NAME_SUFFIXES:
        if key.endswith(suffix) and key[: -len(suffix)] in NAME_TO_ACTION:
            return NAME_TO_ACTION[key[: -len(suffix)]]
    # Longest known prefix: "pickupobjectinreceptacle1", "move-to-counter", "deliver-medicine".
    for syn in sorted(NAME_TO_ACTION, key=len, reverse=True):
        if len(syn) >= 3 and key.startswith(syn):
            return NAME_TO_ACTION[syn]
    return None


def _unknown_action(value: str) -> QueryError:
    return QueryError(f"unknown action {value!r}: expected one of {', '.join(ACTIONS)}")


def _check_arity(action: str, args: list[ArgPhrase], text: str) -> list[ArgPhrase]:
    roles = ROLES[action]
    if len(args) < MIN_ARGS[action]:
        need = ", ".join(roles[: MIN_ARGS[action]])
        raise QueryError(
            f"{action} needs {MIN_ARGS[action]} argument(s) ({need}), got {len(args)} in {text!r}"
        )
    if len(args) > len(roles):
        raise QueryError(
            f"{action} takes at most {len(roles)} argument(s) ({', '.join(roles)}), "
            f"got {len(args)} in {text!r}"
        )
    return [_with_role(a, roles[i]) for i, a in enumerate(args)]


def _with_role(arg: ArgPhrase, role: str) -> ArgPhrase:
    return arg._replace(role=role)


# --------------------------------------------------------------------------- structured
def _parse_structured(text: str, name: str, inner: str, vocab: Vocab) -> ParsedQuery:
    action = action_for_name(name)
    if action is None:
        raise _unknown_action(name)
    parts = [p.strip() for p in inner.split(",")]
    parts = [p.strip("'\"") for p in parts if p]
    args = [parse_phrase(p, vocab=vocab) for p in parts]
    return ParsedQuery(action, _check_arity(action, args, text), "structured", text)


# --------------------------------------------------------------------------- PDDL
def _parse_pddl(text: str, bindings: Mapping[str, str | None], vocab: Vocab) -> ParsedQuery:
    inner = text.strip()
    if not inner.endswith(")") or "(" in inner[1:-1] or ")" in inner[1:-1]:
        raise QueryError(f"malformed PDDL action instance {text!r}: expected '(name arg ...)'")
    tokens = inner[1:-1].split()
    if not tokens:
        raise QueryError(
            f"empty PDDL action instance {text!r}: expected one of {', '.join(ACTIONS)}"
        )
    action = action_for_name(tokens[0])
    if action is None:
        raise _unknown_action(tokens[0])
    raw_args = tokens[1:]
    slots = _pddl_slots(raw_args, bindings)
    kept = [s for s in slots if s.value and not s.robot_like()]
    if action != "approach":
        # Waypoints are where the robot stands, not what it acts on -- unless the action
        # needs them (a gripper's ``drop ball room`` puts the ball in the room).
        objects = [s for s in kept if not s.location_like()]
        if len(objects) >= MIN_ARGS[action]:
            kept = objects
    kept = _fit_pddl_args(action, kept)
    args = [parse_phrase(s.value, pddl=True, vocab=vocab) for s in kept]
    return ParsedQuery(
        action,
        _check_arity(action, args, text),
        "pddl",
        text,
        pddl_args=tuple(raw_args),
        pddl_names={s.name: s.value for s in slots if s.value},
        pddl_robots=tuple(s.name for s in slots if s.robot_like()),
    )


class _Slot(NamedTuple):
    """One argument of a PDDL instance: its parameter (when known), PDDL name, scene name."""

    param: str | None
    name: str
    value: str

    def robot_like(self) -> bool:
        return bool(
            (self.param and ROBOT_PARAM.match(self.param))
            or (self.param and HAND_PARAM.match(self.param))
            or ROBOT_ARG.match(self.name)
            or HAND_ARG.match(self.name)
        )

    def location_like(self) -> bool:
        return bool(
            (self.param and LOCATION_PARAM.match(self.param))
            or LOCATION_ARG.match(self.name)
            or LOCATION_ARG.match(self.value)
        )


def _pddl_slots(raw_args: list[str], bindings: Mapping[str, str | None]) -> list[_Slot]:
    """Pair each PDDL argument with its parameter and scene name.

    ``bindings`` may map PDDL object names to scene names (``{"medicine": "Medicine"}``: only
    the bound arguments are objects) or, as :mod:`bt_raider.planners` reports them, the
    action's parameter names, in order, to scene names (``{"r": "tiago", "i": "Medicine"}``).
    """
    if not bindings:
        return [_Slot(None, a, a) for a in raw_args]
    by_key = {
        str(k).lower().lstrip("?"): ("" if v is None else str(v)) for k, v in bindings.items()
    }
    if all(a.lower() in by_key for a in raw_args):
        return [_Slot(None, a, by_key[a.lower()]) for a in raw_args]
    if len(bindings) == len(raw_args):
        return [
            _Slot(str(k).lstrip("?"), a, "" if v is None else str(v))
            for (k, v), a in zip(bindings.items(), raw_args, strict=True)
        ]
    # Bindings name some arguments only: those are the objects; the rest are dropped.
    return [_Slot(None, a, by_key.get(a.lower(), "")) for a in raw_args]


def _fit_pddl_args(action: str, args: list[_Slot]) -> list[_Slot]:
    """Trim a PDDL argument list to the action's roles (a move's start is not its target)."""
    if action == "approach":
        return args[-1:]
    if action in ("place", "handover"):
        return [args[0], args[-1]] if len(args) > 2 else args
    if action == "pick":
        return args[:2]
    return args[:1]


# --------------------------------------------------------------------------- natural language
def _normalise(text: str) -> str:
    t = text.strip().lower()
    t = t.replace("’", "'")
    t = re.sub(r"[?!.;]+$", "", t).strip()
    t = re.sub(r"[,;]|\.(?=\s)", " ", t)  # "... a green bin. Turn right": no "bin."
    t = re.sub(r"\s+", " ", t)
    # "right now": time, or a side ("to your right now"), as the one reader says.
    t = " ".join(without_time_words(t.split()))
    previous = None
    while previous != t:
        previous = t
        # Every leading phrase first, then the trailing ones in one pass: the suffix pattern
        # scans the whole text, so running it once per prefix would be quadratic or worse.
        stripped = None
        while stripped != t:
            stripped = t
            t = POLITE_PREFIXES.sub("", t).strip()
        t = POLITE_SUFFIXES.sub("", t).strip()
    return t


def _parse_natural(text: str, vocab: Vocab) -> ParsedQuery:
    norm = _normalise(text)
    if not norm:
        raise QueryError(
            f"a query must name an action, got {text!r}: expected one of {', '.join(ACTIONS)}"
        )
    words = norm.split()
    frame = REQUEST_FRAMES.match(norm)
    if frame is not None:
        # "I need the salt shaker": what the speaker wants, for the speaker.
        return _request(norm[frame.end() :].split(), text, vocab)
    action, rest = _match_verb(words)
    if action is None and words[0].endswith("ing"):
        # "would you mind opening the microwave?": the gerund names the verb.
        for stem in _stems(words[0]):
            action, rest = _match_verb([stem, *words[1:]])
            if action is not None:
                words = [stem, *words[1:]]
                break
    if is_route(words, action, rest, clause_breaks(text, words)):
        route = _route(words, text, vocab)
        if route is not None:
            return route
    if action is None:
        if words[0] in DETERMINERS and re.search(r"\bplease\b", text, re.IGNORECASE):
            return _request(words, text, vocab)  # "The salt shaker, please."
        raise _unknown_action(words[0])
    carry = _carry_route(rest, text, vocab) if words[0] in _CARRY_VERBS else None
    if carry is not None:
        return carry
    if words[0] in _CARRY_VERBS and action == "pick" and _recipient_to(rest):
        action = "handover"  # "take the medicine to Adriana"
    if action == "pick" and len(rest) > 1 and rest[0] in SPEAKER_WORDS:
        return _request(rest[1:], text, vocab)  # "get me a mug": "me" is no part of the mug
    carried: tuple[ArgPhrase, ...] = ()  # what a carry to a place takes along
    # Keep the original casing of the remainder for names ("Adriana").
    split = _Splitter(rest, _original_words(text, rest), vocab)
    if action == "place":
        args = split.place()
    elif action == "handover":
        args = split.handover()
        if words[0] in _CARRY_VERBS and len(args) == 2 and _names_an_object(args[1], vocab):
            # "carry the apple to the microwave": the robot goes there with it.
            action, args, carried = "approach", [args[1]], (_with_role(args[0], "object"),)
    elif action == "pick":
        args = split.pick()
    else:
        if action == "approach":
            first = 1 if rest[:1] == ["to"] else 0
            if (
                rest[first : first + 1] in (["face"], ["facing"], ["reach"])
                and len(rest) > first + 1
            ):
                first += 1  # "move to face the sink"
            lead = PART_OF_PREFIX.match(" ".join(rest[first:]) + " ")
            if lead is not None and first + len(lead.group(0).split()) < len(rest):
                first += len(lead.group(0).split())  # "go to the right hand side of the chair"
            end = first + place_end(rest[first:])  # "go to the nightstand ahead"
            split = _Splitter(rest[first:end], split.original[first:end], vocab)
        args = split.whole()
        if action == "approach" and args and directional(args[0].head) and args[0].anchor:
            args = [args[0].anchor]  # "go to the left of the sink": to the sink
    checked = _check_arity(action, args, text)
    return ParsedQuery(action, checked, "natural", text, pick_args=carried)


def _route(words: list[str], text: str, vocab: Vocab) -> ParsedQuery | None:
    """A route as an approach to where it ends (:func:`~bt_raider.checking.routes.route_destination`)."""
    split = _Splitter(words, _original_words(text, words), vocab)
    best = route_destination(words, split.phrase, clause_breaks(text, words))
    if best is None:
        return None
    return ParsedQuery("approach", [_with_role(best, "target")], "natural", text)


def _carry_route(rest: list[str], text: str, vocab: Vocab) -> ParsedQuery | None:
    """A carry followed by a route ("carry the bread and turn right to find the stove"): an
    approach to where the route ends, with what is carried."""
    k = next(
        (k for k in range(1, len(rest) - 1) if rest[k] == "and" and rest[k + 1] in ROUTE_VERBS),
        None,
    )
    route = _route(rest[k + 1 :], text, vocab) if k is not None else None
    if route is None:
        return None
    carried = parse_phrase(" ".join(_original_words(text, rest[:k]) or rest[:k]), vocab=vocab)
    return route._replace(pick_args=(_with_role(carried, "object"),))


def names_an_action(text: str) -> bool:
    """Whether natural-language ``text`` starts with a verb of :data:`ACTIONS` or a request
    ("close it", "I need a mug"), not a noun phrase ("the pear in the bowl")."""
    return leading_action(text) is not None


def leading_action(text: str) -> str | None:
    """The action natural-language ``text`` starts with (``handover`` for a request), or None
    for a noun phrase or a leg of a route that ends nowhere ("turn left")."""
    norm = _normalise(text)
    if not norm:
        return None
    if REQUEST_FRAMES.match(norm):
        return "handover"
    words = norm.split()
    action, rest = _match_verb(words)
    if is_route(words, action, rest, clause_breaks(text, words)):
        # "turn left", "take a step forward": a leg of a route that ends later, no action.
        return "approach" if _route(words, text, state_vocab(None)) is not None else None
    return action


def _request(words: list[str], text: str, vocab: Vocab) -> ParsedQuery:
    """A request for the speaker: a handover of the object to "me" (its pick in ``pick_args``)."""
    split = _Splitter(words, _original_words(text, words), vocab)
    pick_args = _check_arity("pick", split.pick(), text)
    speaker = ArgPhrase("me", "me", role="person")
    return ParsedQuery(
        "handover",
        [pick_args[0], speaker],
        "natural",
        text,
        request=True,
        pick_args=tuple(pick_args),
    )


def _stems(gerund: str) -> list[str]:
    """Base forms a gerund may come from: opening -> open, slicing -> slice, putting -> put."""
    base = gerund[:-3]
    out = [base, base + "e"]
    if len(base) > 2 and base[-1] == base[-2]:
        out.append(base[:-1])
    return out


#: Verbs that move an object somewhere: to a person it is a handover, to a thing an approach.
_CARRY_VERBS = frozenset({"bring", "carry", "take"})


#: A particle between what is carried and its "to" ("carry the racket over to the dresser").
_CARRY_PARTICLES = frozenset({"over", "back", "across", "up", "down", "along"})

#: Words that end a recipient phrase: a new clause ("... to the dresser so that you face it").
_CLAUSE_ENDS = ROUTE_CLAUSE_WORDS - {"and", "where"}


def recipient_to(words: list[str]) -> int | None:
    """Where the recipient "to" of a carry or handover is: the first "to" that starts no
    relation ("to the left of") and ends none ("next to", "close to"), or None."""
    in_relation = {k for s, n, _ in relation_spans(words) for k in range(s, s + n)}
    tos = [i for i, w in enumerate(words) if w == "to" and i > 0]
    plain = [i for i in tos if i not in in_relation]
    if plain:
        return plain[0]
    # "bring the remote to the left of the TV": the relation is where it goes.
    near = ("next", "close", "closest", "nearest", "near")
    return next((i for i in reversed(tos) if words[i - 1] not in near), None)


def _recipient_to(words: list[str]) -> bool:
    """Whether ``words`` hold a recipient "to" (not "next to", "close to")."""
    return recipient_to(words) is not None


def _names_an_object(phrase: ArgPhrase, vocab: Vocab) -> bool:
    """Whether a recipient phrase names an object type the lexicon knows ("the microwave")."""
    if vocab.lexicon is None or phrase.generic:
        return False
    words = phrase.head.split()
    # "the black fridge": colour and size words fall away.
    return any(vocab.lexicon.types_for(" ".join(words[i:])) for i in range(len(words)))


def _original_words(text: str, rest: list[str]) -> list[str]:
    """The words of ``text`` that the normalised remainder ``rest`` came from (original case)."""
    raw = re.sub(r"[?!.;,]+", " ", text.replace("’", "'")).split()
    low = [w.lower() for w in raw]
    n = len(rest)
    for start in range(len(raw) - n, -1, -1):
        if low[start : start + n] == rest:
            return raw[start : start + n]
    return []


def _match_verb(words: list[str]) -> tuple[str | None, list[str]]:
    action, rest = _match_verb_form(words)
    if action is None and len(words[0]) > 3 and words[0].endswith("s"):
        # "picks up the spatula": a third-person verb.
        action, rest = _match_verb_form([words[0][:-1], *words[1:]])
    return action, rest


def _match_verb_form(words: list[str]) -> tuple[str | None, list[str]]:
    for phrase, action in VERB_PHRASES:
        n = len(phrase.split())
        if words[:n] == phrase.split():
            rest = words[n:]
            return action, _strip_particle(rest)
    head = words[0]
    if head in SPLIT_PARTICLES and len(words) > 1:
        particles = SPLIT_PARTICLES[head]
        if words[-1] in particles:
            return particles[words[-1]], words[1:-1]
        for i, w in enumerate(words[1:], start=1):
            # "turn the light off in the kitchen": the particle is not last.
            if w in particles and i > 1:
                return particles[w], words[1:i] + words[i + 1 :]
    return None, words


#: Words a particle may come right before ("pick the towel up from the floor").
_AFTER_PARTICLE = frozenset("on in into onto from off out of with to inside and".split())


def _strip_particle(rest: list[str]) -> list[str]:
    # "pick the apple up", "put the mug down on the table": a dangling particle.
    if rest and rest[-1] in ("up", "down", "away") and rest[-2:] != ["right", "away"]:
        return rest[:-1]  # ("right away" left is a side or at once: the reader weighs it)
    for i, w in enumerate(rest):
        if w in ("up", "down") and 0 < i < len(rest) - 1 and rest[i + 1] in _AFTER_PARTICLE:
            return rest[:i] + rest[i + 1 :]
    return rest


class _Splitter:
    """Splits the words after the verb into argument phrases."""

    def __init__(self, words: list[str], original: list[str], vocab: Vocab) -> None:
        self.words = words
        self.original = original if len(original) == len(words) else []
        self.vocab = vocab

    def phrase(self, i: int, j: int) -> ArgPhrase | None:
        if i >= j:
            return None
        chosen = self.original[i:j] if self.original else self.words[i:j]
        return parse_phrase(" ".join(chosen), vocab=self.vocab)

    def around(self, i: int, n: int) -> list[ArgPhrase]:
        """The phrases before and after the ``n`` words at ``i``."""
        parts = (self.phrase(0, i), self.phrase(i + n, len(self.words)))
        return [p for p in parts if p is not None]

    def whole(self) -> list[ArgPhrase]:
        p = self.phrase(0, len(self.words))
        return [p] if p is not None else []

    def place(self) -> list[ArgPhrase]:
        """``put X in Y``: the first destination preposition that is not a relation phrase.

        What follows it describes the destination ("in the cabinet under the sink", "on the
        table in front of the bread"); a trailing direction ("to your right") is dropped, and
        "put the knife inside" puts it in "it" (what an earlier step named).
        """
        words = self.words[: direction_tail(self.words)]
        clause = next((k for k, w in enumerate(words) if w in _CLAUSE_ENDS), len(words))
        if 1 < clause < len(words) and words[clause - 1] in ("inside", "in", "there"):
            words = words[:clause]  # "place the card inside before closing it": inside it
        if len(words) >= 2 and words[-1] in ("inside", "in", "there") and "it" not in words:
            obj = self.phrase(0, len(words) - 1)
            dest: ArgPhrase | None = ArgPhrase("it", "it")
            return [p for p in (obj, dest) if p is not None]
        blocked: set[int] = set()
        for start, n, rel in relation_spans(words):
            # "on the left side of the table" puts it on the table; "left of the bowl" beside it.
            on_side = words[start] == "on" and "side" in words[start : start + n]
            if rel in NON_DESTINATION_RELATIONS and not on_side:
                blocked.update(range(start, start + n))
        best: tuple[int, int] | None = None
        for i in range(1, len(words)):
            for prep in DESTINATION_PREPOSITIONS:
                if prep[0] != words[i]:
                    continue  # cheap test first: most words start no preposition
                n = len(prep)
                span = set(range(i, i + n))
                if tuple(words[i : i + n]) == prep and not blocked & span:
                    if i + n < len(words):
                        best = (i, n)
                    break
            if best is not None:
                break
        if best is None:
            return self.whole()
        i, n = best
        start = i + n
        if words[i] in ("inside", "in") and start < len(words) and self._describes(start):
            # "place the card inside to the left of the other card": inside what was opened;
            # "put the lotion inside all the way to the right" too.
            return [p for p in (self.phrase(0, i), ArgPhrase("it", "it")) if p is not None]
        lead = PART_OF_PREFIX.match(" ".join(words[start:]) + " ")
        if lead is not None and start + len(lead.group(0).split()) < len(words):
            start += len(lead.group(0).split())  # "on the front left corner of the TV stand"
        dest = self.phrase(start, len(words))
        if dest is not None and directional(dest.head) and dest.anchor is not None:
            dest = dest.anchor  # "on the front right of the counter": on the counter
        elif dest is not None and dest.head and directional(dest.head):
            dest = ArgPhrase("it", "it")  # "in the front left corner": of what was named
        return [p for p in (self.phrase(0, i), dest) if p is not None]

    def _describes(self, k: int) -> bool:
        """Whether ``words[k:]`` start a modifier or relation, not a noun phrase."""
        w = self.words[k]
        if all(w in DIRECTION_WORDS or w in ("all", "to", "the", "your") for w in self.words[k:]):
            return True  # "inside all the way to the right"
        return w in POST_MODIFIERS or any(start == k for start, _, _ in relation_spans(self.words))

    def handover(self) -> list[ArgPhrase]:
        """``hand X to P``, ``give P the X``, ``give P X``."""
        words = self.words[: direction_tail(self.words)]  # "... to the table to your left"
        i = recipient_to(words)
        if i is not None:
            # "carry the racket over to the dresser so that ...": no particle, no new clause.
            cut = i - 1 if words[i - 1] in _CARRY_PARTICLES else i
            end = next((k for k in range(i + 1, len(words)) if words[k] in _CLAUSE_ENDS), None)
            parts = (self.phrase(0, cut), self.phrase(i + 1, end or len(words)))
            return [p for p in parts if p is not None]
        if len(words) >= 2:
            # Double object: the recipient comes first ("give Adriana the medicine").
            cut = next((i for i in range(1, len(words)) if words[i] in DETERMINERS), 1)
            person = self.phrase(0, cut)
            obj = self.phrase(cut, len(words))
            return [p for p in (obj, person) if p is not None]
        return self.whole()

    def _counted_from(self, k: int) -> bool:
        """Whether ``words[k:]`` say where an ordinal counts from ("[from] the left", "my
        right", "the end"): the object's own words, no source."""
        start = k
        while k < len(self.words) and self.words[k] in ("the", "my", "your", "our"):
            k += 1
        if k >= len(self.words) or self.words[k] not in _COUNTED_FROM:
            return False
        if any(w in ORDINALS for w in self.words[:start]):
            return True  # "the second apple from the top"
        # "from the left": a side; "from the top of the fridge" is a place.
        return self.words[k] in _SIDES_FROM and self.words[k + 1 : k + 2] != ["of"]

    def pick(self) -> list[ArgPhrase]:
        """``pick X from Y`` -> object X, source Y (the source constrains X); a trailing
        adverb ("take out the egg inside") is no part of X."""
        for start, n, rel in relation_spans(self.words):
            if rel == "from" and start > 0 and not self._counted_from(start + n):
                return self.around(start, n)
        if (
            len(self.words) > 2
            and self.words[-1] in ("inside", "there", "here", "out")
            and self.words[-2] != "right"  # "to right here": the reader weighs it
        ):
            return [p for p in (self.phrase(0, len(self.words) - 1),) if p is not None]
        return self.whole()


#: What an ordinal counts from ("the second apple from the left"): no place to pick from.
_COUNTED_FROM = frozenset("left right left-hand right-hand top bottom end front back".split())
_SIDES_FROM = frozenset({"left", "right", "left-hand", "right-hand"})
#: Ordinal words before a "from" that counts.
ORDINALS = frozenset(
    "first second third fourth fifth sixth seventh eighth ninth tenth last 1st 2nd 3rd 4th 5th "
    "penultimate".split()
)


def squash_name(name: str) -> str:
    """An action or object name compared loosely: lower case, no spaces, ``_`` or ``-``."""
    return re.sub(r"[\s_\-]+", "", name.lower())


def split_action(text: str, bindings: dict[str, str] | None = None) -> tuple[str | None, list[str]]:
    """``pick(Apple)`` / ``(pick robot apple table)`` / "grab the apple" -> name and arguments.

    Uses :func:`bt_raider.checking.parse.parse_query` when it understands the text (PDDL arguments then
    come back as scene names through ``bindings``); else a purely syntactic split.
    """
    try:
        parsed = parse_query(text, bindings or None)
        return parsed.action, [a.text for a in parsed.args]
    except QueryError:
        pass
    match = re.fullmatch(r"\s*([A-Za-z][\w\-]*)\s*\((.*)\)\s*[.!?]?\s*", text, re.DOTALL)
    if match:
        args = [a.strip().strip("'\"") for a in match.group(2).split(",")]
        return match.group(1).lower(), [a for a in args if a]
    match = re.fullmatch(r"\s*\(\s*([\w\-]+)((?:\s+[^\s()]+)*)\s*\)\s*", text)
    if match:
        return match.group(1).lower(), match.group(2).split()
    return None, []


def action_name(
    verdict_action: str | None, text: str, bindings: dict[str, str] | None = None
) -> str | None:
    """The action's name: the verdict's grounded action, else the one parsed from ``text``."""
    if verdict_action:
        return verdict_action
    return split_action(text, bindings)[0]


def same_action(a: str | None, b: str | None) -> bool:
    """``pick`` and ``Pick`` and ``pick-up``... compare case and separator blind."""
    return bool(a) and bool(b) and squash_name(a) == squash_name(b)  # type: ignore[arg-type]
