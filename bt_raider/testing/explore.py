"""The explorer: generated worlds, people and faults against a tree, judged by a world oracle.

::

    from bt_raider.testing.explore import explore

    report = explore(episodes=200, seed=1)
    assert report.ok, report.text()

:func:`explore` draws :class:`~bt_raider.testing.explore_world.Case`\\ s with Hypothesis
(:func:`cases`: rooms, objects and their colours, states and sides, instructions in every form
the checker accepts, people, disturbances, tree shapes, vocabularies), runs each as an episode
(:func:`run_case`: the user's tree, ticked by :func:`~bt_raider.testing.run.run_tree` until it
ends) and lets the :class:`~bt_raider.testing.explore_oracle.Oracle` judge every robot call and
every question. A property that fails is searched again by Hypothesis (the sweep's draws
replayed up to the failing case, then its shrinker), which shrinks the case to a minimal one:
the report prints it as a ready-to-paste pytest test and writes its trace for
``bt-raider view``.

Hypothesis is imported on first use (the ``explore`` extra): ``import bt_raider.testing`` works
without it.
"""

from __future__ import annotations

import functools
import re
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, overload

from bt_raider.errors import UsageError
from bt_raider.testing.explore_bounds import Stop, call_user, show, where_hung
from bt_raider.testing.explore_domain import DomainReport, UserDomain, explore_domain
from bt_raider.testing.explore_lang import LANDMARKS, says
from bt_raider.testing.explore_oracle import PROPERTIES, Oracle, Violation
from bt_raider.testing.explore_people import PEOPLE, ExplorePerson
from bt_raider.testing.explore_report import (
    Episode,
    ExploreReport,
    Finding,
    factory_code,
    pytest_text,
    room_code,
)
from bt_raider.testing.explore_tree import TreeFactory, TreeSpec, default_tree, make_recovery
from bt_raider.testing.explore_world import (
    COLOURS,
    DISTURBANCES,
    FORMS,
    HOSTILE,
    KINDS,
    MODELS,
    NAMES,
    PLANNERS,
    SIDES,
    SPEAKERS,
    STOOL,
    TREES,
    USER,
    WORDS,
    Case,
    RecordingRobot,
    Thing,
    UserRobot,
    build_world,
    load_room,
)
from bt_raider.testing.run import run_tree
from bt_raider.testing.scenes import small_kitchen

#: Ticks an episode may take before it counts as not ending (P5).
MAX_TICKS = 3000
#: One episode in this many is run twice to check it replays identically (P8).
REPLAY_EVERY = 8

#: What an episode is about first (issue 32): ``any`` (everything drawn freely), an
#: instruction of one program shape (:data:`SHAPES`), a ``reply`` from a program, a
#: ``hostile`` recovery plan, two guards whose ``names`` collide. Each gets its share.
SHAPES = ("exclude", "frame", "odd", "alt", "select", "quant", "size", "into")
THEMES = ("any", *SHAPES, "reply", "hostile", "names")

#: Seconds a user's factory may take to build a robot or a tree before it counts as hung.
FACTORY_S = 30.0
#: Seconds of wall time an episode may take in all, past run_tree's own 60 s bound: a node
#: whose tick or a robot whose call never returns is then a finding (P5), not a hung test run.
EPISODE_S = 90.0

#: Forms that must behave alike (P11): a phrasing -> its structured twin.
TWINS = {"goto": "approach", "goto_place": "approach_place"}

#: ``world_factory(scene_dict, words) -> robot``: the user's robot over a generated scene.
WorldFactory = Callable[[dict[str, Any], dict[str, str]], Any]


def sim_robot(scene: dict[str, Any], words: dict[str, str]) -> UserRobot:
    """The default world: a user's robot with its own action names over a SimWorld."""
    from bt_raider.simulation.simworld import SimWorld

    return UserRobot(SimWorld(scene), words)


def default_rooms() -> dict[str, Any]:
    """The rooms explored by default: the testing kit's small kitchen."""
    return {"kitchen": small_kitchen().to_dict()}


