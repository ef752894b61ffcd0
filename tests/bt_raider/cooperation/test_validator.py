"""Trajectory-based validation, REVECA's messages and adaptive planning."""

from __future__ import annotations

import json

import pytest

from bt_raider.cooperation.messages import (
    achieved_message,
    answer_request,
    hello_message,
    request_message,
    serve_answers,
)
from bt_raider.cooperation.messaging import MAX_FRAME_CHARS, InProcessHub, Message, MessageKind
from bt_raider.cooperation.observations import (
    Goal,
    InformationError,
    ObjectInfo,
    Relevance,
    Sighting,
    SubGoal,
)
from bt_raider.cooperation.planning import WAIT, GreedyPlanner, LLMPlanner, plan_options
from bt_raider.cooperation.relevance import SymbolicRelevance
from bt_raider.cooperation.reveca_memory import RevecaMemory
from bt_raider.cooperation.trajectory import LLMTrajectory, SymbolicTrajectory
from bt_raider.cooperation.validator import Validator
from bt_raider.llm.chat import ScriptedChat
from bt_raider.simulation.multirobot import CATALOGUE, default_house

GOAL = Goal(("cupcake", "apple"), "coffeetable", "on", "1", "livingroom", (2.0, 2.0))
APPLE = GOAL.subgoal("apple", "7")


def apple(step=2, room="kitchen", pos=(12.0, 1.0)) -> ObjectInfo:
    return ObjectInfo(
        "7",
        "apple",
        room,
        pos,
        step,
        category="food",
        actions=("grab",),
        relevance=Relevance.STRONG,
    )


class Team:
    """Real memories on a real in-process bus; alice validates, the others answer."""

    def __init__(self, names=("alice", "bob", "carol"), serve=None):
        serve = [n for n in names if n != "alice"] if serve is None else serve
        self.hub = InProcessHub()
        self.memory = {
            n: RevecaMemory(n, GOAL, default_house(), names, estimator=SymbolicRelevance(CATALOGUE))
            for n in names
        }
        self.bus = {n: self.hub.connect(n) for n in names}
        for n in serve:
            serve_answers(self.memory[n], self.bus[n])
        alice = self.memory["alice"]
        alice.step, alice.room, alice.position = 40, "livingroom", (4.0, 3.0)
        alice.observations.put(apple())

    def validator(self, mode="trajectory", **kw) -> Validator:
        return Validator(self.memory["alice"], self.bus["alice"], mode=mode, **kw)

    def saw(self, who: str, step: int, room: str, exact=False, pos=None):
        pos = pos or default_house().centre(room)
        self.memory["alice"].collaborators[who].note(Sighting(step, room, pos, exact, "test"))

    def requests(self) -> list[Message]:
        return [m for m in self.hub.log if m.kind is MessageKind.VALIDATION_REQUEST]


def test_asks_the_most_likely_collaborator_first_then_the_next():
    team = Team()
    team.saw("bob", 10, "kitchen")  # said to be in the apple's room since it was seen
    team.saw("carol", 0, "bedroom")  # far, but with 40 steps she could have walked there
    team.memory["carol"].history.grabbed["7"] = "apple"  # ... and she did
    v = team.validator()
    estimates = v.assess(APPLE)
    assert [e.collaborator for e in estimates] == ["bob", "carol"]
    assert estimates[0].probability > estimates[1].probability >= 0.5
    result = v.validate(APPLE)
    assert result.asked == ("bob", "carol")
    assert result.answers == {"bob": "no", "carol": "yes"}
    assert result.achieved_by == "carol"
    assert [m.to for m in team.requests()] == ["bob", "carol"]
    # the stale information and the plan relying on it are dropped
    alice = team.memory["alice"]
    assert "7" not in alice.observations
    assert alice.taken == {"apple": "carol"} and alice.remaining() == ["cupcake"]
    # the answer placed carol at the centre of the room she answered from
    assert alice.collaborators["carol"].last.step >= 0


def test_skips_asking_when_nobody_could_have_reached_the_object():
    team = Team()
    team.memory["alice"].observations.put(apple(step=38))
    team.saw("bob", 39, "bedroom", exact=True, pos=(2.0, 10.0))  # seen far away one step ago
    team.saw("carol", 37, "bathroom", exact=True, pos=(9.0, 9.0))
    result = team.validator().validate(APPLE)
    assert result.commit and result.asked == ()
    assert team.hub.stats.messages == 0
    assert all(e.probability == 0 and "needs" in e.reason for e in result.assessments)


def test_commits_when_the_collaborator_denies():
    team = Team(names=("alice", "bob"), serve=("bob",))
    team.saw("bob", 10, "kitchen")
    result = team.validator().validate(APPLE)
    assert result.commit and result.asked == ("bob",) and result.answers == {"bob": "no"}
    assert "7" in team.memory["alice"].observations  # nothing dropped
    assert team.hub.stats.messages == 2  # request + answer


