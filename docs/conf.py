"""Sphinx configuration of bt_raider's documentation (the pages are Markdown, read by MyST).

Build strictly, as ``tests/test_docs.py`` does::

    python3 -m sphinx -W --keep-going -n -b html docs build/docs

The API reference (``api.md`` and ``api/``) is generated from the docstrings by autodoc,
importing the installed package (``pip install -e ".[all,dev]"``): ``perception/``,
``memory/``, ``planners/`` and ``examples/`` are imported as ``bt_raider.perception`` and so on.

Nothing is fetched at build time (no intersphinx), so a name of another project (``py_trees``,
``numpy``, the standard library) cannot be resolved and is let through by
``nitpick_ignore_regex``. Every reference to a page, a heading or a name of bt_raider must
resolve, or the build fails.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import re
import sys
from functools import cache
from typing import Any

from sphinx import pycode
from sphinx.domains.python import PythonDomain
from sphinx.ext.napoleon import Config as NapoleonConfig
from sphinx.ext.napoleon.docstring import GoogleDocstring

project = "bt_raider"
author = "bt_raider authors"
copyright = "bt_raider authors, MIT licence"  # noqa: A001 - the name Sphinx reads

extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
html_theme = "alabaster"

# Strict: a reference to a missing page, heading or documented name is a warning, and -W
# makes every warning an error.
nitpicky = True
myst_heading_anchors = 3

# One documented place per public name: a module documents the classes and functions it
# defines, never what it imports (even when its __all__ re-exports it), and the constants that
# carry a ``#:`` comment. The first names are documented at ``bt_raider`` (api.md).
autodoc_default_options = {"members": True, "ignore-module-all": True}
autodoc_member_order = "bysource"
# In the description: Sphinx misreads a dataclass signature such as
# ``ticks: list[dict[str, Status]]=<factory>`` (it splits the annotation at its comma).
autodoc_typehints = "description"
# No ``# type:`` comments here (mypy strict wants annotations): not reading every function's
# source for them saves a tenth of the build.
autodoc_use_type_comments = False

#: Modules of other projects: their names cannot be resolved offline.
_EXTERNAL = (
    "pluggy|argparse|asyncio|collections|concurrent|contextlib|copy|dataclasses|datetime|enum|http|"
    "io|json|logging|multiprocessing|os|pathlib|pickle|queue|random|re|socket|socketserver|"
    "sqlite3|subprocess|threading|time|types|typing|typing_extensions|weakref|ast|"
    "numpy|np|py_trees|unified_planning|up|zenoh|torch|transformers|hnswlib|onnx|onnxruntime|"
    "openai|pydot|jinja2|pytest|_pytest|rapidfuzz|scipy|selenium"
)
nitpick_ignore_regex = [(r"py:.*", rf"(?:{_EXTERNAL})\..*"), (r"py:mod", rf"(?:{_EXTERNAL})")]
#: Names of other projects written bare in annotations and docstrings.
nitpick_ignore = [
    ("py:class", name)
    for name in (
        "Path Event Thread Future Executor Callable Iterable Iterator Sequence Mapping "
        "Generator Namespace Random Connection Popen TextIO ModuleType Pattern Match "
        "Behaviour BehaviourTree Status ndarray Problem State TypeIs Result "
        # unified-planning's, under TYPE_CHECKING in planners/
        "SequentialPlan ActionInstance FNode Object"
    ).split()
]


# --------------------------------------------------------------------------- Google docstrings
#: What napoleon may take for a type before a colon: ``list[str]``, ``Verdict | None``.
_TYPE = re.compile(r"[\w.~`]+(?:\[[\w.,\s|\[\]~`]*\])?(?:\s*\|\s*[\w.~`]+(?:\[[\w.,\s|\[\]]*\])?)*")


class _Google(GoogleDocstring):
    """napoleon's Google reader, except that a ``Returns:`` line in prose stays prose.

    napoleon reads ``Returns: text: more`` as ``type: description``; this project's docstrings
    say what comes back in words ("the display names of ...", ``{"free": true|false}``), so
    what stands before the colon is a type only when it looks like one.
    """

    def _consume_returns_section(self, preprocess_types: bool = False) -> Any:
        fields = super()._consume_returns_section(preprocess_types)
        out = []
        for name, kind, desc in fields:
            if kind and not _TYPE.fullmatch(kind.strip()):
                first = f"{kind}: {desc[0]}" if desc else f"{kind}:"
                desc, kind = [first, *desc[1:]], ""
            out.append((name, kind, desc))
        return out

    def _consume_inline_attribute(self) -> tuple[str, list[str]]:
        kind, desc = super()._consume_inline_attribute()
        if kind and not _TYPE.fullmatch(kind.strip()):
            # "Whether this person is the robot's user: the speaker ..." is a sentence.
            desc = [f"{kind}: {desc[0]}" if desc else kind, *desc[1:]]
            kind = ""
        return kind, desc


_NAPOLEON = NapoleonConfig(
    napoleon_google_docstring=True,
    napoleon_numpy_docstring=False,
    # "Attributes:" as attribute entries, so :attr: references find them.
    napoleon_use_ivar=False,
)


def _google_docstring(
    app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """Read Google-style sections, except in a constant's ``#:`` comment (plain prose)."""
    if what == "data":
        return
    lines[:] = _Google(lines, _NAPOLEON, app, what, name, obj, options).lines()