def run_case(
    case: Case,
    rooms: Mapping[str, Any] | None = None,
    *,
    tree_factory: TreeFactory | None = None,
    world_factory: WorldFactory | None = None,
    trace: str | Path | None = None,
    max_ticks: int = MAX_TICKS,
    actions: Mapping[str, str] | None = None,
) -> Episode:
    """Run one episode and judge it; never raises for what the tree or the library does (P6).

    Args:
        case: the episode.
        rooms: room name -> a scene (path, dict or Scene); default :func:`default_rooms`.
        tree_factory: builds the user's tree from a :class:`TreeSpec`
            (default :func:`~bt_raider.testing.explore_tree.default_tree`).
        world_factory: builds the user's robot over the scene (default :func:`sim_robot`).
        trace: write the episode's trace there (``bt-raider view`` opens it).
        max_ticks: the tick bound of P5.
        actions: the user's robot's own action names, RAIDER's kind -> name (``{"pick":
            "PickUp"}``): its tree and recovery may call them (P2), judged as their kinds.
    """
    import py_trees

    rooms = default_rooms() if rooms is None else rooms
    if case.room not in rooms:
        raise UsageError(f"room {case.room!r}: expected one of {', '.join(sorted(rooms))}")
    room = rooms[case.room]
    scene, truth = build_world(case, room if isinstance(room, dict) else load_room(room))
    oracle = Oracle(truth, own=dict(actions or {}))
    make_robot = world_factory or sim_robot
    user_robot, problem = call_user(
        lambda: make_robot(scene, dict(truth.words)), "world_factory(scene, words)", FACTORY_S
    )
    if problem is None and not all(
        callable(getattr(user_robot, name, None)) for name in ("start", "poll", "observe")
    ):
        problem = (
            f"world_factory(scene, words) returned {show(user_robot)}, not a robot (an object "
            "with start, poll, cancel and observe)"
        )
    if problem is not None:  # the user's factory is the finding: no episode can run
        episode = Episode(case, "ERROR", reason=problem)
        episode.violations = [Violation("P5" if "did not return" in problem else "P6", problem)]
        return episode
    labels = truth.names
    person = ExplorePerson(
        case.person,
        truth.groups,
        labels,
        on_reply=oracle.on_reply,
        place=truth.place,
        answer=case.answer,
    )
    robot = RecordingRobot(user_robot, on_call=oracle.on_call)
    person.scene = oracle.scene = robot.snapshot
    person.on_question = oracle.on_question
    person.on_request = lambda _q: _helpful(robot)
    robot.disturb = _disturbance(case, robot, person, truth.groups[0].target)
    episode = Episode(case, "ERROR")
    py_trees.blackboard.Blackboard.clear()
    try:
        recovery = make_recovery(case, truth, robot, person)
        spec = TreeSpec(case, truth, robot, person, recovery, oracle.on_release, oracle.on_verdict)
        make_tree = tree_factory or default_tree
        root, problem = call_user(lambda: make_tree(spec), "tree_factory(spec)", FACTORY_S)
        if problem is None and not isinstance(root, py_trees.behaviour.Behaviour):
            problem = f"tree_factory(spec) returned {show(root)}, not a py_trees behaviour"
        if problem is not None:
            oracle.flag("P5" if "did not return" in problem else "P6", problem)
            raise Stop(problem)
        result, problem = call_user(
            lambda: run_tree(
                root, world=robot, max_ticks=max_ticks, timeout=60.0, period=0.0005, trace=trace
            ),
            "the episode",
            EPISODE_S,
            where=lambda: where_hung(root, robot),
        )
        if problem is not None:
            if "did not return" not in problem:
                raise Stop(problem, escaped=True)
            oracle.flag("P5", problem)
            raise Stop(problem)
        episode.status = str(result.status.value)
        episode.reason = "; ".join(m for m in result.feedback.values() if m)
        episode.trace = result.trace_path
        for run in result.recovery_runs:
            oracle.on_code(run.code)
        result.summary()  # what the pytest plugin shows: it must not raise on a user's world
        oracle.finish(episode.status, episode.reason, timed_out=result.timed_out)
    except Stop as stop:
        episode.reason = str(stop)
        if stop.escaped:
            oracle.flag("P6", str(stop))
    except Exception as exc:  # P6: whatever escapes is the finding
        where = traceback.extract_tb(exc.__traceback__)[-1]
        oracle.flag(
            "P6",
            f"{type(exc).__name__}: {exc} (at {Path(where.filename).name}:{where.lineno})",
        )
    finally:
        py_trees.blackboard.Blackboard.clear()
    episode.violations = list(oracle.violations)
    episode.calls = [(c.action, c.args, c.tag) for c in robot.calls]
    episode.questions = list(oracle.questions)
    episode.answers = [ex.answer for ex in person.transcript if ex.kind == "ask"]
    return episode