def test_no_answer_is_unknown_and_does_not_block_the_plan():
    team = Team(names=("alice", "bob"), serve=())
    team.saw("bob", 10, "kitchen")
    result = team.validator(timeout=0.2).validate(APPLE)
    assert result.commit and result.answers == {"bob": "unknown"}


def test_an_announced_subgoal_is_known_without_asking():
    team = Team(names=("alice", "bob"))
    team.memory["alice"].collaborators["bob"].completed.append(APPLE.key)
    result = team.validator().validate(APPLE)
    assert result.achieved_by == "bob" and result.asked == ()
    assert team.hub.stats.messages == 0


def test_modes_never_and_always():
    team = Team()
    team.saw("bob", 39, "bedroom", exact=True, pos=(2.0, 10.0))
    assert team.validator("never").validate(APPLE).reason == "validation off"
    assert team.hub.stats.messages == 0
    always = team.validator("always").validate(APPLE)
    assert always.asked == ("bob", "carol") or set(always.asked) == {"bob", "carol"}
    assert always.commit and team.hub.stats.messages == 4
    # explore plans are not validated by trajectory (no stored information) but are by "always"
    explore = SubGoal("explore", "bathroom")
    assert team.validator().validate(explore).asked == ()
    assert len(team.validator("always").validate(explore).asked) == 2
    with pytest.raises(
        InformationError, match="'sometimes' is not one of trajectory, always, never"
    ):
        team.validator("sometimes")


def test_answers_come_from_the_task_history():
    team = Team(names=("alice", "bob"), serve=("bob",))
    bob = team.memory["bob"]
    bob.step, bob.room = 30, "livingroom"
    req = request_message(team.memory["alice"], "bob", APPLE, apple())
    no = answer_request(bob, req)
    assert no.data["answer"] == "no" and no.reply_to == req.id and no.to == "alice"
    bob.history.grabbed["7"] = "apple"
    bob.history.placed["7"] = "apple"
    bob.done["apple"] = "bob"
    yes = answer_request(bob, req)
    assert yes.data == {"answer": "yes", "subgoal": APPLE.to_dict(), "held": [], "placed": True}
    assert "put the apple on the coffeetable" in yes.text
    # checking a container: the answer carries what was inside
    bob.history.opened.add("2")
    bob.observations.put(
        ObjectInfo("8", "cupcake", "kitchen", (12, 1), 25, parent="2", actions=("grab",))
    )
    opened = answer_request(
        bob,
        request_message(
            team.memory["alice"], "bob", SubGoal("open", "fridge", object_id="2"), None
        ),
    )
    assert opened.data["answer"] == "yes" and [o["id"] for o in opened.data["objects"]] == ["8"]
    # the requester was placed where it asked from
    assert bob.collaborators["alice"].last.room == "livingroom"


def test_reveca_messages_fit_one_frame():
    m = RevecaMemory(
        "alice", GOAL, default_house(), ["bob"], estimator=SymbolicRelevance(CATALOGUE)
    )
    m.room, m.position, m.step = "kitchen", (10.0, 3.0), 1
    for i in range(40):
        m.observations.put(
            ObjectInfo(str(100 + i), "book" if i % 2 else "apple", "kitchen", (10 + i / 10, 3), 1)
        )
    m.observations.put(apple())
    m.observations.get("7").relevance = Relevance.STRONG
    msg = hello_message(m)
    assert len(msg.to_json()) <= MAX_FRAME_CHARS
    assert 0 < len(msg.data["objects"]) < 41
    assert msg.data["objects"][0]["id"] == "7"  # most relevant first
    done = achieved_message(m, APPLE)
    assert Message.from_json(done.to_json()).data["subgoal"]["object_id"] == "7"


def planning_memory(**kw) -> RevecaMemory:
    m = RevecaMemory(
        "alice", GOAL, default_house(), ["bob"], estimator=SymbolicRelevance(CATALOGUE), **kw
    )
    m.step, m.room, m.position = 5, "kitchen", (10.0, 3.0)
    m.explored |= {"kitchen", "livingroom", "bedroom", "bathroom"}
    return m


def test_plan_options_put_relevant_information_first():
    m = planning_memory()
    m.observations.put(
        ObjectInfo(
            "20",
            "banana",
            "kitchen",
            (10.2, 3.0),
            5,
            category="food",
            actions=("grab",),
            relevance=Relevance.LOW,
        )
    )
    m.observations.put(
        ObjectInfo(
            "2",
            "fridge",
            "kitchen",
            (12.0, 1.0),
            5,
            kind="container",
            actions=("open",),
            states=("CLOSED",),
            relevance=Relevance.MEDIUM,
        )
    )
    m.observations.put(apple(room="bedroom", pos=(2.0, 10.0)))
    options = plan_options(m, k=3)
    assert [o.kind for o in options] == ["fetch", "check"]
    assert options[0].label == "[gograb] <apple> (7)"
    # without relevance the nearest information fills the window: only the fridge is usable
    blind = plan_options(m, k=2, use_relevance=False)
    assert [o.label for o in blind] == ["[gocheck] <fridge> (2)"]


