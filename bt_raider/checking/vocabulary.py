"""The query parser's vocabulary: actions and their roles, verbs and particles, spatial relations,
state words and the argument patterns of PDDL parameters.

Data, not logic: :mod:`bt_raider.checking.parse` reads queries with it.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from bt_raider.perception.lexicon import CategoryLexicon

#: The action vocabulary every backend understands.
ACTIONS: tuple[str, ...] = (
    "pick",
    "place",
    "open",
    "close",
    "turnon",
    "turnoff",
    "slice",
    "approach",
    "handover",
)


#: The role of each argument, per action. ``pick``'s source is optional.
ROLES: dict[str, tuple[str, ...]] = {
    "pick": ("object", "source"),
    "place": ("object", "destination"),
    "open": ("object",),
    "close": ("object",),
    "turnon": ("object",),
    "turnoff": ("object",),
    "slice": ("object",),
    "approach": ("target",),
    "handover": ("object", "person"),
}


#: Fewest arguments each action accepts.
MIN_ARGS: dict[str, int] = {a: (2 if a in ("place", "handover") else 1) for a in ACTIONS}


#: Canonical spatial relations (the names ``check_obj_relationship`` accepts) plus ``from``
#: (``pick X from Y``: Y is one of X's parent receptacles).
RELATIONS: tuple[str, ...] = (
    "left of",
    "right of",
    "on top of",
    "inside",
    "above",
    "below",
    "near",
    "next to",
    "closest to",
    "from",
)


# --------------------------------------------------------------------------- vocabulary
#: Action names of structured queries and PDDL instances, squashed (lowercase, no ``-_``).
_NAME_SYNONYMS: dict[str, tuple[str, ...]] = {
    "pick": ("pick", "pickup", "grasp", "grab", "take", "get", "lift", "fetch", "collect"),
    "place": ("place", "put", "putdown", "drop", "release", "deposit", "store", "stack"),
    "open": ("open",),
    "close": ("close", "shut"),
    "turnon": (
        "turnon",
        "toggleon",
        "switchon",
        "poweron",
        "activate",
        "toggleobjecton",
        "enable",
    ),
    "turnoff": (
        "turnoff",
        "toggleoff",
        "switchoff",
        "poweroff",
        "deactivate",
        "toggleobjectoff",
        "disable",
    ),
    "slice": ("slice", "cut", "chop"),
    "approach": ("approach", "moveto", "move", "goto", "go", "navigate", "drive", "gotolocation"),
    "handover": ("handover", "give", "deliver", "hand", "pass", "bring", "offer"),
}


NAME_TO_ACTION: dict[str, str] = {
    syn: action for action, syns in _NAME_SYNONYMS.items() for syn in syns
}


#: Suffixes of planner action names that carry no meaning (ALFRED ``PickupObject``).
NAME_SUFFIXES = ("objectinreceptacle", "object", "location", "action")


#: Natural-language verbs (multi-word first), mapped to actions.
VERB_PHRASES: list[tuple[str, str]] = sorted(
    [
        ("pick up", "pick"),
        ("pick out", "pick"),
        ("pick", "pick"),
        ("grab", "pick"),
        ("grasp", "pick"),
        ("take out", "pick"),
        ("take", "pick"),
        ("get", "pick"),
        ("fetch", "pick"),
        ("lift", "pick"),
        ("collect", "pick"),
        ("retrieve", "pick"),
        ("put down", "place"),
        ("put back", "place"),
        ("put", "place"),
        ("place", "place"),
        ("set down", "place"),
        ("set", "place"),
        ("drop", "place"),
        ("leave", "place"),
        ("insert", "place"),
        ("store", "place"),
        ("lay", "place"),
        ("open up", "open"),
        ("open", "open"),
        ("close", "close"),
        ("shut off", "turnoff"),
        ("shut down", "turnoff"),
        ("shut", "close"),
        ("turn on", "turnon"),
        ("switch on", "turnon"),
        ("power on", "turnon"),
        ("toggle on", "turnon"),
        ("activate", "turnon"),
        ("start", "turnon"),
        ("enable", "turnon"),
        ("turn off", "turnoff"),
        ("switch off", "turnoff"),
        ("power off", "turnoff"),
        ("toggle off", "turnoff"),
        ("deactivate", "turnoff"),
        ("stop", "turnoff"),
        ("disable", "turnoff"),
        ("slice up", "slice"),
        ("slice", "slice"),
        ("cut up", "slice"),
        ("cut", "slice"),
        ("chop", "slice"),
        ("dice", "slice"),
        ("approach", "approach"),
        ("walk over to", "approach"),
        ("walk back to", "approach"),
        ("walk towards", "approach"),
        ("walk toward", "approach"),
        ("walk up to", "approach"),
        ("go back to", "approach"),
        ("head over to", "approach"),
        ("head towards", "approach"),
        ("move over to", "approach"),
        ("proceed to", "approach"),
        ("remove", "pick"),
        ("go over to", "approach"),
        ("go to", "approach"),
        ("go towards", "approach"),
        ("go toward", "approach"),
        ("go near", "approach"),
        ("move to", "approach"),
        ("move towards", "approach"),
        ("move toward", "approach"),
        ("move closer to", "approach"),
        ("get close to", "approach"),
        ("get closer to", "approach"),
        ("navigate to", "approach"),
        ("walk to", "approach"),
        ("drive to", "approach"),
        ("come to", "approach"),
        ("head to", "approach"),
        ("hand over", "handover"),
        ("handover", "handover"),
        ("hand", "handover"),
        ("give", "handover"),
        ("pass", "handover"),
        ("deliver", "handover"),
        ("bring", "handover"),
        ("carry", "handover"),
        ("offer", "handover"),
    ],
    key=lambda pair: -len(pair[0].split()),
)


#: Verbs that take a particle at the end: "turn the light off", "pick the apple up".
SPLIT_PARTICLES: dict[str, dict[str, str]] = {
    "turn": {"on": "turnon", "off": "turnoff"},
    "switch": {"on": "turnon", "off": "turnoff"},
    "power": {"on": "turnon", "off": "turnoff"},
    "toggle": {"on": "turnon", "off": "turnoff"},
    "pick": {"up": "pick"},
    "put": {"down": "place"},
}


#: Politeness and framing removed before the verb ("Can you please ...?").
POLITE_PREFIXES = re.compile(
    r"^(?:(?:hey|hi|ok|okay|now|so|then|and|please|kindly|robot|tiago)\b[,:]?\s+"
    r"|(?:would|do|could)\s+you\s+mind\s+"
    r"|(?:can|could|would|will)\s+(?:you|u)\s+"
    r"|(?:i\s+(?:want|need|would\s+like)|i'd\s+like)\s+(?:you\s+)?to\s+"
    r"|(?:go\s+and|try\s+to|be\s+so\s+kind\s+as\s+to)\s+"
    r"|(?:you\s+(?:should|must|need\s+to|have\s+to))\s+"
    # Navigation and tool preambles: "turn around and walk to ...", "use the knife to slice ...".
    r"|(?:(?:turn|step|spin)\s+(?:(?:a)?round|left|right|back)|turnaround)(?:\s+\w+)?\s+and\s+"
    r"(?:then\s+)?"
    # What the robot holds on the way: "holding the mug, turn ...", "with the rag in hand go ...".
    r"|(?:holding|hold|carrying|with)\s+(?:the|a|an|your)\s+(?:[\w']+\s+){1,4}?(?:and\s+)?"
    r"(?=(?:turn|walk|go|move|head|step|face|cross|veer)\b)"
    r"|(?:begin|start|keep)\s+(?=(?:walking|moving|heading|going|turning)\b)"
    r"|use\s+(?:the\s+|a\s+|your\s+)?\w+(?:\s+\w+)?\s+to\s+(?=\w))"
)


#: A request that names what the speaker wants, not what the robot should do ("I need the salt
#: shaker", "can I have a mug"): the object is for the speaker (see :data:`SPEAKER_WORDS`).
REQUEST_FRAMES = re.compile(
    r"^(?:i\s+(?:really\s+|just\s+|also\s+)?(?:need|want|would\s+(?:like|love)|'d\s+(?:like|love))"
    r"|i'd\s+(?:really\s+)?(?:like|love)"
    r"|(?:can|could|may|might)\s+i\s+(?:please\s+)?(?:have|get|borrow)"
    r"|(?:let\s+me\s+have))\s+(?=\S)"
)


#: Words by which the speaker names themself in an argument ("bring me the apple").
SPEAKER_WORDS = frozenset({"me", "myself", "us"})


POLITE_SUFFIXES = re.compile(
    # Never "now" after "right": the reader says whether that "right" is a side
    # (perception.reference_words.right_reading; the parse drops what it calls time first).
    r"(?:\s+(?:please|for\s+me|(?<!\bright\s)now|thanks|thank\s+you|if\s+you\s+can"
    r"|in\s+half|(?:in|into)\s+(?:\w+\s+)?(?:slices|pieces|halves|chunks|bits)))+$"
)


#: Words that start a route ("walk straight ahead to the dresser", "turn around, go to the sink"):
#: a route is an approach to where it ends (see :data:`ROUTE_MARKERS`).
ROUTE_VERBS = frozenset(
    "walk walks go goes head heads move moves turn turns step steps proceed continue face veer "
    "cross hang make travel come return back stand look run walking moving heading going "
    "turning".split()
)


#: Words that introduce where a route ends, longest first ("in front of the sink", "to the
#: desk", "towards the door"); the last one with a place after it is the destination.
ROUTE_MARKERS: tuple[tuple[str, ...], ...] = tuple(
    sorted(
        (
            tuple(p.split())
            for p in (
                "to",
                "towards",
                "toward",
                "at",
                "in front of",
                "up to",
                "face",
                "facing",
                "reach",
                "for",
                "into",
                "over to",
                "locate",
                "find",
                "get to",
                "approach",
                "stand at",
                "stand by",
                "stand near",
                "stand beside",
                "stand next to",
                "stand in front of",
                "stand on",
            )
        ),
        key=len,
        reverse=True,
    )
)


#: Heads that give a direction, not a place ("to your left", "turn around").
DIRECTION_WORDS = frozenset(
    "left right around back forward forwards ahead straight front behind side way wall room "
    "direction corner end edge middle center centre other opposite step steps you yourself "
    "degrees one two three four five six seven eight nine ten few couple".split()
)


#: Words after a route's place that say how, not where ("face the sink again", "the
#: nightstand ahead", "walk to the left a little"): dropped from the end of the phrase.
ROUTE_TAIL_WORDS = frozenset(
    "again ahead there here now first instead too also slightly little bit a please".split()
)


#: Words that end a route phrase: a new clause begins ("then", "and", "where", "so").
ROUTE_CLAUSE_WORDS = frozenset(
    "then and where so until when while once after before stop but".split()
)


#: Words inside a route phrase that start the next marker ("turn to face the island").
ROUTE_BREAKS = frozenset(
    {"to", "towards", "toward", "at", "facing", "face", "locate", "find", "for"}
)


#: "the left side of the table" names the table: the part phrase before "of" is dropped.
PART_OF_PREFIX = re.compile(
    r"^(?:the\s+)?(?:(?:far|near|other|left|right|front|back|top|bottom|upper|lower|hand)\s+){0,3}"
    r"(?:side|end|edge|corner|front|back|middle|center|centre|part|top|area|bottom|half|surface"
    r"|cushion|rest)\s+of\s+"
)


#: State adjectives (multi-word first); ``not X`` is kept as ``not X``.
STATE_WORDS: tuple[str, ...] = (
    "turned on",
    "switched on",
    "turned off",
    "switched off",
    "powered on",
    "powered off",
    "clean",
    "dirty",
    "sliced",
    "unsliced",
    "whole",
    "cut",
    "uncut",
    "open",
    "opened",
    "closed",
    "shut",
    "empty",
    "filled",
    "full",
    "cooked",
    "uncooked",
    "raw",
    "broken",
    "unbroken",
    "intact",
    "on",
    "off",
)


class Vocab(NamedTuple):
    """State adjectives a parser recognises: multi-word ones and single words."""

    multi: tuple[tuple[str, ...], ...]
    single: frozenset[str]
    lexicon: Any = None


def _make_vocab(words: tuple[str, ...], lexicon: Any = None) -> Vocab:
    multi = sorted({tuple(w.split()) for w in words if " " in w}, key=len, reverse=True)
    return Vocab(tuple(multi), frozenset(w for w in words if " " not in w), lexicon)


_BASE_VOCAB = _make_vocab(STATE_WORDS)


_VOCABS: dict[int, tuple[Any, Vocab]] = {}


def state_vocab(lexicon: Any | None) -> Vocab:
    """:data:`STATE_WORDS` plus the lexicon's state adjectives (the bundled lexicon by default)."""
    if lexicon is None:
        try:
            lexicon = CategoryLexicon.default()
        except Exception:  # pragma: no cover - a broken lexicon file must not break parsing
            return _BASE_VOCAB
    hit = _VOCABS.get(id(lexicon))
    if hit is not None and hit[0] is lexicon:
        return hit[1]
    words = tuple(dict.fromkeys([*STATE_WORDS, *lexicon.adjectives()]))
    vocab = _make_vocab(words, lexicon)
    _VOCABS[id(lexicon)] = (lexicon, vocab)
    return vocab


