"""Calibrating the VecSim threshold theta from labelled pairs through the ROC curve.

Ma et al. (App. B.2) collect positive and negative pairs and take the optimal classification
threshold of the ROC curve as theta. Here a pair's score is what theta is compared with:
its cosine similarity when the rules' symbolic part holds (see
:meth:`~bt_raider.memory.rules.RuleSet.calibration_score`), ``-inf`` when no rule can fire,
``+inf`` when a rule without theta fires anyway. Sweeping theta over the scores traces the ROC
curve of the whole rule decision; the chosen point maximises Youden's J = TPR - FPR
(``method="youden"``) or lies closest to the corner (FPR 0, TPR 1) (``method="closest"``).
Between equally good points the lower theta wins: it finds more conflicts.

The ROC point fixes the decisions on the calibration pairs, not theta itself: every theta
between the chosen score and the next finite score below it makes the same decisions. The
top of that interval is a calibration pair's own similarity, so a new pair a hair less similar
is decided the other way; theta is therefore placed in the middle of the interval (as a
decision-tree split sits midway between two sample values). With no finite score below, the
interval reaches the lowest cosine, -1. numpy only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from bt_raider.errors import MemoryStoreError

METHODS = ("youden", "closest")


@dataclass(frozen=True)
class Calibration:
    """The chosen theta and the ROC point it sits on.

    Attributes:
        theta: the threshold: VecSim holds when similarity >= theta.
        tpr: true-positive rate (conflicts found) at theta.
        fpr: false-positive rate (consistent pairs flagged) at theta.
        youden_j: TPR - FPR at theta.
        auc: area under the ROC curve over all thresholds.
        positives: conflict pairs used.
        negatives: consistent pairs used.
        method: ``youden`` or ``closest``.
    """

    theta: float
    tpr: float
    fpr: float
    youden_j: float
    auc: float
    positives: int
    negatives: int
    method: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def roc_curve(scores: Sequence[float], labels: Sequence[bool]) -> tuple[np.ndarray, ...]:
    """``(fpr, tpr, thresholds)`` with thresholds descending; predict positive iff score >= t.

    Infinite scores are allowed: ``+inf`` is always predicted positive, ``-inf`` never (the
    curve then ends below (1, 1)).
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=bool)
    if s.shape != y.shape or s.ndim != 1:
        raise MemoryStoreError(f"scores and labels differ in shape: {s.shape} vs {y.shape}")
    pos, neg = int(y.sum()), int((~y).sum())
    if pos == 0 or neg == 0:
        raise MemoryStoreError(
            f"calibration needs both conflict and consistent pairs: got {pos} conflicts and "
            f"{neg} consistent pairs"
        )
    finite = np.unique(s[np.isfinite(s)])[::-1]
    thresholds = np.concatenate([[math.inf], finite])
    sp, sn = np.sort(s[y]), np.sort(s[~y])
    tpr = (pos - np.searchsorted(sp, thresholds, side="left")) / pos
    fpr = (neg - np.searchsorted(sn, thresholds, side="left")) / neg
    return fpr, tpr, thresholds


def auc(fpr: np.ndarray, tpr: np.ndarray) -> float:
    """Trapezoid area under the ROC points, closed to (0, 0) and (1, 1)."""
    x = np.concatenate([[0.0], fpr, [1.0]])
    y = np.concatenate([[0.0], tpr, [1.0]])
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    return float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0))


def calibrate_theta(
    scores: Sequence[float], labels: Sequence[bool], method: str = "youden"
) -> Calibration:
    """The ROC-optimal theta for ``scores`` (see module docstring) and ``labels`` (conflict?).

    Raises:
        MemoryStoreError: unknown method, one class missing, or no finite score to place
            theta on (the rules' symbolic part never holds).
    """
    if method not in METHODS:
        raise MemoryStoreError(
            f"unknown calibration method {method!r}: expected one of {', '.join(METHODS)}"
        )
    fpr, tpr, thresholds = roc_curve(scores, labels)
    finite = np.isfinite(thresholds)
    if not finite.any():
        raise MemoryStoreError(
            "cannot calibrate theta: the rules' symbolic part holds for none of the pairs, so "
            "theta changes nothing; check the pairs file and the rules"
        )
    idx = np.flatnonzero(finite)
    if method == "youden":
        crit = tpr[idx] - fpr[idx]
    else:
        crit = -np.hypot(fpr[idx], 1.0 - tpr[idx])
    # Among equally good points take the lowest theta, the one that finds more conflicts: a
    # conflicting context misleads the model, a consistent one dropped is replaced by the
    # next one retrieved.
    best = idx[int(np.flatnonzero(crit >= crit.max() - 1e-12)[-1])]  # rates are float
    y = np.asarray(labels, dtype=bool)
    return Calibration(
        theta=_midpoint(float(thresholds[best]), np.asarray(scores, dtype=float)),
        tpr=float(tpr[best]),
        fpr=float(fpr[best]),
        youden_j=float(tpr[best] - fpr[best]),
        auc=auc(fpr, tpr),
        positives=int(y.sum()),
        negatives=int((~y).sum()),
        method=method,
    )


def _midpoint(theta: float, scores: np.ndarray) -> float:
    """The middle of the interval of thresholds that decide the pairs as ``theta`` does: from
    the next finite score below ``theta`` (or -1, the lowest cosine) up to ``theta``."""
    below = scores[np.isfinite(scores) & (scores < theta)]
    low = float(below.max()) if below.size else -1.0
    return (theta + low) / 2.0
