"""A robot's REVECA memory: relevance once at acquisition, forgetting, collaborators seen and heard."""

from bt_raider.cooperation.messaging import Message, MessageKind
from bt_raider.cooperation.observations import (
    Relevance,
    Sighting,
)
from bt_raider.cooperation.relevance import SymbolicRelevance
from bt_raider.cooperation.reveca_memory import RevecaMemory, Seen
from bt_raider.simulation.multirobot import CATALOGUE, default_house
from tests.bt_raider.cooperation.reveca_helpers import GOAL, obj


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