def test_plan_options_explore_when_nothing_known_and_wait_when_nothing_left():
    m = planning_memory()
    m.explored = {"kitchen"}
    options = plan_options(m)
    assert {o.kind for o in options} == {"explore"}
    assert options[0].subgoal.target == "livingroom"  # the nearest unexplored room
    m.done.update({"apple": "bob", "cupcake": "alice"})
    assert plan_options(m) == [WAIT]


def test_greedy_planner_leaves_to_a_collaborator_what_it_is_closer_to():
    m = planning_memory()
    m.collaborators["bob"].note(Sighting(4, "bedroom", (2.0, 9.5), True))
    m.observations.put(apple(room="bedroom", pos=(2.0, 10.0)))  # next to bob
    m.explored = {"kitchen", "bedroom"}
    options = plan_options(m)
    assert options[0].kind == "fetch" and options[0].proximity.farther_than == ["bob"]
    choice = GreedyPlanner().choose(m, options)
    assert choice.kind == "explore" and choice.subgoal.target == "livingroom"
    assert GreedyPlanner(use_proximity=False).choose(m, options).kind == "fetch"


def test_greedy_planner_delivers_when_hands_are_full():
    m = planning_memory()
    m.held = {"7": "apple", "9": "book"}
    m.observations.put(
        ObjectInfo(
            "8", "cupcake", "kitchen", (10.1, 3.0), 5, actions=("grab",), relevance=Relevance.STRONG
        )
    )
    options = plan_options(m)
    assert options[0].kind == "deliver"
    assert GreedyPlanner(hands=2).choose(m, options).kind == "deliver"
    # a free hand and the cupcake nearer than the coffee table: fetch it first
    assert GreedyPlanner(hands=3).choose(m, options).kind == "fetch"


def test_llm_planner_reads_the_choice_and_falls_back_on_nonsense():
    m = planning_memory()
    m.explored = {"kitchen"}
    options = plan_options(m)
    chat = ScriptedChat(['{"reasoning": "Bob is nearer the bedroom", "choice": "B"}'])
    assert LLMPlanner(chat).choose(m, options) is options[1]
    prompt = chat.calls[0][0]["content"]
    assert (
        "A. [goexplore] <livingroom>" in prompt and "no collaborator's position is known" in prompt
    )
    bad = ScriptedChat(['{"choice": "Q"}', "no idea"])
    planner = LLMPlanner(bad, retries=1)
    assert planner.choose(m, options) is options[0]  # greedy fallback
    assert "choice 'Q' is not one of A, B" in bad.calls[1][-1]["content"]
    assert planner.failures


def test_llm_trajectory_reads_likelihoods_and_keeps_what_memory_knows():
    team = Team(names=("alice", "bob", "carol"))
    team.saw("bob", 10, "kitchen")
    team.memory["alice"].collaborators["carol"].completed.append(APPLE.key)
    reply = {
        "reasoning": "...",
        "collaborators": [
            {"name": "bob", "likelihood": 0.2, "reason": "busy"},
            {"name": "carol", "likelihood": 0.1, "reason": "?"},
        ],
    }
    chat = ScriptedChat([json.dumps(reply)])
    est = LLMTrajectory(chat)
    out = {x.collaborator: x for x in est.estimate(team.validator().context(APPLE))}
    assert out["bob"].probability == 0.2 and not out["bob"].likely
    assert out["carol"].known and out["carol"].probability == 1.0  # announced: certain
    prompt = chat.calls[0][0]["content"]
    assert "apple (7)" in prompt and "step 2" in prompt and "Walking facts" in prompt
    wrong = ScriptedChat(['{"collaborators": [{"name": "dave", "likelihood": 1}]}', "nothing"])
    fallback = LLMTrajectory(wrong, retries=1).estimate(team.validator().context(APPLE))
    assert "'dave' is not one of bob, carol" in wrong.calls[1][-1]["content"]
    assert {x.collaborator for x in fallback} == {"bob", "carol"}


def test_symbolic_trajectory_weights_relevance_and_room_evidence():
    team = Team(names=("alice", "bob"))
    team.saw("bob", 10, "kitchen")
    ctx = team.validator().context(APPLE)
    (bob,) = SymbolicTrajectory().estimate(ctx)
    assert (
        bob.probability == pytest.approx(0.9) and bob.likely and "was in the kitchen" in bob.reason
    )
    team.memory["alice"].observations.put(apple(step=40))  # I see it right now
    (now,) = SymbolicTrajectory().estimate(team.validator().context(APPLE))
    assert now.probability == 0 and "this very step" in now.reason
