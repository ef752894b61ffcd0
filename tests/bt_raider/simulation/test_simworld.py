"""SimWorld on the project's small kitchen: actions change the scene as AI2-THOR would, and
fail with the format doc's issue category when a real precondition does not hold."""

from __future__ import annotations

import threading

import pytest

from bt_raider.errors import ActionFailed, SceneError
from bt_raider.robot.actions import ActionBehaviour, SyncRobot
from bt_raider.simulation.simworld import PreconditionFailed, SimWorld

# Objects of the small kitchen (bt_raider.testing.small_kitchen).
APPLE = "Apple|+00.40|+00.96|+01.00"
ISLAND = "CounterTop|+00.60|+00.88|+01.05"  # the breakfast bar the Apple is on
BOWL = "Bowl|+00.30|+00.95|-01.60"
KNIFE = "Knife|-01.72|+00.70|-00.72"
KNIFE_DRAWER = "Drawer|-01.70|+00.70|-00.70"
PLATE = "Plate|+01.35|+01.72|-02.30"
PLATE_CABINET = "Cabinet|+01.20|+02.00|-02.30"
MICROWAVE = "Microwave|+01.90|+01.50|-00.60"
FRIDGE = "Fridge|-02.00|+00.00|+01.80"
COFFEE = "CoffeeMachine|-02.05|+00.92|-00.35"
MUG = "Mug|-01.95|+00.93|+00.25"
TOMATO = "Tomato|-00.35|+00.96|-01.62"
STOOL = "Stool|+00.30|+00.00|+00.50"
WEST_COUNTER = "CounterTop|-02.05|+00.88|+00.00"


@pytest.fixture
def world(small_kitchen):
    return SimWorld(small_kitchen)


def fails(world: SimWorld, action: str, *args: str) -> PreconditionFailed:
    """Run an action that must fail; return the failure."""
    before = world.scene.to_dict()
    with pytest.raises(PreconditionFailed) as info:
        world.execute(action, list(args))
    # A refused action changes nothing.
    assert world.scene.to_dict() == before
    return info.value


def held_ids(world: SimWorld) -> list[str]:
    return [o.id for o in world.scene.holding]


# ---------------------------------------------------------------- basics
def test_world_keeps_a_copy_and_observe_is_a_snapshot(small_kitchen, world):
    world.execute("approach", ["Apple"])
    world.execute("pick", ["Apple"])
    assert small_kitchen.by_id(APPLE).flag("isPickedUp") is False  # the fixture scene is untouched
    snap = world.observe()
    assert snap.by_id(APPLE).flag("isPickedUp") is True
    world.execute("place", ["Apple", ISLAND])
    assert snap.by_id(APPLE).flag("isPickedUp") is True  # the snapshot did not follow
    assert world.observe().by_id(APPLE).flag("isPickedUp") is False


def test_world_accepts_a_scene_dict(small_kitchen_dict):
    world = SimWorld(small_kitchen_dict)
    world.execute("approach", ["Apple"])
    assert small_kitchen_dict["agent"]["position"]["z"] == -1.0


def test_unknown_action_and_wrong_arity_name_the_options(world):
    err = fails(world, "fly", "Apple")
    assert err.reason == "bad_action" and "pick" in str(err) and "handover" in str(err)
    err = fails(world, "pick", "Apple", "Bowl")
    assert err.reason == "bad_action" and "takes 1" in str(err)
    assert isinstance(err, ActionFailed)


def test_aliases_map_to_canonical_actions(world):
    world.execute("go_to", ["Apple"])
    world.execute("pickup", ["Apple"])
    assert held_ids(world) == [APPLE]
    assert world.log[-1]["action"] == "pick"


