"""REVECA's memory: relevance estimation, relative proximity, Algorithm 1, observation and hearing."""

from __future__ import annotations

import json

import pytest

from bt_raider.cooperation.messaging import Message, MessageKind
from bt_raider.cooperation.observations import (
    CollaboratorInfo,
    Goal,
    InformationError,
    ObjectInfo,
    Relevance,
    Sighting,
    SubGoal,
)
from bt_raider.cooperation.proximity import Proximity, relative_proximity, retrieve
from bt_raider.cooperation.relevance import LLMRelevance, SymbolicRelevance
from bt_raider.cooperation.reveca_memory import RevecaMemory, Seen
from bt_raider.errors import BackendError
from bt_raider.llm.chat import ScriptedChat
from bt_raider.simulation.multirobot import CATALOGUE, default_house

GOAL = Goal(("cupcake", "apple"), "coffeetable", "on", "1", "livingroom", (2.0, 2.0))


def obj(oid, name, room="kitchen", pos=(10.0, 3.0), step=0, kind="object", **kw) -> ObjectInfo:
    category = kw.pop("category", CATALOGUE.get(name, "furniture"))
    actions = kw.pop("actions", ("grab",) if kind == "object" else ("open",))
    return ObjectInfo(
        oid, name, room, pos, step, kind=kind, category=category, actions=actions, **kw
    )


def test_relevance_levels_parse_and_order():
    assert Relevance.parse("strong") is Relevance.STRONG
    assert Relevance.parse(" None ") is Relevance.NONE
    assert Relevance.parse(2) is Relevance.MEDIUM
    assert Relevance.STRONG > Relevance.MEDIUM > Relevance.LOW > Relevance.NONE
    assert Relevance.LOW.label == "Low"
    with pytest.raises(InformationError, match="'urgent' is not one of Strong, Medium, Low, None"):
        Relevance.parse("urgent")


def test_symbolic_relevance_follows_the_four_rules():
    rules = SymbolicRelevance(CATALOGUE)
    infos = [
        obj("7", "apple"),
        obj("1", "coffeetable", kind="surface", actions=("put",)),
        obj("2", "fridge", kind="container", holds=("food",), states=("CLOSED",)),
        obj("3", "wardrobe", kind="container", holds=("misc",), states=("CLOSED",)),
        obj("4", "banana"),  # food, like the goal objects
        obj("5", "book"),
        obj("6", "desk", kind="surface", holds=("*",), actions=("put",)),
    ]
    assert rules.estimate(infos, GOAL) == [
        Relevance.STRONG,
        Relevance.MEDIUM,
        Relevance.MEDIUM,
        Relevance.NONE,
        Relevance.LOW,
        Relevance.NONE,
        Relevance.NONE,
    ]


def test_llm_relevance_reads_structured_json_from_reveca_prompt():
    chat = ScriptedChat(
        ['Thinking... {"reasoning": "apple is named", "relevance": {"7": "Strong", "5": "None"}}']
    )
    est = LLMRelevance(chat, agent="alice")
    assert est.estimate([obj("7", "apple"), obj("5", "book")], GOAL) == [
        Relevance.STRONG,
        Relevance.NONE,
    ]
    (call,) = chat.calls
    prompt = call[0]["content"]
    assert "alice" in prompt and "put cupcake, apple on the <coffeetable> (1)" in prompt
    assert "id 7: <apple>" in prompt and "id 5: <book>" in prompt
    assert "Strong" in prompt and "JSON" in prompt


def test_llm_relevance_feeds_mistakes_back_then_falls_back():
    chat = ScriptedChat(
        ['{"relevance": {"7": "Strong"}}', '{"relevance": {"7": "High", "5": "None"}}']
    )
    est = LLMRelevance(chat, fallback=SymbolicRelevance(CATALOGUE), retries=1)
    assert est.estimate([obj("7", "apple"), obj("5", "book")], GOAL) == [
        Relevance.STRONG,
        Relevance.NONE,
    ]
    assert len(chat.calls) == 2
    feedback = chat.calls[1][-1]["content"]
    assert "no relevance for id(s) 5" in feedback  # the model is told what was wrong
    assert "not usable" in est.failures[0] or "no usable JSON" in est.failures[0]
    strict = LLMRelevance(ScriptedChat(["no json here", "still none"]), retries=1)
    with pytest.raises(BackendError, match="no usable JSON after 2 tries"):
        strict.estimate([obj("7", "apple")], GOAL)


