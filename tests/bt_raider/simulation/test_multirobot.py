"""The multi-robot household: layout, partial observation, containers, turns, seeded episodes."""

from __future__ import annotations

import math

import pytest

from bt_raider.errors import ActionFailed
from bt_raider.simulation.multirobot import (
    CATALOGUE,
    GOALS,
    GoalSpec,
    MultiRobotSim,
    SimulationError,
    Thing,
    default_house,
)


def small_world(**robots) -> MultiRobotSim:
    """Living room + kitchen; an apple in the closed fridge, a cupcake on the counter."""
    house = default_house()
    things = [
        Thing("1", "coffeetable", "surface", "furniture", "livingroom", (2.0, 2.0), ("*",)),
        Thing("2", "fridge", "container", "furniture", "kitchen", (12.0, 1.0), ("food",)),
        Thing("3", "kitchencounter", "surface", "furniture", "kitchen", (10.0, 5.0), ("food",)),
        Thing("10", "apple", "object", "food", "kitchen", (12.0, 1.0), parent="2"),
        Thing("11", "cupcake", "object", "food", "kitchen", (10.0, 5.0), parent="3"),
    ]
    starts = robots or {"alice": ("kitchen", (11.0, 3.0)), "bob": ("livingroom", (4.0, 3.0))}
    goal = GoalSpec(("apple", "cupcake"), "coffeetable", "1")
    return MultiRobotSim(house, things, starts, goal)


def run(sim: MultiRobotSim, robot: str, limit: int = 100) -> tuple[str, str]:
    """Advance one robot until its action ends; returns its status."""
    for _ in range(limit):
        if not sim.running(robot):
            break
        sim.advance(robot)
        sim.end_step()
    return sim.status(robot)


def test_distance_is_straight_in_a_room_and_through_doors_between_rooms():
    house = default_house()
    assert house.distance("livingroom", (1, 1), "livingroom", (4, 5)) == pytest.approx(5.0)
    # livingroom (4, 3) -> door (8, 3) -> kitchen (11, 3)
    assert house.distance("livingroom", (4, 3), "kitchen", (11, 3)) == pytest.approx(7.0)
    path = house.path("kitchen", (11, 3), "bathroom", (8.5, 8.5))
    # each waypoint with the room walked through to reach it
    assert [room for room, _ in path] == ["kitchen", "kitchen", "livingroom", "bedroom", "bathroom"]
    assert [p for _, p in path[1:4]] == [(8.0, 3.0), (3.0, 6.0), (6.0, 9.0)]
    assert house.steps(7.0) == 7 and house.steps(7.01) == 8 and house.steps(0) == 0
    with pytest.raises(SimulationError, match="unknown room 'attic'.*livingroom"):
        house.centre("attic")


def test_a_robot_sees_only_its_room_and_not_inside_closed_containers():
    sim = small_world()
    alice = {t.name for t in sim.observe("alice").things}
    assert {"fridge", "kitchencounter", "cupcake"} <= alice
    assert "apple" not in alice  # in the closed fridge
    assert "coffeetable" not in alice  # another room
    bob = sim.observe("bob")
    assert {t.name for t in bob.things} == {"coffeetable"}
    assert bob.robots == ()  # alice is in the kitchen


def test_opening_a_container_reveals_what_is_inside():
    sim = small_world(alice=("kitchen", (12.0, 1.5)))
    fridge = next(t for t in sim.observe("alice").things if t.name == "fridge")
    assert fridge.states == ("CLOSED",) and fridge.actions == ("open",)
    sim.begin("alice", "open", ["2"])
    assert run(sim, "alice")[0] == "succeeded"
    seen = {t.name: t for t in sim.observe("alice").things}
    assert "apple" in seen and "INSIDE" in seen["apple"].states
    assert seen["fridge"].states == ("OPEN",)


def test_walking_takes_steps_proportional_to_distance_and_changes_room():
    sim = small_world()
    sim.begin("bob", "walk", ["kitchen", 11.0, 3.0])  # 7 m
    steps = 0
    while sim.running("bob"):
        sim.advance("bob")
        sim.end_step()
        steps += 1
    assert steps == 7
    assert sim.robot("bob").room == "kitchen"
    assert sim.robot("bob").travelled == pytest.approx(7.0)
    assert {r.name for r in sim.observe("bob").robots} == {"alice"}