# ---------------------------------------------------------------- moving
def test_approach_object_stops_within_reach_facing_it(world):
    scene = world.scene
    assert scene.distance_to_robot("Apple") > scene.robot["reach"]
    world.execute("approach", ["Apple"])
    dist = scene.distance_to_robot("Apple")
    assert dist <= scene.robot["reach"]
    assert dist == pytest.approx(0.6, abs=1e-6)
    # Facing it: the heading points at the apple.
    to_apple = scene.by_id(APPLE).position - scene.agent_position
    flat = to_apple[[0, 2]] / dist
    assert float(flat @ scene.heading()) == pytest.approx(1.0, abs=1e-6)


def test_approach_when_already_close_only_turns(world):
    world.set_agent((0.1, 0.7), yaw=0.0)
    start = world.scene.agent_position.copy()
    world.execute("approach", ["Apple"])  # Apple is 0.42 m away: closer than the standoff
    assert world.scene.agent_position == pytest.approx(start)
    assert world.scene.agent_yaw != 0.0


def test_move_to_location_stands_on_it_with_its_yaw(small_kitchen_dict):
    small_kitchen_dict["locations"] = {
        "sink_front": {"x": -1.2, "z": -1.5, "yaw": 270},
        "door": {"x": 1.5, "z": 1.5},
    }
    world = SimWorld(small_kitchen_dict)
    world.execute("move_to", ["sink_front"])
    assert world.scene.agent_position[[0, 2]] == pytest.approx([-1.2, -1.5])
    assert world.scene.agent_yaw == 270
    world.execute("approach", ["door"])  # no yaw: faces the direction of travel
    heading = world.scene.heading()
    norm = (2.7**2 + 3.0**2) ** 0.5
    assert heading == pytest.approx([2.7 / norm, 3.0 / norm])


def test_approach_blocked_target_fails_then_succeeds_after_unblock(small_kitchen_dict):
    small_kitchen_dict["locations"] = {"counter": {"x": -1.0, "z": -1.6}}
    world = SimWorld(small_kitchen_dict)
    world.block("counter", "Stool_1")
    err = fails(world, "approach", "counter")
    assert err.reason == "obstructed" and "Stool_1" in str(err)
    assert world.unblock("counter") == [world.scene.resolve("Stool_1").id]
    world.execute("approach", ["counter"])
    assert world.scene.agent_position[[0, 2]] == pytest.approx([-1.0, -1.6])


def test_blocked_listed_by_display_name_is_honoured(small_kitchen_dict):
    small_kitchen_dict["blocked"] = {"Apple": [STOOL]}
    world = SimWorld(small_kitchen_dict)
    assert fails(world, "approach", APPLE).reason == "obstructed"
    world.set_agent((-0.4, 0.2))
    assert fails(world, "pick", APPLE).reason == "obstructed"


def test_approach_ambiguous_or_missing_target(world):
    assert fails(world, "approach", "Cabinet").reason == "ambiguity"
    err = fails(world, "approach", "Unicorn")
    assert err.reason == "not_present" and "Unicorn" in str(err)


def test_held_object_travels_with_the_robot(world):
    lo, hi = world.scene.by_id(APPLE).bbox()
    box_offset = ((lo + hi) / 2) - world.scene.by_id(APPLE).position
    world.execute("approach", ["Apple"])
    world.execute("pick", ["Apple"])
    world.execute("approach", ["Fridge"])
    apple = world.scene.by_id(APPLE)
    hand = world.scene.agent_position[[0, 2]] + 0.3 * world.scene.heading()
    assert apple.position[[0, 2]] == pytest.approx(hand)
    lo, hi = apple.bbox()
    offset = ((lo + hi) / 2) - apple.position  # the box moved with it
    assert offset == pytest.approx(box_offset)


# ---------------------------------------------------------------- pick / place
def test_pick_updates_inventory_and_both_receptacle_sides(world):
    world.execute("approach", ["Apple"])
    world.execute("pick", ["Apple"])
    apple = world.scene.by_id(APPLE)
    assert world.scene.data["inventoryObjects"] == [{"objectId": APPLE, "objectType": "Apple"}]
    assert apple.flag("isPickedUp") and apple.parents == []
    assert APPLE not in world.scene.by_id(ISLAND).children


