"""Compound instructions: one sentence, several actions, each checked on the state before it.

"Open the fridge, take the egg and close it" is three queries. :func:`split_steps` cuts a
sentence where a new action starts (a verb of the parser's vocabulary after a comma, "and",
"then"); :func:`check_steps` checks each step on a copy of the scene to which the effects of
the earlier steps were applied symbolically (:func:`apply_effects`: open/close, turn on/off,
slice, pick, place, hand over, approach). "it"/"them" in a step mean the most recent object an
earlier step named that suits the action ("close it" after "take the egg" closes the fridge,
the last thing that can be closed). The caller's scene is never changed.

The verdict is the first step with an issue (its explanation prefixed with "Step 2 of 3
('take the egg'): "), else ``none``; :attr:`~bt_raider.checking.verdict.Verdict.steps` lists
every step's query and verdict. A step after an issue is still checked, on the state the
earlier steps would lead to once their issues are resolved.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bt_raider.checking.parse import ParsedQuery, leading_action, parse_query
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import QueryError, ToolError
from bt_raider.perception.scene import Scene, SceneObject

if TYPE_CHECKING:
    # Type-only: the contracts' dataclasses stay off ``bt-raider check``'s import path.
    from bt_raider.checking.action_contract import ActionContracts

#: Where a sentence may change action: a comma or semicolon (with "and", "then"), "and then",
#: "then", "and", or a full stop between sentences.
_BOUNDARY = re.compile(
    r"(\s*[,;]\s*(?:and\s+)?(?:then\s+)?|\s+and\s+then\s+|\s+then\s+|\s+and\s+|\.\s+(?=\w))",
    re.IGNORECASE,
)
_STRUCTURED = re.compile(r"\s*[A-Za-z][\w\-]*\s*\(.*\)\s*[.!?]?\s*", re.DOTALL)
_PRONOUN = re.compile(r"\b(it|them)\b", re.IGNORECASE)
_INSIDE = re.compile(r"\s+(?:inside|in|there)\s*[.!?]*$", re.IGNORECASE)
#: What an object must be for each action, so "it" picks the last object that fits.
_FITS = {
    "place": "pickupable",
    "open": "openable",
    "close": "openable",
    "turnon": "toggleable",
    "turnoff": "toggleable",
    "slice": "sliceable",
    "pick": "pickupable",
    "handover": "pickupable",
}
#: How far from its target an approach leaves the robot (m): within any arm's reach.
APPROACH_STANDOFF = 0.5


def split_steps(text: str) -> list[str]:
    """The actions of a natural-language sentence, in order (one item when it names one).

    Structured queries and PDDL instances are one action. A piece that does not start with an
    action ("the pear in the bowl", "pepper") belongs to the piece before it.
    """
    stripped = text.strip()
    if stripped.startswith("(") or _STRUCTURED.fullmatch(stripped):
        return [stripped]
    parts = _BOUNDARY.split(stripped)
    pieces, seps = parts[0::2], parts[1::2]
    out: list[str] = [pieces[0]]
    kinds = [leading_action(pieces[0])]
    for sep, piece in zip(seps, pieces[1:], strict=True):
        kind = leading_action(piece) if piece.strip() else None
        # A walk after a walk goes on with the same route: it ends at the last destination.
        if kind is not None and kinds[-1] is not None and not kind == kinds[-1] == "approach":
            out.append(piece)
            kinds.append(kind)
        else:
            # No new action here (or the first piece was only "please,"): keep it whole.
            out[-1] = out[-1] + sep + piece
            kinds[-1] = kinds[-1] or leading_action(out[-1])
    if len(out) == 1:
        return [stripped]
    return [re.sub(r"[\s.!?]+$", "", p.strip()) for p in out]


def check_steps(
    check_one: Callable[[Scene, str], Verdict],
    scene: Scene,
    steps: list[str],
    contracts: ActionContracts | None = None,
) -> Verdict:
    """Check each step on the state the earlier ones lead to; the first issue is the verdict.

    Args:
        check_one: checks one query in a scene (the reasoner's single-action check).
        scene: the scene before the first step (not changed).
        steps: the step queries, from :func:`split_steps`.
        contracts: the user's action contract (the checker's): a step of a kind of the
            user's own (``PressButton(CallButton)``) is checked as the checker checks it, and
            its declared effects are applied before the next step.
    """
    work = scene.copy()
    named: list[str] = []  # objectIds the steps named, oldest first
    records: list[dict[str, Any]] = []
    verdicts: list[Verdict] = []
    for i, text in enumerate(steps, start=1):
        declared = contracts.split(text) if contracts is not None else None
        if declared is not None and declared[0].new:
            from bt_raider.checking.new_actions import apply_declared

            verdict = check_one(work, text)
            records.append({"query": text, "verdict": verdict.to_json()})
            verdicts.append(verdict)
            ids = [oid for found in verdict.grounding.values() for oid in found]
            apply_declared(work, declared[0], ids[0] if len(ids) == 1 else None)
            work.reindex()
            continue
        try:
            resolved = resolve_pronouns(text, work, named)
            parsed = parse_query(resolved)
        except QueryError as exc:
            raise QueryError(f"step {i} of {len(steps)} ({text!r}): {exc}") from None
        verdict = check_one(work, resolved)
        record = {"query": text, "verdict": verdict.to_json()}
        if resolved != text:
            record["resolved"] = resolved
        records.append(record)
        verdicts.append(verdict)
        roles = _roles(parsed, verdict)
        named.extend(i for ids in roles.values() for i in ids if i not in named[-1:])
        apply_effects(work, verdict.action or parsed.action, roles)
    return _combine(steps, verdicts, records)


def _roles(parsed: ParsedQuery, verdict: Verdict) -> dict[str, list[str]]:
    """Role -> the objectIds (person ids, place names) a step's arguments grounded to."""
    if parsed.request and verdict.action == "pick":
        parsed = parsed.as_pick()
    return {a.role: list(verdict.grounding.get(a.text, [])) for a in parsed.args}


