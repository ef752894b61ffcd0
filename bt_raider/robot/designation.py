"""What an instruction's words designate, carried with a guard to the moment it releases its child.

A person says "pick the cup"; the words allow the scene's cups and nothing else. That set is the
*designation*: per argument of the instruction, the objects (people, places) its words allow,
read from the first check's grounding (argument phrase -> objectIds) before any recovery, and
narrowed by the person's answers during recovery ("the clean one"). A recovery may ask, move,
open a container, move a blocker out of the way or fetch a tool the action needs, but what the
guarded action finally acts on must still be one of the designated objects:

* :func:`outside` says which resolved arguments of a :class:`~bt_raider.robot.retarget.
  ResolvedAction` lie outside a :class:`GuardIntent` (the guard refuses to release its child
  then; see :class:`~bt_raider.runtime.guards.RaiderGuard`);
* :func:`step_kind` says which recovery kind lets a recovery step act on an object the words
  did not designate (:data:`RECOVERY_KINDS`), or None when it would be a substitute for the
  designated object (the verifier refuses the plan then; see :mod:`bt_raider.recovery.verify`);
* :func:`other_action` says why a guarded node may not run on the words at all: the words ask
  for one kind of action ("The cup, please." asks to hand the cup over) and the node does
  another (it picks); the guard refuses before anything moves.

The designation also carries the *kind* of each action the guard checked
(:attr:`Designated.kind`: ``pick``, ``handover``, ``approach``...): a release whose action is
of another kind (a recovery that turned a handover into a pick) lies outside it, whatever its
arguments.

A phrase the first check grounded to nothing (the apple is not in sight yet) is *open*: its
designation is what the same words ground to in the scene of the passing re-check
(:meth:`GuardIntent.reread`), never whatever the recovery chose.

A phrase that allows several objects is *settled* only when its words accept any of them ("any
cup", "either", "whichever", "you choose") or the person's answer chose one: "the cup" of two
is never released on one of them because a recovery picked it (:meth:`Designated.settled`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from bt_raider.checking.parse import action_for_name
from bt_raider.errors import BtRaiderError
from bt_raider.robot.retarget import accepts_any

if TYPE_CHECKING:
    from bt_raider.perception.scene import Scene
    from bt_raider.robot.retarget import ResolvedAction

#: The ways a recovery step may act on an object the instruction's words did not designate.
RECOVERY_KINDS: dict[str, str] = {
    "designated": "it acts on a designated object",
    "move": "it moves the robot (to an object, a person or a place)",
    "free_hand": "it puts down something the robot holds",
    "clear_blocker": (
        "it moves an object that blocks a designated object or the way to one (or opens it: a door)"
    ),
    "open_container": "it opens or closes a container a designated object is in",
    "fetch_tool": "it fetches a tool the action needs",
}

#: Tools an action needs: the action -> object types that serve (``slice`` needs a knife).
TOOLS: dict[str, frozenset[str]] = {"slice": frozenset({"Knife", "ButterKnife"})}

#: Verbs that move the robot rather than act on an object.
_MOVES = frozenset({"move_to", "approach"})
#: Verbs that put down what the robot holds.
_PUTS = frozenset({"place", "handover"})
#: Verbs that open or close a container.
_CONTAINER = frozenset({"open", "close"})


@dataclass(frozen=True)
class Designated:
    """What one action's words allow, argument by argument.

    Attributes:
        action: the action's name as the first check understood it (``pick``), when known.
        phrases: the argument phrases, in order (``("the cup",)``).
        allowed: per phrase, the objectIds (or people, places) its words allow, or None when
            the first check grounded it to nothing (open: re-read in the scene of the release).
        chosen: per phrase, the person's answer that narrowed it (an objectId or a name), or
            None.
        any_of: per phrase, whether its words accept any of the objects they allow ("any cup",
            "either", "you choose"); default: none does.
        others: what the check grounded the action's other arguments to (a PDDL instance's
            place and hand, which the parser does not count as phrases): allowed where the
            released call's arguments cannot be matched to the phrases one by one.
    """

    action: str | None
    phrases: tuple[str, ...]
    allowed: tuple[frozenset[str] | None, ...]
    chosen: tuple[str | None, ...] = ()
    others: frozenset[str] = frozenset()
    any_of: tuple[bool, ...] = ()

    def __post_init__(self) -> None:
        if len(self.allowed) != len(self.phrases):
            raise ValueError("one allowed set per phrase")
        if not self.chosen:
            object.__setattr__(self, "chosen", (None,) * len(self.phrases))
        if not self.any_of:
            object.__setattr__(self, "any_of", (False,) * len(self.phrases))
        if len(self.chosen) != len(self.phrases) or len(self.any_of) != len(self.phrases):
            raise ValueError("one chosen value and one any_of flag per phrase")

    def settled(self, index: int) -> bool:
        """Whether phrase ``index`` leaves no choice to whoever acts: it allows at most one
        object, its words accept any ("any cup"), or the person's answer chose one. An
        ambiguity only the person may settle, never the recovery (issue 32)."""
        allowed = self.allowed[index]
        return (
            allowed is None
            or len(allowed) <= 1
            or self.any_of[index]
            or self.chosen[index] is not None
        )

    @property
    def open(self) -> bool:
        """Some phrase grounded to nothing at the first check (its words are re-read)."""
        return any(a is None for a in self.allowed)

    @property
    def kind(self) -> str | None:
        """The kind of action the guard checked (:func:`action_kind` of :attr:`action`), or
        None when it cannot be read."""
        return action_kind(self.action)

    def all_allowed(self) -> frozenset[str]:
        """Every object any phrase (or other argument) allows."""
        return frozenset(i for a in self.allowed if a is not None for i in a) | self.others

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "phrases": list(self.phrases),
            "allowed": [None if a is None else sorted(a) for a in self.allowed],
            "chosen": list(self.chosen),
            "any_of": list(self.any_of),
            "others": sorted(self.others),
        }


@dataclass(frozen=True)
class GuardIntent:
    """What an instruction designates: one :class:`Designated` per action (per step of a
    compound instruction), and the query it was read from.

    Attributes:
        query: the instruction as the guard was given it.
        actions: one per action, in order (one for a single action).
    """

    query: str
    actions: tuple[Designated, ...] = field(default_factory=tuple)

    @classmethod
    def read(
        cls,
        query: str,
        steps: Iterable[tuple[str | None, tuple[str, ...], Mapping[str, Iterable[str]]]],
    ) -> GuardIntent:
        """The designation of ``query`` from its first check: per action, its name, argument
        phrases and the check's grounding (phrase -> ids; a phrase missing or grounded to
        nothing is open).
        """
        actions = []
        for action, phrases, grounding in steps:
            if not phrases:  # text the parser cannot split: the checker's own phrases
                phrases = tuple(str(k) for k in grounding)
            allowed = tuple(_lookup(p, grounding) for p in phrases)
            any_of = tuple(accepts_any(p) for p in phrases)
            folded = {p.strip().casefold() for p in phrases}
            others = frozenset(
                str(i)
                for k, ids in grounding.items()
                if str(k).strip().casefold() not in folded
                for i in ids
            )
            actions.append(
                Designated(action, tuple(phrases), allowed, others=others, any_of=any_of)
            )
        return cls(query, tuple(actions))

    @property
    def open(self) -> bool:
        """Some phrase of some action grounded to nothing at the first check."""
        return any(a.open for a in self.actions)

    @property
    def kinds(self) -> tuple[str | None, ...]:
        """The kind of each action the guard checked, in order (None where unread)."""
        return tuple(a.kind for a in self.actions)

    def all_allowed(self) -> frozenset[str]:
        """Every object any phrase of any action allows."""
        return frozenset(i for a in self.actions for i in a.all_allowed())

    def narrowed(self, step: int, index: int, value: str) -> GuardIntent:
        """This designation with argument ``index`` of action ``step`` narrowed to ``value``
        (the person's answer); out of range: unchanged."""
        if not 0 <= step < len(self.actions):
            return self
        one = self.actions[step]
        if not 0 <= index < len(one.phrases):
            return self
        chosen = list(one.chosen)
        chosen[index] = str(value)
        actions = list(self.actions)
        actions[step] = replace(one, chosen=tuple(chosen))
        return replace(self, actions=tuple(actions))

    def chosen_as(self, ref: str) -> GuardIntent:
        """This designation narrowed by an answer that named ``ref`` (an objectId): every
        phrase that allows ``ref`` among others now allows only it (the person chose it among
        what the words allowed). A ``ref`` no phrase allows changes nothing."""
        actions = []
        for one in self.actions:
            chosen = tuple(
                ref if allowed is not None and ref in allowed and len(allowed) > 1 else c
                for allowed, c in zip(one.allowed, one.chosen, strict=True)
            )
            actions.append(replace(one, chosen=chosen))
        return replace(self, actions=tuple(actions))

    def reread(self, step: int, grounding: Mapping[str, Iterable[str]]) -> GuardIntent:
        """Fill action ``step``'s open phrases from ``grounding``: the same words checked in the
        scene of the release (the object came into sight during the recovery)."""
        if not 0 <= step < len(self.actions):
            return self
        one = self.actions[step]
        allowed = tuple(
            _lookup(p, grounding) if a is None else a
            for p, a in zip(one.phrases, one.allowed, strict=True)
        )
        actions = list(self.actions)
        actions[step] = replace(one, allowed=allowed)
        return replace(self, actions=tuple(actions))

    def as_dict(self) -> dict[str, Any]:
        """Plain data (for the blackboard, the trace and the explorer's oracle)."""
        return {"query": self.query, "actions": [a.as_dict() for a in self.actions]}


def unclear_candidates(
    grounding: Mapping[str, Iterable[str]],
    *,
    ambiguity: bool,
    explanation: str,
    scene: Scene | None,
) -> dict[str, list[str]]:
    """``grounding`` with each phrase the check could not read for certain widened to what
    the person may mean: the scene's objects of the type its read words found.

    An ambiguity that no phrase grounded to several is about words left over ("the wobbly red
    box", "the cup that isn't dirty and gray"): what the words read so far allow is no
    designation (an unread word may change it), so the question offers the objects of that
    type, and only the person's answer settles which. Other groundings are returned as they
    are (a copy).

    Args:
        grounding: the check's grounding (phrase -> ids).
        ambiguity: whether the verdict is an ambiguity.
        explanation: the verdict's explanation (it quotes the unclear phrase).
        scene: the scene checked (None: nothing is widened).
    """
    out = {str(k): [str(i) for i in v] for k, v in grounding.items()}
    if scene is None or not ambiguity or any(len(v) >= 2 for v in out.values()):
        return out
    for phrase, ids in out.items():
        if len(ids) != 1 or f"'{phrase}'" not in explanation:
            continue
        try:
            kind = scene.by_id(ids[0]).type
        except BtRaiderError:
            continue  # a person or a place: nothing of its kind to offer
        peers = [o.id for o in scene.objects if o.type == kind]
        if len(peers) >= 2:
            out[phrase] = peers
    return out


def _lookup(phrase: str, grounding: Mapping[str, Iterable[str]]) -> frozenset[str] | None:
    ids = grounding.get(phrase)
    if ids is None:  # a checker may key its grounding in another case
        folded = phrase.strip().casefold()
        ids = next((v for k, v in grounding.items() if str(k).strip().casefold() == folded), None)
    found = frozenset(str(i) for i in ids or ())
    return found or None


def _same(
    scene: Scene | None, value: str, ref: str, grounding: Mapping[str, Iterable[str]]
) -> bool:
    """Whether ``value`` (an answer: an objectId or a name) names ``ref`` (an objectId): the
    same text, the scene's object of that name, or what the re-check grounded it to alone."""
    if value == ref or value.strip().casefold() == ref.strip().casefold():
        return True
    if _lookup(value, grounding) == frozenset({ref}):
        return True
    if scene is None:
        return False
    try:
        return scene.resolve(value).id == ref
    except BtRaiderError:
        return False


def outside(
    designation: GuardIntent,
    resolved: ResolvedAction,
    scene: Scene | None = None,
    *,
    settled: bool = True,
) -> list[str]:
    """Why ``resolved``'s arguments do not all lie in ``designation`` (empty: they do).

    Argument ``i`` of action ``k`` must be one of the objects phrase ``i`` of action ``k``
    allows, and the person's answer for it when she gave one; a phrase that allows several
    must be settled (:meth:`Designated.settled`: "any cup", or the person chose), else no
    recovery may pick one of them for her. When the released call has
    another number of arguments than the instruction's phrases (a PDDL instance
    ``(pick robot medicine counter)`` recovered as ``pick(Medicine|1)``, a destination the
    instruction left open), each argument must be one some phrase allows (positions cannot be
    matched). An argument the guard left as written (not
    retargeted: it equals its phrase) passes. An open phrase (nothing grounded at the first
    check, nothing re-read since) allows nothing but itself. A resolution whose actions do not
    line up with the designation's is refused whole.

    ``settled=False`` leaves out the settled rule: for a verifier that judges a plan before the
    person has answered its questions (an answer the plan asks for may still settle it; the
    guard checks again at release).
    """
    actions = resolved.steps or (resolved,)
    if len(actions) != len(designation.actions):
        return [
            f"the instruction designates {len(designation.actions)} action(s), the release has "
            f"{len(actions)}"
        ]
    out: list[str] = []
    for step, (got, want) in enumerate(zip(actions, designation.actions, strict=True)):
        where = f"step {step + 1}: " if len(actions) > 1 else ""
        call = f"{got.action or 'the action'}({', '.join(got.args)})"
        asked, done = want.kind, action_kind(got.action)
        if asked is not None and done is not None and asked != done:
            # Whatever its arguments: a recovery never turns the action asked for into another.
            out.append(f"{where}{call} is {_a(done)}, and the instruction asks for {_a(asked)}")
            continue
        if len(got.args) == len(want.phrases):
            for i, arg in enumerate(got.args):
                out.extend(_one(where, arg, want, i, scene, got.grounding, settled=settled))
            continue
        union = want.all_allowed()
        written = {p.strip().casefold() for p in want.phrases}
        # Positions cannot be matched: an object is allowed when a phrase allows it and is
        # settled on it (the person's choice, if she made one).
        fits = want.others | frozenset(
            i
            for k, allowed in enumerate(want.allowed)
            for i in allowed or ()
            if (
                _same(scene, str(want.chosen[k]), i, got.grounding)
                if want.chosen[k] is not None
                else not settled or want.settled(k)
            )
        )
        for arg in got.args:
            ref = _as_id(scene, arg)
            if arg.strip().casefold() in written or ref in fits:
                continue
            if ref in union:
                out.append(f"{where}{ref} in {call}: {_unsettled(want, ref)}")
                continue
            shown = ", ".join(sorted(union)) or "nothing in sight"
            out.append(
                f"{where}{arg} in {call} is none of what the instruction designates ({shown})"
            )
    return out


#: How a kind of action is named in a message ("a handover", "going to").
_KIND_WORDS = {"approach": "going to", "move_to": "going to"}


def _a(kind: str) -> str:
    """``kind`` as a message says it: "a pick", "an open", "going to"."""
    if kind in _KIND_WORDS:
        return _KIND_WORDS[kind]
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind}"


