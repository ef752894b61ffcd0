"""The tool machinery: argument checks, unknown and failing tools, registering tools, describing them for prompts and for OpenAI function calling."""

import functools
import inspect
import json
import re
import subprocess
import sys
import types
import typing

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bt_raider.errors import ToolError
from bt_raider.perception.relations import RELATIONS
from bt_raider.perception.tools import (
    default_tools,
    household_tools,
)
from bt_raider.perception.toolset import (
    Param,
    Tool,
    ToolSet,
    UnknownToolError,
    _arg_line,
    _docstring,
    _inspected_parameters,
    _parse_docstring,
    _plain_parameters,
    _type_name,
    cleandoc,
)
from bt_raider.testing.scenes import KITCHEN_PATH


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
def test_each_default_tool_set_is_its_own():
    # default_tools() copies one set made once per process: registering into one copy, or
    # leaving one out, changes no other copy.
    first = default_tools()

    @first.register
    def is_heavy(scene, obj: str) -> bool:
        """Checks whether an object is too heavy to carry."""
        return False

    fewer = first.without("robot_holding")
    second = default_tools()
    assert "is_heavy" in first and "is_heavy" not in second
    assert "robot_holding" in first and "robot_holding" in second
    assert second.names() == [n for n in first.names() if n != "is_heavy"]
    assert fewer.names() == [n for n in first.names() if n != "robot_holding"]
    assert second is not first and default_tools() is not second


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
    assert "- check_obj_relationship(relationship, obj, among?): Retrieves" in tools.describe()
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


# ---------------------------------------------------------------------- making tools
def regex_parse_docstring(doc: str) -> tuple[str, dict[str, str], str]:
    """_parse_docstring as it was written with regexes: the reference the str one matches."""
    sections: dict[str, list[str]] = {"": []}
    current = ""
    for line in doc.splitlines():
        head = re.fullmatch(r"(Args|Arguments|Returns|Raises|Example|Examples|Note):\s*", line)
        if head:
            current = head.group(1)
            sections[current] = []
        else:
            sections.setdefault(current, []).append(line)
    summary = " ".join(" ".join(sections[""]).split())
    args: dict[str, str] = {}
    name = None
    for line in sections.get("Args", []) + sections.get("Arguments", []):
        m = re.match(r"\s{0,8}(\w+)(?:\s*\([^)]*\))?:\s*(.*)", line)
        if m and (name is None or len(line) - len(line.lstrip()) <= 4):
            name = m.group(1)
            args[name] = m.group(2).strip()
        elif name and line.strip():
            args[name] = f"{args[name]} {line.strip()}"
    returns = " ".join(" ".join(sections.get("Returns", [])).split())
    return summary, args, returns


#: ``Args:`` lines and near misses: indented 0 to 12 (8 is the most an argument may be),
#: typed, unclosed parentheses, odd whitespace and word characters.
ARG_LINES = st.tuples(
    st.sampled_from(["", " ", "    ", "        ", "         ", " " * 12, "\t", "\u3000 "]),
    st.sampled_from(["obj", "x_1", "é", "ключ", "a b", "", "-"]),
    st.sampled_from(["", " (str)", "(float, optional)", " (int", "()", " ( x ) ", ")"]),
    st.sampled_from([":", ": ", "", " :", "::", ":\t"]),
    st.text(max_size=6),
).map("".join)
#: Google docstrings: section headers (with trailing text too), argument lines, any text.
DOC_LINES = st.lists(
    st.sampled_from(["Args", "Arguments", "Returns", "Raises", "Note", "Examples", "Example"]).map(
        lambda h: h + ":"
    )
    | st.sampled_from(["Args: x", "Returns:\u00a0", " Args:", "Args :"])
    | ARG_LINES
    | st.text(max_size=12),
    max_size=10,
).map("\n".join)


@given(DOC_LINES)
@example("Summary.\n\nArgs:\n    obj (str): the object.\n        more.\n\nReturns:\n    a list.")
@example("Args:  \n obj(str):x\n  y (int:z\nArgs:\u00a0\n_:(")
def test_docstrings_are_read_as_the_regex_version_read_them(doc):
    assert _parse_docstring(doc) == regex_parse_docstring(doc)


@given((ARG_LINES | st.text(max_size=20)).map(lambda text: " ".join(text.splitlines())))
def test_an_args_line_is_split_as_the_regex_split_it(line):
    # A line as str.splitlines gives it (the regex's "." stops at a line break; it has none).
    m = re.match(r"\s{0,8}(\w+)(?:\s*\([^)]*\))?:\s*(.*)", line)
    got = _arg_line(line)
    assert (got is None) == (m is None)
    if m:
        assert (got[0], got[1].strip()) == (m.group(1), m.group(2).strip())


Number = float  # an alias only typing.get_type_hints resolves


def _template(scene, x=None):
    return x