#: ``on``/``off`` are prepositions in noun phrases unless they end the phrase ("the stove on").
AMBIGUOUS_STATES = frozenset({"on", "off", "cut"})


#: Relation phrases inside a noun phrase (longest first), mapped to :data:`RELATIONS`.
RELATION_PATTERNS: list[tuple[tuple[str, ...], str]] = sorted(
    [
        (tuple(p.split()), rel)
        for p, rel in [
            ("on the left of", "left of"),
            ("on the left side of", "left of"),
            ("on the left hand side of", "left of"),
            ("to the left of", "left of"),
            ("to left of", "left of"),
            ("at the left of", "left of"),
            ("left of", "left of"),
            ("on the right of", "right of"),
            ("on the right side of", "right of"),
            ("on the right hand side of", "right of"),
            ("to the left side of", "left of"),
            ("to the left hand side of", "left of"),
            ("to the right side of", "right of"),
            ("to the right hand side of", "right of"),
            ("to the right of", "right of"),
            ("to right of", "right of"),
            ("at the right of", "right of"),
            ("right of", "right of"),
            ("on top of", "on top of"),
            ("on", "on top of"),
            ("onto", "on top of"),
            ("upon", "on top of"),
            ("atop", "on top of"),
            ("inside of", "inside"),
            ("inside", "inside"),
            ("in", "inside"),
            ("within", "inside"),
            ("into", "inside"),
            ("above", "above"),
            ("over", "above"),
            ("below", "below"),
            ("under", "below"),
            ("underneath", "below"),
            ("beneath", "below"),
            ("near to", "near"),
            ("near", "near"),
            ("close to", "near"),
            ("nearby", "near"),
            ("next to", "next to"),
            ("adjacent to", "next to"),
            ("beside", "next to"),
            ("by", "next to"),
            ("closest to", "closest to"),
            ("nearest to", "closest to"),
            ("closest", "closest to"),
            ("nearest", "closest to"),
            ("from", "from"),
            ("out of", "from"),
            ("off of", "from"),
            ("off", "from"),
        ]
    ],
    key=lambda pair: -len(pair[0]),
)


