"""Recovery planners (symbolic templates, RAIDER's few-shot LLM prompt) and the Recovery loop."""

from __future__ import annotations

import copy
import threading
import time
from pathlib import Path

import py_trees
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from bt_raider.checking.contract import Query
from bt_raider.checking.parse import split_action
from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import RecoveryCodeError
from bt_raider.llm.chat import OpenAIChat, ScriptedChat
from bt_raider.perception.scene import Scene
from bt_raider.recovery.answers import AnswerSpace
from bt_raider.recovery.contract import RecoveryPlanner, RecoveryRequest
from bt_raider.recovery.fewshot import builtin_examples, load_examples
from bt_raider.recovery.llm import LLMRecoveryPlanner
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.safecode import Ref, Vocabulary, parse_recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.robot.actions import ActionBehaviour
from bt_raider.robot.human import GroundedAsk, ScriptedHuman
from bt_raider.runtime.guards import RaiderGuard
from tests.bt_raider.recovery.toy import (
    APPLE,
    COUNTER,
    FAR_FROM_PLANT,
    FRIDGE,
    NEAR_PLANT,
    ToyRobot,
    toy_scene_dict,
)

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def ids(scene: Scene, *names: str) -> list[str]:
    return [scene.resolve(n).id for n in names]


def with_person(kitchen_dict: dict, **fields) -> Scene:
    data = copy.deepcopy(kitchen_dict)
    person = {"id": "person_1", "name": None, "position": {"x": 1.0, "y": 0.0, "z": 0.5}}
    person.update(looking_at_robot=False, hands_free=True, **fields)
    data["humans"] = [person]
    data["locations"] = {"medicine_counter": {"x": -1.05, "z": -1.55}}
    return Scene(data)


def propose(request: RecoveryRequest) -> list[str]:
    """Symbolic code for ``request``, checked by the whitelist, as canonical lines."""
    code = SymbolicRecoveryPlanner().propose(request)
    return parse_recovery(code).to_code().splitlines()


# ------------------------------------------------------------------------- request


def test_request_information_is_figure_7s_query_line() -> None:
    verdict = Verdict(Category.ROBOT_STATE, "The robot is not\nholding a knife.")
    request = RecoveryRequest("slice(lettuce)", verdict, holding=["Egg"])
    assert request.information() == (
        "query: slice(lettuce), issue: unfeasibility (robot_state), explanation: The robot is "
        "not holding a knife. robot holding: Egg"
    )
    amb = RecoveryRequest("pick(cup)", Verdict(Category.AMBIGUITY, "Two cups."), holding=[])
    assert (
        amb.information()
        == "query: pick(cup), issue: ambiguity, explanation: Two cups. robot holding: none"
    )
    assert amb.action_name == "pick"


def test_split_action_forms() -> None:
    assert split_action("place(Mug, CoffeeMachine)") == ("place", ["Mug", "CoffeeMachine"])
    bindings = {"adrianas_medicine": "Medicine", "medicine_counter": "medicine_counter"}
    name, args = split_action("(pick tiago adrianas_medicine medicine_counter)", bindings)
    assert (name, args[0]) == ("pick", "Medicine")
    assert split_action("Can you please open the microwave?") == ("open", ["the microwave"])


# ------------------------------------------------------------------------- symbolic


def test_symbolic_is_a_recovery_planner() -> None:
    assert isinstance(SymbolicRecoveryPlanner(), RecoveryPlanner)


def test_symbolic_ambiguity_asks_which_and_acts_on_the_answer(small_kitchen_dict: dict) -> None:
    mug = next(o for o in small_kitchen_dict["objects"] if o["objectType"] == "Mug")
    small_kitchen_dict["objects"].append(dict(mug, objectId="Mug|2"))
    scene = Scene(small_kitchen_dict)
    verdict = Verdict(
        Category.AMBIGUITY,
        "Mug could be Mug_1 or Mug_2.",
        grounding={"Mug": ids(scene, "Mug_1", "Mug_2")},
        action="pick",
    )
    assert propose(RecoveryRequest("pick(Mug)", verdict, scene=scene)) == [
        # Two mugs in one place: no internal labels ("Mug_1 or Mug_2?") in the question.
        "choice = ask('Which mug should I pick up? I see 2: please describe the one you mean.')",
        "pick(choice)",
    ]
    # Without a scene the objectIds name the options; the destination of place is asked for.
    dest = Verdict(
        Category.AMBIGUITY,
        "Which drawer?",
        grounding={"drawer": ["Drawer|1", "Drawer|2"]},
        action="place",
    )
    assert propose(RecoveryRequest("place(Spoon, drawer)", dest)) == [
        "choice = ask('Where should I put the Spoon: Drawer|1 or Drawer|2?')",
        "place('Spoon', choice)",
    ]


