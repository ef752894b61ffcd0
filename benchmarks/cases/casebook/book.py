"""The case set being written: its variants and cases, and what several categories share.

Each category module gets one :class:`CaseBook` and adds its variants and cases to it, in the
order ``build_cases.build`` calls them: a case's id counts the cases of its category so far,
and ``variants.json`` keeps the order variants were first defined in, so that order is part of
the output.
"""

from __future__ import annotations

from typing import Any

from .kitchen import Kitchen
from .patch import Op, define_variant


class CaseBook:
    """The kitchen, the variants and cases written so far, and the shared objects and poses."""

    def __init__(self, kitchen: Kitchen | None = None) -> None:
        self.kitchen = kitchen if kitchen is not None else Kitchen()
        self.variants: dict[str, list[Op]] = {"base": []}
        self.cases: list[dict[str, Any]] = []
        I = self.kitchen.id  # noqa: E741 - short on purpose: I("Bowl") is an objectId
        self.bowl, self.tomato, self.apple, self.mug = I("Bowl"), I("Tomato"), I("Apple"), I("Mug")
        #: The kitchen's own agent pose, facing the island.
        self.home: Op = ["agent", {"x": 0.0, "z": -1.25, "yaw": 180.0}]
        #: A named place people's errands go to.
        self.counter_loc: Op = ["location", "medicine_counter", {"x": -1.05, "z": -1.55}]
        #: A chair the obstructed cases put in the way (not in the real kitchen).
        self.chair_id = "Chair|-00.55|+00.00|-01.40"
        self.chair: dict[str, Any] = {
            "objectId": self.chair_id,
            "objectType": "Chair",
            "position": {"x": -0.55, "y": 0.0, "z": -1.40},
            "pickupable": False,
            "moveable": True,
            "receptacle": True,
            "parentReceptacles": [I("Floor")],
            "receptacleObjectIds": [],
            "visible": True,
        }

    def id(self, name: str) -> str:
        """The objectId of a display name (``Bowl``, ``Cabinet_3``)."""
        return self.kitchen.id(name)

    def medicine(self, oid: str, x: float, z: float) -> dict[str, Any]:
        """A medicine box on CounterTop_3 (the kitchen has none)."""
        return {
            "objectId": oid,
            "objectType": "Medicine",
            "position": {"x": x, "y": 0.97, "z": z},
            "pickupable": True,
            "parentReceptacles": [self.id("CounterTop_3")],
            "visible": True,
        }

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
        explain: list[str],
        grounding: dict[str, list[str]] | None = None,
        **extra: Any,
    ) -> None:
        """Add one case, numbered after the cases of its category so far."""
        if var not in self.variants:  # a name typed by hand, or a category run out of order
            raise ValueError(f"case {query!r}: unknown variant {var!r}")
        n = sum(c["category"] == cat for c in self.cases) + 1
        c: dict[str, Any] = {
            "id": f"{cat}-{n:02d}",
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
