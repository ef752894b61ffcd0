"""Prompt templates: Jinja2 files under ``bt_raider/llm/templates/``, rendered strictly.

Every prompt bt_raider sends to a model lives in a ``<name>.j2`` file next to this module, so a
team can read and tune the prompts without touching code. Templates render with
:class:`jinja2.StrictUndefined`: a variable the caller forgot is an error, never an empty string
silently sent to a model.

Example:
    >>> from bt_raider.llm.prompts import render
    >>> text = render("raider_system", categories=..., tools=..., ...)  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import os
from importlib import resources
from typing import Any

import jinja2

from bt_raider.errors import BtRaiderError
from bt_raider.files import MAX_CONFIG_BYTES, read_text

#: Folder (inside the ``bt_raider.llm`` package) that holds the ``.j2`` files.
PROMPT_DIR = "templates"
SUFFIX = ".j2"


class PromptError(BtRaiderError, LookupError):
    """A prompt template is missing, malformed, or was rendered without a variable it needs."""


class MissingVariableError(PromptError, jinja2.UndefinedError):
    """A template was rendered without a variable it needs (also a jinja2 ``UndefinedError``)."""


def _folder() -> Any:
    return resources.files("bt_raider.llm") / PROMPT_DIR


def available() -> list[str]:
    """Names of the prompt templates shipped with bt_raider (without ``.j2``)."""
    folder = _folder()
    if not folder.is_dir():
        return []
    return sorted(p.name[: -len(SUFFIX)] for p in folder.iterdir() if p.name.endswith(SUFFIX))


def _load(name: str) -> tuple[str, str, Any]:
    """Jinja2 loader function: template name -> (source, filename, uptodate)."""
    entry = _folder() / name
    if not entry.is_file():
        # Raising TemplateNotFound lets jinja2 report includes the same way.
        raise jinja2.TemplateNotFound(name)
    # Installed as files, a template is read as every file is (bt_raider.files); inside a zip,
    # the archive's member. Package files never change while the process runs: up to date.
    if isinstance(entry, os.PathLike):
        text = read_text(entry, what="prompt template", max_bytes=MAX_CONFIG_BYTES)
    else:
        text = entry.read_text(encoding="utf-8")
    return text, str(entry), lambda: True


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The shared, cached Jinja2 environment (strict undefined, no HTML escaping)."""
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(_load),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # prompts are plain text for a model, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )


def render(name: str, **variables: Any) -> str:
    """Render the template ``bt_raider/llm/templates/<name>.j2`` with ``variables``.

    Args:
        name: template name without the ``.j2`` suffix, e.g. ``"raider_system"``.
        **variables: the template's variables; every one it uses must be given.

    Returns:
        The rendered text.

    Raises:
        PromptError: the template does not exist (the message lists those that do), has a
            syntax error, or uses a variable that was not given.
    """
    filename = name if name.endswith(SUFFIX) else name + SUFFIX
    try:
        template = environment().get_template(filename)
    except jinja2.TemplateNotFound as exc:
        valid = ", ".join(available()) or "none"
        raise PromptError(
            f"unknown prompt template {name!r} (missing {exc.name}): expected one of {valid}"
        ) from None
    except jinja2.TemplateSyntaxError as exc:
        raise PromptError(
            f"prompt template {name!r} line {exc.lineno}: syntax error: {exc.message}"
        ) from None
    try:
        return template.render(**variables)
    except (jinja2.UndefinedError, TypeError) as exc:
        # A filter such as tojson fed an undefined value fails with a TypeError instead.
        if isinstance(exc, TypeError) and "Undefined" not in str(exc):
            raise
        given = ", ".join(sorted(variables)) or "none"
        raise MissingVariableError(
            f"prompt template {name!r} needs a variable that was not given ({exc}); given: {given}"
        ) from None