def test_symbolic_not_present(small_kitchen: Scene, small_kitchen_dict: dict) -> None:
    missing = Verdict(Category.NOT_PRESENT, "There is no Banana.", grounding={"Banana": []})
    assert propose(RecoveryRequest("pick(Banana)", missing, scene=small_kitchen)) == [
        "location = ask('Where can I find the Banana?')",
        "move_to(location)",
        "pick('Banana')",
    ]
    person = Verdict(Category.NOT_PRESENT, "Adriana is not recognised.", action="approach")
    assert propose(
        RecoveryRequest("approach(Adriana)", person, scene=with_person(small_kitchen_dict))
    ) == [
        "name = ask('Hello, who are you?')",
        "approach(name)",
    ]
    handover = Verdict(Category.NOT_PRESENT, "Adriana is not recognised.", action="handover")
    assert propose(RecoveryRequest("handover(Apple, Adriana)", handover)) == [
        "name = ask('Hello, who are you?')",
        "handover('Apple', name)",
    ]


def test_symbolic_out_of_reach(small_kitchen: Scene, small_kitchen_dict: dict) -> None:
    far = Verdict(Category.OUT_OF_REACH, "The Apple is 1.8 m away.", action="pick")
    assert propose(RecoveryRequest("pick(Apple)", far, scene=small_kitchen)) == [
        "move_to('Apple')",
        "pick('Apple')",
    ]
    people = with_person(small_kitchen_dict, name="Adriana")
    assert propose(RecoveryRequest("pick(Apple)", far, scene=people)) == [
        "ask('Could you bring the Apple closer to me, please?')",
        "pick('Apple')",
    ]
    handover = Verdict(Category.OUT_OF_REACH, "Adriana is 2 m away.", action="handover")
    assert propose(RecoveryRequest("handover(Apple, Adriana)", handover, scene=people)) == [
        "approach('Adriana')",
        "handover('Apple', 'Adriana')",
    ]


def test_symbolic_obstructed(small_kitchen: Scene, small_kitchen_dict: dict) -> None:
    inside = Verdict(
        Category.OBSTRUCTED,
        "The Bowl cannot be picked: an Apple is inside it.",
        objects=ids(small_kitchen, "Bowl", "Apple"),
        action="pick",
    )
    # The Apple is on the breakfast bar behind the robot, beyond its reach: fetched first.
    assert propose(RecoveryRequest("pick(Bowl)", inside, scene=small_kitchen)) == [
        "move_to('Apple')",
        "pick('Apple')",
        "move_to('CounterTop_1')",
        "place('Apple')",
        "move_to('Bowl')",
        "pick('Bowl')",
    ]
    data = copy.deepcopy(small_kitchen_dict)
    data["objects"].append(
        {
            **copy.deepcopy(data["objects"][0]),
            "objectId": "Chair|x",
            "objectType": "Chair",
            "pickupable": False,
        }
    )
    data["blocked"] = {"medicine_counter": ["Chair|x"]}
    data["locations"] = {"medicine_counter": {"x": -1.05, "z": -1.55}}
    scene = Scene(data)
    path = Verdict(
        Category.OBSTRUCTED, "The path to medicine_counter is blocked.", action="approach"
    )
    assert propose(RecoveryRequest("approach(medicine_counter)", path, scene=scene)) == [
        "ask('Could you move the Chair out of the way, please?')",
        "approach('medicine_counter')",
    ]
    # With a declared policy nobody is sent on an errand with nobody in sight (issue 34).
    declared = Scene({**data, "policy": {"absent": "fail"}})
    assert propose(RecoveryRequest("approach(medicine_counter)", path, scene=declared)) == [
        "say('The path to medicine_counter is blocked. I cannot fix this myself: nobody here "
        "may move it out of the way for me.')"
    ]


