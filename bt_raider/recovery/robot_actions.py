"""The robot's own actions, as recovery sees them: which exist, and what the user calls them.

Recovery plans are written with RAIDER's verbs in mind (``move_to``, ``pick``, ``place``...),
but a user's robot has its own names (``navigate``, ``grasp``, ``put``) and maybe not every
verb. :class:`RobotActions` is the one place that says which actions a recovery may use:

* ``RobotActions({"move_to": "navigate", "pick": "grasp", "place": "put"})``: an explicit
  mapping, RAIDER's verb -> the robot's action name; only those verbs are available;
* ``RobotActions.from_names(["navigate", "grasp", "put"])``: the robot's action names (from an
  ``@action`` registry, a PDDL domain, the robot's methods), each matched to a RAIDER verb
  by name or a common synonym (``navigate``/``go_to`` -> ``move_to``, ``grasp``/``grab`` ->
  ``pick``, ``put``/``drop`` -> ``place``...); names that match no verb are offered as they are;
* :meth:`RobotActions.raider`: RAIDER's whole vocabulary under its own names (the default).

Give it to :class:`~bt_raider.recovery.pipeline.Recovery` (``Recovery(planner, robot, human,
actions=...)``): the planners are told the actions (the symbolic one writes the robot's names,
the LLM prompt lists them) and a plan that calls anything else is rejected before it starts,
with the reason fed back to the planner.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from bt_raider.errors import RecoveryCodeError, UsageError
from bt_raider.recovery.safecode import DEFAULT_ACTIONS, INTERACTION_ACTIONS, Vocabulary

#: RAIDER's robot verbs (the interaction actions ask/say/wait_for are always available).
ROBOT_VERBS: tuple[str, ...] = tuple(v for v in DEFAULT_ACTIONS if v not in INTERACTION_ACTIONS)

#: Common names of RAIDER's verbs, compared lower case without ``_``/``-``/spaces.
SYNONYMS: dict[str, str] = {
    **{v: v for v in ROBOT_VERBS},
    "moveto": "move_to",
    "navigate": "move_to",
    "navigateto": "move_to",
    "goto": "move_to",
    "go": "move_to",
    "move": "move_to",
    "movebase": "move_to",
    "drive": "move_to",
    "driveto": "move_to",
    "grasp": "pick",
    "grab": "pick",
    "pickup": "pick",
    "take": "pick",
    "put": "place",
    "putdown": "place",
    "puton": "place",
    "drop": "place",
    "release": "place",
    "placeon": "place",
    "turnon": "turnon",
    "switchon": "turnon",
    "toggleon": "turnon",
    "turnoff": "turnoff",
    "switchoff": "turnoff",
    "toggleoff": "turnoff",
    "cut": "slice",
    "handover": "handover",
    "give": "handover",
    "handto": "handover",
}


def typed_skill(name: str) -> tuple[str, str] | None:
    """``OpenDoor`` -> ``("open", "Door")``: a verb's skill for one object type, or None.

    The name is a RAIDER verb (or synonym) followed by a type: ``OpenDrawer``, ``open_drawer``,
    ``PressButton`` is not (``press`` is no verb of ours: a new kind, ``docs/domain.md``).
    """
    parts = [p for p in re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", str(name)) if p]
    for cut in range(len(parts) - 1, 0, -1):
        verb = verb_for_name("".join(parts[:cut]))
        if verb is not None and verb not in ("move_to", "approach"):
            return verb, "".join(p[:1].upper() + p[1:] for p in parts[cut:])
    return None


#: Arity assumed for a user's action that matches no RAIDER verb (unless given).
DEFAULT_EXTRA_ARITY = (1, 2)


def _squash(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", str(name).lower())


def verb_for_name(name: str) -> str | None:
    """The RAIDER verb a robot's action name stands for (``navigate`` -> ``move_to``), or None."""
    return SYNONYMS.get(_squash(name))


