"""The tool machinery: argument checks, unknown and failing tools, registering tools, describing them for prompts and for OpenAI function calling."""

import json
import re

import pytest

from bt_raider.errors import ToolError
from bt_raider.perception.tools import (
    default_tools,
    household_tools,
)
from bt_raider.perception.toolset import Param, Tool, ToolSet, UnknownToolError


@pytest.mark.parametrize(
    "name, args, words",
    [
        ("get_obj_state", [], ["get_obj_state(obj)", "takes 1", "got 0"]),
        ("get_obj_state", ["Mug", "Apple"], ["takes 1", "got 2"]),
        ("robot_holding", ["Mug"], ["robot_holding()", "takes 0"]),
        ("dist_between_objs", ["Mug"], ["takes 2", "got 1"]),
        ("get_obj_state", "Mug", ["must be a list"]),
        ("get_obj_state", [None], ["argument 'obj'", "None"]),
        ("get_obj_state", [["Mug"]], ["argument 'obj'"]),
        ("get_obj_state", {"object": "Mug"}, ["no parameter 'object'", "obj"]),
        ("dist_between_objs", {"obj1": "Mug"}, ["missing argument 'obj2'"]),
    ],
)
def test_bad_arguments(small_kitchen, tools, name, args, words):
    with pytest.raises(ToolError) as err:
        tools.call(small_kitchen, name, args)
    for w in words:
        assert w in str(err.value)


def test_keyword_arguments_as_openai_sends_them(small_kitchen, tools):
    assert tools.call(
        small_kitchen, "check_obj_relationship", {"relationship": "in", "obj": "Fridge"}
    ) == ["Egg"]


def test_unknown_tool_lists_the_valid_names(small_kitchen, tools):
    with pytest.raises(UnknownToolError) as err:
        tools.call(small_kitchen, "obj_detect", [])
    msg = str(err.value)
    assert "'obj_detect'" in msg and "object_detection" in msg and "robot_holding" in msg
    assert isinstance(err.value, ToolError)
    assert "did you mean 'object_detection'" in msg
    # a spacing/case variant is the same tool, not a guess
    assert tools.call(small_kitchen, "Robot Holding", []) == []


def test_a_failing_tool_becomes_a_tool_error(small_kitchen):
    ts = ToolSet()

    @ts.register
    def explode(scene, obj: str) -> int:
        """Always fails."""
        return {}[obj]

    with pytest.raises(ToolError, match=r"explode\(obj\) failed.*KeyError") as err:
        ts.call(small_kitchen, "explode", ["Mug"])
    assert isinstance(err.value.__cause__, KeyError)


# ---------------------------------------------------------------------- registration
def test_register_a_custom_tool_and_use_it_everywhere(small_kitchen):
    tools = default_tools()
    before = len(tools)

    @tools.register
    def is_heavy(scene, obj: str, limit: float = 1.0) -> bool:
        """Checks whether an object is too heavy to carry.

        Args:
            obj: the object.
            limit: the heaviest mass the arm carries, in kg.

        Returns:
            true when the object's mass exceeds the limit.
        """
        return float(scene.resolve(obj).raw.get("mass", 0.0)) > limit

    assert callable(is_heavy) and is_heavy(small_kitchen, "Fridge", 1.0) is (
        small_kitchen.resolve("Fridge").raw.get("mass", 0) > 1.0
    )
    assert len(tools) == before + 1 and "is_heavy" in tools
    tool = tools.get("is_heavy")
    assert tool.params == (
        Param("obj", "str", "the object.", True),
        Param("limit", "float", "the heaviest mass the arm carries, in kg.", False),
    )
    assert tool.description == "Checks whether an object is too heavy to carry."
    assert tool.returns == "true when the object's mass exceeds the limit."
    apple_mass = small_kitchen.resolve("Apple").raw["mass"]
    assert tools.call(small_kitchen, "is_heavy", ["Apple"]) is (apple_mass > 1.0)
    assert tools.call(small_kitchen, "is_heavy", ["Apple", "0.1"]) is (apple_mass > 0.1)  # coerced
    with pytest.raises(ToolError, match="expected a number"):
        tools.call(small_kitchen, "is_heavy", ["Apple", "heavy"])
    assert "- is_heavy(obj, limit?): Checks whether" in tools.describe()
    schema = next(s for s in tools.openai_tools() if s["function"]["name"] == "is_heavy")
    params = schema["function"]["parameters"]
    assert params["properties"]["limit"]["type"] == "number"
    assert params["required"] == ["obj"]


def test_register_with_a_name_replaces_and_unions(small_kitchen):
    ts = ToolSet()
    ts.register(lambda scene: ["nothing"], name="robot_holding")
    assert ts.call(small_kitchen, "robot_holding", []) == ["nothing"]
    merged = household_tools() | ts  # the right-hand tool wins
    assert merged.call(small_kitchen, "robot_holding", []) == ["nothing"]
    assert (ts | household_tools()).call(small_kitchen, "robot_holding", []) == []
    assert merged.names()[0] == "robot_holding" and len(merged) == 6


def test_register_rejects_functions_without_a_scene_parameter():
    def no_scene() -> int:
        return 1

    with pytest.raises(ToolError, match="first parameter must be the scene"):
        ToolSet([no_scene])
    with pytest.raises(ToolError, match="identifier"):
        ToolSet().register(lambda scene: 1, name="bad name")


def test_tool_from_function_and_direct_construction(small_kitchen):
    t = Tool("count", lambda scene: len(scene), "Counts objects.", (), "a number")
    assert t.call(small_kitchen, []) == 39
    assert ToolSet([t]).describe() == "- count(): Counts objects. Returns: a number"


def test_select_and_without(tools):
    sub = tools.select("robot_holding", "dist_to_target")
    assert sub.names() == ["robot_holding", "dist_to_target"]
    assert "retrieve_user_information" not in tools.without("retrieve_user_information")
    with pytest.raises(UnknownToolError):
        tools.without("nope")


# ---------------------------------------------------------------------- prompt shapes
def test_describe_has_one_line_per_tool(tools):
    lines = tools.describe().splitlines()
    assert len(lines) == len(tools)
    for line, tool in zip(lines, tools, strict=True):
        assert re.match(rf"- {tool.name}\([\w, ?]*\): \S", line), line
        assert "Returns:" in line
    assert "- check_obj_relationship(relationship, obj): Retrieves" in tools.describe()
    assert "- dist_between_objs(obj1, obj2):" in tools.describe()


def test_openai_tools_shape(tools):
    schemas = tools.openai_tools()
    assert [s["function"]["name"] for s in schemas] == tools.names()
    for s, tool in zip(schemas, tools, strict=True):
        assert s["type"] == "function"
        fn = s["function"]
        assert fn["description"].startswith(tool.description)
        params = fn["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert list(params["properties"]) == [p.name for p in tool.params]
        assert params["required"] == [p.name for p in tool.params if p.required]
        for prop in params["properties"].values():
            assert prop["type"] in ("string", "number", "integer", "boolean")
            assert prop["description"]
    json.dumps(schemas)