def test_symbolic_wrong_state(small_kitchen: Scene) -> None:
    closed = Verdict(
        Category.WRONG_STATE,
        "The Egg is inside the Fridge, which is closed.",
        objects=ids(small_kitchen, "Egg", "Fridge"),
        action="pick",
    )
    # The Fridge is 3 m away: the robot goes to it before opening it.
    assert propose(RecoveryRequest("pick(Egg)", closed, scene=small_kitchen)) == [
        "move_to('Fridge')",
        "open('Fridge')",
        "pick('Egg')",
    ]
    busy = Verdict(Category.WRONG_STATE, "The Fridge is closed.", action="place")
    assert propose(
        RecoveryRequest("place(Mug, Fridge)", busy, holding=["Mug"], scene=small_kitchen)
    ) == [
        "ask('Could you open the Fridge for me, please?')",
        "move_to('Fridge')",
        "place('Mug', 'Fridge')",
    ]
    already = Verdict(Category.WRONG_STATE, "The Fridge is already closed.", action="close")
    assert propose(RecoveryRequest("close(Fridge)", already, scene=small_kitchen)) == [
        "say('The Fridge is already closed.')"
    ]
    look = Verdict(Category.WRONG_STATE, "Adriana is not looking at the robot.", action="handover")
    assert propose(RecoveryRequest("handover(medicine, Adriana)", look)) == [
        "say('Adriana, please look at me so I can hand you the medicine.')",
        "wait_for('Adriana looking at me')",
        "handover('medicine', 'Adriana')",
    ]


def test_symbolic_robot_state(small_kitchen: Scene) -> None:
    knife = Verdict(Category.ROBOT_STATE, "The robot is not holding a knife.", action="slice")
    assert propose(RecoveryRequest("slice(Lettuce)", knife, scene=small_kitchen)) == [
        "move_to('ButterKnife')",
        "pick('ButterKnife')",
        "move_to('Lettuce')",
        "slice('Lettuce')",
    ]
    # Without a scene there is no real surface to put the Egg on: say so, invent none.
    assert propose(RecoveryRequest("slice(Lettuce)", knife, holding=["Egg"])) == [
        "say('The robot is not holding a knife. I cannot fix this myself: I know of no free "
        "surface to put things down on.')"
    ]
    busy = Verdict(Category.ROBOT_STATE, "The arm is busy with the Mug.", action="pick")
    assert propose(RecoveryRequest("pick(Apple)", busy, holding=["Mug"], scene=small_kitchen)) == [
        "move_to('CounterTop_1')",
        "place('Mug')",
        "move_to('Apple')",
        "pick('Apple')",
    ]
    # RAIDER Fig. 7's query: place the tomato while holding an egg.
    other = Verdict(Category.ROBOT_STATE, "It is holding an Egg, not the Tomato.", action="place")
    assert propose(
        RecoveryRequest("place(Tomato, Pan)", other, holding=["Egg"], scene=small_kitchen)
    ) == [
        "move_to('CounterTop_1')",
        "place('Egg')",
        "move_to('Tomato')",
        "pick('Tomato')",
        "move_to('Pan')",
        "place('Tomato', 'Pan')",
    ]


def test_symbolic_wrong_property_and_unknown_say_why() -> None:
    heavy = Verdict(Category.WRONG_PROPERTY, "The Microwave cannot be picked up.", action="pick")
    assert propose(RecoveryRequest("pick(Microwave)", heavy)) == [
        "say('The Microwave cannot be picked up.')"
    ]
    unknown = Verdict.unknown("time limit of 30 s")
    assert propose(RecoveryRequest("pick(Apple)", unknown)) == [
        "say('The check did not finish: time limit of 30 s')"
    ]


def test_symbolic_free_spot_and_quotes() -> None:
    busy = Verdict(Category.ROBOT_STATE, 'busy with "it\'s" mug', action="pick")
    code = SymbolicRecoveryPlanner(free_spot="side table").propose(
        RecoveryRequest("pick(Apple)", busy, holding=["Mug"])
    )
    assert parse_recovery(code).steps[0].args == ("side table",)


# ------------------------------------------------------------------------- LLM


def test_builtin_examples_rank_by_similarity() -> None:
    request = RecoveryRequest(
        "pick(cup)", Verdict(Category.AMBIGUITY, "there are two cups, which one to pick")
    )
    best = builtin_examples(request.information(), 3)
    assert len(best) == 3
    assert all("issue: ambiguity" in info for info, _ in best[:2])
    assert len(builtin_examples("anything", 100)) == len(load_examples())