def check_case(
    case: Case,
    rooms: Mapping[str, Any] | None = None,
    *,
    replay: bool = True,
    **options: Any,
) -> Episode:
    """:func:`run_case`, plus the properties that need a second run.

    P11: a ``goto`` phrasing runs again as its structured twin (:data:`TWINS`), which must ask
    the same questions. P8 (with ``replay``): the case runs again and must do the same.
    An episode that escaped (P6) or hung (a call past its deadline) is not run again.

    Args:
        case: the episode.
        rooms: as for :func:`run_case`.
        replay: run the case twice (P8).
        options: passed to :func:`run_case`.
    """
    episode = run_case(case, rooms, **options)
    if "P6" in episode.props or "did not return within" in episode.reason:
        # A hung call is the finding: a second run would hang again (one more thread left
        # behind, and the deadline waited out once more) and tell nothing new.
        return episode
    twin = TWINS.get(case.form)
    if twin is not None:
        # One guard alone: a parallel's other branch may stop it at a different moment.
        alone = replace(case, tree="single")
        mine = episode if case.tree == "single" else run_case(alone, rooms, **options)
        other = run_case(replace(alone, form=twin), rooms, **options)
        if [q.lower() for q in other.questions] != [q.lower() for q in mine.questions]:
            episode.violations.append(
                Violation(
                    "P11", f"{case.form} asked {mine.questions}, {twin} asked {other.questions}"
                )
            )
    if replay:
        again = run_case(case, rooms, **options)
        if not _same_run(episode, again):
            episode.violations.append(
                Violation(
                    "P8", f"the replay differs: {episode.fingerprint()} then {again.fingerprint()}"
                )
            )
    return episode


#: What a person says when answering by the robot's own sides or distances (explore_people,
#: and the programs' "to your left", "the leftmost one", "the closest one to you").
_SIDES = re.compile(
    r"\b(left|right|front|leftmost|rightmost|middle|second|nearest|closest|farthest|furthest)\b"
)


def _same_run(one: Episode, two: Episode) -> bool:
    """Whether two runs of a case did the same (P8).

    Outside a parallel: the same fingerprint. In a parallel, the first branch to fail stops
    the other wherever it got to, so a branch may stop earlier in one run: the outcome must
    match and each branch's calls in one run must be the start of its calls in the other. A
    parallel with a disturbance, whose person answered by a side, or in which a recovery ran
    is not compared (which branch sees the change, where the robot faces when asked, and what
    the other branch holds when a recovery is planned, are timing).
    """
    if one.case.tree != "parallel":
        return one.fingerprint() == two.fingerprint()
    if one.case.disturbance != "none":
        # A world change lands between the two branches' calls wherever the threads have got
        # to: which branch sees it is timing, not input, so identity cannot be asked of it.
        # Each run is still judged on P1-P7 on its own.
        return True
    if any(_SIDES.search(a) for e in (one, two) for a in e.answers if a):
        # A side is the robot's as the person is asked, and where the robot faces then
        # depends on how far the other branch has turned it: timing again, not input.
        return True
    if any(tag is None for e in (one, two) for _action, _args, tag in e.calls):
        # A recovery plans from the robot as it finds it: what the other branch holds or has
        # put down by then (a hand to free first, or not) is timing as well.
        return True
    first, second = one.fingerprint(), two.fingerprint()
    if first[0] != second[0]:
        return False
    calls_one, calls_two = dict(first[1]), dict(second[1])
    for tag in set(calls_one) | set(calls_two):
        a, b = calls_one.get(tag, []), calls_two.get(tag, [])
        short, long_ = (a, b) if len(a) <= len(b) else (b, a)
        if long_[: len(short)] != short:
            return False
    return True