class RobotActions:
    """The actions a recovery may call on the robot, under the robot's own names.

    Args:
        mapping: RAIDER verb -> the robot's action name, e.g. ``{"move_to": "navigate"}``.
            Only these verbs are available. A key that is no RAIDER verb is one of the
            robot's own actions (give its arity in ``arities``).
        arities: action name -> allowed argument counts, for the robot's own actions (and to
            override a verb's).

    Raises:
        RecoveryCodeError: a name is not a Python identifier, clashes with ask/say/wait_for,
            or two verbs map to the same name.

    Example:
        >>> actions = RobotActions({"move_to": "navigate", "pick": "grasp", "place": "put"})
        >>> actions.name_for("move_to"), actions.verb_of("grasp")
        ('navigate', 'pick')
    """

    def __init__(
        self,
        mapping: Mapping[str, str],
        *,
        arities: Mapping[str, int | Iterable[int]] | None = None,
    ) -> None:
        self._names: dict[str, str] = {}  # verb (or own action) -> the robot's name
        self._verbs: dict[str, str] = {}  # the robot's name -> verb (or itself)
        # verb -> object type (squashed) -> the robot's skill for that type (OpenDoor, OpenDrawer)
        self._typed: dict[str, dict[str, str]] = {}
        arities = dict(arities or {})
        self._vocab = Vocabulary(defaults=False)
        for verb, name in mapping.items():
            if not isinstance(verb, str) or not isinstance(name, str):
                raise RecoveryCodeError(
                    f"robot actions map a verb to an action name (strings), got {verb!r}: {name!r}"
                )
            if verb not in DEFAULT_ACTIONS and verb not in arities and name not in arities:
                raise RecoveryCodeError(
                    f"{verb!r} is not one of RAIDER's verbs ({', '.join(ROBOT_VERBS)}); "
                    f"for an action of the robot's own, give its arity: arities={{{name!r}: 1}}"
                )
            if name in self._verbs:
                raise RecoveryCodeError(
                    f"the robot's action {name!r} is given for both {self._verbs[name]!r} and "
                    f"{verb!r}"
                )
            if verb in DEFAULT_ACTIONS:
                counts, usage = DEFAULT_ACTIONS[verb]
                usage = re.sub(rf"\b{re.escape(verb)}\(", f"{name}(", usage)
            else:
                counts, usage = (), None
            arity: Any = arities.get(name, arities.get(verb, counts))
            self._vocab.register(name, arity, usage=usage)
            self._names[verb] = name
            self._verbs[name] = verb

    # ------------------------------------------------------------------ constructors
    @classmethod
    def raider(cls) -> RobotActions:
        """RAIDER's whole vocabulary, each verb under its own name."""
        return cls({v: v for v in ROBOT_VERBS})

    @classmethod
    def from_names(
        cls,
        names: Iterable[str],
        *,
        arities: Mapping[str, int | Iterable[int]] | None = None,
        mapping: Mapping[str, str] | None = None,
    ) -> RobotActions:
        """The robot's action names, each matched to a RAIDER verb when it means one.

        Args:
            names: the robot's action names (``["navigate", "grasp", "put"]``; PDDL names such
                as ``pick-up`` are written with ``_``).
            arities: argument counts of names that match no verb (default 1 or 2).
            mapping: explicit verb -> name pairs, taking precedence over the matching.
        """
        pairs: dict[str, str] = dict(mapping or {})
        taken = set(pairs.values())
        extra: dict[str, int | Iterable[int]] = dict(arities or {})
        typed: list[tuple[str, str, str]] = []
        for raw in names:
            name = re.sub(r"\W", "_", str(raw))
            if not name or name in taken or name in INTERACTION_ACTIONS:
                continue
            verb = verb_for_name(name)
            skill = typed_skill(name) if verb is None else None
            if verb is not None and verb not in pairs:
                pairs[verb] = name
            elif skill is not None:
                typed.append((skill[0], skill[1], name))
            else:
                pairs[name] = name
                extra.setdefault(name, DEFAULT_EXTRA_ARITY)
            taken.add(name)
        out = cls(pairs, arities=extra)
        for verb, kind, name in typed:
            out.add_skill(verb, kind, name)
        return out

    def add_skill(self, verb: str, kind: str, name: str) -> RobotActions:
        """Add ``name`` as the robot's skill for ``verb`` on objects of type ``kind``
        (``add_skill("open", "Door", "OpenDoor")``); returns ``self``.

        Raises:
            RecoveryCodeError: ``verb`` is no RAIDER verb, or ``name`` is taken.
        """
        if verb not in DEFAULT_ACTIONS or verb in INTERACTION_ACTIONS:
            raise RecoveryCodeError(
                f"{verb!r} is not one of RAIDER's verbs ({', '.join(ROBOT_VERBS)})"
            )
        if name in self._verbs and self._verbs[name] != verb:
            raise RecoveryCodeError(
                f"the robot's action {name!r} is given for both {self._verbs[name]!r} and {verb!r}"
            )
        counts, usage = DEFAULT_ACTIONS[verb]
        usage = re.sub(rf"\b{re.escape(verb)}\(", f"{name}(", usage)
        self._vocab.register(name, counts, usage=usage)
        self._typed.setdefault(verb, {})[_squash(kind)] = name
        self._verbs[name] = verb
        return self

    @classmethod
    def from_robot(cls, robot: Any, **kw: Any) -> RobotActions:
        """The public methods of a robot object that mean one of RAIDER's verbs.

        Methods of the :class:`~bt_raider.robot.actions.Robot` protocol (start, poll, cancel,
        observe) and names that mean no verb are left out.
        """
        protocol = {"start", "poll", "cancel", "observe"}
        names = [
            n
            for n in dir(robot)
            if not n.startswith("_")
            and n not in protocol
            and callable(getattr(robot, n, None))
            and verb_for_name(n) is not None
        ]
        return cls.from_names(names, **kw)

    @classmethod
    def coerce(cls, actions: Any) -> RobotActions | None:
        """A RobotActions from what ``Recovery(actions=...)`` accepts.

        None stays None (RAIDER's vocabulary); a :class:`RobotActions` as is; a mapping is
        verb -> name; an object with ``names()`` (an ``ActionRegistry``) or an iterable of
        strings goes through :meth:`from_names`.
        """
        if actions is None or isinstance(actions, RobotActions):
            return actions
        if isinstance(actions, Mapping):
            return cls(actions)
        names = getattr(actions, "names", None)
        if callable(names):
            return cls.from_names(names())
        if isinstance(actions, Iterable) and not isinstance(actions, (str, bytes)):
            return cls.from_names(actions)
        raise UsageError(
            "actions must be a mapping verb -> the robot's action name, a list of the robot's "
            f"action names, an ActionRegistry or a RobotActions, got {type(actions).__name__}"
        )

    # ------------------------------------------------------------------ lookups
    def has(self, verb: str) -> bool:
        """Whether the robot offers RAIDER's ``verb`` (under any name, for any type)."""
        return verb in self._names or bool(self._typed.get(verb))

    def name_for(self, verb: str, *, kind: str | None = None) -> str | None:
        """The robot's name for ``verb`` (``move_to`` -> ``navigate``), or None.

        With ``kind`` (the object's type), the skill for that type first (``open`` on a
        ``Door`` -> ``OpenDoor``), else the general one; a skill for another type never
        serves (a drawer is not opened with ``OpenDoor``).
        """
        typed = self._typed.get(verb) or {}
        if kind is not None:
            low = _squash(kind)
            for of, name in typed.items():
                if low == of or low.endswith(of):  # "SlidingDoor" is a door
                    return name
        return self._names.get(verb)

    def skill_type(self, name: str) -> str | None:
        """The object type a typed skill serves (``OpenDoor`` -> ``door``), or None."""
        for skills in self._typed.values():
            for of, skill in skills.items():
                if skill == name:
                    return of
        return None

    def verb_of(self, name: str) -> str | None:
        """The verb behind one of the robot's names (``grasp`` -> ``pick``), or None."""
        return self._verbs.get(name)

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is one of the robot's action names."""
        return name in self._verbs

    @property
    def names(self) -> tuple[str, ...]:
        """The robot's action names."""
        return tuple(self._verbs)

    def vocabulary(self) -> Vocabulary:
        """The code whitelist: ask, say, wait_for and the robot's actions."""
        return self._vocab.copy()

    def usage(self) -> list[str]:
        """How each action is written, for prompts (``navigate(location)``...)."""
        return self._vocab.usage()

    def describe(self) -> str:
        """``navigate(1), grasp(1), put(1-2)`` for messages (without ask/say/wait_for)."""
        parts = [p for p in self._vocab.describe().split(", ")]
        return ", ".join(p for p in parts if p.split("(")[0] not in INTERACTION_ACTIONS)

    def missing(self, name: str) -> str:
        """Why ``name`` cannot be used: the robot has no such action; what it has instead."""
        hint = ""
        verb = verb_for_name(name)
        if verb is not None and self.has(verb) and self.name_for(verb) != name:
            hint = f" (the robot calls {verb} {self.name_for(verb)!r})"
        return (
            f"the robot has no action {name!r}{hint}; its actions are "
            f"{self.describe() or 'none'}, besides ask, say and wait_for"
        )

    def __repr__(self) -> str:
        pairs = ", ".join(f"{v}->{n}" if v != n else n for v, n in self._names.items())
        return f"RobotActions({pairs})"