def test_llm_prompt_follows_figure_7() -> None:
    provider_calls = []

    def memory(text: str, k: int):
        provider_calls.append((text, k))
        return [
            (
                "query: pick(pear), issue: ambiguity, explanation: two pears.",
                'p = ask("Which pear?")\npick(p)',
            )
        ]

    llm = LLMRecoveryPlanner(ScriptedChat([]), examples=memory, k=2)
    request = RecoveryRequest(
        "slice(Lettuce)",
        Verdict(Category.ROBOT_STATE, "The robot is not holding a knife."),
        examples=[("query: open(fridge), issue: x", 'open("Fridge")')],
    )
    prompt = llm.prompt(request)
    assert prompt.startswith("Objective: A robot encountered an issue before executing an action.")
    assert 'Possible actions: ask("question"), say("statement"), move_to(location)' in prompt
    assert "free_table" not in prompt and "free table" not in prompt  # no scene: none named
    assert "single arm" in prompt
    assert '1. query: open(fridge), issue: x\ncorrective actions:\nopen("Fridge")' in prompt
    assert "2. query: pick(pear)" in prompt
    assert prompt.rstrip().endswith(request.information() + "\ncorrective actions:")
    assert "rejected" not in prompt
    assert provider_calls == [(request.information(), 2)]
    again = llm.prompt(
        RecoveryRequest("slice(Lettuce)", request.verdict, feedback="line 1: import")
    )
    assert "Your previous answer was rejected: line 1: import" in again


def test_rejected_code_goes_back_with_the_reason() -> None:
    chat = ScriptedChat(
        [
            "import os\nos.system('rm -rf /')",
            "Here you go:\n```python\nknife = ask('Where is the knife?')\nmove_to(knife)\n"
            "pick('Knife')\nslice('Lettuce')\n```",
        ]
    )
    recovery = Recovery(LLMRecoveryPlanner(chat), robot=None, human=ScriptedHuman([]))  # type: ignore[arg-type]
    request = RecoveryRequest(
        "slice(Lettuce)", Verdict(Category.ROBOT_STATE, "No knife.", action="slice")
    )
    plan = recovery.plan(request)
    assert plan.proposals == 2
    assert len(plan.rejected) == 1 and "line 1: import" in plan.rejected[0]
    second_prompt = chat.calls[1][0]["content"]
    assert "Your previous answer was rejected: line 1: import" in second_prompt
    assert plan.resume is not None and plan.resume.to_code() == "slice('Lettuce')"
    assert [s.action for s in plan.run.steps] == ["ask", "move_to", "pick"]
    assert plan.variables == ("knife",)
    assert request.feedback is None  # the caller's request is not changed


def test_give_up_after_max_retries() -> None:
    chat = ScriptedChat(["exec('x')", "while True: pass", "eval('1')", "never asked"])
    recovery = Recovery(LLMRecoveryPlanner(chat), None, ScriptedHuman([]), max_retries=2)  # type: ignore[arg-type]
    request = RecoveryRequest("pick(Apple)", Verdict(Category.OBSTRUCTED, "x"))
    with pytest.raises(RecoveryCodeError, match="after 3 proposal.*unknown action 'eval'"):
        recovery.plan(request)
    assert len(chat.calls) == 3


def test_llm_over_http_with_the_real_openai_sdk() -> None:
    from tests.bt_raider.llm.fake_openai_server import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        server.push_text(
            'item = ask("Which item should I pick, the knife or the cup?")\npick(item)'
        )
        chat = OpenAIChat("fake-model", base_url=server.url, max_retries=0)
        recovery = Recovery(LLMRecoveryPlanner(chat), None, ScriptedHuman([]))  # type: ignore[arg-type]
        request = RecoveryRequest(
            "pick the kitchen utensil to the right of the plate",
            Verdict(Category.AMBIGUITY, "A Knife and a Cup are right of the Plate.", action="pick"),
        )
        plan = recovery.plan(request)
        sent = server.chat_requests[0]["messages"][0]["content"]
    assert plan.resume is not None and plan.resume.args == (Ref("item"),)
    assert "query: pick the kitchen utensil to the right of the plate, issue: ambiguity" in sent


# ------------------------------------------------------------------------- Recovery


def test_plan_split_give_up_and_build() -> None:
    human = ScriptedHuman(["x"])
    verdict = Verdict(Category.WRONG_PROPERTY, "too heavy", action="pick")

    class Fixed:
        def __init__(self, code: str) -> None:
            self.code = code

        def propose(self, request, *, cancel=None) -> str:
            return self.code

    says = Recovery(Fixed('say("I cannot pick the Microwave: it is too heavy.")'), None, human)  # type: ignore[arg-type]
    plan = says.plan(RecoveryRequest("pick(Microwave)", verdict))
    assert plan.gives_up and plan.resume is None and len(plan.run) == 1
    other = Recovery(Fixed('x = ask("?")\nmove_to(x)'), None, human)  # type: ignore[arg-type]
    plan = other.plan(RecoveryRequest("pick(Microwave)", verdict))
    assert not plan.gives_up and plan.resume is None and len(plan.run) == 2
    tree = other.build(RecoveryRequest("pick(Microwave)", verdict))
    assert isinstance(tree, py_trees.composites.Sequence)
    # move_to uses the answer: it must ground first (no scene here: the ask fails closed).
    assert [type(c) for c in tree.children] == [GroundedAsk, ActionBehaviour]


