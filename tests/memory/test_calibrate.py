"""Calibrating theta from labelled pairs through the ROC curve (numpy only)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bt_raider.errors import MemoryStoreError
from bt_raider.memory import DEFAULT_THETA, VectorMemory
from bt_raider.memory.calibrate import auc, calibrate_theta, roc_curve


def test_roc_curve_and_auc_on_separable_scores():
    fpr, tpr, thr = roc_curve([0.9, 0.8, 0.3, 0.2], [True, True, False, False])
    assert thr[0] == math.inf and list(thr[1:]) == [0.9, 0.8, 0.3, 0.2]
    assert list(tpr) == [0, 0.5, 1, 1, 1] and list(fpr) == [0, 0, 0, 0.5, 1]
    assert auc(fpr, tpr) == pytest.approx(1.0)


def test_auc_of_a_random_scorer_is_about_half():
    rng = np.random.default_rng(0)
    scores = rng.random(2000)
    labels = rng.random(2000) < 0.5
    fpr, tpr, _ = roc_curve(scores, labels)
    assert auc(fpr, tpr) == pytest.approx(0.5, abs=0.05)


def test_youden_picks_the_separating_threshold():
    scores = [0.95, 0.9, 0.85, 0.7, 0.6, 0.5, -math.inf, -math.inf]
    labels = [True, True, True, False, False, False, False, True]
    cal = calibrate_theta(scores, labels)
    # The ROC point is the score 0.85; theta sits midway to the next score below (0.7).
    assert cal.theta == pytest.approx(0.775)
    assert cal.tpr == pytest.approx(0.75) and cal.fpr == 0.0
    assert cal.positives == 4 and cal.negatives == 4
    closest = calibrate_theta(scores, labels, method="closest")
    assert closest.theta == pytest.approx(0.775)


def test_theta_sits_mid_interval_so_the_calibration_decisions_hold_with_margin():
    scores = [0.9, 0.8, 0.62, 0.6, 0.4, -math.inf]
    labels = [True, True, True, False, False, False]
    cal = calibrate_theta(scores, labels)
    assert cal.theta == pytest.approx(0.61)
    # Every calibration pair is decided as at the ROC point...
    assert all((s >= cal.theta) == y for s, y in zip(scores, labels, strict=True))
    # ...and a conflict a little less similar than the least similar one is still found.
    assert 0.615 >= cal.theta
    # No finite score below the ROC point: the interval reaches the lowest cosine, -1.
    only = calibrate_theta([0.5, 0.7, -math.inf, -math.inf], [True, True, False, True])
    assert only.theta == pytest.approx((0.5 - 1.0) / 2)
    assert only.tpr == pytest.approx(2 / 3) and only.fpr == 0.0


def test_calibration_errors_name_the_problem():
    with pytest.raises(MemoryStoreError, match="both conflict and consistent"):
        calibrate_theta([0.1, 0.2], [True, True])
    with pytest.raises(MemoryStoreError, match="symbolic part holds for none"):
        calibrate_theta([-math.inf, -math.inf], [True, False])
    with pytest.raises(MemoryStoreError, match="unknown calibration method 'median'"):
        calibrate_theta([0.1, 0.2], [True, False], method="median")


def test_memory_calibrates_from_pairs_and_stores_theta(tmp_path, hash_embedder):
    path = tmp_path / "m.db"
    pairs = [
        ("turn on the hall light", "turn off the hall light", True),
        ("open the fridge door", "close the fridge door", True),
        ("pick up the red apple", "put down the red apple", True),
        ("open the fridge", "open the fridge please", False),
        ("turn on the lamp", "turn on the lamp now", False),
        ("pick up the mug", "slice the bread", False),
    ]
    with VectorMemory(path, embedder=hash_embedder) as memory:
        assert memory.theta == DEFAULT_THETA and memory.theta_source == "default"
        cal = memory.calibrate([{"a": a, "b": b, "conflict": c} for a, b, c in pairs])
        assert cal.positives == 3 and cal.negatives == 3
        assert cal.tpr == 1.0 and cal.fpr == 0.0
        sims = hash_embedder.embed([p[0] for p in pairs[:3]]) * hash_embedder.embed(
            [p[1] for p in pairs[:3]]
        )
        # Midway between the least similar conflict and the next score below (or -1).
        lowest = float(sims.sum(axis=1).min())
        assert -1.0 <= cal.theta < lowest
        assert memory.theta == pytest.approx(cal.theta)
    with VectorMemory(path, embedder=hash_embedder) as again:  # stored in the database
        assert again.theta == pytest.approx(cal.theta)
        assert again.theta_source == "roc-youden"
        assert again.stats()["calibration"]["positives"] == 3
        assert any(e["kind"] == "calibrate" for e in again.history())


def test_bad_pairs(tmp_path, hash_embedder):
    with VectorMemory(tmp_path / "m.db", embedder=hash_embedder) as memory:
        with pytest.raises(MemoryStoreError, match="lacks 'conflict'"):
            memory.calibrate([{"a": "x", "b": "y"}])
        with pytest.raises(MemoryStoreError, match="conflict is 'yes'"):
            memory.calibrate([("x", "y", "yes")])
        with pytest.raises(MemoryStoreError, match="no calibration pairs"):
            memory.calibrate([])
        with pytest.raises(MemoryStoreError, match="not a cosine"):
            memory.set_theta(1.5)


def test_equally_good_thresholds_resolve_to_the_one_finding_more_conflicts():
    # theta at 0.8 and theta at 0.3 both misclassify one pair (J = 3/4 - 0 = 1 - 1/4, exact
    # in floats); the lower one finds every conflict.
    scores = [0.9, 0.85, 0.8, 0.3, 0.7, -math.inf, -math.inf, -math.inf]
    labels = [True, True, True, True, False, False, False, False]
    cal = calibrate_theta(scores, labels)
    assert cal.tpr == 1.0 and cal.fpr == 0.25
    assert cal.theta == pytest.approx((0.3 - 1.0) / 2)
    # J equal only up to float rounding counts as equal: 395/400 - 7/400 != 396/400 - 8/400.
    scores = [0.9] * 395 + [0.3] + [-math.inf] * 4 + [0.9] * 7 + [0.5] + [-math.inf] * 392
    labels = [True] * 400 + [False] * 400
    cal = calibrate_theta(scores, labels)
    assert (cal.tpr, cal.fpr) == (396 / 400, 8 / 400)
    assert cal.theta < 0.3