def test_pick_failures_in_priority_order(world):
    assert fails(world, "pick", "Apple").reason == "out_of_reach"
    assert fails(world, "pick", "CounterTop_1").reason == "wrong_property"
    world.execute("approach", ["Apple"])
    world.execute("pick", ["Apple"])
    # Hand busy comes before "not pickupable" (the format doc's priority).
    err = fails(world, "pick", "Bread")
    assert err.reason == "robot_state" and "Apple" in str(err)
    assert fails(world, "pick", ISLAND).reason == "robot_state"


def test_pick_from_closed_receptacle_is_wrong_state(world):
    world.execute("approach", [PLATE])
    assert fails(world, "pick", PLATE).reason == "wrong_state"
    world.execute("open", [PLATE_CABINET])
    world.execute("pick", [PLATE])
    assert PLATE not in world.scene.by_id(PLATE_CABINET).children


def test_pick_with_something_inside_is_obstructed(world):
    world.execute("approach", ["Apple"])
    world.execute("pick", ["Apple"])
    world.execute("approach", ["Bowl"])
    world.execute("place", ["Apple", "Bowl"])
    err = fails(world, "pick", "Bowl")
    assert err.reason == "obstructed" and "Apple" in str(err)


def test_place_two_args_puts_object_on_destination_top(world):
    world.execute("approach", ["Apple"])
    world.execute("pick", ["Apple"])
    world.execute("approach", ["Bowl"])
    world.execute("place", ["Apple", "Bowl"])
    apple, bowl = world.scene.by_id(APPLE), world.scene.by_id(BOWL)
    assert held_ids(world) == [] and not apple.flag("isPickedUp")
    assert apple.parents == [BOWL] and APPLE in bowl.children
    lo, hi = bowl.bbox()
    assert lo[0] <= apple.position[0] <= hi[0] and lo[2] <= apple.position[2] <= hi[2]
    assert apple.position[1] == pytest.approx(hi[1])


def test_place_one_arg_not_held_is_the_destination(world):
    world.execute("approach", ["Apple"])
    world.execute("pick", ["Apple"])
    world.execute("place", [ISLAND])
    assert world.scene.by_id(APPLE).parents == [ISLAND]


def test_place_one_arg_held_puts_it_where_the_robot_went(world):
    """RAIDER's ``move_to(bowl), place(apple)``."""
    world.execute("approach", ["Apple"])
    world.execute("pick", ["Apple"])
    world.execute("move_to", ["Bowl"])
    world.execute("place", ["Apple"])
    assert world.scene.by_id(APPLE).parents == [BOWL]
    assert APPLE in world.scene.by_id(BOWL).children


def test_place_one_arg_held_uses_nearest_free_receptacle(small_kitchen_dict):
    small_kitchen_dict["locations"] = {"by_the_island": {"x": -1.4, "z": 0.25}}
    world = SimWorld(small_kitchen_dict)
    world.execute("approach", ["Apple"])
    world.execute("pick", ["Apple"])
    world.execute("move_to", ["by_the_island"])  # a location: no receptacle was approached
    world.execute("place", ["Apple"])
    # The west counter's top, not the Floor, a closed drawer, the toaster or the mug nearby.
    assert world.scene.by_id(APPLE).parents == [WEST_COUNTER]
    world.execute("pick", ["Apple"])
    world.set_agent((2.3, -1.3))  # nothing within reach out there
    err = fails(world, "place", "Apple")
    assert err.reason == "out_of_reach" and "no free receptacle" in str(err)


def test_place_failures(world):
    assert fails(world, "place", "Apple", "Bowl").reason == "robot_state"
    assert fails(world, "place", "Bowl").reason == "robot_state"  # holds nothing
    world.execute("approach", ["Apple"])
    world.execute("pick", ["Apple"])
    assert fails(world, "place", "Apple", "Bread").reason == "wrong_property"
    assert fails(world, "place", "Apple", "SinkBasin").reason == "out_of_reach"
    world.execute("approach", ["Fridge"])
    assert fails(world, "place", "Apple", "Fridge").reason == "wrong_state"  # closed


