"""RAIDER's perception tools as pluggable tool sets.

A tool is a plain function whose **first parameter is the scene** (hidden from the model) and
whose other parameters are what the model passes; its Google docstring gives the description
and the ``Returns:`` text shown in the prompt. :class:`~bt_raider.perception.toolset.ToolSet` collects tools, calls them with
arity and argument checks, and describes them for prompts (:meth:`ToolSet.describe`) and for
OpenAI function calling (:meth:`ToolSet.openai_tools`).

Two sets follow the RAIDER paper: :func:`household_tools` (Fig. 6: the robot in a kitchen) and
:func:`assistive_tools` (Fig. 16 and §5.1: people, free paths and the user's information).
:func:`default_tools` is their union. A user adds a tool with ``tools.register(fn)`` and every
reasoner can call it::

    tools = default_tools()

    @tools.register
    def is_hot(scene, obj: str) -> bool:
        \"\"\"Whether an object is hot to the touch.\"\"\"
        return scene.resolve(obj).raw.get("temperature") == "Hot"

Tools answer with JSON-friendly values: display names, distances in metres rounded to 2
decimals, booleans and small dicts. Object arguments accept display names, objectIds and
near-misses (``Scene.resolve``); people are named by id or recognised name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from bt_raider.errors import ToolError
from bt_raider.perception import relations
from bt_raider.perception.lexicon import CategoryLexicon, split_type
from bt_raider.perception.scene import CAPABILITIES, Human, Scene, SceneObject
from bt_raider.perception.toolset import Tool, ToolSet
from bt_raider.perception.values import XYZ

if TYPE_CHECKING:
    import numpy as np


# ---------------------------------------------------------------------- lookups
class Place:
    """A named location from the scene's ``locations`` (has what the relations need).

    A place is its name: two places of one name are equal and hash alike, whatever their
    positions (a plain class rather than a dataclass: ``bt-raider check`` loads it at every
    start, and dataclasses cost a millisecond a class to make).

    Attributes:
        name: the location's name in the scene.
        position: ``(x, y, z)`` in metres (plain floats: the checks need no numpy).
    """

    __slots__ = ("name", "position")

    def __init__(self, name: str, position: XYZ) -> None:
        self.name = name
        self.position = position

    def __eq__(self, other: object) -> bool:
        return self.name == other.name if isinstance(other, Place) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"Place(name={self.name!r})"

    @property
    def id(self) -> str:
        return self.name

    @property
    def xyz(self) -> XYZ:
        """The position, as objects and people give theirs (:attr:`SceneObject.xyz`)."""
        return self.position


def _metres(x: float) -> float:
    return round(float(x), 2)


def resolve_object(scene: Scene, ref: Any) -> SceneObject:
    """``Scene.resolve``, but a near-miss equally close to several objects is ambiguous.

    ``Scene.resolve`` takes the first best fuzzy match, so "drawers" silently becomes one of
    nine drawers; a tool must say the name is ambiguous instead.

    Raises:
        ToolError: unknown or ambiguous name (the message lists the candidates).
    """
    obj = scene.resolve(ref)
    if ref == obj.name:  # a display name, as tools are mostly told: no near miss to weigh
        return obj
    key = _squash(ref)
    if key in (_squash(obj.name), _squash(obj.type)) or ref.strip() == obj.id:
        return obj
    # rapidfuzz only for a near miss, off the common path of every check.
    from rapidfuzz import fuzz

    scores = {o.name: fuzz.ratio(key, _squash(o.name)) for o in scene.objects}
    best = scores[obj.name]
    tied = sorted(n for n, sc in scores.items() if sc >= best)
    if len(tied) > 1:
        raise ToolError(f"{ref!r} is ambiguous: it is as close to {', '.join(tied)}")
    return obj


def _squash(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", str(text)).lower()


def _find_location(scene: Scene, ref: str) -> Place | None:
    key = ref.strip().lower()
    for name, pos in scene.location_points.items():
        if name.lower() == key:
            return Place(name, pos)
    return None


def _find_human(scene: Scene, ref: str) -> Human | None:
    if not scene.humans:  # nobody to find: no error to raise and catch
        return None
    try:
        return scene.human(ref)
    except ToolError:
        return None


def locate(scene: Scene, ref: Any) -> SceneObject | Human | Place:
    """An object, a person or a named location, for tools whose target may be any of them.

    Named locations and people match exactly (case-insensitive); objects go through
    ``Scene.resolve`` (display names, objectIds, near-misses).

    Raises:
        ToolError: naming the reference and listing the objects, people and locations.
    """
    if not isinstance(ref, str) or not ref.strip():
        raise ToolError(f"target must be a non-empty name, got {ref!r}")
    place = _find_location(scene, ref)
    if place is not None:
        return place
    person = _find_human(scene, ref)
    if person is not None:
        return person
    try:
        return resolve_object(scene, ref)
    except ToolError as exc:
        extra = []
        if scene.humans:
            extra.append("people: " + ", ".join(h.id for h in scene.humans))
        if scene.location_points:
            extra.append("locations: " + ", ".join(scene.location_points))
        raise ToolError(str(exc) + ("; " + "; ".join(extra) if extra else "")) from None


def _person(scene: Scene, ref: Any) -> Human:
    if not isinstance(ref, str) or not ref.strip():
        raise ToolError(f"person must be a non-empty id or name, got {ref!r}")
    return scene.human(ref)


def _distance(a: Any, b: Any) -> float:
    return _metres(relations.horizontal_distance(a, b))


# ---------------------------------------------------------------------- household tools (Fig. 6)
def robot_holding(scene: Scene) -> list[str]:
    """Identifies the object held by the robot.

    Returns:
        a list with the display name of each held object; [] when the hand is empty.
    """
    return [o.name for o in scene.holding]


def object_detection(scene: Scene) -> list[str]:
    """Identifies the objects in the scene.

    Returns:
        the display names of all objects (a name like Cabinet_2 marks one of several).
    """
    return scene.display_names()


def dist_to_target(scene: Scene, target: str) -> float:
    """Distance to a target, to check if the target is reachable by the robot.

    Args:
        target: an object, a person or a named location.

    Returns:
        the horizontal distance from the robot in metres.
    """
    where = locate(scene, target)
    return _metres(scene.horizontal_distance(scene.agent_xyz, where.xyz))


#: get_obj_state: (capability flag, state flag, word), in the order the answer lists them.
STATE_WORDS = (
    ("openable", "isOpen", "open"),
    ("toggleable", "isToggled", "on"),
    ("sliceable", "isSliced", "sliced"),
    ("dirtyable", "isDirty", "dirty"),
    ("canFillWithLiquid", "isFilledWithLiquid", "filled"),
    ("cookable", "isCooked", "cooked"),
    ("breakable", "isBroken", "broken"),
)


def get_obj_state(scene: Scene, obj: str) -> dict[str, bool]:
    """Retrieves an object's state (open/closed, on/off, sliced/not sliced, clean/dirty, empty/filled, cooked/raw, broken).

    Args:
        obj: the object.

    Returns:
        only the states the object can have, e.g. {"open": false} for a fridge or
        {"on": true} for a toaster; {} when it has none.
    """
    o = resolve_object(scene, obj)
    return {word: o.flag(state) for cap, state, word in STATE_WORDS if o.flag(cap)}


def check_obj_relationship(scene: Scene, relationship: str, obj: str, among: str = "") -> list[str]:
    """Retrieves the object(s) that have the queried relationship with the queried object, if any.

    Allowed relationships: blocking, inside, on top of, above, below, on the right of, on the
    left of, near, next to, closest to. Example: check_obj_relationship(inside, Fridge) lists
    what is inside the fridge.

    Args:
        relationship: the relationship, e.g. "inside" or "on the left of".
        obj: the reference object.
        among: optional object types X may be, comma-separated, e.g. "Apple" or "Apple,
            Banana" (closest to: the nearest of them); every object when omitted.

    Returns:
        the display names of the objects X such that "X <relationship> obj"; [] when none.
    """
    rel = relations.normalize_relation(relationship)
    target = locate(scene, obj)
    if not among:
        return [o.name for o in relations.related(scene, rel, target)]
    return [o.name for o in relations.related(scene, rel, target, _of_types(scene, among))]


def relation_among(
    tools: ToolSet, scene: Scene, candidates: Sequence[Any]
) -> tuple[str, list[SceneObject] | None]:
    """What to ask :func:`check_obj_relationship` ``among`` when only ``candidates`` matter.

    "Which apple is left of the bowl" rather than "what is": only the apples' positions and
    links are read (not every object's), and each recorded call shows the restriction with
    its answer.

    Args:
        tools: the tool set the question goes through.
        scene: the scene.
        candidates: the objects the answer will be kept to.

    Returns:
        The candidates' types (``"Apple, Banana"``) and the objects of those types; ``("",
        None)`` (ask about every object) when the tool set's ``check_obj_relationship`` is not
        this one (another tool's third argument may mean anything), or when those types hold
        half the scene or more (reading it all then costs at most twice as much, and the
        trace stays short).
    """
    name = "check_obj_relationship"
    if name not in tools or tools.get(name).func is not check_obj_relationship:
        return "", None
    types = {o.type for o in candidates if isinstance(o, SceneObject)}
    objects = scene.of_types(types) if types else []
    if not objects or 2 * len(objects) >= len(scene):
        return "", None
    return ", ".join(sorted(types)), objects


def _of_types(scene: Scene, among: str) -> list[SceneObject]:
    """The objects of the types ``among`` names (comma-separated, any case), in scene order.

    Raises:
        ToolError: for a name that is no type of the scene's objects (listing them).
    """
    names = [n.strip() for n in among.split(",")]
    if len(names) == 1:  # the common case: one type, exactly spelled
        found = scene.of_types(names)
        if found:
            return found
    known = scene.object_types()
    types = set()
    for name in names:
        if name in known:
            types.add(name)
            continue
        matches = [t for t in known if t.lower() == _squash(name)]
        if not matches:
            raise ToolError(
                f"among: {name!r} is no object type of the scene; types are: "
                + ", ".join(sorted(known))
            )
        types.update(matches)
    return scene.of_types(types)


def get_obj_properties(scene: Scene, obj: str) -> dict[str, bool]:
    """Details object properties (pickupable, openable, toggleable, sliceable, receptacle, cookable...).

    Args:
        obj: the object.

    Returns:
        each capability with true or false.
    """
    o = resolve_object(scene, obj)
    return {cap: o.flag(cap) for cap in CAPABILITIES}


# ---------------------------------------------------------------------- assistive tools (Fig. 16)
def check_free_path(scene: Scene, target: str) -> dict[str, Any]:
    """Checks if the path to move to a target (human, object or location) is free and can be approached.

    Args:
        target: an object, a person or a named location.

    Returns:
        {"free": true|false, "blockers": names of what blocks the way}.
    """
    keys = [target.strip()]
    if not any(str(k).lower() == keys[0].lower() for k in scene.blocked):
        where = locate(scene, target)  # only an unknown target the report does not name fails
        keys += relations.keys_for(where)
    ids = relations.blocker_ids(scene, keys)
    names = [scene.name_of(i) for i in ids]
    return {"free": not names, "blockers": names}


def dist_between_objs(scene: Scene, obj1: str, obj2: str) -> float:
    """Returns the distance between two objects (people and named locations work too).

    Args:
        obj1: the first object.
        obj2: the second object.

    Returns:
        the horizontal distance in metres.
    """
    return _distance(locate(scene, obj1), locate(scene, obj2))


def dist_robot_to_obj(scene: Scene, obj: str) -> float:
    """Returns the distance from the robot to an object.

    Args:
        obj: the object (or a named location).

    Returns:
        the horizontal distance in metres.
    """
    place = _find_location(scene, obj) if isinstance(obj, str) else None
    where = place if place is not None else resolve_object(scene, obj)
    return _metres(scene.horizontal_distance(scene.agent_xyz, where.xyz))


def check_humans_around(scene: Scene) -> list[dict[str, Any]]:
    """Checks for humans present (not necessarily recognised: they may only have an id).

    Returns:
        [{"id": ..., "distance": metres from the robot}], nearest first; [] when nobody is around.
    """
    robot = scene.agent_xyz
    found = [
        {"id": h.id, "distance": _metres(scene.horizontal_distance(robot, h.xyz))}
        for h in scene.humans
    ]
    return sorted(found, key=lambda d: d["distance"])


def recognize_humans(scene: Scene) -> list[dict[str, Any]]:
    """Identifies specific humans in sight with a name.

    Returns:
        [{"id": ..., "name": the recognised name, or null when the person is not recognised}].
    """
    return [{"id": h.id, "name": h.name} for h in scene.humans]


def dist_robot_to_human(scene: Scene, specific_human: str) -> float:
    """Returns the distance from the robot to a human.

    Args:
        specific_human: the person's id or recognised name.

    Returns:
        the horizontal distance in metres.
    """
    h = _person(scene, specific_human)
    return _metres(scene.horizontal_distance(scene.agent_xyz, h.xyz))


def human_hands_free(scene: Scene, specific_human: str) -> bool:
    """Checks if the human's hands are free to receive an object.

    Args:
        specific_human: the person's id or recognised name.

    Returns:
        true when the hands are free.
    """
    return _person(scene, specific_human).hands_free


def detect_human_gaze(scene: Scene, specific_human: str) -> bool:
    """Checks if the human is looking at the robot, ready for interaction.

    Args:
        specific_human: the person's id or recognised name.

    Returns:
        true when the person looks at the robot.
    """
    return _person(scene, specific_human).looking_at_robot


# ---------------------------------------------------------------------- user information (§5.1)
_STOP = frozenset(
    """a an and are as at be by did do does for from has have he her his in is it its last
    me my of on or our she that the their them they this to user users was were what when
    where which who whom with you your""".split()
)


#: Facts scoring below this fraction of the best fact are left out of the lexical ranking.
RELATIVE_CUTOFF = 0.3
#: How much more a query word that names objects ("fruit", "stoveburner") weighs.
NOUN_WEIGHT = 1.5


def _stem(word: str) -> str:
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and re.search(r"(s|x|z|ch|sh|o)es$", word):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _terms(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return [_stem(w.strip("'")) for w in words if w.strip("'") and w.strip("'") not in _STOP]


def _expand(terms: list[str], lexicon: CategoryLexicon) -> set[str]:
    """Words of the object types a query term may mean ("fruit" -> apple, banana...)."""
    extra: set[str] = set()
    for t in terms:
        for otype in lexicon.types_for(t):
            extra.update(_stem(w) for w in split_type(otype).split() if len(w) > 2)
    return extra - set(terms)


def rank_facts_lexically(
    query: str, facts: Sequence[str], lexicon: CategoryLexicon | None = None
) -> list[tuple[float, int]]:
    """Score facts against a query by IDF-weighted term overlap.

    Query terms match a fact's terms exactly (after light stemming) with weight idf, as a
    near-miss (rapidfuzz ratio >= 85) with half of it, and through the lexicon ("fruit" ->
    apple, "beverage" -> bottle...). Terms that name objects carry the query, so they and
    their expansions weigh :data:`NOUN_WEIGHT` times more than other words ("favorite fruit"
    finds "loves apples" before "favorite beverage"); rapidfuzz's ``token_set_ratio`` breaks
    ties.

    Returns:
        ``(score, index)`` pairs, best first, for facts with a positive score of at least
        :data:`RELATIVE_CUTOFF` times the best one.
    """
    # rapidfuzz only when user facts are ranked, off the common path of every check.
    from rapidfuzz import fuzz

    lex = lexicon or CategoryLexicon.default()
    docs = [set(_terms(f)) for f in facts]
    n = len(docs)
    q = list(dict.fromkeys(_terms(query)))
    expanded = _expand(q, lex)

    def idf(term: str) -> float:
        df = sum(term in d for d in docs)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    weight = {t: NOUN_WEIGHT if lex.types_for(t) else 1.0 for t in q}
    ranked = []
    for i, d in enumerate(docs):
        score = 0.0
        for t in q:
            if t in d:
                score += weight[t] * idf(t)
            elif len(t) > 3 and any(fuzz.ratio(t, w) >= 85 for w in d):
                score += 0.5 * weight[t] * idf(t)
        score += sum(NOUN_WEIGHT * idf(t) for t in expanded if t in d)
        if score > 0:
            tie = fuzz.token_set_ratio(query.lower(), facts[i].lower()) / 1000.0
            ranked.append((score + tie, i))
    ranked.sort(key=lambda p: (-p[0], p[1]))
    # A fact sharing only a common word ("Adriana", in every fact) is noise next to a real hit.
    return [p for p in ranked if p[0] >= RELATIVE_CUTOFF * ranked[0][0]] if ranked else []


def make_retrieve_user_information(
    embed: Callable[[list[str]], np.ndarray] | None = None,
    top_k: int = 3,
    lexicon: CategoryLexicon | None = None,
) -> Callable[[Scene, str], list[str]]:
    """Build the ``retrieve_user_information`` tool over the scene's ``user_info`` facts.

    Args:
        embed: texts -> an ``(n, d)`` array of sentence embeddings (e.g. MiniLM); facts are
            ranked by cosine similarity to the query, as in RAIDER §5.1. Without it, a lexical
            ranking (:func:`rank_facts_lexically`) is used and facts sharing nothing with the
            query are left out.
        top_k: at most this many facts are returned, best first.
        lexicon: for the lexical ranking's category expansion (default: the bundled one).

    Returns:
        The tool function ``retrieve_user_information(scene, query) -> list[str]``.
    """
    if top_k < 1:
        raise ToolError(f"top_k must be at least 1, got {top_k}")
    cache: dict[tuple[str, ...], np.ndarray] = {}

    def _fact_vectors(facts: tuple[str, ...]) -> np.ndarray:
        assert embed is not None  # only called with an embedding function
        if facts not in cache:
            cache.clear()  # one scene's corpus at a time
            cache[facts] = _unit_rows(embed(list(facts)), len(facts))
        return cache[facts]

    def retrieve_user_information(scene: Scene, query: str) -> list[str]:
        """Retrieves information about the user (preferences, habits, recent activity) relevant to a query.

        Args:
            query: what to look up, e.g. "favourite fruit" or "last book read".

        Returns:
            the most relevant known facts about the user, best first; [] when none is relevant.
        """
        if not isinstance(query, str) or not query.strip():
            raise ToolError(f"query must be a non-empty text, got {query!r}")
        facts = tuple(scene.user_info)
        if not facts:
            return []
        if embed is None:
            ranked = rank_facts_lexically(query, facts, lexicon)
            return [facts[i] for _, i in ranked[:top_k]]
        vectors = _fact_vectors(facts)
        qv = _unit_rows(embed([query]), 1)[0]
        sims = vectors @ qv
        order = sorted(range(len(facts)), key=lambda i: (-float(sims[i]), i))
        return [facts[i] for i in order[:top_k]]

    return retrieve_user_information


def _unit_rows(matrix: Any, rows: int) -> np.ndarray:
    import numpy as np  # only with an embedding function (which brings numpy already)

    arr = np.asarray(matrix, dtype=float)
    if arr.ndim != 2 or arr.shape[0] != rows:
        raise ToolError(f"the embedding function returned shape {arr.shape}, expected ({rows}, d)")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return arr / np.where(norms == 0, 1.0, norms)


# ---------------------------------------------------------------------- the sets
def household_tools() -> ToolSet:
    """RAIDER's household tool set (paper Fig. 6)."""
    return ToolSet(
        [
            robot_holding,
            object_detection,
            dist_to_target,
            get_obj_state,
            # The canonical relation names are what a model is offered; phrases still read.
            Tool.from_function(check_obj_relationship).with_choices(
                "relationship", relations.RELATIONS
            ),
            get_obj_properties,
        ]
    )


def assistive_tools(embed: Callable[[list[str]], np.ndarray] | None = None) -> ToolSet:
    """RAIDER's assistive tool set (paper Fig. 16) plus ``retrieve_user_information`` (§5.1).

    Args:
        embed: sentence-embedding function for ``retrieve_user_information`` (lexical
            ranking when None).
    """
    return ToolSet(
        [
            object_detection,
            check_free_path,
            dist_between_objs,
            robot_holding,
            dist_robot_to_obj,
            check_humans_around,
            recognize_humans,
            dist_robot_to_human,
            human_hands_free,
            detect_human_gaze,
            make_retrieve_user_information(embed),
        ]
    )


def default_tools(embed: Callable[[list[str]], np.ndarray] | None = None) -> ToolSet:
    """Household and assistive tools together (``household_tools() | assistive_tools()``)."""
    if embed is not None:
        return household_tools() | assistive_tools(embed)
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = household_tools() | assistive_tools()
    # A set of its own each time (a caller may register into it): the tools in it are made
    # from their functions' docstrings once per process, not at every check and reading.
    return _DEFAULT | ToolSet()


#: The tools of ``default_tools()`` without an embedding function, copied for each caller.
_DEFAULT: ToolSet | None = None