def test_grab_and_put_need_reach_and_the_goal_is_reached():
    sim = small_world(alice=("kitchen", (10.0, 4.5)))
    sim.begin("alice", "grab", ["11"])
    assert run(sim, "alice")[0] == "succeeded"
    assert sim.taken_by("11") == "alice"
    sim.begin("alice", "put", ["11", "1"])  # the coffee table is in another room
    state, message = run(sim, "alice")
    assert state == "failed" and "not within reach" in message
    sim.begin("alice", "walk", ["livingroom", 2.0, 2.0])
    run(sim, "alice")
    sim.begin("alice", "put", ["11", "1"])
    assert run(sim, "alice")[0] == "succeeded"
    assert sim.achieved == {"cupcake": "alice"} and sim.remaining() == ("apple",)
    assert not sim.done()


def test_robots_step_in_turn_and_the_first_grab_wins():
    sim = small_world(alice=("kitchen", (10.0, 4.8)), bob=("kitchen", (10.2, 5.0)))
    sim.begin("alice", "grab", ["11"])
    sim.begin("bob", "grab", ["11"])
    sim.advance("alice")
    sim.advance("bob")
    assert sim.status("alice")[0] == "succeeded"
    state, message = sim.status("bob")
    assert state == "failed" and "alice holds it" in message
    # bob now sees alice holding the cupcake
    (view,) = sim.observe("bob").robots
    assert view.name == "alice" and view.held == (("11", "cupcake"),)


def test_hands_are_limited():
    sim = small_world(alice=("kitchen", (10.0, 4.8)))
    sim.hands = 1
    sim.begin("alice", "grab", ["11"])
    run(sim, "alice")
    sim.thing("10").parent = None  # take the apple out of the fridge, next to alice
    sim.thing("10").position = (10.2, 4.8)
    sim.begin("alice", "grab", ["10"])
    assert run(sim, "alice") == ("failed", "alice's hands are full")


def test_spending_steps_on_messages_pauses_the_action():
    sim = small_world()
    sim.begin("bob", "walk", ["kitchen", 11.0, 3.0])
    sim.spend("bob", 2)
    for _ in range(2):
        sim.advance("bob")
        sim.end_step()
    assert sim.robot("bob").travelled == 0.0 and sim.robot("bob").message_steps == 2
    sim.advance("bob")
    assert sim.robot("bob").travelled == pytest.approx(1.0)


def test_bad_actions_are_refused_with_the_reason():
    sim = small_world()
    with pytest.raises(ActionFailed, match="unknown action 'fly'.*walk, open, grab, put, wait"):
        sim.begin("alice", "fly", [])
    with pytest.raises(ActionFailed, match="unknown room 'attic'"):
        sim.begin("alice", "walk", ["attic", 1, 1])
    with pytest.raises(ActionFailed, match="no thing with id '99'"):
        sim.begin("alice", "grab", ["99"])
    sim.begin("alice", "wait", [])
    with pytest.raises(ActionFailed, match="already doing wait"):
        sim.begin("alice", "wait", [])


def test_generated_episodes_are_seeded():
    a, b = MultiRobotSim.generate(7, dummies=10), MultiRobotSim.generate(7, dummies=10)
    assert [(t.name, t.room, t.position, t.parent) for t in a.things.values()] == [
        (t.name, t.room, t.position, t.parent) for t in b.things.values()
    ]
    assert a.goal == b.goal
    other = MultiRobotSim.generate(8, dummies=10)
    assert [t.position for t in other.things.values()] != [t.position for t in a.things.values()]


@pytest.mark.parametrize("seed", range(12))
def test_generated_goals_have_three_to_five_reachable_subgoals(seed):
    sim = MultiRobotSim.generate(seed, robots=3, dummies=20)
    assert 3 <= len(sim.goal.objects) <= 5
    location, relation, pool = GOALS[next(k for k, v in GOALS.items() if v[0] == sim.goal.location)]
    assert set(sim.goal.objects) <= set(pool) and relation == sim.goal.relation
    objects = [t for t in sim.things.values() if t.kind == "object"]
    assert sum(t.dummy for t in objects) == 20
    assert not {t.name for t in objects if t.dummy} & set(sim.goal.objects)
    for t in objects:
        host = sim.thing(t.parent)
        assert host.id != sim.goal.location_id  # nothing starts where it should end
        assert "*" in host.holds or CATALOGUE[t.name] in host.holds
    assert list(sim.robots) == ["alice", "bob", "carol"]


def test_generate_refuses_bad_settings():
    with pytest.raises(SimulationError, match="unknown goal 'party'"):
        MultiRobotSim.generate(0, goal="party")
    with pytest.raises(SimulationError, match="robots must be"):
        MultiRobotSim.generate(0, robots=0)
    assert math.isfinite(MultiRobotSim.generate(0).travelled)