def _helpful(robot: RecordingRobot) -> None:
    """A person asked to do something clears the way: every blocker is moved aside."""
    world = robot.world
    if world is None or not hasattr(world, "unblock"):
        return
    for key in list(world.scene.data.get("blocked") or {}):
        world.unblock(key)


def _disturbance(
    case: Case, robot: RecordingRobot, person: ExplorePerson, target: str
) -> Callable[[int], None]:
    """What happens just before the robot's ``case.when``-th action."""
    done = [False]
    counted = [0]

    def disturb(index: int) -> None:
        if done[0] or case.disturbance == "none":
            return
        if case.tree == "parallel":
            # Two branches' calls interleave by timing: count only the calls on the target,
            # whose order is the target branch's own, so a replay disturbs the same call.
            call = robot.calls[index - 1]
            if target not in call.args:
                return
            counted[0] += 1
            if counted[0] < case.when:
                return
        elif index < case.when:
            return
        done[0] = True
        world = robot.world
        kind = case.disturbance
        if kind == "fails":
            robot.fail_next = True
        elif kind == "hangs":
            robot.hang_next = True
        elif kind == "nan":
            robot.nan = True
        elif kind == "left":
            person.left = True
            if world is not None and any(
                h.get("id") == USER for h in world.scene.data.get("humans") or []
            ):
                world.set_human(USER, looking_at_robot=False)
        elif world is not None and hasattr(world, "inject"):
            world.inject(lambda w: _change(w, kind, target), label=f"explore: {kind}")

    return disturb


def _change(world: Any, kind: str, target: str) -> None:
    """A person changes the world: moves or takes the target, blocks it, closes containers."""
    data = world.scene.data
    held = {i.get("objectId") for i in data.get("inventoryObjects") or []}
    if kind != "closed" and not any(o["objectId"] == target for o in data["objects"]):
        return  # the target is elsewhere (hidden) or already gone: nothing of it to change
    if kind == "moved" and target not in held:
        obj = world.scene.by_id(target)
        world.move_object(target, (obj.xyz[0] + 2.5, obj.xyz[2] + 2.5))
    elif kind == "removed" and target not in held:
        data["objects"] = [o for o in data["objects"] if o["objectId"] != target]
        for o in data["objects"]:
            for key in ("receptacleObjectIds", "parentReceptacles"):
                if isinstance(o.get(key), list) and target in o[key]:
                    o[key].remove(target)
        world.scene.reindex()
    elif kind == "blocker" and target not in held:
        world.block(target, STOOL)
    elif kind == "closed":
        for o in data["objects"]:
            if o.get("openable") and o.get("isOpen"):
                o["isOpen"] = False


