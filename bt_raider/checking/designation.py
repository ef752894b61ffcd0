"""What a phrase designates in a scene, outside a check: the one reader with the check's grounder.

A recovery reads a person's reply ("not the one in the sink", "the golden one") with the same
reader and the same grounding as the check reads an instruction
(:mod:`bt_raider.perception.reference` for the words, :class:`~bt_raider.checking.grounding.Grounder`
for each core description):

>>> from bt_raider.checking.designation import designate           # doctest: +SKIP
>>> designate(scene, "the box that is not red").ids                 # doctest: +SKIP
('Box|2',)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bt_raider.checking.grounding import Grounder
from bt_raider.checking.phrases import ArgPhrase
from bt_raider.checking.tool_runner import ToolRunner
from bt_raider.perception.attributes import Viewer
from bt_raider.perception.lexicon import CategoryLexicon
from bt_raider.perception.reference import Designation, speaker_view
from bt_raider.perception.scene import Scene

#: Speaker argument meaning "the person the scene says speaks" (:func:`speaker_view`).
FROM_SCENE = "scene"


def designate(
    scene: Scene,
    text: str,
    *,
    among: Sequence[str] | None = None,
    order: Sequence[str] | None = None,
    speaker: Viewer | str | None = FROM_SCENE,
    lexicon: CategoryLexicon | None = None,
    tools: Any = None,
) -> Designation:
    """The designation of ``text`` in ``scene``.

    Args:
        scene: the scene.
        text: a phrase or a reply.
        among: objectIds in scope (a question's candidates); default every object.
        order: the ids in the order a question listed them, for "the first one".
        speaker: who speaks: a :class:`~bt_raider.perception.attributes.Viewer`, a person's
            id or name (the person the robot asked), :data:`FROM_SCENE` (the person marked
            ``user``, else the only one), or None (unknown: "my left" is unclear).
        lexicon: nouns, categories and states (default: the bundled one); a user's lexicon
            plugs in here.
        tools: the perception tools (default: :func:`~bt_raider.perception.tools.default_tools`).
    """
    from bt_raider.perception.tools import default_tools

    runner = ToolRunner(scene, tools if tools is not None else default_tools())
    if isinstance(speaker, str):
        view = speaker_view(scene) if speaker == FROM_SCENE else speaker_view(scene, speaker)
    else:
        view = speaker
    grounder = Grounder(
        runner, lexicon if lexicon is not None else CategoryLexicon.default(), speaker=view
    )
    domain = None
    if among is not None:
        by_id = {o.id: o for o in scene.objects}
        domain = [by_id[i] for i in dict.fromkeys(among) if i in by_id]
    found = grounder.ground_object(ArgPhrase(text, text), among=domain, order=order)
    assert found.designation is not None  # every description is read by the reader
    return found.designation


def left_over(text: str, *, lexicon: CategoryLexicon | None = None) -> tuple[str, ...]:
    """The words of a phrase the reader cannot account for, whatever the scene: what would make
    the check ask ("unless it is cold", "my", "top"). Read against an empty scene, so a noun
    counts as read when the lexicon knows it (``benchmarks/detect.py --alfred`` measures the
    share of people's step descriptions with such words)."""
    global _EMPTY
    if _EMPTY is None:
        from bt_raider.perception.tools import default_tools

        _EMPTY = Scene({"objects": []}), default_tools()
    scene, tools = _EMPTY
    return designate(scene, text, speaker=None, lexicon=lexicon, tools=tools).unread


#: An empty scene and the default tools, made once for :func:`left_over`.
_EMPTY: tuple[Scene, Any] | None = None
