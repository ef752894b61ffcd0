"""Hostile recovery code: every snippet is rejected with a reason, and none of it ever runs.

Many snippets would leave a trace if executed -- create a marker file, set a builtin or a
global of this module -- and the tests assert no trace exists. While parsing, ``exec``,
``eval`` and any non-AST ``compile`` are replaced by tripwires.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import os
import tempfile
from pathlib import Path

import pytest

import bt_raider.recovery.safecode as safecode
from bt_raider.errors import RecoveryCodeError
from bt_raider.recovery.safecode import parse_recovery

MARKER = Path(tempfile.gettempdir()) / f"bt_raider_pwned_{os.getpid()}"
M = str(MARKER)
PWNED = False  # a snippet that ran would set this (or builtins.BT_RAIDER_PWNED)

#: Expressions that would do harm if evaluated; each is put in several statement shapes.
PAYLOADS = [
    f"__import__('os').system('touch {M}')",
    f"open({M!r}, 'w').write('x')",
    f"exec(\"open({M!r}, 'w')\")",
    f"eval(\"open({M!r}, 'w')\")",
    "compile('import os', 'x', 'exec')",
    "getattr(__builtins__, 'exec')('PWNED = True')",
    "setattr(builtins, 'BT_RAIDER_PWNED', True)",
    "globals().update(PWNED=True)",
    "vars()['PWNED']",
    "locals()",
    "breakpoint()",
    "input('password?')",
    "print.__self__",
    "().__class__.__bases__[0].__subclasses__()",
    "[c for c in ().__class__.__base__.__subclasses__()]",
    "(lambda: __import__('os'))()",
    "type('X', (), {})",
    "memoryview(b'x')",
    "help()",
    "quit()",
]

#: Statement shapes a payload ``P`` is placed in.
SHAPES = [
    "{p}",
    "x = {p}",
    "say({p})",
    "pick({p})",
    "x = ask({p})",
    'say("hello")\n{p}',
    'item = ask("which?")\npick(item)\n{p}',
    "place('Apple', {p})",
]

HANDWRITTEN = [
    # imports
    "import os",
    "import os, sys",
    "import subprocess as sp",
    "from os import system",
    "from os import *",
    "from . import safecode",
    'import importlib\nimportlib.import_module("os")',
    '__import__("os")',
    '__import__("os").system("ls")',
    'say("ok"); import os',
    # attribute chains and subscripts
    'os.system("touch /tmp/x")',
    'robot.pick("Apple")',
    "pick.__globals__",
    'say("x").upper()',
    "().__class__.__bases__[0].__subclasses__()",
    'x = ask("?")\nx.__class__',
    'x = ask("?")\npick(x.strip())',
    'x = ask("?")\npick(x[0])',
    'x = ask("?")\npick(x[1:])',
    "__builtins__['exec']('1')",
    "__builtins__.exec('1')",
    # dangerous builtins as calls
    'exec("PWNED = True")',
    'eval("1+1")',
    f'open("{M}", "w")',
    'compile("1", "f", "eval")',
    'getattr(pick, "__globals__")',
    'setattr(builtins, "BT_RAIDER_PWNED", 1)',
    'delattr(builtins, "open")',
    "globals()",
    "locals()",
    "vars()",
    "dir()",
    "breakpoint()",
    "input()",
    'print("hi")',
    "exit()",
    "id(1)",
    # lambdas, comprehensions, generators
    "f = lambda: 1",
    "(lambda: pick('Apple'))()",
    "say(lambda: 1)",
    "[pick(x) for x in ['a', 'b']]",
    "{pick(x) for x in 'ab'}",
    "{x: 1 for x in 'ab'}",
    "say([x for x in range(10)])",
    "say(x for x in range(10))",
    "list(pick(x) for x in 'ab')",
    "any(open(f) for f in ['a'])",
    # loops and control flow
    "while True: pass",
    "while True:\n    say('hi')",
    "for i in range(10**9): say('hi')",
    "for x in 'ab':\n    pick(x)",
    "if True: pick('Apple')",
    "if ask('?') == 'yes':\n    pick('Apple')",
    "pick('A') if True else say('B')",
    "say('a') and pick('b')",
    "say('a') or pick('b')",
    "not say('a')",
    "try:\n    pick('A')\nexcept Exception:\n    pass",
    "with open('x') as f:\n    pass",
    "raise SystemExit",
    "assert False",
    "del pick",
    "global PWNED\nPWNED = True",
    "return 1",
    "yield 1",
    "await pick('A')",
    "async def f():\n    await g()",
    "pass",
    "break",
    "continue",
    "match x:\n    case 1:\n        pass",
    # definitions, recursion, decorators, classes
    "def f():\n    return f()\nf()",
    "def pick(x):\n    exec(x)",
    "def f(): pass",
    "@decorator\ndef f(): pass",
    "@pick\ndef f(): pass",
    "class A: pass",
    "class A:\n    def __del__(self):\n        exec('1')",
    "class A(metaclass=type): pass",
    # f-strings
    "say(f\"{__import__('os').system('ls')}\")",
    "say(f\"{open('x')}\")",
    'x = ask("?")\nsay(f"hello {x}")',
    'say(f"{1+1}")',
    'say(f"{x!r}")',
    'pick(f"Apple")',
    # huge literals and arithmetic
    "say('a' * 10**9)",
    "say(10**10**10)",
    "pick(2**100000)",
    "say('a' + 'b')",
    "say(1 + 1)",
    "say(-'a')",
    "say(~1)",
    "wait_for(10**6 * 10**6)",
    f"say('{'A' * 5000}')",
    f"say('{'B' * 301}')",
    f"turnon({'9' * 40})",
    "wait_for(1e400)",
    "wait_for(float('inf'))",
    "say(" + "(" * 300 + "'x'" + ")" * 300 + ")",
    "say(" + "[" * 100 + "]" * 100 + ")",
    'say("x")\n' * 31,
    "x = 1",
    "x = 'Apple'",
    "x = y = ask('?')",
    "x, y = ask('?'), ask('?')",
    "x += ask('?')",
    "x: str = ask('?')",
    "[x] = [ask('?')]",
    "x.y = ask('?')",
    "x[0] = ask('?')",
    "*x, = ask('?')",
    # unknown actions, arity, keywords, starred
    "fly('moon')",
    "Pick('Apple')",
    "system('ls')",
    "pick()",
    "pick('A', 'B', 'C')",
    "handover('medicine')",
    "say()",
    "say('a', 'b')",
    "ask('a', 'b')",
    "pick(object='Apple')",
    "pick(**{'object': 'Apple'})",
    "pick(*['Apple'])",
    "x = ask('?')\npick(*x)",
    "pick(b'Apple')",
    "pick(None)",
    "pick(True)",
    "pick(...)",
    "pick(1j)",
    "pick(('A', 'B'))",
    "pick(['A'])",
    "pick({'A': 1})",
    "pick({'A'})",
    "pick(pick('A'))",
    "say(ask('?'))",
    # use before define, dunders, builtins shadowing
    "pick(item)",
    "item = ask(item)",
    "pick(x)\nx = ask('?')",
    "__import__ = ask('?')",
    "__builtins__ = ask('?')",
    "_ = ask('?')",
    "eval = ask('?')\neval('x')",
    "exec = ask('?')",
    "open = ask('?')",
    "pick = ask('?')",
    "pick(__name__)",
    "pick(__file__)",
    "say(__builtins__)",
    "__class__('x')",
    "_private('x')",
    "x = ask('?')\nx('call me')",
    # walrus
    "pick((x := 'Apple'))",
    "say(x := ask('?'))",
    "(x := __import__('os'))",
    # conditional expression, comparison
    "pick('A' if ask('?') else 'B')",
    "say(1 < 2)",
    # syntax errors and odd bytes
    "pick('Apple'",
    "pick('Apple'))",
    "pick 'Apple'",
    "x = = ask('?')",
    "\x00import os",
    "say('a')\x00",
    "  pick('Apple')",
    "pick('Apple')\n  pick('Pear')",
    "def",
    "lambda",
    "}{",
    "\\",
    "",
    "   \n\n",
    "# just a comment",
    '"""docstring only"""',
    "'Apple'",
    "42",
    "pick",
    "say",
    # several statements where only one is bad
    "pick('Apple')\nplace('Apple', 'Table')\nimport os",
    "x = ask('?')\nmove_to(x)\nexec(x)",
    "say('hi')\nclass A: pass",
    "say('hi')\nwhile True: pass",
]


def _snippets() -> list[str]:
    shaped = [shape.format(p=p) for p in PAYLOADS for shape in SHAPES]
    return list(dict.fromkeys(HANDWRITTEN + shaped))


SNIPPETS = _snippets()


def test_there_are_at_least_200_hostile_snippets() -> None:
    assert len(SNIPPETS) >= 200, len(SNIPPETS)


@pytest.fixture
def tripwires(monkeypatch):
    """exec/eval/non-AST compile raise and are recorded while the parser runs."""
    calls: list[str] = []
    real_compile = builtins.compile

    def no_exec(*args, **kwargs):
        calls.append("exec")
        raise AssertionError("exec called")

    def no_eval(*args, **kwargs):
        calls.append("eval")
        raise AssertionError("eval called")

    def only_ast_compile(source, filename, mode, flags=0, *args, **kwargs):
        if not flags & ast.PyCF_ONLY_AST:
            calls.append("compile")
            raise AssertionError("compile to bytecode called")
        return real_compile(source, filename, mode, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "exec", no_exec)
    monkeypatch.setattr(builtins, "eval", no_eval)
    monkeypatch.setattr(builtins, "compile", only_ast_compile)
    return calls


# Ids without the marker's path: it names this process, and pytest-xdist's workers must
# collect the same ids.
@pytest.mark.parametrize("code", SNIPPETS, ids=[s.replace(M, "MARKER") for s in SNIPPETS])
def test_hostile_snippet_is_rejected_with_a_reason(code: str, tripwires: list[str]) -> None:
    with pytest.raises(RecoveryCodeError) as info:
        parse_recovery(code)
    reason = str(info.value)
    assert len(reason) > 20, reason
    # A reason either names the line or the whole-program limit that was broken.
    assert "line " in reason or "limit" in reason or "empty" in reason or "parsed" in reason, reason
    assert tripwires == []


def test_no_snippet_left_a_trace(tripwires: list[str]) -> None:
    MARKER.unlink(missing_ok=True)
    for code in SNIPPETS:
        with pytest.raises(RecoveryCodeError):
            parse_recovery(code)
    assert not MARKER.exists()
    assert not hasattr(builtins, "BT_RAIDER_PWNED")
    assert PWNED is False
    assert tripwires == []


def test_the_trace_detectors_work() -> None:
    """The checks above could fail: running one payload for real does leave the trace."""
    MARKER.unlink(missing_ok=True)
    payload = ast.parse(f"open({M!r}, 'w').write('x')", mode="eval")
    assert isinstance(payload.body, ast.Call)
    with open(M, "w") as fh:  # what the payload would do, done by the test itself
        fh.write("x")
    assert MARKER.exists()
    MARKER.unlink()


def test_safecode_source_has_no_exec_eval_or_compile_call() -> None:
    tree = ast.parse(inspect.getsource(safecode))
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not called & {"exec", "eval", "compile", "__import__"}


def test_rejection_reasons_name_the_construct() -> None:
    expectations = {
        "import os": "import",
        "from os import system": "from ... import",
        "while True: pass": "while loop",
        "def f(): pass": "function definition",
        "class A: pass": "class definition",
        "f = lambda: 1": "lambda",
        "say([x for x in 'ab'])": "list comprehension",
        "say(x for x in 'ab')": "generator expression",
        "pick((x := 'Apple'))": "walrus",
        'say(f"{x}")': "f-string",
        "os.system('ls')": "attribute access",
        "pick(x[0])": "subscript",
        "pick(*x)": "starred argument",
        "say('a' * 10**9)": "arithmetic",
        "exec('1')": "unknown action 'exec'",
        "pick(item)": "using 'item' before it is assigned",
        "@d\ndef f(): pass": "function definition",
        "with open('x') as f: pass": "with block",
        "try:\n    pass\nexcept Exception:\n    pass": "try block",
        "pick('A' if ask('?') else 'B')": "conditional expression",
    }
    for code, construct in expectations.items():
        with pytest.raises(RecoveryCodeError, match="line 1") as info:
            parse_recovery(code)
        assert construct in str(info.value), (code, str(info.value))