def cases(
    rooms: Iterable[str] = ("kitchen",),
    *,
    people: Sequence[str] = PEOPLE,
    forms: Sequence[str] = FORMS,
    disturbances: Sequence[str] = DISTURBANCES,
    trees: Sequence[str] = TREES,
    words: Sequence[str] = tuple(WORDS),
    planners: Sequence[str] = PLANNERS,
    models: Sequence[str] = MODELS,
) -> Any:
    """A Hypothesis strategy of :class:`Case`\\ s (shrinks toward the first option of each).

    Args:
        rooms: the room names to draw from.
        people, forms, disturbances, trees, words, planners, models: the options to draw from
            (each list's first entry is what a case shrinks toward).
    """
    from bt_raider.errors import require

    require("hypothesis", "explore", needed_by="cases()")
    from hypothesis import strategies as st

    for name, given, allowed in (
        ("people", people, PEOPLE),
        ("forms", forms, FORMS),
        ("disturbances", disturbances, DISTURBANCES),
        ("trees", trees, TREES),
        ("words", words, tuple(WORDS)),
        ("models", models, MODELS),
        ("planners", planners, PLANNERS),
    ):
        bad = [g for g in given if g not in allowed]
        if bad or not given:
            raise UsageError(f"{name} {bad or given!r}: expected some of {', '.join(allowed)}")
    things = st.lists(
        st.builds(
            Thing,
            colour=st.sampled_from(COLOURS),
            dirty=st.booleans(),
            side=st.sampled_from(SIDES),
            far=st.sampled_from((False, False, True)),
            at=st.sampled_from(("", "", *LANDMARKS)),
            size=st.sampled_from((0.0, 0.0, 0.08, 0.1, 0.16)),
        ),
        min_size=1,
        max_size=3,
    ).map(tuple)

    def often(options: Sequence[str], favourite: str) -> Any:
        """One of ``options``, ``favourite`` half the time (the new grammar is drawn often);
        shrinking goes to the first option, as ever."""
        rest = [o for o in options if o != favourite] or [favourite]
        if favourite not in options:
            return st.sampled_from(rest)
        if options[0] == favourite:
            return st.one_of(st.just(favourite), st.sampled_from(rest))
        return st.one_of(st.sampled_from(rest), st.just(favourite))

    seldom = st.sampled_from((False, False, False, True))  # a quarter of the time
    rarely = st.sampled_from((False,) * 7 + (True,))
    calm = often(disturbances, "none")
    if "none" in disturbances:
        calm = st.sampled_from(["none"] * len(disturbances) * 2 + list(disturbances))
    normal = [p for p in planners if p not in HOSTILE] or list(planners)
    hostile = [p for p in planners if p in HOSTILE] or normal

    @st.composite
    def draw(draw: Any) -> Case:
        # A theme first (:data:`THEMES`): each of issue 32's shapes of words and faults gets a
        # share of the episodes, whatever else is drawn around it.
        theme = draw(st.sampled_from(THEMES))
        stuff = draw(things)
        tree = draw(st.sampled_from(list(trees)))
        if theme == "names" and set(trees) - {"single"}:
            tree = draw(st.sampled_from([t for t in trees if t != "single"]))
        room = draw(st.sampled_from(sorted(rooms)))
        kind = draw(st.sampled_from(KINDS))
        target = draw(st.integers(0, len(stuff) - 1))
        spoken = theme in SHAPES and "said" in forms
        form = "said" if spoken else draw(st.sampled_from(list(forms)))
        person = draw(st.sampled_from(list(people)))
        if theme == "reply" and "says" in people:
            person = "says"
        planner = draw(st.sampled_from(normal))
        if theme == "hostile":
            planner = draw(st.sampled_from(hostile))
        # Words are what a program tests: what goes wrong around them is drawn more seldom.
        odd = rarely if form == "said" else seldom
        case = Case(
            room=room,
            kind=kind,
            things=stuff,
            target=target,
            form=form,
            person=person,
            tree=tree,
            other=draw(st.integers(0, 1)),
            words=draw(st.sampled_from(list(words))),
            blocked=draw(odd),
            disturbance=draw(often(disturbances, "none") if odd is seldom else calm),
            when=draw(st.integers(1, 3)),
            planner=planner,
            running=draw(st.booleans()),
            hidden=draw(odd),
            model=draw(st.sampled_from(list(models))),
        )
        colours = sorted({t.colour for t in stuff} | {draw(st.sampled_from(COLOURS))})
        shape = theme if spoken else None
        said = draw(says(colours, shape=shape)) if case.form == "said" else None
        answer = draw(says(colours, reply=True)) if case.person == "says" else None
        frames = set().union(*(s.frames() for s in (said, answer) if s is not None))
        speaker = draw(st.sampled_from(SPEAKERS[1:])) if "my" in frames else "none"
        names = "distinct"
        if tree != "single":
            names = draw(st.sampled_from(NAMES[1:] if theme == "names" else NAMES))
        return replace(case, said=said, answer=answer, speaker=speaker, names=names)

    return draw()


@overload
def explore(
    tree_factory: TreeFactory | None = None,
    world_factory: WorldFactory | None = None,
    *,
    domain: None = None,
    rooms: Mapping[str, Any] | None = None,
    people: Sequence[str] = PEOPLE,
    forms: Sequence[str] = FORMS,
    disturbances: Sequence[str] = DISTURBANCES,
    trees: Sequence[str] = TREES,
    words: Sequence[str] = tuple(WORDS),
    planners: Sequence[str] = PLANNERS,
    models: Sequence[str] = MODELS,
    episodes: int = 200,
    seed: int = 0,
    shrink: bool = True,
    shrink_budget: float = 30.0,
    trace_dir: str | Path | None = None,
    database: Any = None,
    on_episode: Callable[[Episode], None] | None = None,
    actions: Mapping[str, str] | None = None,
) -> ExploreReport: ...