def test_place_in_occupied_coffee_machine_is_obstructed(world):
    world.execute("approach", ["Mug"])
    world.execute("pick", ["Mug"])
    world.execute("approach", ["CoffeeMachine"])
    world.execute("place", ["Mug", "CoffeeMachine"])
    assert world.scene.by_id(MUG).parents == [COFFEE]
    world.move_object(APPLE, (-1.5, 1.0, -0.2))  # a person brings the apple over
    world.execute("pick", [APPLE])
    assert fails(world, "place", "Apple", "CoffeeMachine").reason == "obstructed"


# ---------------------------------------------------------------- open / toggle / slice
def test_open_close_change_state_and_fail_on_wrong_state(world):
    world.execute("approach", ["Fridge"])
    world.execute("open", ["Fridge"])
    fridge = world.scene.by_id(FRIDGE)
    assert fridge.flag("isOpen") and fridge.raw["openness"] == 1.0
    assert fails(world, "open", "Fridge").reason == "wrong_state"
    world.execute("close", ["Fridge"])
    assert not fridge.flag("isOpen")
    assert fails(world, "close", "Fridge").reason == "wrong_state"
    assert fails(world, "open", "Egg").reason == "wrong_property"


def test_open_with_busy_hand_is_robot_state(world):
    world.execute("approach", ["Apple"])
    world.execute("pick", ["Apple"])
    world.execute("approach", ["Fridge"])
    assert fails(world, "open", "Fridge").reason == "robot_state"


def test_toggle(world):
    world.execute("approach", ["Microwave"])
    world.execute("turnon", ["Microwave"])
    assert world.scene.by_id(MICROWAVE).flag("isToggled")
    assert fails(world, "turnon", "Microwave").reason == "wrong_state"
    world.execute("turnoff", ["Microwave"])
    assert not world.scene.by_id(MICROWAVE).flag("isToggled")
    assert fails(world, "turnoff", "Microwave").reason == "wrong_state"
    assert fails(world, "turnon", "Bowl").reason == "wrong_property"
    assert fails(world, "turnon", "LightSwitch").reason == "wrong_state"  # on in FloorPlan1
    assert fails(world, "turnoff", "LightSwitch").reason == "out_of_reach"


def test_slice_needs_a_knife(world):
    world.execute("approach", ["Tomato"])
    err = fails(world, "slice", "Tomato")
    assert err.reason == "robot_state" and "knife" in str(err)
    world.execute("approach", [KNIFE_DRAWER])
    assert fails(world, "pick", "Knife").reason == "wrong_state"  # drawer closed
    world.execute("open", [KNIFE_DRAWER])
    world.execute("pick", ["Knife"])
    world.set_agent((1.5, 1.5))
    assert fails(world, "slice", "Tomato").reason == "out_of_reach"
    world.execute("approach", ["Tomato"])
    world.execute("slice", ["Tomato"])
    assert world.scene.by_id(TOMATO).flag("isSliced")
    assert fails(world, "slice", "Tomato").reason == "wrong_state"
    assert fails(world, "slice", "Bowl").reason == "wrong_property"


# ---------------------------------------------------------------- people
@pytest.fixture
def with_person(small_kitchen_dict):
    small_kitchen_dict["humans"] = [
        {
            "id": "person_1",
            "name": None,
            "position": {"x": 1.4, "y": 0.0, "z": 0.6},
            "looking_at_robot": False,
            "hands_free": True,
        }
    ]
    world = SimWorld(small_kitchen_dict)
    world.execute("approach", ["Bowl"])
    world.execute("pick", ["Bowl"])
    return world


def test_unrecognised_person_cannot_be_approached_or_handed_to(with_person):
    world = with_person
    assert fails(world, "approach", "person_1").reason == "not_present"
    err = fails(world, "approach", "Adriana")
    assert err.reason == "not_present" and "person_1 (unrecognised)" in str(err)
    world.set_human("person_1", name="Adriana")
    world.execute("approach", ["adriana"])  # names match case-insensitively
    dist = world.scene.distance_to_robot("person_1")
    assert dist == pytest.approx(0.4) and dist <= world.scene.robot["handover_distance"]