def resolve_pronouns(text: str, scene: Scene, named: list[str]) -> str:
    """Replace "it"/"them" with the display name of the latest named object that fits."""
    if not named or not (_PRONOUN.search(text) or _INSIDE.search(text)):
        return text
    try:
        parsed = parse_query(text)
    except QueryError:
        return text
    action = parsed.action
    if not _PRONOUN.search(text) and not (action == "place" and parsed.args[-1].text == "it"):
        return text
    objects = []
    for oid in reversed(named):
        try:
            objects.append(scene.by_id(oid))
        except ToolError:  # a person or a place
            continue
    if not objects:
        return text
    role = next((a.role for a in parsed.args if a.text.lower() in ("it", "them")), "object")
    need = "receptacle" if role == "destination" else _FITS.get(action or "")
    fit = next((o for o in objects if need is None or o.flag(need)), objects[0])
    if not _PRONOUN.search(text):
        # "put the knife inside": in what an earlier step named.
        return _INSIDE.sub(f" in {fit.name}", text, count=1)
    return _PRONOUN.sub(fit.name, text, count=1)


# --------------------------------------------------------------------------- effects
def apply_effects(scene: Scene, action: str, roles: dict[str, list[str]]) -> None:
    """Change ``scene`` as doing ``action`` on the grounded (unique) arguments would."""
    one = {r: ids[0] for r, ids in roles.items() if len(ids) == 1}
    obj = _object(scene, one.get("object") or one.get("target"))
    flags = {"open": ("isOpen", True), "close": ("isOpen", False)}
    flags |= {"turnon": ("isToggled", True), "turnoff": ("isToggled", False)}
    flags |= {"slice": ("isSliced", True)}
    if action in flags and obj is not None:
        key, value = flags[action]
        obj.raw[key] = value
    elif action == "pick" and obj is not None:
        _detach(scene, obj)
        obj.raw["isPickedUp"] = True
        inventory = [i for i in scene.data.get("inventoryObjects") or [] if i.get("objectId")]
        inventory.append({"objectId": obj.id, "objectType": obj.type})
        scene.data["inventoryObjects"] = inventory
    elif action in ("place", "handover") and obj is not None:
        _release(scene, obj)
        dest = _object(scene, one.get("destination"))
        if dest is not None:
            obj.raw["parentReceptacles"] = [dest.id]
            dest.raw["receptacleObjectIds"] = [*(dest.children), obj.id]
            obj.raw["position"] = dict(dest.raw["position"])
        else:
            where = _position(scene, one.get("destination") or one.get("person"))
            if where is not None:
                obj.raw["position"] = {"x": where[0], "y": where[1], "z": where[2]}
    elif action == "approach":
        _go_to(scene, one.get("target"))
    scene.reindex()