@overload
def explore(
    *, domain: UserDomain, episodes: int = 200, seed: int = 0, on_episode: Any = None
) -> DomainReport: ...


def explore(
    tree_factory: TreeFactory | None = None,
    world_factory: WorldFactory | None = None,
    *,
    domain: UserDomain | None = None,
    rooms: Mapping[str, Any] | None = None,
    people: Sequence[str] = PEOPLE,
    forms: Sequence[str] = FORMS,
    disturbances: Sequence[str] = DISTURBANCES,
    trees: Sequence[str] = TREES,
    words: Sequence[str] = tuple(WORDS),
    planners: Sequence[str] = PLANNERS,
    models: Sequence[str] = MODELS,
    episodes: int = 200,
    seed: int = 0,
    shrink: bool = True,
    shrink_budget: float = 30.0,
    trace_dir: str | Path | None = None,
    database: Any = None,
    on_episode: Callable[[Episode], None] | None = None,
    actions: Mapping[str, str] | None = None,
) -> ExploreReport | DomainReport:
    """Explore a tree: ``episodes`` generated episodes, judged; shrink what fails.

    With ``domain=`` (a :class:`~bt_raider.testing.explore_domain.UserDomain`: the user's room,
    action names, guard, people, words, plan and kinds) it explores the user's own domain
    instead (:func:`~bt_raider.testing.explore_domain.explore_domain`, properties D1-D7), and
    only ``episodes``, ``seed`` and ``on_episode`` apply.

    Args:
        tree_factory: ``tree_factory(spec) -> root``: the user's tree for a
            :class:`~bt_raider.testing.explore_tree.TreeSpec` (default: plain py_trees
            behaviours under guards, :func:`~bt_raider.testing.explore_tree.default_tree`).
        world_factory: ``world_factory(scene_dict, words) -> robot``: the user's robot over a
            generated scene (default :func:`sim_robot`).
        rooms: room name -> a seed scene (path, dict or Scene); default the kit's kitchen.
        people, forms, disturbances, trees, words, planners, models: what the cases draw
            from (``models`` matter only to the default tree, whose guards they check under).
        episodes: how many episodes to run (a bound, derandomised by ``seed``).
        seed: the seed; the same seed draws the same episodes.
        shrink: search each broken property again and shrink it to a minimal case.
        shrink_budget: seconds one property's shrinking may take (the smallest case by then
            is reported).
        trace_dir: write each finding's trace there (``<prop>.json``).
        database: a Hypothesis example database for the shrinking searches (None: none).
        on_episode: called with every episode (progress, benchmarks).
        actions: the user's robot's own action names (:func:`run_case`).

    Returns:
        The :class:`ExploreReport` (with ``domain=``, the
        :class:`~bt_raider.testing.explore_domain.DomainReport`: the same shape).
    """
    from bt_raider.errors import require

    if domain is not None:
        # on_episode takes the domain's outcomes there (the second overload types it Any).
        outcome: Any = on_episode
        return explore_domain(domain, episodes=episodes, seed=seed, on_outcome=outcome)
    require("hypothesis", "explore", needed_by="explore()")
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    if not isinstance(episodes, int) or episodes < 1:
        raise UsageError(f"episodes must be an integer >= 1, got {episodes!r}")
    given_rooms = rooms
    loaded = {name: load_room(room) for name, room in (rooms or default_rooms()).items()}
    strategy = cases(
        loaded,
        people=people,
        forms=forms,
        disturbances=disturbances,
        trees=trees,
        words=words,
        planners=planners,
        models=models,
    )
    report = ExploreReport()
    options: dict[str, Any] = {"tree_factory": tree_factory, "world_factory": world_factory}
    options["actions"] = actions

    def one(case: Case) -> Episode:
        replay = report.episodes % REPLAY_EVERY == 0
        return check_case(case, loaded, replay=replay, **options)

    acted = [0]  # episodes in which the robot was asked to act at least once

    quiet = settings(
        max_examples=episodes,
        database=None,
        deadline=None,
        derandomize=False,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )

    @hseed(seed)
    @quiet
    @given(strategy)
    def sweep(case: Case) -> None:
        if report.problem:
            return  # a hung call of the user's: its thread is still there, stop exploring
        episode = one(case)
        report.add(episode)
        acted[0] += bool(episode.calls)
        if "did not return within" in episode.reason:
            report.problem = (
                f"the exploration stopped after episode {report.episodes}: {episode.reason}"
            )
        if on_episode is not None:
            on_episode(episode)

    start = time.monotonic()
    sweep()
    report.elapsed_s = time.monotonic() - start
    if not report.problem and not acted[0]:
        # Every episode ended before the robot was asked to do anything: nothing was explored
        # (a tree that never reaches its actions, a factory whose robot is never called).
        report.problem = (
            f"no episode reached an action: in {report.episodes} episode(s) the robot was "
            f"never asked to act ({report.statuses}); the tree explored nothing"
        )
    if not shrink or "stopped after" in report.problem:
        return report  # shrinking a hang would hang again, once per candidate
    for prop in [p for p in PROPERTIES if report.violations[p]]:
        began = time.monotonic()
        found = _shrink(
            prop,
            strategy,
            report.failing(prop),
            functools.partial(_breaks, prop, loaded, options),
            seed=seed,
            episodes=episodes,
            budget=shrink_budget,
            database=database,
        )
        trace = None if trace_dir is None else Path(trace_dir) / f"{prop}.json"
        episode = check_case(found, loaded, replay=prop == "P8", trace=trace, **options)
        if prop not in episode.props:  # a finding that needs threads to line up: keep the first
            episode = report.first[prop]
        spent = time.monotonic() - began
        report.shrink_s += spent
        source = (given_rooms or {}).get(episode.case.room)
        code = "" if source is None else room_code(episode.case.room, source)
        text = pytest_text(prop, episode, code, factory_code(tree_factory, world_factory))
        report.findings[prop] = Finding(prop, episode, spent, text)
    return report