def test_handover_rules_and_effect(with_person):
    world = with_person
    world.set_human("person_1", name="Adriana")
    assert fails(world, "handover", "Bowl", "Adriana").reason == "wrong_state"  # not looking
    world.set_human("person_1", looking_at_robot=True, hands_free=False)
    err = fails(world, "handover", "Bowl", "Adriana")
    assert err.reason == "wrong_state" and "free hands" in str(err)
    world.set_human("person_1", hands_free=True)
    assert fails(world, "handover", "Bowl", "Adriana").reason == "out_of_reach"
    assert fails(world, "handover", "Apple", "Adriana").reason == "robot_state"
    world.execute("approach", ["Adriana"])
    world.execute("handover", ["Bowl", "Adriana"])
    assert held_ids(world) == []
    assert world.scene.human("Adriana").raw["holding"] == [BOWL]
    bowl = world.scene.by_id(BOWL)
    assert not bowl.flag("isPickedUp") and bowl.parents == []
    assert bowl.position[[0, 2]] == pytest.approx([1.4, 0.6])


def test_set_human_validates_fields(with_person):
    with pytest.raises(SceneError, match="expected one of name"):
        with_person.set_human("person_1", mood="happy")
    with pytest.raises(SceneError, match="true or false"):
        with_person.set_human("person_1", looking_at_robot="yes")


# ---------------------------------------------------------------- events and log
def test_inject_changes_the_world_now_and_is_logged(world):
    world.inject(lambda w: w.set_state("Fridge", "isOpen", True), label="someone opens the fridge")
    assert world.scene.by_id(FRIDGE).flag("isOpen")
    assert (
        world.log[-1]["kind"] == "event" and world.log[-1]["action"] == "someone opens the fridge"
    )


def test_schedule_after_actions(world):
    world.schedule(lambda w: w.move_object("Apple", (2.0, -2.0)), after_actions=2)
    world.execute("approach", ["Apple"])
    assert world.scene.distance_to_robot("Apple") == pytest.approx(0.6)
    with pytest.raises(PreconditionFailed) as info:
        world.execute("pick", ["Kettle"])  # second action (it fails: too far) -> event fires
    assert info.value.reason == "out_of_reach"
    assert world.scene.by_id(APPLE).position[[0, 2]] == pytest.approx([2.0, -2.0])
    assert fails(world, "pick", "Apple").reason == "out_of_reach"
    assert world.pending_events == []


def test_schedule_before_action_races_the_check(with_person):
    """A person looks away right before the handover: the checked action still fails."""
    world = with_person
    world.set_human("person_1", name="Adriana", looking_at_robot=True)
    world.execute("approach", ["Adriana"])
    world.schedule(lambda w: w.set_human("person_1", looking_at_robot=False), before="handover")
    assert world.observe().human("Adriana").looking_at_robot  # what a check would see
    with pytest.raises(PreconditionFailed) as info:
        world.execute("handover", ["Bowl", "Adriana"])
    assert info.value.reason == "wrong_state"


def test_schedule_after_ticks_and_cancel(world):
    ev1 = world.schedule(lambda w: w.set_state("Fridge", "isOpen", True), after_ticks=2)
    ev2 = world.schedule(lambda w: w.set_state("Microwave", "isToggled", True), after_ticks=1)
    ev2.cancel()
    world.tick()
    assert not world.scene.by_id(FRIDGE).flag("isOpen")
    world.tick()
    assert world.scene.by_id(FRIDGE).flag("isOpen") and ev1.fired
    assert not world.scene.by_id(MICROWAVE).flag("isToggled")


def test_schedule_needs_exactly_one_trigger(world):
    with pytest.raises(ValueError, match="exactly one trigger"):
        world.schedule(lambda w: None)
    with pytest.raises(ValueError, match="exactly one trigger"):
        world.schedule(lambda w: None, after_ticks=1, before="pick")
    with pytest.raises(ActionFailed, match="unknown action"):
        world.schedule(lambda w: None, before="teleport")