# --------------------------------------------------------------------------- one name, one place
def _first_ids() -> set[int]:
    """The objects ``bt_raider`` exports as its first names (documented there, in api.md)."""
    import bt_raider

    return {
        id(getattr(importlib.import_module(module), name))
        for name, module in bt_raider._EXPORTS.items()
    }


_FIRST = _first_ids()


def _skip_member(app: Any, what: str, name: str, obj: Any, skip: bool, options: Any) -> Any:
    """Which members autodoc documents.

    A module's public classes and functions are documented even without a docstring (an
    imported one is still dropped, autodoc checks ``__module__``), except the first names,
    which are documented once, at ``bt_raider``. An enum lists its members.
    """
    if what == "module":
        if id(obj) in _FIRST:
            return True
        if not name.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj)):
            return False
        return None
    if what == "class" and not name.startswith("_"):
        if isinstance(obj, enum.Enum) and obj.name == name:
            return False  # a member of the enum being documented
        if (getattr(obj, "__doc__", None) or "").startswith("Alias for field number"):
            return True  # a NamedTuple's field: its class's "Attributes:" documents it
    return None


# --------------------------------------------------------------------------- source analysis
def _definitions(analyzer: Any) -> Any:
    """Where a module's classes and functions are (Sphinx's ``tags``), found when first read.

    Sphinx's source parser reads each module twice: its ``#:`` comments and definition order
    from the syntax tree (what autodoc uses), and every definition's lines with a tokenizer,
    which only ``find_tags`` (``viewcode``, not used here) reads: a tenth of the build.
    """
    found = analyzer.__dict__.get("_definitions")
    if found is None:
        finder = pycode.parser.DefinitionFinder(
            pycode.parser.filter_whitespace(analyzer.code).splitlines(True)
        )
        finder.parse()
        found = analyzer.__dict__["_definitions"] = finder.definitions
    return found


class _Parser(pycode.Parser):
    """Sphinx's source parser without the definitions' lines (see ``_definitions``)."""

    def parse(self) -> None:
        self.parse_comments()


# Only where Sphinx's parser does just those two readings (a newer one is left as it is).
if pycode.Parser.parse.__code__.co_names == ("parse_comments", "parse_definition"):
    pycode.Parser = _Parser  # type: ignore[misc]
    pycode.ModuleAnalyzer.tags = property(  # type: ignore[assignment]
        _definitions, lambda analyzer, value: None
    )


