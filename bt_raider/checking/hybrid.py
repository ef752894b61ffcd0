"""The model proposes, the symbolic reasoner disposes: a hybrid checker that fails closed.

:class:`HybridChecker` runs a model-driven checker (RAIDER's agent on any chat model) and the
embedded symbolic reasoner on the same query, and decides by one rule:

==========================  ==============================  ===================================
model                       reasoner                        verdict
==========================  ==============================  ===================================
any                         the same category               the reasoner's (its explanation)
any                         another category (not unknown)  the reasoner's (the model is noted)
an issue                    ``unknown``                     the model's issue (caution)
``none`` or ``unknown``     ``unknown``                     ``unknown`` (fail closed)
==========================  ==============================  ===================================

So the model can only add caution where the reasoner cannot decide, never clear an action the
reasoner has not cleared. Where both agree the reasoner's verdict is kept: its explanation and
grounding are read from the scene's facts, a model's are not (a small model agrees on the category
and still writes an explanation of nothing). Both run concurrently; the slower bounds the check.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from bt_raider.checking.contract import Checker, Query, as_query
from bt_raider.checking.verdict import Category, Verdict

if TYPE_CHECKING:
    from bt_raider.perception.scene import Scene


def decide(model: Verdict, reasoner: Verdict) -> Verdict:
    """The hybrid's rule (see the module's table) on two verdicts for the same query."""
    if model.category is reasoner.category:
        return reasoner
    if reasoner.category is not Category.UNKNOWN:
        note = f" (the model said {model.category.value}: {model.explanation})"
        return reasoner.replace(explanation=reasoner.explanation + note)
    if model.category not in (Category.NONE, Category.UNKNOWN):
        return model
    return Verdict.unknown(
        f"the symbolic reasoner could not decide ({reasoner.explanation}) and the model's "
        f"{model.category.value} alone does not clear the action"
    )


class HybridChecker:
    """A model checker whose verdicts the symbolic reasoner confirms or overrules.

    Args:
        model: the model-driven checker (e.g. :class:`~bt_raider.checking.agent.RaiderAgent`).
        reasoner: the symbolic checker; None builds
            :class:`~bt_raider.checking.symbolic.SymbolicReasoner`.
    """

    def __init__(self, model: Checker, reasoner: Checker | None = None) -> None:
        if reasoner is None:
            from bt_raider.checking.symbolic import SymbolicReasoner

            reasoner = SymbolicReasoner()
        self.model = model
        self.reasoner = reasoner
        self.last: tuple[Verdict, Verdict] | None = None

    def __repr__(self) -> str:
        return f"HybridChecker({self.model!r})"

    def check(
        self, scene: Scene, query: str | Query, *, cancel: threading.Event | None = None
    ) -> Verdict:
        """Both verdicts on ``query``, combined by :func:`decide`; both kept in :attr:`last`."""
        q = as_query(query)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hybrid-reasoner") as pool:
            symbolic = pool.submit(self.reasoner.check, scene, q, cancel=cancel)
            proposed = self.model.check(scene, q, cancel=cancel)
            confirmed = symbolic.result()
        self.last = (proposed, confirmed)
        return decide(proposed, confirmed)