def test_move_object_reparents_and_refuses_held_objects(world):
    world.move_object("Apple", (-1.9, 0.95, -1.0), parent=WEST_COUNTER)
    apple = world.scene.by_id(APPLE)
    assert apple.parents == [WEST_COUNTER]
    assert APPLE not in world.scene.by_id(ISLAND).children
    assert APPLE in world.scene.by_id(WEST_COUNTER).children
    world.execute("approach", ["Apple"])
    world.execute("pick", ["Apple"])
    with pytest.raises(SceneError, match="holding"):
        world.move_object("Apple", (0, 0))
    with pytest.raises(SceneError, match=r"\(x, z\)"):
        world.set_agent("here")


def test_log_records_actions_failures_and_events(world):
    world.block("Apple", "Bread")
    with pytest.raises(PreconditionFailed):
        world.execute("approach", ["Apple"])
    world.unblock("Apple")
    world.execute("approach", ["Apple"])
    kinds = [(e["kind"], e["action"], e["ok"]) for e in world.log]
    assert kinds[1] == ("action", "approach", False)
    assert kinds[-1] == ("action", "approach", True)
    assert world.failures[0]["reason"] == "obstructed"
    assert world.executed == ["approach(Apple)"]


# ---------------------------------------------------------------- with the core
def test_sync_robot_runs_an_action_behaviour(world):
    import py_trees

    robot = SyncRobot(world)
    seq = py_trees.composites.Sequence("pick apple", memory=True)
    seq.add_children(
        [ActionBehaviour("approach", ["Apple"], robot), ActionBehaviour("pick", ["Apple"], robot)]
    )
    tree = py_trees.trees.BehaviourTree(seq)
    tree.add_post_tick_handler(lambda _t: world.tick())
    tree.tick()  # a SyncRobot action ends within the tick that starts it
    assert seq.status == py_trees.common.Status.SUCCESS
    assert held_ids(world) == [APPLE] and world.ticks == 1
    assert world.executed == ["approach(Apple)", "pick(Apple)"]


def test_sync_robot_reports_the_failure_reason(world):
    import py_trees

    node = ActionBehaviour("pick", ["Apple"], SyncRobot(world))
    node.tick_once()
    node.tick_once()
    assert node.status == py_trees.common.Status.FAILURE
    assert "out_of_reach" in node.feedback_message


def test_observe_is_safe_while_acting(world):
    errors: list[BaseException] = []

    def watch() -> None:
        try:
            for _ in range(30):
                world.observe()
        except BaseException as exc:  # pragma: no cover - the failure we look for
            errors.append(exc)

    t = threading.Thread(target=watch)
    t.start()
    for _ in range(15):
        world.execute("approach", ["Apple"])
        world.execute("pick", ["Apple"])
        world.execute("place", [ISLAND])
    t.join()
    assert errors == []


def test_a_blocker_the_robot_picks_up_no_longer_blocks(small_kitchen_dict):
    # Found by benchmarks/recovery.py: the robot moved the Bowl out of the way, then its
    # move_to(Tomato) was still refused as "blocked by Bowl".
    world = SimWorld(small_kitchen_dict)
    world.block("Tomato", "ButterKnife")
    world.block("Bread", "ButterKnife")
    assert fails(world, "approach", "Tomato").reason == "obstructed"
    world.execute("pick", ["ButterKnife"])
    assert world.scene.blocked == {}
    world.execute("approach", ["Tomato"])
    # Other blockers stay.
    world2 = SimWorld(small_kitchen_dict)
    world2.block("Tomato", "ButterKnife")
    world2.block("Tomato", "Bread")
    world2.execute("pick", ["ButterKnife"])
    assert world2.scene.blocked == {
        world2.scene.resolve("Tomato").id: [world2.scene.resolve("Bread").id]
    }
