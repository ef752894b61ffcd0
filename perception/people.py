"""People are designated and have roles; a policy says who may be asked what.

An instruction designates a person **by name** ("Bernadette") or **by description** ("the
resident", "the user", "someone"). A person designated by name is that person and nobody else:
another person answering "I'm Ana" is never a substitute. "Who are you?" identifies a person
designated by description, or tells whether someone not recognised is the one named.

A person's role is the ``role`` key of a ``humans`` entry, or the policy's ``people`` roster
(name -> role, for people not in sight too). The scene's ``policy`` key (or ``Recovery(policy=)``)
says which questions each role may be asked (:data:`QUESTIONS`); a role the policy does not
name may be asked everything, as before roles existed. Nobody is asked to do what the robot
can do itself: that is recovery's rule, not the policy's (:mod:`bt_raider.recovery.symbolic`).

.. code-block:: json

    "policy": {
      "people": {"Bernadette": "resident", "Ana": "resident", "Tom": "staff"},
      "ask": {"resident": ["identify", "which", "where", "look"], "staff": ["*"]},
      "absent": "fail",
      "prefer_own": true
    }
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bt_raider.errors import SceneError

#: What a person may be asked, by kind: ``identify`` ("who are you?"), ``which`` (choose among
#: candidates), ``where`` (where a thing is), ``look`` (look at me, free your hands), ``fetch``
#: (bring a thing closer), ``move`` (move a thing out of the way), ``open`` (open something).
QUESTIONS: tuple[str, ...] = ("identify", "which", "where", "look", "fetch", "move", "open")

#: Questions that ask a person to act on the world (not only to answer).
ERRANDS = frozenset({"fetch", "move", "open"})

#: What a role of the default policy may be asked: residents are never sent on errands.
DEFAULT_ASK: dict[str, frozenset[str]] = {
    "resident": frozenset({"identify", "which", "where", "look"}),
    "patient": frozenset({"identify", "which", "where", "look"}),
    "visitor": frozenset({"identify", "which", "where", "look"}),
}

#: Words that designate a person by description, not by name ("the user", "a resident").
ROLE_WORDS = frozenset(
    "user person someone somebody anyone anybody human resident residents patient staff nurse "
    "carer caregiver caretaker visitor guest doctor man woman lady gentleman me".split()
)

#: What the robot does when the person designated by name is not here.
ABSENT_CHOICES = ("fail", "wait")


def is_description(phrase: str) -> bool:
    """Whether ``phrase`` designates a person by description ("the resident"), not by name."""
    words = re.findall(r"[a-z]+", str(phrase).lower())
    words = [w for w in words if w not in ("the", "a", "an", "any", "some", "this", "that")]
    return bool(words) and all(w in ROLE_WORDS for w in words)


@dataclass(frozen=True)
class PeoplePolicy:
    """Who may be asked what, the roster of people and their roles, what to do when absent.

    Attributes:
        ask: role -> the questions (:data:`QUESTIONS`) that role may be asked; a role not listed
            may be asked everything.
        people: a person's name (lower case) -> role, for people not in sight as well.
        absent: ``fail`` (say the designated person is not here, and fail) or ``wait``.
        prefer_own: nobody is asked to fetch what the robot can fetch itself (it drives there),
            and nobody is sent on an errand with nobody in sight; True for a declared policy.
            Without one (RAIDER's default), a person who may be asked is asked to bring a thing
            closer or move it, as in the paper.
    """

    ask: Mapping[str, frozenset[str]] = field(default_factory=lambda: dict(DEFAULT_ASK))
    people: Mapping[str, str] = field(default_factory=dict)
    absent: str = "fail"
    prefer_own: bool = True

    @classmethod
    def from_data(cls, data: Any, where: str = "policy") -> PeoplePolicy:
        """A policy from its JSON form (see the module docstring); None: the default.

        Raises:
            SceneError: one line naming the key, the value and what is valid.
        """
        if data is None:
            return cls()
        if isinstance(data, PeoplePolicy):
            return data
        if not isinstance(data, Mapping):
            raise SceneError(f"{where}: must be an object with ask, people, absent")
        unknown = sorted(set(data) - {"ask", "people", "absent", "prefer_own"})
        if unknown:
            raise SceneError(
                f"{where}: unknown key {unknown[0]!r}; keys are ask, people, absent, prefer_own"
            )
        prefer_own = data.get("prefer_own", True)
        if not isinstance(prefer_own, bool):
            raise SceneError(f"{where}.prefer_own: must be true or false, got {prefer_own!r}")
        ask = dict(DEFAULT_ASK)
        for role, kinds in (data.get("ask") or {}).items():
            if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
                raise SceneError(f"{where}.ask.{role}: must be a list of {', '.join(QUESTIONS)}")
            bad = [k for k in kinds if k not in (*QUESTIONS, "*")]
            if bad:
                raise SceneError(
                    f"{where}.ask.{role}: {bad[0]!r} is not a question kind; "
                    f"kinds are {', '.join(QUESTIONS)} (or '*': all)"
                )
            ask[str(role).lower()] = frozenset(QUESTIONS if "*" in kinds else kinds)
        people = data.get("people") or {}
        if not isinstance(people, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in people.items()
        ):
            raise SceneError(f"{where}.people: must map a person's name to a role")
        absent = data.get("absent", "fail")
        if absent not in ABSENT_CHOICES:
            raise SceneError(
                f"{where}.absent: must be one of {', '.join(ABSENT_CHOICES)}, got {absent!r}"
            )
        return cls(
            ask=ask,
            people={k.lower(): v.lower() for k, v in people.items()},
            absent=absent,
            prefer_own=prefer_own,
        )

    def role_of(self, person: Any) -> str | None:
        """A person's role: the ``role`` of a ``humans`` entry, else the roster's, else None."""
        raw = getattr(person, "raw", person)
        role = raw.get("role") if isinstance(raw, Mapping) else None
        if isinstance(role, str) and role:
            return role.lower()
        name = raw.get("name") if isinstance(raw, Mapping) else None
        return self.people.get(str(name).lower()) if name else None

    def may_ask(self, person: Any, kind: str) -> bool:
        """Whether ``person`` (a Human or its dict) may be asked a question of ``kind``."""
        role = self.role_of(person)
        allowed = self.ask.get(role) if role else None
        return True if allowed is None else kind in allowed

    def anyone_may(self, people: Iterable[Any], kind: str) -> bool:
        """Whether someone among ``people`` may be asked a question of ``kind``."""
        return any(self.may_ask(p, kind) for p in people)

    def knows(self, name: str) -> bool:
        """Whether ``name`` is on the roster (a person, though maybe not in sight)."""
        return str(name).strip().lower() in self.people


def scene_policy(data: Mapping[str, Any]) -> PeoplePolicy:
    """The policy a scene dict declares (its ``policy`` key), or RAIDER's default (roles still
    count: a resident is never sent on an errand)."""
    if data.get("policy") is None:
        return PeoplePolicy(prefer_own=False)
    return PeoplePolicy.from_data(data.get("policy"))