# --------------------------------------------------------------------------- indexed lookup
class _PythonDomain(PythonDomain):
    """Sphinx's Python domain, its search for a name's ending indexed by the name's last part.

    A type in an annotation or a napoleon section is looked up "fuzzily": when it is not found
    at once, Sphinx tests every documented name for ending with it, 20,000 times over some
    6,000 names (a fifth of the build). Here the search runs on the names with the same last
    part only: the same matches, in the same order.
    """

    _by_last: dict[str, list[str]] | None = None

    def named(self, target: str) -> list[str]:
        """Documented names whose last part is ``target``'s, in the domain's order."""
        if self._by_last is None:
            self._by_last = {}
            for name in self.objects:
                self._by_last.setdefault(name.rpartition(".")[2], []).append(name)
        return self._by_last.get(target.rpartition(".")[2], [])

    def find_obj(
        self,
        env: Any,
        modname: str,
        classname: str,
        name: str,
        type: str | None,  # Sphinx's name for it
        searchmode: int = 0,
    ) -> Any:
        if searchmode != 1:
            return super().find_obj(env, modname, classname, name, type, searchmode)
        # Every name Sphinx may return ends with ``.name`` or is ``name``: the same last part.
        objects = self.data["objects"]
        self.data["objects"] = {n: objects[n] for n in self.named(name.removesuffix("()"))}
        try:
            return super().find_obj(env, modname, classname, name, type, searchmode)
        finally:
            self.data["objects"] = objects

    def note_object(self, *args: Any, **kwargs: Any) -> None:
        self._by_last = None
        super().note_object(*args, **kwargs)

    def clear_doc(self, docname: str) -> None:
        self._by_last = None
        super().clear_doc(docname)

    def merge_domaindata(self, docnames: Any, otherdata: dict[str, Any]) -> None:
        self._by_last = None
        super().merge_domaindata(docnames, otherdata)


# --------------------------------------------------------------------------- short references
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _first_paths() -> dict[str, str]:
    """A first name's defining path -> the path it is documented at (``bt_raider.<name>``)."""
    import bt_raider

    return {f"{module}.{name}": f"bt_raider.{name}" for name, module in bt_raider._EXPORTS.items()}


_FIRST_PATHS = _first_paths()


@cache
def _module(name: str) -> Any:
    """The module ``name``, or None where there is no such module.

    Remembered: a missing one is not searched for on every path again (thousands of paths
    share their first parts), and Python does not remember that a module is missing.
    """
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


