"""Recovery planners (symbolic templates, RAIDER's few-shot LLM prompt) and the Recovery loop."""

from __future__ import annotations

import copy
import threading
from pathlib import Path

import py_trees
import pytest

from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import RecoveryCodeError
from bt_raider.llm.chat import OpenAIChat, ScriptedChat
from bt_raider.perception.scene import Scene
from bt_raider.recovery.contract import RecoveryPlanner, RecoveryRequest, split_action
from bt_raider.recovery.fewshot import builtin_examples, load_examples
from bt_raider.recovery.llm import LLMRecovery
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.safecode import Ref, Vocabulary, parse_recovery
from bt_raider.recovery.symbolic import SymbolicRecovery
from bt_raider.runtime.actions import ActionBehaviour
from bt_raider.runtime.human import AskBehaviour, ScriptedHuman

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
    code = SymbolicRecovery().propose(request)
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
    assert isinstance(SymbolicRecovery(), RecoveryPlanner)


def test_symbolic_ambiguity_asks_which_and_acts_on_the_answer(kitchen: Scene) -> None:
    verdict = Verdict(
        Category.AMBIGUITY,
        "Vase could be Vase_1 or Vase_2.",
        grounding={"Vase": ids(kitchen, "Vase_1", "Vase_2")},
        action="pick",
    )
    assert propose(RecoveryRequest("pick(Vase)", verdict, scene=kitchen)) == [
        "choice = ask('Which vase should I pick up: Vase_1 or Vase_2?')",
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


def test_symbolic_not_present(kitchen: Scene, kitchen_dict: dict) -> None:
    missing = Verdict(Category.NOT_PRESENT, "There is no Banana.", grounding={"Banana": []})
    assert propose(RecoveryRequest("pick(Banana)", missing, scene=kitchen)) == [
        "location = ask('Where can I find the Banana?')",
        "move_to(location)",
        "pick('Banana')",
    ]
    person = Verdict(Category.NOT_PRESENT, "Adriana is not recognised.", action="approach")
    assert propose(
        RecoveryRequest("approach(Adriana)", person, scene=with_person(kitchen_dict))
    ) == [
        "name = ask('Hello, who are you?')",
        "approach(name)",
    ]
    handover = Verdict(Category.NOT_PRESENT, "Adriana is not recognised.", action="handover")
    assert propose(RecoveryRequest("handover(Apple, Adriana)", handover)) == [
        "name = ask('Hello, who are you?')",
        "handover('Apple', name)",
    ]


def test_symbolic_out_of_reach(kitchen: Scene, kitchen_dict: dict) -> None:
    far = Verdict(Category.OUT_OF_REACH, "The Apple is 1.8 m away.", action="pick")
    assert propose(RecoveryRequest("pick(Apple)", far, scene=kitchen)) == [
        "move_to('Apple')",
        "pick('Apple')",
    ]
    people = with_person(kitchen_dict, name="Adriana")
    assert propose(RecoveryRequest("pick(Apple)", far, scene=people)) == [
        "ask('Could you bring the Apple closer to me, please?')",
        "pick('Apple')",
    ]
    handover = Verdict(Category.OUT_OF_REACH, "Adriana is 2 m away.", action="handover")
    assert propose(RecoveryRequest("handover(Apple, Adriana)", handover, scene=people)) == [
        "approach('Adriana')",
        "handover('Apple', 'Adriana')",
    ]


def test_symbolic_obstructed(kitchen: Scene, kitchen_dict: dict) -> None:
    inside = Verdict(
        Category.OBSTRUCTED,
        "The Bowl cannot be picked: an Apple is inside it.",
        objects=ids(kitchen, "Bowl", "Apple"),
        action="pick",
    )
    assert propose(RecoveryRequest("pick(Bowl)", inside, scene=kitchen)) == [
        "pick('Apple')",
        "move_to('free_table')",
        "place('Apple')",
        "move_to('Bowl')",
        "pick('Bowl')",
    ]
    data = copy.deepcopy(kitchen_dict)
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


def test_symbolic_wrong_state(kitchen: Scene) -> None:
    closed = Verdict(
        Category.WRONG_STATE,
        "The Egg is inside the Fridge, which is closed.",
        objects=ids(kitchen, "Egg", "Fridge"),
        action="pick",
    )
    assert propose(RecoveryRequest("pick(Egg)", closed, scene=kitchen)) == [
        "open('Fridge')",
        "pick('Egg')",
    ]
    busy = Verdict(Category.WRONG_STATE, "The Fridge is closed.", action="place")
    assert propose(RecoveryRequest("place(Mug, Fridge)", busy, holding=["Mug"], scene=kitchen)) == [
        "ask('Could you open the Fridge for me, please?')",
        "place('Mug', 'Fridge')",
    ]
    already = Verdict(Category.WRONG_STATE, "The Fridge is already closed.", action="close")
    assert propose(RecoveryRequest("close(Fridge)", already, scene=kitchen)) == [
        "say('The Fridge is already closed.')"
    ]
    look = Verdict(Category.WRONG_STATE, "Adriana is not looking at the robot.", action="handover")
    assert propose(RecoveryRequest("handover(medicine, Adriana)", look)) == [
        "say('Adriana, please look at me so I can hand you the medicine.')",
        "wait_for('Adriana looking at me')",
        "handover('medicine', 'Adriana')",
    ]


def test_symbolic_robot_state(kitchen: Scene) -> None:
    knife = Verdict(Category.ROBOT_STATE, "The robot is not holding a knife.", action="slice")
    assert propose(RecoveryRequest("slice(Lettuce)", knife, scene=kitchen)) == [
        "move_to('ButterKnife')",
        "pick('ButterKnife')",
        "move_to('Lettuce')",
        "slice('Lettuce')",
    ]
    assert propose(RecoveryRequest("slice(Lettuce)", knife, holding=["Egg"])) == [
        "move_to('free_table')",
        "place('Egg')",
        "knife_location = ask('Where can I find a knife?')",
        "move_to(knife_location)",
        "pick('Knife')",
        "move_to('Lettuce')",
        "slice('Lettuce')",
    ]
    busy = Verdict(Category.ROBOT_STATE, "The arm is busy with the Mug.", action="pick")
    assert propose(RecoveryRequest("pick(Apple)", busy, holding=["Mug"], scene=kitchen)) == [
        "move_to('free_table')",
        "place('Mug')",
        "move_to('Apple')",
        "pick('Apple')",
    ]
    # RAIDER Fig. 7's query: place the tomato while holding an egg.
    other = Verdict(Category.ROBOT_STATE, "It is holding an Egg, not the Tomato.", action="place")
    assert propose(
        RecoveryRequest("place(Tomato, Pan)", other, holding=["Egg"], scene=kitchen)
    ) == [
        "move_to('free_table')",
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
    code = SymbolicRecovery(free_spot="side table").propose(
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

    llm = LLMRecovery(ScriptedChat([]), examples=memory, k=2)
    request = RecoveryRequest(
        "slice(Lettuce)",
        Verdict(Category.ROBOT_STATE, "The robot is not holding a knife."),
        examples=[("query: open(fridge), issue: x", 'open("Fridge")')],
    )
    prompt = llm.prompt(request)
    assert prompt.startswith("Objective: A robot encountered an issue before executing an action.")
    assert 'Possible actions: ask("question"), say("statement"), move_to(location)' in prompt
    assert "free table 'free_table'" in prompt and "single arm" in prompt
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
    recovery = Recovery(LLMRecovery(chat), robot=None, human=ScriptedHuman([]))  # type: ignore[arg-type]
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
    recovery = Recovery(LLMRecovery(chat), None, ScriptedHuman([]), max_retries=2)  # type: ignore[arg-type]
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
        recovery = Recovery(LLMRecovery(chat), None, ScriptedHuman([]))  # type: ignore[arg-type]
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
    assert [type(c) for c in tree.children] == [AskBehaviour, ActionBehaviour]


def test_recovery_validation_cancel_and_on_success() -> None:
    with pytest.raises(TypeError, match="propose"):
        Recovery(object(), None, ScriptedHuman([]))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_retries"):
        Recovery(SymbolicRecovery(), None, ScriptedHuman([]), max_retries=-1)  # type: ignore[arg-type]
    seen = []
    recovery = Recovery(
        SymbolicRecovery(),
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
