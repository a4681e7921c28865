"""The judge's error in a mean's interval (issue 39 part 6): estimate_with_judge_error."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from ragmeter.stats import (
    Interval,
    JudgeErrorEstimate,
    estimate_with_judge_error,
    with_judge_error,
)
from tests.stats._build import run

SENTENCE = re.compile(
    r"^\d\.\d\d, 95% CI \d\.\d\d-\d\.\d\d \(sampling\), \d\.\d\d-\d\.\d\d \(with judge error\)$"
)


def _judged(human: np.ndarray, sensitivity: float, specificity: float, rng) -> np.ndarray:
    """A judge's verdicts on items people labelled ``human`` (1/0), with those error rates."""
    yes = rng.random(len(human))
    return np.where(human == 1, yes < sensitivity, yes >= specificity).astype(float)


def _coverage(method: str, run_share: float, lab_share: float, sims: int = 300) -> tuple:
    """Over ``sims`` seeded simulations of a biased judge (sensitivity 0.9, specificity 0.5:
    it says yes too often): how often the judge-error CI, and the sampling-only CI, cover
    the human mean of the population the run's samples come from (what both intervals are
    about: the sampling-only one is the judge's mean's)."""
    rng = np.random.default_rng(7)
    hits = sampling_hits = 0
    for i in range(sims):
        human_run = (rng.random(150) < run_share).astype(float)
        human_lab = (rng.random(80) < lab_share).astype(float)
        judge_run = _judged(human_run, 0.9, 0.5, rng)
        judge_lab = _judged(human_lab, 0.9, 0.5, rng)
        est = estimate_with_judge_error(
            judge_run, list(zip(judge_lab, human_lab)), method=method, n_resamples=400, seed=i
        )
        truth = run_share  # the human mean of the items the run's samples are drawn from
        # a refusal (the labels show a judge no better than chance) counts as a miss
        hits += est.judge_error_ci is not None and truth in est.judge_error_ci
        sampling_hits += est.sampling_ci is not None and truth in est.sampling_ci
    return hits / sims, sampling_hits / sims


@pytest.mark.parametrize("method", ["ppi", "rogan-gladen"])
def test_the_judge_error_interval_covers_the_human_mean_of_a_biased_judge(method):
    # The judge says yes to 0.6 * 0.9 + 0.4 * 0.5 = 0.74 of items people say yes to 0.60 of.
    covered, sampling = _coverage(method, run_share=0.6, lab_share=0.6)
    assert covered >= 0.9
    assert sampling <= 0.2  # the judge's bias is outside the sampling-only interval


def test_rogan_gladen_covers_when_the_run_has_another_share_of_yes_than_the_labels():
    # Labels from a run with half yes, scores of a run with 20% yes: the judge's bias differs
    # (0.5 * 0.5 - 0.1 * 0.5 = 0.20 on the labels, 0.5 * 0.8 - 0.1 * 0.2 = 0.38 on the run),
    # its error rates do not. PPI subtracts the labelled set's bias; Rogan-Gladen needs only
    # the error rates.
    rg, sampling = _coverage("rogan-gladen", run_share=0.2, lab_share=0.5, sims=150)
    ppi, _ = _coverage("ppi", run_share=0.2, lab_share=0.5, sims=150)
    assert rg >= 0.9
    assert ppi <= 0.5 and sampling <= 0.05


def test_the_corrected_means_are_the_formulas_worked_by_hand():
    run_scores = [1.0] * 6 + [0.0] * 4  # the judge's mean: 0.6
    # 8 (yes, yes), 2 (no, yes), 3 (yes, no), 7 (no, no): sensitivity 8/10, fpr 3/10
    pairs = [(1, 1)] * 8 + [(0, 1)] * 2 + [(1, 0)] * 3 + [(0, 0)] * 7
    ppi = estimate_with_judge_error(run_scores, pairs, n_resamples=500)
    rg = estimate_with_judge_error(run_scores, pairs, method="rogan-gladen", n_resamples=500)
    assert ppi.mean == rg.mean == pytest.approx(0.6)
    assert ppi.corrected_mean == pytest.approx(0.6 - (3 - 2) / 20)  # less the mean error
    assert rg.corrected_mean == pytest.approx((0.6 - 0.3) / (0.8 - 0.3))
    assert (ppi.n_run, ppi.n_labelled, ppi.method, rg.method) == (10, 20, "ppi", "rogan-gladen")