def test_relative_proximity_is_phrased_for_the_model():
    house = default_house()
    bob = CollaboratorInfo("bob", [Sighting(3, "livingroom", (4.0, 3.0), True)])
    carol = CollaboratorInfo("carol", [Sighting(3, "kitchen", (0.0, 0.0), False)])  # room centre
    p = relative_proximity("kitchen", (12.0, 3.0), ("kitchen", (10.0, 3.0)), [bob, carol], house)
    assert p.mine == pytest.approx(2.0)
    assert p.others["bob"] == pytest.approx(8.0)
    assert p.others["carol"] == pytest.approx(1.0)  # placed at the kitchen's centre (11, 3)
    assert p.closer_than == ["bob"] and p.farther_than == ["carol"]
    assert p.phrase == "I'm closer than Bob and farther than Carol"
    assert Proximity(1.0).phrase == "no collaborator's position is known"


def test_retrieve_is_algorithm_1_relevance_then_proximity():
    house = default_house()
    me = ("kitchen", (10.0, 3.0))
    bob = CollaboratorInfo("bob", [Sighting(0, "livingroom", (1.0, 1.0), True)])
    near_low = obj("1", "banana", pos=(10.5, 3.0), relevance=Relevance.LOW)
    far_strong = obj("2", "apple", room="bedroom", pos=(2.0, 10.0), relevance=Relevance.STRONG)
    near_strong = obj("3", "cupcake", pos=(12.0, 3.0), relevance=Relevance.STRONG)
    bobs_strong = obj("4", "apple", room="livingroom", pos=(1.5, 1.0), relevance=Relevance.STRONG)
    infos = [near_low, far_strong, near_strong, bobs_strong]
    top = retrieve(infos, me, [bob], house, k=3)
    # Strong first; among them, the one I'm closer to than Bob, then the nearer of the two
    # Bob is closer to (livingroom 8.8 m before bedroom 12 m).
    assert [r.info.id for r in top] == ["3", "4", "2"]
    assert top[1].proximity.mine == pytest.approx(2 + 6.8, abs=0.05)
    assert top[0].proximity.closer_than == ["bob"]
    assert [r.info.id for r in retrieve(infos, me, [bob], house, k=2, use_relevance=False)] == [
        "1",
        "3",
    ]


def memory(**kw) -> RevecaMemory:
    return RevecaMemory(
        "alice", GOAL, default_house(), ["bob"], estimator=SymbolicRelevance(CATALOGUE), **kw
    )


class CountingRelevance(SymbolicRelevance):
    def __init__(self):
        super().__init__(CATALOGUE)
        self.rated: list[str] = []

    def estimate(self, infos, goal):
        self.rated += [i.id for i in infos]
        return super().estimate(infos, goal)


def test_relevance_is_assessed_once_at_acquisition():
    est = CountingRelevance()
    m = RevecaMemory("alice", GOAL, default_house(), ["bob"], estimator=est)
    fridge = obj("2", "fridge", kind="container", holds=("food",), states=("CLOSED",), pos=(12, 1))
    new = m.observe(1, "kitchen", (10, 3), [obj("7", "apple", pos=(12, 1), parent="2"), fridge])
    assert {i.id for i in new} == {"7", "2"} and sorted(est.rated) == ["2", "7"]
    assert m.observations.get("7").relevance is Relevance.STRONG
    again = m.observe(
        2, "kitchen", (10, 3), [obj("7", "apple", pos=(12, 1), step=2, parent="2"), fridge]
    )
    assert again == [] and sorted(est.rated) == ["2", "7"]  # not re-rated
    assert (
        m.observations.get("7").step == 2 and m.observations.get("7").relevance is Relevance.STRONG
    )


