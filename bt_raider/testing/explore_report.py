"""The explorer's outcomes: an :class:`Episode`, the :class:`ExploreReport` and the printed test.

:func:`pytest_text` writes a shrunk episode as a ready-to-paste pytest test: the minimal
:class:`~bt_raider.testing.explore_world.Case` handed to
:func:`~bt_raider.testing.explore.check_case`, with what was asked and answered as comments,
and the user's rooms and factories when they can be named.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from bt_raider.testing.explore_oracle import PROPERTIES, Violation
from bt_raider.testing.explore_world import Case, load_room

#: Shrinking may start from any of the first this many failing cases of a property (the
#: first may need threads to line up and not fail again).
SHRINK_FROM = 3


@dataclass
class Episode:
    """One episode's outcome.

    Attributes:
        case: the case it ran.
        status: the root's last status (``SUCCESS``, ``FAILURE``, ``RUNNING``; ``ERROR`` when
            an exception escaped).
        violations: what the oracle found.
        calls: ``(action, args, tag)`` of every robot call, in order.
        questions: what the robot asked.
        answers: what the person answered (None: nothing).
        reason: the failure's reason (the feedback messages).
        trace: the trace file, when one was written.
    """

    case: Case
    status: str
    violations: list[Violation] = field(default_factory=list)
    calls: list[tuple[str, tuple[Any, ...], str | None]] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    answers: list[str | None] = field(default_factory=list)
    reason: str = ""
    trace: Path | None = None

    @property
    def props(self) -> set[str]:
        """The ids of the properties it broke."""
        return {v.prop for v in self.violations}

    def fingerprint(self) -> tuple[Any, ...]:
        """What must replay identically (P8): per kind, the calls and the questions, in order.

        Calls from a parallel's two branches may interleave differently; each branch's own
        order and the outcome may not. In a parallel, the first branch to fail stops the
        other wherever it is, so whether that one had asked yet is timing: a parallel's
        questions are not compared, only its calls and outcome.
        """
        by_tag: dict[str, list[tuple[str, tuple[Any, ...]]]] = {}
        for action, args, tag in self.calls:
            by_tag.setdefault(str(tag), []).append((action, args))
        asked = [] if self.case.tree == "parallel" else self.questions
        return (self.status, sorted(by_tag.items()), list(asked))


@dataclass
class Finding:
    """A property's minimal failing episode.

    Attributes:
        prop: the property's id.
        episode: the shrunk episode.
        shrink_s: seconds Hypothesis spent finding and shrinking it.
        test: a ready-to-paste pytest test that fails while the bug is there.
    """

    prop: str
    episode: Episode
    shrink_s: float
    test: str


@dataclass
class ExploreReport:
    """What an exploration found.

    Attributes:
        episodes: episodes run (replays not counted).
        violations: per property id, how many episodes broke it (every id present).
        first: per property id, the first episode that broke it.
        findings: per property id, the shrunk :class:`Finding`.
        elapsed_s: seconds spent exploring (shrinking apart).
        shrink_s: seconds spent shrinking.
        statuses: how many episodes ended in each status.
        problem: why the exploration itself is not sound, when it is not: it stopped at a hung
            call of the user's, or no episode reached an action (``ok`` is False then).
    """

    episodes: int = 0
    violations: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PROPERTIES, 0))
    first: dict[str, Episode] = field(default_factory=dict)
    findings: dict[str, Finding] = field(default_factory=dict)
    elapsed_s: float = 0.0
    shrink_s: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    problem: str = ""
    _failing: dict[str, list[Case]] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        """No property was broken, and the exploration explored (see ``problem``)."""
        return not self.problem and not any(self.violations.values())

    def add(self, episode: Episode) -> None:
        """Count one episode."""
        self.episodes += 1
        self.statuses[episode.status] = self.statuses.get(episode.status, 0) + 1
        for prop in sorted(episode.props):
            self.violations[prop] += 1
            self.first.setdefault(prop, episode)
            seen = self._failing.setdefault(prop, [])
            if len(seen) < SHRINK_FROM:
                seen.append(episode.case)

    def failing(self, prop: str) -> list[Case]:
        """The first few cases that broke ``prop`` (where shrinking may start)."""
        return list(self._failing.get(prop, []))

    def text(self) -> str:
        """A readable account: counts per property, then each finding and its test."""
        rate = self.episodes / self.elapsed_s if self.elapsed_s else 0.0
        lines = [
            f"{self.episodes} episodes in {self.elapsed_s:.1f} s ({rate:.1f}/s); {self.statuses}"
        ]
        if self.problem:
            lines.append(f"  NOT OK: {self.problem}")
        for prop, text in PROPERTIES.items():
            lines.append(f"  {prop:>3} {self.violations[prop]:>5}  {text}")
        for prop, finding in self.findings.items():
            lines.append(f"\n{prop} shrunk in {finding.shrink_s:.1f} s:")
            lines.extend(f"  {v}" for v in finding.episode.violations if v.prop == prop)
            if finding.episode.trace is not None:
                lines.append(f"  trace: {finding.episode.trace}")
            lines.append(finding.test)
        for prop, episode in self.first.items():
            if prop not in self.findings:
                lines.append(f"\n{prop} first seen (not shrunk): {_case_code(episode.case)}")
                lines.extend(f"  {v}" for v in episode.violations if v.prop == prop)
        return "\n".join(lines)


def _case_code(case: Case) -> str:
    """The case as Python, with only the fields that differ from the defaults."""
    default = Case()
    parts = []
    for f in fields(Case):
        value = getattr(case, f.name)
        if value != getattr(default, f.name):
            parts.append(f"{f.name}={value!r}")
    return f"Case({', '.join(parts)})"


def _comment(text: Any, width: int = 90) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= width else line[: width - 3] + "..."


def room_code(name: str, room: Any) -> str:
    """Python for a ``rooms`` argument holding one room: its path, or its dict written out."""
    if isinstance(room, (str, Path)):
        return f"rooms={{{name!r}: {str(room)!r}}}"
    data = load_room(room)
    return f"rooms={{{name!r}: {data!r}}}"


def factory_code(tree_factory: Any, world_factory: Any) -> tuple[list[str], str]:
    """Import lines and ``check_case`` arguments that name the user's factories.

    A factory defined at a module's top level is imported by name; anything else (a lambda,
    a closure) cannot be, and the printed test says so in a comment.
    """
    imports: list[str] = []
    args: list[str] = []
    for keyword, factory in (("tree_factory", tree_factory), ("world_factory", world_factory)):
        if factory is None:
            continue
        module = getattr(factory, "__module__", None)
        name = getattr(factory, "__qualname__", "")
        if module and name.isidentifier():
            imports.append(f"from {module} import {name}")
            args.append(f"{keyword}={name}")
        else:
            imports.append(f"# pass your {keyword} ({name or type(factory).__name__}) below")
    return imports, "".join(f", {a}" for a in args)


def pytest_text(
    prop: str, episode: Episode, rooms_code: str = "", factories: tuple[list[str], str] = ([], "")
) -> str:
    """A ready-to-paste pytest test reproducing ``episode``'s violation of ``prop``.

    Args:
        prop: the property's id.
        episode: the (shrunk) episode that broke it.
        rooms_code: Python for ``check_case``'s ``rooms`` argument (:func:`room_code`; empty:
            the default kitchen).
        factories: :func:`factory_code` of the user's factories (none: the default tree).
    """
    case = episode.case
    shown = [_comment(v) for v in episode.violations if v.prop == prop][:3]
    name = f"test_explore_{prop.lower()}_{case.kind.lower()}_{case.form}_{case.person}"
    lines = [f"    # {line}" for line in shown]
    for question, answer in zip(episode.questions, episode.answers, strict=False):
        lines.append(f"    # robot asks: {_comment(question)}")
        lines.append(f"    # person: {_comment(answer)}")
    rooms_arg = f", {rooms_code}" if rooms_code else ""
    replay = ", replay=True" if prop == "P8" else ", replay=False"
    return "\n".join(
        [
            "from bt_raider.testing.explore import check_case",
            "from bt_raider.testing.explore_world import Case, Thing",
            *factories[0],
            "",
            "",
            f"def {name}():",
            f'    """{PROPERTIES[prop]}."""',
            *lines,
            f"    episode = check_case({_case_code(case)}{rooms_arg}{replay}{factories[1]})",
            f"    assert {prop!r} not in episode.props, [str(v) for v in episode.violations]",
            "",
        ]
    )


__all__ = [
    "SHRINK_FROM",
    "Episode",
    "ExploreReport",
    "Finding",
    "factory_code",
    "pytest_text",
    "room_code",
]