def _breaks(prop: str, rooms: Mapping[str, Any], options: dict[str, Any], case: Case) -> bool:
    """Whether ``case`` breaks ``prop`` (what the shrinking search keeps)."""
    return prop in check_case(case, rooms, replay=prop == "P8", **options).props


class _Shrunk(Exception):
    """Raised inside the shrinking search for a case that breaks the property."""


def _shrink(
    prop: str,
    strategy: Any,
    starts: list[Case],
    fails: Callable[[Case], bool],
    *,
    seed: int,
    episodes: int,
    budget: float,
    database: Any,
) -> Case:
    """Hypothesis's shrinker on a failing case: the smallest case it finds that still ``fails``.

    The search draws the sweep's cases again (same seed, same order) without running them
    until it meets one of ``starts`` (the sweep's first failing cases) that fails again;
    Hypothesis then shrinks it, running each smaller candidate. After ``budget`` seconds only
    the smallest failure so far still fails, so the shrinking ends there. Returns the first of
    ``starts`` when none fails again (threads lining up): reported as found, not shrunk.
    """
    first = starts[0]
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed
    from hypothesis.errors import Flaky

    state: dict[str, Any] = {"best": None, "until": None}

    @hseed(seed)
    @settings(
        max_examples=episodes,
        database=database,
        deadline=None,
        phases=[Phase.reuse, Phase.generate, Phase.shrink],
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def search(case: Case) -> None:
        best = state["best"]
        if best is None and case not in starts:
            return  # still replaying the sweep: only its failing cases matter
        if state["until"] is not None and time.monotonic() > state["until"]:
            if case == best:
                raise _Shrunk(prop)
            return
        if fails(case):
            if best is None:
                state["until"] = time.monotonic() + budget
            state["best"] = case
            raise _Shrunk(prop)

    try:
        search()
    except _Shrunk:
        pass
    except Flaky:
        return first
    best: Case | None = state["best"]
    return first if best is None else best


def replace_case(case: Case, **changes: Any) -> Case:
    """``case`` with some fields changed (a convenience for writing tests)."""
    return replace(case, **changes)


__all__ = [
    "MAX_TICKS",
    "Episode",
    "ExploreReport",
    "Finding",
    "cases",
    "check_case",
    "default_rooms",
    "explore",
    "factory_code",
    "pytest_text",
    "replace_case",
    "room_code",
    "run_case",
    "sim_robot",
]