#: :data:`RELATION_PATTERNS` by their first word, each list in the same (longest-first) order,
#: so a parser looks at a word's few candidate phrases instead of all of them.
RELATIONS_BY_FIRST_WORD: dict[str, list[tuple[tuple[str, ...], str]]] = {}
for _pattern, _rel in RELATION_PATTERNS:
    RELATIONS_BY_FIRST_WORD.setdefault(_pattern[0], []).append((_pattern, _rel))
del _pattern, _rel


#: Relation phrases that may never be the destination preposition of ``place``.
NON_DESTINATION_RELATIONS = frozenset(
    {"left of", "right of", "near", "next to", "closest to", "from"}
)


#: Destination prepositions of ``place``.
DESTINATION_PREPOSITIONS: list[tuple[str, ...]] = sorted(
    [
        tuple(p.split())
        for p in (
            "on top of",
            "inside of",
            "inside",
            "into",
            "in",
            "onto",
            "on",
            "at",
            "to",
            "upon",
            "over",
            "under",
            "back in",
            "back on",
        )
    ],
    key=len,
    reverse=True,
)


DETERMINERS = frozenset(
    "the a an any some this that these those one my your our his her their its".split()
)


#: Words that make a relative clause and carry no meaning here.
FILLERS = frozenset(
    "that which who is are was be been being located placed sitting lying standing "
    "currently there it just directly exactly immediately slightly hanging resting kept".split()
)