def test_recovery_validation_cancel_and_on_success() -> None:
    with pytest.raises(TypeError, match="propose"):
        Recovery(object(), None, ScriptedHuman([]))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_retries"):
        Recovery(SymbolicRecoveryPlanner(), None, ScriptedHuman([]), max_retries=-1)  # type: ignore[arg-type]
    seen = []
    recovery = Recovery(
        SymbolicRecoveryPlanner(),
        None,  # type: ignore[arg-type]
        ScriptedHuman([]),
        on_success=lambda info, code: seen.append((info, code)),
        vocabulary=Vocabulary(),
    )
    request = RecoveryRequest("pick(Apple)", Verdict(Category.OUT_OF_REACH, "far", action="pick"))
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(RecoveryCodeError, match="cancelled"):
        recovery.plan(request, cancel=cancel)
    plan = recovery.plan(request)
    recovery.succeeded(plan)
    assert seen == [(request.information(), "move_to('Apple')\npick('Apple')")]


# ------------------------------------------------------------------------- the user's robot

TOY_ACTIONS = {"move_to": "navigate", "pick": "grasp", "place": "put"}


class Fixed:
    """A planner that always proposes the same code."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.requests: list[RecoveryRequest] = []

    def propose(self, request, *, cancel=None) -> str:
        self.requests.append(request)
        return self.code


def run_tree(tree: py_trees.behaviour.Behaviour, ticks: int = 40) -> None:
    """Tick until the tree ends, waiting for background work between ticks."""
    for _ in range(ticks):
        tree.tick_once()
        if tree.status != py_trees.common.Status.RUNNING:
            return
        end = time.monotonic() + 5.0
        while time.monotonic() < end:
            recovery = getattr(tree, "recovery_tree", None)
            nodes = [*tree.iterate(), *(recovery.iterate() if recovery is not None else [])]
            if all(getattr(n, "pending", None) is None or n.pending.done() for n in nodes):
                break
            time.sleep(0.001)
    raise AssertionError(f"{tree.name} still running after {ticks} ticks")


def busy_hand() -> tuple[ToyRobot, RecoveryRequest]:
    """The toy robot holds the Apple and is asked to grasp Medicine_2 (the real checker)."""
    robot = ToyRobot(toy_scene_dict(holding_apple=True))
    scene = robot.observe()
    verdict = SymbolicReasoner().check(scene, Query("grasp(Medicine_2)"))
    assert verdict.category is Category.ROBOT_STATE
    return robot, RecoveryRequest("grasp(Medicine_2)", verdict, holding=["Apple"], scene=scene)


def test_recovery_speaks_the_robots_actions_and_places_and_passes_object_ids() -> None:
    robot, request = busy_hand()
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, ScriptedHuman([]), actions=TOY_ACTIONS)
    plan = recovery.plan(request)
    # The robot's names, a real surface of the scene (no 'free_table'), the action last.
    assert plan.code.splitlines() == [
        "navigate('CounterTop')",
        "put('Apple')",
        "navigate('Medicine_2')",
        "grasp('Medicine_2')",
    ]
    assert plan.resume is not None and plan.resume.to_code() == "grasp('Medicine_2')"
    assert plan.aliases == {"CounterTop": COUNTER, "Apple": APPLE, "Medicine_2": FAR_FROM_PLANT}
    tree = recovery.compile(plan)
    run_tree(tree)
    assert tree.status == py_trees.common.Status.SUCCESS
    assert robot.calls == [
        ("navigate", [COUNTER]),
        ("put", [APPLE]),
        ("navigate", [FAR_FROM_PLANT]),
    ]


def test_a_users_plain_behaviour_is_guarded_and_recovered_in_its_vocabulary() -> None:
    robot = ToyRobot(toy_scene_dict(holding_apple=True))
    child = py_trees.behaviours.Success(name="the user's grasp")
    guard = RaiderGuard(
        child,
        "grasp(Medicine_2)",
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, ScriptedHuman([]), actions=TOY_ACTIONS),
    )
    run_tree(guard)
    assert guard.status == py_trees.common.Status.SUCCESS, guard.feedback_message
    assert child.status == py_trees.common.Status.SUCCESS
    assert robot.calls == [
        ("navigate", [COUNTER]),
        ("put", [APPLE]),
        ("navigate", [FAR_FROM_PLANT]),
    ]


def test_an_action_the_robot_lacks_is_refused_before_anything_runs() -> None:
    robot, request = busy_hand()
    planner = Fixed("move_to('CounterTop')\nput('Apple')\ngrasp('Medicine_2')")
    recovery = Recovery(planner, robot, ScriptedHuman([]), actions=TOY_ACTIONS, max_retries=1)
    with pytest.raises(RecoveryCodeError) as err:
        recovery.plan(request)
    message = str(err.value)
    assert "unknown action 'move_to'" in message
    assert "the robot calls move_to 'navigate'" in message
    assert "its actions are navigate(1), grasp(1), put(1-2)" in message
    # The planner was told, and heard the reason the second time.
    assert planner.requests[0].actions is recovery.actions
    assert planner.requests[1].feedback is not None and "move_to" in planner.requests[1].feedback
    assert robot.calls == []
    # Inside a guard: it fails closed with that reason; the robot records no call.
    guard = RaiderGuard(
        py_trees.behaviours.Success(name="grasp"),
        "grasp(Medicine_2)",
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=recovery,
    )
    run_tree(guard)
    assert guard.status == py_trees.common.Status.FAILURE
    assert "no recovery" in guard.feedback_message
    assert "the robot has no action 'move_to'" in guard.feedback_message
    assert robot.calls == []


def test_symbolic_never_writes_an_action_the_robot_does_not_have() -> None:
    robot, request = busy_hand()
    no_wheels = Recovery(
        SymbolicRecoveryPlanner(),
        robot,
        ScriptedHuman([]),
        actions={"pick": "grasp", "place": "put"},
    )
    plan = no_wheels.plan(request)
    assert plan.gives_up
    assert plan.code == (
        "say('The robot cannot pick the Medicine_2: its hand is busy holding the Apple. I cannot "
        "fix this myself: I have no action to go to.')"
    )


def test_a_place_the_scene_does_not_have_is_refused_with_the_real_options() -> None:
    robot, request = busy_hand()
    planner = Fixed("navigate('free_table')\nput('Apple')\ngrasp('Medicine_2')")
    recovery = Recovery(planner, robot, ScriptedHuman([]), actions=TOY_ACTIONS, max_retries=0)
    with pytest.raises(RecoveryCodeError, match="names 'free_table', which is no object") as err:
        recovery.plan(request)
    assert "to put something down, use the CounterTop" in str(err.value)
    assert robot.calls == []


def test_llm_is_told_the_robots_actions_and_corrects_its_plan_from_the_reason() -> None:
    robot, request = busy_hand()
    chat = ScriptedChat(
        [
            "move_to('CounterTop')\nplace('Apple')\ngrasp('Medicine_2')",
            "navigate('free_table')\nput('Apple')\ngrasp('Medicine_2')",
            "navigate('CounterTop')\nput('Apple', 'CounterTop')\nnavigate('Medicine_2')\n"
            "grasp('Medicine_2')",
        ]
    )
    recovery = Recovery(LLMRecoveryPlanner(chat), robot, ScriptedHuman([]), actions=TOY_ACTIONS)
    plan = recovery.plan(request)
    assert plan.proposals == 3 and len(plan.rejected) == 2
    first, second, third = (call[0]["content"] for call in chat.calls)
    assert (
        'Possible actions: ask("question"), say("statement"), wait_for("event") or '
        "wait_for(seconds), navigate(location), grasp(object), put(object) or "
        "put(object, destination)\n" in first
    )
    assert "use the CounterTop: a free surface near the robot" in first
    # The examples speak the robot's words too (or are left out).
    assert "free_table" not in first and "move_to(" not in first and "navigate(" in first
    assert "Your previous answer was rejected: line 1: unknown action 'move_to'" in second
    assert "(the robot has no action 'move_to' (the robot calls move_to 'navigate')" in second
    assert "names 'free_table', which is no object, place or person in the scene" in third
    tree = recovery.compile(plan)
    run_tree(tree)
    assert tree.status == py_trees.common.Status.SUCCESS
    assert robot.calls == [
        ("navigate", [COUNTER]),
        ("put", [APPLE, COUNTER]),
        ("navigate", [FAR_FROM_PLANT]),
    ]


def guarded_pick(answers: list[str]) -> tuple[RaiderGuard, ToyRobot, ScriptedHuman]:
    """The user's grasp of "the medicine" (two of them) under a guard; the person answers."""
    robot = ToyRobot()
    human = ScriptedHuman(answers)
    guard = RaiderGuard(
        py_trees.behaviours.Success(name="the user's grasp"),
        "pick the medicine",
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, human, actions=TOY_ACTIONS),
    )
    run_tree(guard)
    return guard, robot, human