def test_what_i_no_longer_see_in_my_room_is_forgotten_unless_hidden():
    m = memory()
    fridge = obj("2", "fridge", kind="container", holds=("food",), states=("CLOSED",), pos=(12, 1))
    m.observe(1, "kitchen", (10, 3), [obj("7", "apple"), obj("8", "cupcake", parent="2"), fridge])
    m.observe(2, "livingroom", (4, 3), [])  # elsewhere: kitchen information kept
    assert "7" in m.observations
    m.observe(
        9, "kitchen", (10, 3), [fridge]
    )  # apple gone; the cupcake may be in the closed fridge
    assert "7" not in m.observations and "8" in m.observations
    opened = obj(
        "2",
        "fridge",
        kind="container",
        holds=("food",),
        states=("OPEN",),
        actions=("put",),
        pos=(12, 1),
    )
    m.observe(10, "kitchen", (10, 3), [opened])  # open and empty: the cupcake is gone too
    assert "8" not in m.observations


def test_a_collaborator_in_view_is_placed_exactly_and_what_it_holds_is_taken():
    m = memory()
    m.observe(1, "kitchen", (10, 3), [obj("7", "apple")])
    m.observe(4, "kitchen", (10, 3), [], [Seen("bob", "kitchen", (11.0, 4.0), (("7", "apple"),))])
    bob = m.collaborators["bob"]
    assert bob.last == Sighting(4, "kitchen", (11.0, 4.0), True, "seen")
    assert bob.held == {"7": "apple"}
    assert "7" not in m.observations and m.taken == {"apple": "bob"}
    assert m.remaining() == ["cupcake"]


def test_hearing_places_the_sender_at_the_room_centre_and_learns_objects():
    m = memory()
    msg = Message(
        MessageKind.HELLO,
        "bob",
        0,
        "Hi, I'm Bob in the bedroom. I see cupcake (8).",
        room="bedroom",
        data={
            "held": [],
            "objects": [
                {
                    "id": "8",
                    "name": "cupcake",
                    "room": "bedroom",
                    "pos": [2.0, 10.0],
                    "kind": "object",
                }
            ],
        },
    )
    new = m.hear(Message.from_json(msg.to_json()))
    assert [i.id for i in new] == ["8"]
    info = m.observations.get("8")
    assert info.source == "bob" and info.step == 0 and info.relevance is Relevance.STRONG
    bob = m.collaborators["bob"]
    assert bob.last.exact is False and bob.last.position == (3.0, 9.0)  # bedroom centre
    assert bob.messages[0].text.startswith("Hi, I'm Bob") and "bedroom" in m.explored
    done = Message(
        MessageKind.SUBGOAL_ACHIEVED,
        "bob",
        9,
        "I did: put cupcake on coffeetable (8).",
        room="livingroom",
        data={
            "subgoal": {
                "action": "put",
                "target": "cupcake",
                "location": "coffeetable",
                "object_id": "8",
            }
        },
    )
    m.hear(done)
    assert m.done == {"cupcake": "bob"} and "8" not in m.observations
    assert bob.completed == ["put-cupcake-on-coffeetable"]
    assert bob.rooms_since(5) == {"livingroom"}


def test_subgoals_have_stable_keys_and_round_trip():
    sub = GOAL.subgoal("apple", "7")
    assert sub.key == "put-apple-on-coffeetable" and sub.text == "put apple on coffeetable"
    assert SubGoal.from_dict(json.loads(json.dumps(sub.to_dict()))) == sub
    assert SubGoal("open", "fridge", object_id="2").key == "open-fridge-2"
    with pytest.raises(InformationError, match="'cook' is not one of put, open, explore"):
        SubGoal("cook", "apple")
    with pytest.raises(InformationError, match="'pear' is not a goal object"):
        GOAL.subgoal("pear")