def action_kind(name: object, own: Callable[[str], str | None] | None = None) -> str | None:
    """The kind of action ``name`` stands for, as the check names it (``Grab``, ``pick-up`` ->
    ``pick``; ``move_to``, ``GoTo`` -> ``approach``; ``Give`` -> ``handover``), or None when it
    is no name or none the reader knows.

    Args:
        name: an action's name (a verdict's, a released call's, a node's).
        own: the robot's own names, read first (``RobotActions.verb_of``: ``grasp`` -> ``pick``).
    """
    if not isinstance(name, str) or not name.strip():
        return None
    verb = own(name) if own is not None else None
    return action_for_name(verb or name)


def child_action(
    child: Any, own: Callable[[str], str | None] | None = None, *, declared: str | None = None
) -> tuple[str, str] | None:
    """What a guarded node says it does: ``declared`` (its guard's ``node_action``), else its
    ``action`` attribute (a string, as :class:`~bt_raider.robot.actions.ActionBehaviour` and
    any user's node may have), and the kind of action it names (:func:`action_kind`); None
    when it says nothing a reader knows (then only its guard's words say what it does)."""
    name = declared if declared is not None else getattr(child, "action", None)
    kind = action_kind(name, own)
    return None if kind is None else (str(name), kind)


def other_action(
    designation: GuardIntent,
    child: Any,
    own: Callable[[str], str | None] | None = None,
    *,
    declared: str | None = None,
) -> str | None:
    """Why ``child`` may not run on the words ``designation`` was read from, or None.

    A node that says what it does (:func:`child_action`) runs only on words that ask for that
    kind of action (for a compound instruction, one of its steps' kinds): "The cup, please."
    (a handover: the person wants the cup) in front of a node that picks is no instruction
    for that node, whatever a recovery could make of it. A node that says nothing, or words
    whose kind is unread, pass (the words are the node's contract then).
    """
    said_by = child_action(child, own, declared=declared)
    kinds = [k for k in designation.kinds if k is not None]
    if said_by is None or not kinds or said_by[1] in kinds:
        return None
    name, kind = said_by
    asked = " then ".join(_a(k) for k in kinds)
    node = getattr(child, "name", "the node")
    said = "" if name.strip().casefold() == kind else f" ({name})"
    return (
        f"the words {designation.query!r} ask for {asked}, and {node} does {_a(kind)}{said}: "
        "a guard checks its own node's action, so it never runs a node on words for another; "
        f"give the guard words for {_a(kind)}, or guard a node that does what they ask"
    )