WHICH = "Which medicine should I pick up: the medicine on the right or the medicine on the left?"


def test_guarded_ambiguity_grounds_the_persons_answer_before_the_recheck() -> None:
    guard, _robot, human = guarded_pick(["the blue one", "it is Medicine_1, next to the plant"])
    assert guard.status == py_trees.common.Status.SUCCESS, guard.feedback_message
    assert human.transcript_text().splitlines() == [
        f"robot asks: {WHICH}",
        "human: the blue one",
        "robot says: Sorry, 'the blue one' fits more than one: the medicine on the right and "
        "the medicine on the left.",
        f"robot asks: {WHICH}",
        "human: it is Medicine_1, next to the plant",
    ]
    # The re-check is about the object the answer grounded to, not the sentence.
    assert str(guard.query) == f"grasp({NEAR_PLANT})"
    assert guard.verdict is not None and guard.verdict.ok


@pytest.mark.parametrize("answer", ["no", "I don't know"])
def test_guarded_refusal_or_dont_know_stops_without_asking_again(answer: str) -> None:
    guard, robot, human = guarded_pick([answer, "Medicine_1"])
    assert guard.status == py_trees.common.Status.FAILURE
    assert "recovery stopped" in guard.feedback_message
    assert f"human: {answer}" in guard.feedback_message
    assert [e.kind for e in human.transcript] == ["ask", "say"]
    assert robot.calls == []