#: Words that start a modifier after the head which says nothing checkable here ("the mug with
#: the pen in it", "the statue at the back of the table", "the bowl and the spoon"): the head is
#: what comes before; a relation after the modifier still applies ("the spoon with the black
#: handle to the left of the stove" is left of the stove).
POST_MODIFIERS = frozenset(
    "with without containing holding having between behind at touching attached along against "
    "across opposite past beyond facing where and or contains contain holds has you i we".split()
)


#: Adjectives of distance before a head ("the closest pillow", "the near pillow"): they rank
#: candidates by distance from the speaker, and name no anchor object.
SUPERLATIVES = frozenset("closest nearest near far farthest furthest nearby".split())


#: Heads that mean "any object".
GENERIC_HEADS = frozenset({"", "item", "object", "thing", "something", "stuff", "one", "it"})


#: Tokens that name the robot in a PDDL instance (dropped when no bindings are given).
ROBOT_ARG = re.compile(
    r"^(?:(?:robot|agent|tiago|pr2|fetch|spot|stretch|pepper|turtlebot|hsr)(?:[_\-]\w+|\d+)?"
    r"|r\d+|me|self)$",
    re.IGNORECASE,
)


HAND_ARG = re.compile(r"^(?:gripper|hand|arm|left|right)(?:[_\-]\w+|\d+)?$", re.IGNORECASE)


ROBOT_PARAM = re.compile(r"^(?:r|rob|robot\w*|agent\w*|a|ag|bot|self)\d*$", re.IGNORECASE)


HAND_PARAM = re.compile(r"^(?:g|gripper\w*|hand\w*|arm\w*)\d*$", re.IGNORECASE)


LOCATION_PARAM = re.compile(
    r"^(?:l|loc\w*|location\w*|from|to|room\w*|start|end|wp|waypoint\w*|place|pos\w*)\d*$",
    re.IGNORECASE,
)


LOCATION_ARG = re.compile(
    r"^(?:loc|location|room|waypoint|wp)(?:[_\-]\w+|\d+|[a-z])?$", re.IGNORECASE
)