def _object(scene: Scene, oid: str | None) -> SceneObject | None:
    if not oid:
        return None
    try:
        return scene.by_id(oid)
    except ToolError:
        return None


def _detach(scene: Scene, obj: SceneObject) -> None:
    for pid in obj.parents:
        parent = _object(scene, pid)
        if parent is not None:
            parent.raw["receptacleObjectIds"] = [c for c in parent.children if c != obj.id]
    obj.raw["parentReceptacles"] = None


def _release(scene: Scene, obj: SceneObject) -> None:
    _detach(scene, obj)
    obj.raw["isPickedUp"] = False
    scene.data["inventoryObjects"] = [
        i for i in scene.data.get("inventoryObjects") or [] if i.get("objectId") != obj.id
    ]


def _position(scene: Scene, ref: str | None) -> tuple[float, float, float] | None:
    if not ref:
        return None
    try:
        return scene.xyz_of(ref)
    except ToolError:
        return None


def _go_to(scene: Scene, ref: str | None) -> None:
    """Stand :data:`APPROACH_STANDOFF` m from the target, on the robot's side, facing it."""
    where = _position(scene, ref)
    if where is None:
        return
    agent = scene.data["agent"]
    a = scene.agent_xyz
    dx, dz = float(a[0]) - where[0], float(a[2]) - where[2]
    dist = math.hypot(dx, dz)
    if dist <= APPROACH_STANDOFF:
        return
    x = where[0] + APPROACH_STANDOFF * dx / dist
    z = where[2] + APPROACH_STANDOFF * dz / dist
    agent["position"] = {**agent["position"], "x": x, "z": z}
    rotation = dict(agent.get("rotation") or {"x": 0.0, "y": 0.0, "z": 0.0})
    rotation["y"] = math.degrees(math.atan2(where[0] - x, where[2] - z))
    agent["rotation"] = rotation


# --------------------------------------------------------------------------- verdict
def _combine(steps: list[str], verdicts: list[Verdict], records: list[dict[str, Any]]) -> Verdict:
    n = len(steps)
    grounding: dict[str, list[str]] = {}
    for v in verdicts:
        for phrase, ids in v.grounding.items():
            grounding.setdefault(phrase, list(ids))
    trace = []
    for i, (text, v) in enumerate(zip(steps, verdicts, strict=True), start=1):
        trace.append({"role": "step", "content": f"step {i} of {n}: {text}"})
        trace.extend(v.trace)
    common: dict[str, Any] = {  # Verdict's keyword arguments, shared by both verdicts
        "grounding": grounding,
        "tool_calls": [c for v in verdicts for c in v.tool_calls],
        "questions": [q for v in verdicts for q in v.questions],
        "trace": trace,
        "steps": records,
    }
    bad = next((i for i, v in enumerate(verdicts) if v.category is not Category.NONE), None)
    if bad is None:
        said = "; then ".join(_lower_first(v.explanation.rstrip(".")) for v in verdicts)
        return Verdict(
            Category.NONE,
            f"The robot can do all {n} steps: {said}.",
            objects=list(dict.fromkeys(o for v in verdicts for o in v.objects)),
            action=verdicts[-1].action,
            **common,
        )
    v = verdicts[bad]
    return Verdict(
        v.category,
        f"Step {bad + 1} of {n} ('{steps[bad]}'): {v.explanation}",
        objects=list(v.objects),
        action=v.action,
        **common,
    )


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]