def test_symbolic_questions_never_double_the_article(small_kitchen: Scene) -> None:
    missing = Verdict(Category.NOT_PRESENT, "There is no blue one.", grounding={"the blue one": []})
    assert propose(RecoveryRequest("pick(the blue one)", missing, scene=small_kitchen))[0] == (
        "location = ask('Where can I find the blue one?')"
    )


_TEXT = st.one_of(
    st.text(max_size=60),
    st.lists(
        st.sampled_from(
            ["in", "the", "fridge", "counter", "on", "next", "to", "plant", "pharmacy_shelf",
             "Medicine_1", "why", "no", "kitchen", "I", "don't", "know", FRIDGE, "blue", "one"]
        ),
        max_size=8,
    ).map(" ".join),
)  # fmt: skip


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT)
# The reply is read as an answer to the question asked, which lists nothing to count: "no
# Medicine_1" is no place (found by Hypothesis; the oracle read it without the question).
@example(text="fridge don't no Medicine_1")
def test_no_answer_reaches_the_robot_unless_it_grounded_to_one_candidate(text: str) -> None:
    py_trees.blackboard.Blackboard.clear()
    robot = ToyRobot()
    scene = robot.observe()
    missing = Verdict(Category.NOT_PRESENT, "There is no Banana.", grounding={"Banana": []})
    human = ScriptedHuman({".": text})
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, human, actions=TOY_ACTIONS)
    plan = recovery.plan(RecoveryRequest("grasp(Banana)", missing, scene=scene))
    assert plan.code.splitlines()[:2] == [
        "location = ask('Where can I find the Banana?')",
        "navigate(location)",
    ]
    tree = recovery.compile(plan)
    run_tree(tree)
    reading = AnswerSpace.places(scene).for_question("Where can I find the Banana?").read(text)
    places = set(scene.locations) | {o.id for o in scene.objects}
    event("grounded" if reading.usable else reading.intent.value)
    if reading.usable:
        assert robot.calls == [("navigate", [reading.value])] and reading.value in places
    else:
        assert robot.calls == [] and tree.status == py_trees.common.Status.FAILURE
    assert all(arg in places for _, args in robot.calls for arg in args)


def test_who_are_you_is_read_against_the_people_the_action_names() -> None:
    data = toy_scene_dict()
    data["humans"] = [{"id": "person_1", "name": None, "position": {"x": 1, "y": 0, "z": 1}}]
    robot = ToyRobot(data)
    scene = robot.observe()
    verdict = SymbolicReasoner().check(scene, Query("approach(Adriana)"))
    assert verdict.category is Category.NOT_PRESENT
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, ScriptedHuman([]))
    plan = recovery.plan(RecoveryRequest("approach(Adriana)", verdict, scene=scene))
    assert plan.code == "name = ask('Hello, who are you?')\napproach(name)"
    space = plan.answers["name"]
    assert space.read("I'm Adriana.").value == "Adriana"
    # Adriana is designated by name: Bob is no substitute, and asking again will not help.
    assert space.read("I'm Bob").reason == "Bob is not Adriana: Adriana is not here."
    assert space.read("I'm Bob").final