def test_the_ppi_interval_is_the_normal_interval_of_both_parts_for_large_samples():
    rng = np.random.default_rng(3)
    run_scores = rng.beta(4, 2, 800)
    human = rng.beta(2, 2, 400)
    judge = np.clip(human + 0.15 + rng.normal(0, 0.1, 400), 0, 1)
    est = estimate_with_judge_error(run_scores, list(zip(judge, human)), n_resamples=20_000)
    rectifier = judge - human
    centre = run_scores.mean() - rectifier.mean()
    half = 1.959964 * math.sqrt(
        run_scores.var(ddof=1) / len(run_scores) + rectifier.var(ddof=1) / len(rectifier)
    )
    assert est.corrected_mean == pytest.approx(centre)
    assert est.judge_error_ci.low == pytest.approx(centre - half, abs=0.004)
    assert est.judge_error_ci.high == pytest.approx(centre + half, abs=0.004)
    # the sampling-only interval is the run's alone: narrower, about the judge's mean
    sampling_half = 1.959964 * run_scores.std(ddof=1) / math.sqrt(len(run_scores))
    assert est.sampling_ci.high - est.sampling_ci.low == pytest.approx(2 * sampling_half, abs=0.004)


def test_the_sentence_is_the_issues_form():
    est = JudgeErrorEstimate(
        metric="faithfulness",
        method="ppi",
        n_run=200,
        n_labelled=40,
        level=0.95,
        mean=0.8213,
        sampling_ci=Interval(0.7791, 0.8649, 0.95, "percentile"),
        corrected_mean=0.81,
        judge_error_ci=Interval(0.7512, 0.8788, 0.95, "percentile"),
    )
    assert est.sentence() == "0.82, 95% CI 0.78-0.86 (sampling), 0.75-0.88 (with judge error)"
    computed = estimate_with_judge_error([0.2, 0.9, 0.7, 0.6], [(0.5, 0.4)] * 12)
    assert SENTENCE.match(computed.sentence())
    record = json.loads(json.dumps(computed.to_dict()))
    assert record["judge_error_ci"]["low"] == computed.judge_error_ci.low
    assert record["sentence"] == computed.sentence() and record["reason"] is None


def test_too_few_labels_give_a_reason_not_a_number():
    est = estimate_with_judge_error([0.5, 0.7, 0.9], [(0.6, 0.5)] * 9)
    assert not est.ok
    assert (est.mean, est.corrected_mean, est.sampling_ci, est.judge_error_ci) == (None,) * 4
    assert "9 labelled pairs, at least 10" in est.reason
    assert est.sentence().startswith("with judge error: not computed (9 labelled pairs")
    assert est.to_dict()["judge_error_ci"] is None
    one = estimate_with_judge_error([0.5, None], [(0.6, 0.5)] * 10)
    assert not one.ok and "1 scored samples" in one.reason


def test_rogan_gladen_refuses_a_judge_no_better_than_chance_or_an_empty_class():
    run_scores = [1, 0] * 20
    chance = [(1, 1), (0, 1), (1, 0), (0, 0)] * 5  # sensitivity 0.5, fpr 0.5: J = 0
    est = estimate_with_judge_error(run_scores, chance, method="rogan-gladen")
    assert not est.ok and "sensitivity + specificity - 1 is 0.00" in est.reason
    assert est.judge_error_ci is None
    only_yes = estimate_with_judge_error(run_scores, [(1, 1)] * 12, method="Rogan-Gladen")
    assert not only_yes.ok and "said no to" in only_yes.reason
    # PPI needs no confusion matrix: the same chance judge gets an (honestly wide) interval
    assert estimate_with_judge_error(run_scores, chance).ok


