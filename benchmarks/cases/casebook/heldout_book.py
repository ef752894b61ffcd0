"""The held-out set being written: its variants and cases, each label checked by the oracle.

The batches add to one :class:`HeldoutBook` in a fixed order (``heldout_build.build``): a
case's id counts the cases of its batch and category so far, and ``heldout_variants.json``
keeps the order variants were first defined in.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .heldout_oracle import oracle, related
from .patch import Op, build_scene, define_variant, load_kitchen


class HeldoutBook:
    """The kitchen, the variants and cases written so far, and the current batch's id prefix."""

    def __init__(self, base: list[Op]) -> None:
        """``base``: the ops of variant ``base`` (the agent's stance in the real kitchen)."""
        self.kitchen = load_kitchen()
        self.variants: dict[str, list[Op]] = {"base": list(base)}
        self.cases: list[dict[str, Any]] = []
        #: Batch 1 ("ho-") was run once and reported; batch 2 ("ho2-", stress cases: priority
        #: combinations, numbered names and objectIds, above/below, particles and gerunds) was
        #: written after that run, still blind to the reasoner, and run once on its own.
        self.batch = "ho"

    def variant(self, name: str, *ops: Op) -> str:
        """Define variant ``name`` (again, identically, is fine) and return its name."""
        return define_variant(self.variants, name, ops)

    def case(
        self,
        cat: str,
        var: str,
        query: str,
        level: str,
        form: str,
        spec: dict[str, Any],
        explain: list[str],
        grounding: dict[str, list[str]] | None = None,
        **extra: Any,
    ) -> None:
        """Add one case once the oracle agrees with its hand label ``cat`` (see ``oracle``)."""
        d = build_scene(self.variants, var, self.kitchen)
        got = oracle(d, spec)
        if got != cat:
            raise ValueError(f"{query!r} on {var}: hand label {cat}, oracle {got}")
        # explanations may only be required to name objects with an unambiguous display name
        types = Counter(o["objectType"] for o in d["objects"])
        people = {h["name"] for h in d.get("humans") or []}
        for n in explain:
            if n in types and types[n] != 1:
                raise ValueError(f"{query!r}: explain name {n} is not a unique display name")
            if n not in types and n not in people and cat != "not_present":
                raise ValueError(f"{query!r}: explain name {n} is not in {var}")
        prefix = self.batch + "-"
        n_cat = sum(c["category"] == cat and c["id"].startswith(prefix) for c in self.cases) + 1
        c: dict[str, Any] = {
            "id": f"{self.batch}-{cat}-{n_cat:02d}",
            "variant": var,
            "query": query,
            "category": cat,
            "level": level,
            "form": form,
            "explain": explain,
        }
        if grounding is not None:
            c["grounding"] = grounding
        c.update(extra)
        self.cases.append(c)

    def pddl(
        self,
        cat: str,
        var: str,
        query: str,
        spec: dict[str, Any],
        explain: list[str],
        bindings: dict[str, str],
        pre: list[str],
        unsat: list[str],
    ) -> None:
        """Add a structured PDDL case: its preconditions, the unsatisfied ones and bindings."""
        self.case(
            cat,
            var,
            query,
            "AS",
            "structured",
            spec,
            explain,
            pddl=True,
            preconditions=pre,
            unsatisfied=unsat,
            bindings=bindings,
        )

    def rel(self, var: str, types: set[str], relation: str, anchor: str) -> list[str]:
        """The objects of ``types`` in ``relation`` to ``anchor`` in variant ``var``."""
        return related(build_scene(self.variants, var, self.kitchen), types, relation, anchor)