def _unsettled(want: Designated, ref: str) -> str:
    """Why ``ref``, one of several objects a phrase allows, is not the one meant."""
    k = next(
        (k for k, a in enumerate(want.allowed) if a is not None and ref in a and len(a) > 1), 0
    )
    if want.chosen[k] is not None:
        return f"not the {want.phrases[k]!r} the person chose ({want.chosen[k]})"
    shown = ", ".join(sorted(want.allowed[k] or ()))
    return (
        f"{want.phrases[k]!r} allows several ({shown}) and nobody chose one: only the person's "
        "answer (or words such as 'any') settles which, never a recovery"
    )


def _as_id(scene: Scene | None, arg: str) -> str:
    """The objectId ``arg`` stands for: itself, or the object of that exact display name (a
    checker that grounds nothing leaves "Medicine_2" as written)."""
    if scene is None:
        return arg
    low = arg.strip().casefold()
    for obj in scene.objects:
        if obj.id == arg:
            return arg
        if obj.name.casefold() == low:
            return obj.id
    return arg


def _one(
    where: str,
    arg: str,
    want: Designated,
    index: int,
    scene: Scene | None,
    grounding: Mapping[str, Iterable[str]],
    *,
    settled: bool = True,
) -> list[str]:
    phrase, allowed, chosen = want.phrases[index], want.allowed[index], want.chosen[index]
    if arg.strip().casefold() == phrase.strip().casefold():
        return []  # the child's own argument, as the instruction wrote it
    arg = _as_id(scene, arg)
    if allowed is None or arg not in allowed:
        what = "nothing in sight" if allowed is None else ", ".join(sorted(allowed))
        return [f"{where}{arg} is not what {phrase!r} designates (it allows: {what})"]
    if chosen is not None and not _same(scene, chosen, arg, grounding):
        return [f"{where}{arg} is not the {phrase!r} the person chose ({chosen})"]
    if settled and not want.settled(index):
        return [f"{where}{arg}: {_unsettled(want, arg)}"]
    return []