@pytest.mark.parametrize(
    ("scores", "pairs", "method", "message"),
    [
        ([0.5, None, float("nan")], [(1, 1)] * 10, "ppi", "run score row 2: nan"),
        ([0.5, 0.6], [(1, 1)] * 3 + [(1.5, 1)] * 7, "ppi", "labelled judge score row 3: 1.5"),
        ([0.5, 0.6], [(1, 1)] * 10 + [(1, "yes")], "ppi", "labelled human label row 10"),
        ([0.5, 0.6], [(1, 1)] * 10 + [(1,)], "ppi", "labelled pair 10"),
        ([0.5, 0.6], [(1, 1)] * 10 + [0.5], "ppi", "labelled pair 10: 0.5 is not"),
        ([0.5, 0.6], [(1, 1)] * 10 + [(0.7, 1)], "rogan-gladen", "labelled pair 10: (0.7, 1)"),
        ([0.5, 0.6], [(1, 1)] * 10, "bayes", "method must be one of"),
    ],
)
def test_bad_input_is_an_error_naming_the_row(scores, pairs, method, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        estimate_with_judge_error(scores, pairs, method=method)


def test_with_judge_error_reads_the_metrics_scored_samples_of_a_run():
    result = run({"faithfulness": [1.0, None, 0.5, 0.0, 1.0], "answer_relevancy": [0.1] * 5})
    pairs = [(1.0, 1.0), (0.5, 0.0)] * 6
    est = with_judge_error(result, "faithfulness", pairs, n_resamples=500)
    assert (est.metric, est.n_run, est.n_labelled) == ("faithfulness", 4, 12)
    assert est.mean == pytest.approx(2.5 / 4)
    assert est.corrected_mean == pytest.approx(2.5 / 4 - 0.25)
    with pytest.raises(KeyError, match="no metric 'recall'"):
        with_judge_error(result, "recall", pairs)


def test_labels_that_show_no_error_still_leave_the_judges_error_uncertain():
    # 10 labels, all agreeing: the judge's error share is still up to 1 - 0.025 ** (1 / 10)
    # = 0.31 (Clopper-Pearson with no events), not zero as a bootstrap of zeros says.
    bound = 1 - 0.025 ** (1 / 10)
    run_scores = [1.0, 0.0] * 50
    agreeing = [(1, 1), (0, 0)] * 5
    est = estimate_with_judge_error(run_scores, agreeing, n_resamples=1000)
    assert est.corrected_mean == 0.5
    assert est.judge_error_ci.low <= 0.5 - bound and est.judge_error_ci.high >= 0.5 + bound
    many = estimate_with_judge_error(run_scores, agreeing * 30, n_resamples=1000)
    assert many.judge_error_ci.high - many.judge_error_ci.low < 0.35  # 300 labels: narrower
    # Rogan-Gladen: every positive judged yes (sensitivity 1 on 10), fpr 3/10 on 10 negatives
    pairs = [(1, 1)] * 10 + [(1, 0)] * 3 + [(0, 0)] * 7
    rg = estimate_with_judge_error([1.0] * 6 + [0.0] * 4, pairs, method="rogan-gladen")
    assert rg.corrected_mean == pytest.approx(0.3 / 0.7)
    assert rg.judge_error_ci.high >= (0.6 - 0.3) / (1 - bound - 0.3)  # sensitivity at its bound


def test_ten_labels_give_the_width_of_a_student_t_interval_not_a_normal_one():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(5)
    run_scores = rng.beta(4, 2, 400)
    human = np.array([0.2, 0.4, 0.5, 0.6, 0.8, 0.3, 0.7, 0.5, 0.4, 0.6])
    error = np.array([-0.2, -0.1, 0, 0.1, 0.2, 0.3, 0.1, 0, -0.1, 0.2])
    est = estimate_with_judge_error(run_scores, list(zip(human + error, human)), n_resamples=20_000)
    a, b = run_scores.var(ddof=1) / 400, error.var(ddof=1) / 10
    welch = (a + b) ** 2 / (a**2 / 399 + b**2 / 9)  # about 9.6 degrees of freedom
    half = stats.t.ppf(0.975, welch) * math.sqrt(a + b)
    centre = run_scores.mean() - error.mean()
    # a plain bootstrap would be about sqrt(9 / 10) * 1.96 / 2.25 = 0.83 of this width
    assert est.judge_error_ci.low == pytest.approx(centre - half, abs=0.005)
    assert est.judge_error_ci.high == pytest.approx(centre + half, abs=0.005)