def test_with_no_free_surface_the_blocker_is_not_put_on_an_invented_one() -> None:
    data = toy_scene_dict()
    data["objects"] = [
        o for o in data["objects"] if not o["objectId"].startswith(("Counter", "Dining"))
    ]
    scene = Scene(data)
    blocked = Verdict(
        Category.OBSTRUCTED,
        "The Fridge cannot be opened: the Apple is in the way.",
        objects=[APPLE],
        action="open",
    )
    code = SymbolicRecoveryPlanner().propose(RecoveryRequest("open(Fridge)", blocked, scene=scene))
    assert code.splitlines() == [
        "ask('Could you move the Apple out of the way, please?')",
        "open('Fridge')",
    ]


# ------------------------------------------------- failure classes found by benchmarks/recovery.py


def _two_people(holding_apple: bool = True) -> Scene:
    data = toy_scene_dict(holding_apple=holding_apple)
    data["humans"] = [
        {"id": "person_1", "name": "Adriana", "position": {"x": 0.3, "y": 0.0, "z": -0.3}},
        {"id": "person_2", "name": "Bob", "position": {"x": -0.3, "y": 0.0, "z": -0.3}},
    ]
    return Scene(data)


def test_an_ambiguity_between_people_names_them_and_reads_their_names() -> None:
    scene = _two_people()
    verdict = Verdict(
        Category.AMBIGUITY,
        "The query is ambiguous: 'the user' matches 2 people: Adriana and Bob.",
        grounding={"the apple": [APPLE], "the user": ["person_1", "person_2"]},
        action="handover",
    )
    request = RecoveryRequest("hand the apple to the user", verdict, scene=scene)
    plan = Recovery(SymbolicRecoveryPlanner(), None, ScriptedHuman([])).plan(request)  # type: ignore[arg-type]
    # Once asked "person_1 or person_2?", and the answer "Adriana" was not understood.
    assert (
        plan.code.splitlines()[0]
        == "choice = ask('Who should I hand the Apple to: Adriana or Bob?')"
    )
    space = plan.answers["choice"]
    assert space.read("Adriana, please.").value == "Adriana"
    assert space.read("Bob").value == "Bob"
    assert space.read("the apple").value is None


def test_handover_of_what_the_robot_does_not_hold_fetches_it_first() -> None:
    scene = _two_people(holding_apple=False)
    verdict = Verdict(
        Category.ROBOT_STATE,
        "The robot cannot hand over the Apple: it is not holding it (it holds nothing).",
        objects=[APPLE],
        action="handover",
    )
    assert propose(RecoveryRequest("handover(Apple, Adriana)", verdict, scene=scene)) == [
        "move_to('Apple')",
        "pick('Apple')",
        "approach('Adriana')",
        "handover('Apple', 'Adriana')",
    ]
    # Holding it already, or no such object: the plan says why instead.
    held = RecoveryRequest("handover(Apple, Adriana)", verdict, holding=["Apple"], scene=scene)
    assert propose(held)[0].startswith("say(")


def test_who_are_you_for_a_role_accepts_the_name_given() -> None:
    data = toy_scene_dict(holding_apple=True)
    data["humans"] = [{"id": "person_1", "name": None, "position": {"x": 0.3, "y": 0.0, "z": -0.3}}]
    scene = Scene(data)
    verdict = Verdict(
        Category.NOT_PRESENT,
        "The person is not recognised: the person in sight (person_1) has no recognised name.",
        grounding={"the apple": [APPLE], "the user": []},
        action="handover",
    )
    request = RecoveryRequest("deliver the apple to the user", verdict, scene=scene)
    plan = Recovery(SymbolicRecoveryPlanner(), None, ScriptedHuman([])).plan(request)  # type: ignore[arg-type]
    assert plan.code.splitlines()[0] == "name = ask('Hello, who are you?')"
    assert plan.answers["name"].read("I'm Adriana.").value == "Adriana"
    named = RecoveryRequest("hand the apple to Adriana", verdict, scene=scene)
    plan = Recovery(SymbolicRecoveryPlanner(), None, ScriptedHuman([])).plan(named)  # type: ignore[arg-type]
    assert plan.answers["name"].read("I'm Bob.").value is None
