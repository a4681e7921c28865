"""The agreement statistics against scipy and hand-computed values, and their bootstrap CIs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ragmeter.align import (
    AgreementUndefined,
    accuracy,
    agreement_ci,
    cohen_kappa,
    measure,
    measure_change,
    pearson,
    quadratic_weighted_kappa,
    ranks,
    spearman,
)


def kappa_from_confusion(confusion: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Cohen's (weighted) kappa the textbook way: 1 - sum(w O) / sum(w E)."""
    observed = confusion / confusion.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    if weights is None:
        weights = 1.0 - np.eye(len(confusion))
    return 1.0 - float((weights * observed).sum() / (weights * expected).sum())


def confusion_of(human, metric, labels) -> np.ndarray:
    position = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for h, m in zip(human, metric):
        table[position[h], position[m]] += 1
    return table


# -- accuracy and Cohen's kappa --------------------------------------------------------------


def test_accuracy_counts_matching_labels():
    assert accuracy(["a", "b", "c", "a"], ["a", "b", "a", "b"]) == 0.5
    assert accuracy([True, False], [True, False]) == 1.0


def test_kappa_of_the_textbook_example():
    # 50 items: both yes 20, human yes / metric no 5, human no / metric yes 10, both no 15.
    # p_o = 35/50 = 0.7; p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = 0.2 / 0.5 = 0.4.
    human = ["yes"] * 25 + ["no"] * 25
    metric = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(human, metric) == pytest.approx(0.4)
    assert accuracy(human, metric) == pytest.approx(0.7)


def test_kappa_with_three_labels_matches_the_confusion_matrix_formula():
    rng = np.random.default_rng(3)
    labels = ["pass", "partial", "fail"]
    human = list(rng.choice(labels, 60))
    metric = [h if rng.random() < 0.6 else rng.choice(labels) for h in human]
    expected = kappa_from_confusion(confusion_of(human, metric, labels))
    assert cohen_kappa(human, metric) == pytest.approx(expected)
    # The names of the labels do not matter, only which items share one.
    renamed = {"pass": 2, "partial": 7, "fail": -1}
    assert cohen_kappa([renamed[h] for h in human], [renamed[m] for m in metric]) == (
        pytest.approx(expected)
    )


def test_kappa_is_one_for_perfect_agreement_and_negative_for_systematic_disagreement():
    assert cohen_kappa(["a", "b", "a", "b"], ["a", "b", "a", "b"]) == 1.0
    assert cohen_kappa(["a", "b", "a", "b"], ["b", "a", "b", "a"]) == -1.0


def test_kappa_is_undefined_when_one_label_is_everywhere():
    with pytest.raises(AgreementUndefined, match="same single label"):
        cohen_kappa(["pass"] * 5, ["pass"] * 5)


def test_kappa_is_zero_when_each_side_always_gives_a_different_single_label():
    assert cohen_kappa(["pass"] * 4, ["fail"] * 4) == 0.0


def test_label_statistics_check_their_input():
    with pytest.raises(ValueError, match="equally long"):
        accuracy(["a"], ["a", "b"])
    with pytest.raises(AgreementUndefined, match="no item"):
        cohen_kappa([], [])
    with pytest.raises(ValueError, match="None"):
        accuracy(["a", None], ["a", "b"])


# -- quadratic weighted kappa ----------------------------------------------------------------


def test_qwk_by_hand():
    # Confusion over levels 1..4 (rows human, columns metric): the diagonal 1, 2, 4 and one
    # item human 3 / metric 4. sum(w O) = 1/9 / 4, sum(w E) = 3 / 9 with w = (i-j)^2 / 9.
    assert quadratic_weighted_kappa([1, 2, 3, 4], [1, 2, 4, 4]) == pytest.approx(1 - 0.25 / 3)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), min_size=2, max_size=40).filter(
        lambda pairs: len({p for pair in pairs for p in pair}) > 1
    )
)
def test_qwk_matches_the_confusion_matrix_over_levels_one_to_five(pairs):
    human, metric = [p[0] for p in pairs], [p[1] for p in pairs]
    levels = [1, 2, 3, 4, 5]
    weights = np.subtract.outer(np.arange(5), np.arange(5)) ** 2 / 16
    expected = kappa_from_confusion(confusion_of(human, metric, levels), weights)
    assert quadratic_weighted_kappa(human, metric) == pytest.approx(expected, abs=1e-12)


def test_qwk_punishes_far_misses_more_than_near_ones():
    human = [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]
    near = [1, 2, 3, 4, 5, 2, 3, 4, 5, 4]
    far = [1, 2, 3, 4, 5, 5, 5, 1, 1, 1]
    assert accuracy(human, near) == accuracy(human, far)
    assert quadratic_weighted_kappa(human, near) > 0.8 > 0 > quadratic_weighted_kappa(human, far)


def test_qwk_of_ordered_text_labels_uses_their_order():
    labels = ["low", "mid", "high"]
    human = ["low", "mid", "high", "high"]
    metric = ["low", "high", "high", "mid"]
    numbers = {"low": 1, "mid": 2, "high": 3}
    assert quadratic_weighted_kappa(human, metric, labels=labels) == pytest.approx(
        quadratic_weighted_kappa([numbers[h] for h in human], [numbers[m] for m in metric])
    )
    with pytest.raises(ValueError, match="need their order"):
        quadratic_weighted_kappa(human, metric)
    with pytest.raises(ValueError, match="huge are not in labels"):
        quadratic_weighted_kappa(human, ["huge", "mid", "low", "low"], labels=labels)