@given(
    st.sampled_from(
        [
            float,
            int,
            bool,
            str,
            "float",
            "int",
            "bool",
            "str",
            "Number",
            "list[str]",
            "float | None",
            "Undefined",
            inspect.Parameter.empty,
            Number,
            list,
        ]
    ),
    st.sampled_from([(), (None,), (1.0,), ("a",)]),
)
def test_parameter_types_are_the_type_hints(annotation, defaults):
    func = types.FunctionType(_template.__code__, globals(), "probe", defaults)
    func.__annotations__ = {} if annotation is inspect.Parameter.empty else {"x": annotation}
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # noqa: BLE001 - as Tool.from_function falls back to the raw annotations
        hints = func.__annotations__
    (param,) = Tool.from_function(func).params
    assert param.type == _type_name(hints.get("x", annotation))
    assert param.required is (defaults == ())


# ---------------------------------------------------------------------- tools made when used
class DocProbe:
    """A callable tool that counts how often its docstring is read."""

    reads = 0

    @property  # type: ignore[misc]
    def __doc__(self) -> str:  # noqa: D105
        DocProbe.reads += 1
        return "Counts the objects.\n\nReturns:\n    how many."

    def __call__(self, scene) -> int:
        return len(scene)


def test_a_tool_is_made_when_first_used_and_once(small_kitchen):
    DocProbe.reads = 0
    ts = ToolSet()
    ts.register(DocProbe(), name="count")
    both = household_tools() | ts
    fewer = both.without("robot_holding")
    assert "count" in both and "count" in fewer and len(fewer) == 6 and DocProbe.reads == 0
    assert fewer.call(small_kitchen, "count", []) == 39 and DocProbe.reads == 1
    assert both.get("count").returns == "how many." and ts.get("count").description == (
        "Counts the objects."
    )
    assert "- count(): Counts the objects. Returns: how many." in both.describe()
    assert DocProbe.reads == 1  # the sets share the tool made once


def test_a_function_that_is_no_tool_is_refused_when_registered():
    def star(scene, *names: str) -> int:
        return len(names)

    with pytest.raises(ToolError, match=r"\*args/\*\*kwargs are not supported"):
        ToolSet().register(star)
    with pytest.raises(ToolError, match="identifier"):
        ToolSet().register(lambda scene: 1, name="größe")  # an identifier, but not ASCII
    with pytest.raises(ToolError, match="cannot read its signature"):
        ToolSet().register(max)  # a builtin without a signature


# ---------------------------------------------------------------------- read without inspect
def _one(scene, obj: str, limit: float = 1.0, flag="yes"):
    """One line.

    Args:
        obj: the object.
    """


def _posonly(scene, obj, /, limit: int = 2):
    return obj


def _bare(scene, a, b=None):
    return a


def _keyword_only(scene, *, obj: str):
    return obj


@pytest.mark.parametrize("func", [_one, _posonly, _bare, _template])
def test_plain_functions_are_read_as_inspect_reads_them(func):
    name = func.__name__
    assert _plain_parameters(func) == _inspected_parameters(func, name)
    assert _docstring(func) == (inspect.getdoc(func) or "")


@pytest.mark.parametrize(
    "func",
    [
        functools.partial(_one, obj="Apple"),  # a partial: inspect knows what it binds
        functools.wraps(_one)(lambda *a, **k: _one(*a, **k)),  # wrapped: inspect follows it
        DocProbe(),  # a callable object
        max,
        _keyword_only,
    ],
)
def test_other_callables_are_left_to_inspect(func):
    assert _plain_parameters(func) is None


@given(
    st.text(
        alphabet=st.sampled_from([" ", "\t", "\n", "a", "b", ":", "\u00a0", "\u2003"]),
        max_size=60,
    )
)
@example("  Summary.\n\n    Args:\n        x: y\n\t\n    ")
def test_cleandoc_is_inspects(doc):
    assert cleandoc(doc) == inspect.cleandoc(doc)


def test_checking_with_the_default_tools_needs_no_inspect_module():
    """The symbolic check of ``bt-raider check`` reads its tools without ``inspect``."""
    code = (
        "import sys\n"
        "from bt_raider.checking.registry import make_checker\n"
        "from bt_raider.perception.scene import Scene\n"
        f"scene = Scene.load({str(KITCHEN_PATH)!r})\n"
        "verdict = make_checker('symbolic').check(scene, 'open the fridge')\n"
        "assert verdict.tool_calls, verdict\n"
        "print(sorted(m for m in ('inspect', 'dataclasses') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]"


def test_a_parameters_choices_become_the_schemas_enum_and_the_tool_still_reads_phrases(
    tools, small_kitchen
):
    schema = next(
        s for s in tools.openai_tools() if s["function"]["name"] == "check_obj_relationship"
    )
    props = schema["function"]["parameters"]["properties"]
    assert props["relationship"]["enum"] == list(RELATIONS)
    assert "enum" not in props["obj"]
    tool = tools.get("check_obj_relationship")
    # Choices are what a model is offered; the tool reads a phrase as before.
    assert tool.call(small_kitchen, ["on the left of", "Toaster"]) == tool.call(
        small_kitchen, ["left_of", "Toaster"]
    )
    with pytest.raises(ToolError, match="has no parameter 'rel': expected one of relationship"):
        tool.with_choices("rel", ["inside"])
    with pytest.raises(ToolError, match="choices of 'obj' are empty"):
        tool.with_choices("obj", [])