@cache
def _lookup(path: str) -> tuple[bool, Any]:
    """``(True, object)`` for an importable dotted path (a module, or attributes of one)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = _module(".".join(parts[:cut]))
        except Exception:  # noqa: BLE001 - a module that fails to import names nothing here
            return False, None
        if obj is None:
            continue
        for attr in parts[cut:]:
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                return False, None
        return True, obj
    return False, None


@cache
def _canonical(path: str) -> str:
    """The documented path of ``path``: a first name's, or a re-exported object's own."""
    for defined, documented in _FIRST_PATHS.items():
        if path == defined or path.startswith(defined + "."):
            return documented + path[len(defined) :]
    owner, _, attr = path.rpartition(".")
    for candidate, rest in ((path, ""), (owner, "." + attr)):
        found, obj = _lookup(candidate)
        module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if found and isinstance(module, str) and isinstance(name, str) and "<" not in name:
            real = f"{module}.{name}{rest}"
            if real != path:
                return _canonical(real)
    return path


def _resolve_short(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """Resolve a reference to a name of bt_raider that Sphinx's own lookup did not find.

    In order: a path that is not a dotted name is prose napoleon read as a type ("whatever
    the source raises") and stays text; a first name's or a re-exported object's path goes to
    where it is documented; a short name (:class:`Verdict`, :meth:`SimWorld.inject`) resolves
    when exactly one documented object of the role's kinds ends with it, or with the same
    attribute of a base class; a name that exists but is not documented (a private helper, a
    ``TypeVar``, a constant without a ``#:`` comment) stays code, unlinked. Anything else --
    a name that does not exist -- stays unresolved, and the strict build fails on it.
    """
    if node.get("refdomain") != "py":
        return None
    target = str(node.get("reftarget", "")).strip("'\"").lstrip("~.")
    if not _DOTTED.fullmatch(target):
        return contnode
    domain = env.get_domain("py")
    objects = domain.objects
    kinds = set(domain.objtypes_for_role(node.get("reftype")) or ())
    module, cls = node.get("py:module") or "", node.get("py:class") or ""
    contexts = [f"{module}.{cls}"] if cls else []
    contexts += [module] if module else []
    if module == "bt_raider":
        # a first name's docstring, documented at bt_raider, read where it was written
        contexts += sorted({path.rpartition(".")[0] for path in _FIRST_PATHS})
    contexts.append("")
    for context in contexts:
        full = _canonical(f"{context}.{target}" if context else target)
        if full in objects and objects[full].objtype in kinds:
            return _xref(app, env, node, contnode, full)
    found = _ending_with(domain, kinds, target)
    if len(found) > 1 and module:
        found = {name for name in found if name.startswith(module + ".")}
    if len(found) == 1:
        return _xref(app, env, node, contnode, found.pop())
    if any(_exists(context, target) for context in contexts):
        return contnode  # it exists, undocumented: shown as code, not linked
    return None


@cache
def _exists(context: str, target: str) -> bool:
    """Whether ``target`` names something real from ``context`` (a module or a class path).

    Besides what :func:`_lookup` finds: an instance attribute a class's code sets
    (``self.log = ...``), and a short name that some module of bt_raider defines.
    """
    if _lookup(f"{context}.{target}" if context else target)[0]:
        return True
    found, owner = _lookup(context) if context else (False, None)
    if found and inspect.isclass(owner) and "." not in target:
        setting = re.compile(rf"self\.{re.escape(target)}\s*(?::[^=]+)?=[^=]")
        if any(_sets(klass, setting) for klass in owner.__mro__):
            return True
    if not context and "." not in target:
        return any(
            name.startswith("bt_raider") and target in vars(mod)
            for name, mod in list(sys.modules.items())
            if mod is not None
        )
    return False


def _ending_with(domain: Any, kinds: set[str], target: str) -> set[str]:
    """Documented names of ``kinds`` that end with ``target`` (one per documented node)."""
    objects = domain.objects
    hits = {
        (objects[name].docname, objects[name].node_id): name
        for name in domain.named(target)
        if objects[name].objtype in kinds and name.endswith("." + target)
    }
    if not hits and "." in target:
        owner, _, attr = target.rpartition(".")
        for name in domain.named(owner):
            entry = objects[name]
            if entry.objtype not in ("class", "exception") or not (
                name == owner or name.endswith("." + owner)
            ):
                continue
            found, cls = _lookup(name)
            for base in getattr(cls, "__mro__", ())[1:] if found else ():
                inherited = _canonical(f"{base.__module__}.{base.__qualname__}.{attr}")
                if inherited in objects:
                    hits[(objects[inherited].docname, objects[inherited].node_id)] = inherited
                    break
    return set(hits.values())


def _sets(klass: type, setting: re.Pattern[str]) -> bool:
    """Whether the ``class`` block of ``klass`` (decorators included) matches ``setting``."""
    module = sys.modules.get(klass.__module__)
    path = getattr(module, "__file__", None) or ""
    if not setting.search(_text(path)):
        return False  # nowhere in its module: the module need not be parsed
    lines = _text(path).splitlines(keepends=True)
    first, last = _class_blocks(path).get(klass.__qualname__, (0, 0))
    return bool(first) and setting.search("".join(lines[first - 1 : last])) is not None


@cache
def _text(path: str) -> str:
    """A module's source, ``""`` where there is none (a built-in module)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, ValueError):
        return ""


@cache
def _class_blocks(path: str) -> dict[str, tuple[int, int]]:
    """A module's classes by qualified name: their first and last lines, from one parse.

    ``inspect.getsource`` parses the whole module again for every class it is asked for.
    """
    try:
        tree = ast.parse(_text(path))
    except (SyntaxError, ValueError):
        return {}
    blocks: dict[str, tuple[int, int]] = {}

    def visit(body: list[Any], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                name = prefix + node.name
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                blocks.setdefault(name, (first, node.end_lineno or node.lineno))
                visit(node.body, name + ".")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(node.body, f"{prefix}{node.name}.<locals>.")
            else:  # a class under if, try, with, for, while or match
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    visit(getattr(node, field, []), prefix)

    visit(tree.body, "")
    return blocks


def _xref(app: Any, env: Any, node: Any, contnode: Any, full: str) -> Any:
    node["reftarget"] = full
    return env.get_domain("py").resolve_xref(
        env, node.get("refdoc"), app.builder, node.get("reftype"), full, node, contnode
    )


def setup(app: Any) -> None:
    app.add_domain(_PythonDomain, override=True)
    app.connect("autodoc-process-docstring", _google_docstring)
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("missing-reference", _resolve_short)