def test_qwk_is_undefined_when_both_sides_give_one_level():
    with pytest.raises(AgreementUndefined, match="same single level"):
        quadratic_weighted_kappa([3, 3, 3], [3, 3, 3])
    # One level on each side, but different levels: defined, and no better than chance.
    assert quadratic_weighted_kappa([3, 3, 3], [4, 4, 4]) == 0.0


# -- correlations ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_correlations_match_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, 40).astype(float)  # rubric-like: many ties
    metric = np.round(human / 5 + rng.normal(0, 0.2, 40), 1)
    assert spearman(human, metric) == pytest.approx(stats.spearmanr(human, metric).statistic)
    assert pearson(human, metric) == pytest.approx(stats.pearsonr(human, metric).statistic)
    np.testing.assert_allclose(ranks(metric), stats.rankdata(metric))


def test_spearman_ignores_the_scale_pearson_does_not():
    human = [1, 2, 3, 4, 5]
    metric = [0.01, 0.02, 0.03, 0.04, 0.99]
    assert spearman(human, metric) == pytest.approx(1.0)
    assert pearson(human, metric) < 0.8


@pytest.mark.parametrize("function", [spearman, pearson])
def test_correlations_are_undefined_on_a_constant_side_or_a_single_item(function):
    with pytest.raises(AgreementUndefined, match="metric's scores are the same"):
        function([1, 2, 3], [0.5, 0.5, 0.5])
    with pytest.raises(AgreementUndefined, match="human labels are the same"):
        function([2, 2, 2], [0.1, 0.5, 0.7])
    with pytest.raises(AgreementUndefined, match="fewer than 2"):
        function([1], [0.3])
    with pytest.raises(ValueError, match="finite"):
        function([1, 2, 3], [0.1, float("nan"), 0.3])


# -- bootstrap intervals ---------------------------------------------------------------------


def sample_pairs(n: int = 60, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 2, n)
    metric = np.where(rng.random(n) < 0.8, human, 1 - human)
    return human, metric


@pytest.mark.parametrize("function", [accuracy, cohen_kappa])
def test_bootstrap_ci_contains_the_estimate_and_is_seeded(function):
    human, metric = sample_pairs()
    value = function(human, metric)
    ci = agreement_ci(function, human, metric, seed=3)
    assert ci.low < value < ci.high
    assert (ci.level, ci.method) == (0.95, "percentile")
    assert agreement_ci(function, human, metric, seed=3) == ci
    wider = agreement_ci(function, human, metric, seed=3, level=0.99)
    assert wider.low <= ci.low and ci.high <= wider.high


def test_bootstrap_ci_is_the_percentile_of_resampled_items():
    human, metric = sample_pairs(n=30)
    rng = np.random.default_rng(9)
    draws = rng.integers(0, 30, (500, 30))
    resampled = [accuracy(human[i], metric[i]) for i in draws]
    low, high = np.percentile(resampled, [5, 95])
    ci = agreement_ci(accuracy, human, metric, level=0.9, n_resamples=500, seed=9)
    assert (ci.low, ci.high) == (pytest.approx(low), pytest.approx(high))


def test_bootstrap_ci_needs_two_items_and_a_defined_statistic():
    with pytest.raises(AgreementUndefined, match="at least 2 items"):
        agreement_ci(accuracy, [1], [1])
    with pytest.raises(AgreementUndefined, match="undefined on 2000 of 2000 resamples"):
        agreement_ci(cohen_kappa, ["a"] * 6, ["a"] * 6)
    with pytest.raises(ValueError, match="level"):
        agreement_ci(accuracy, [1, 0], [1, 0], level=95)


def test_measure_reports_an_undefined_statistic_as_none_with_its_reason():
    human = np.zeros(8, dtype=np.intp)
    agreement = measure("cohen_kappa", human, human.copy())
    assert agreement.value is None and agreement.ci is None and agreement.n == 8
    assert "same single label" in agreement.note
    assert "undefined" in agreement.describe()
    json.dumps(agreement.to_dict(), allow_nan=False)  # never NaN


def test_measure_leaves_undefined_resamples_out_and_says_so():
    # One "b" among 9 "a": a resample without the "b" has a single label on both sides.
    human = np.array([0] * 9 + [1])
    agreement = measure("cohen_kappa", human, human.copy(), n_resamples=400, seed=1)
    assert agreement.value == 1.0
    assert agreement.ci is not None and agreement.ci.low == agreement.ci.high == 1.0
    assert "resamples had no value and were left out" in agreement.note


def test_measure_change_is_paired_on_the_same_items():
    human, before = sample_pairs(n=80, seed=2)
    after = human.copy()
    after[:4] = 1 - after[:4]  # the improved version misses only 4 items
    change = measure_change("accuracy", human, before, after, seed=0)
    assert change.statistic == "Δaccuracy"
    assert change.value == pytest.approx(accuracy(human, after) - accuracy(human, before))
    assert change.ci is not None and change.ci.low > 0
    assert change.describe().startswith("Δaccuracy +")