def step_kind(
    verb: str,
    refs: list[str],
    designation: GuardIntent,
    scene: Scene,
    *,
    action: str | None = None,
) -> str | None:
    """The :data:`RECOVERY_KINDS` entry that lets a recovery step ``verb(*refs)`` run in
    ``scene`` (the state the earlier steps lead to), or None: it acts on an object the
    instruction did not designate, as none of the kinds that may (a substitute).

    Args:
        verb: RAIDER's verb of the step (``pick``, ``move_to``...).
        refs: what the robot receives, in order (objectIds, places, people).
        designation: what the instruction designates.
        scene: the scene as the step would find it.
        action: the recovered action's verb (for the tools it needs).
    """
    if verb in _MOVES:
        return "move"
    allowed = designation.all_allowed()
    objects = [r for r in refs if _is_object(scene, r)]
    if not objects or all(r in allowed for r in objects):
        return "designated"
    target = objects[0]
    if verb in _PUTS and target in {o.id for o in scene.holding}:
        return "free_hand"
    if verb in ("pick", "open") and _blocks(scene, target, allowed):
        return "clear_blocker"  # picked up and moved, or (a door on the way) opened
    if verb in _CONTAINER and _contains(scene, target, allowed):
        return "open_container"
    if verb == "pick" and action in TOOLS and scene.by_id(target).type in TOOLS[action]:
        return "fetch_tool"
    return None


def _is_object(scene: Scene, ref: str) -> bool:
    try:
        scene.by_id(ref)
    except BtRaiderError:
        return False
    return True


def _blocks(scene: Scene, ref: str, allowed: frozenset[str]) -> bool:
    """Whether ``ref`` blocks a designated object: the scene's ``blocked`` report lists it for
    one (or for the way to one), or it rests on or in one."""
    obj = scene.by_id(ref)
    names = {ref.casefold(), obj.name.casefold()}
    wanted = set(allowed)
    for target in allowed:
        try:
            wanted.add(scene.by_id(target).name)
        except BtRaiderError:
            continue
    folded = {w.casefold() for w in wanted}
    for target, blockers in scene.blocked.items():
        if str(target).casefold() in folded and names & {str(b).casefold() for b in blockers}:
            return True
    return any(p in allowed for p in obj.parents)


def _contains(scene: Scene, ref: str, allowed: frozenset[str]) -> bool:
    """Whether a designated object is in ``ref``, or in something that is in it."""
    for target in allowed:
        seen: set[str] = set()
        todo = [target]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            try:
                parents = scene.by_id(current).parents
            except BtRaiderError:
                continue
            if ref in parents:
                return True
            todo.extend(parents)
    return False
