"""Judge noise from repeated judgements: the figures, a run with repeats, a simulation."""

import math

import numpy as np
import pytest

from ragmeter import MetricResult, Sample, evaluate
from ragmeter.stats import (
    JudgeNoise,
    judge_noise,
    min_detectable_effect,
    noise_from_matrix,
    sign_flip_test,
)
from tests._prepared import Prepared
from tests.stats._build import evaluated, run

NAN = float("nan")


def test_figures_by_hand():
    m = np.array([[0.8, 0.9, 0.7], [0.2, 0.3, NAN], [0.5, 0.5, 0.6], [0.4, NAN, NAN]])
    noise = noise_from_matrix("faithfulness", m)
    # Per-sample variances (ddof=1): 0.01, 0.005, 0.00333...; the last sample has one score.
    within = (0.01 + 0.005 + 0.01 / 3) / 3
    every = [0.8, 0.9, 0.7, 0.2, 0.3, 0.5, 0.5, 0.6, 0.4]
    total = float(np.var(every, ddof=1))
    assert noise == JudgeNoise(
        metric="faithfulness",
        n_samples=3,
        repeats=3,
        within_variance=pytest.approx(within),
        total_variance=pytest.approx(total),
        share=pytest.approx(within / total),
        noise_sd_of_mean=pytest.approx(math.sqrt(within / 3 / 3)),
        min_detectable_effect=pytest.approx(min_detectable_effect(math.sqrt(2 * within / 3), 3)),
    )
    assert noise.summary().startswith("faithfulness: the judge's scores of the same sample vary")
    assert noise.to_dict()["n_samples"] == 3


def test_a_judge_that_never_wavers_has_no_noise():
    noise = noise_from_matrix("m", np.array([[0.5, 0.5], [0.5, 0.5]]))
    assert (noise.within_variance, noise.total_variance, noise.share) == (0.0, 0.0, 0.0)
    assert noise.min_detectable_effect == 0.0


def test_bad_matrices():
    with pytest.raises(ValueError, match="samples x repeats"):
        noise_from_matrix("m", np.array([0.5, 0.4]))
    with pytest.raises(ValueError, match="no sample has 2 or more scored repeats"):
        noise_from_matrix("m", np.array([[0.5, NAN], [NAN, 0.2]]))
    with pytest.raises(ValueError, match="finite"):
        noise_from_matrix("m", np.array([[0.5, np.inf]]))


def repeated(scores_per_sample):
    details = [{"repeats": list(r)} for r in scores_per_sample]
    means = [float(np.nanmean([np.nan if s is None else s for s in r])) for r in scores_per_sample]
    return means, details


def test_judge_noise_reads_the_repeats_of_a_run():
    repeats = [[0.8, 0.9, 0.7], [0.2, 0.3, None], [0.5, 0.5, 0.6], [0.4, None, None]]
    means, details = repeated(repeats)
    result = run(
        {"faithfulness": means, "mrr": [1.0, 0.5, 0.5, 1.0]},
        config={"repeats": 3},
        details={"faithfulness": details},
    )
    noise = judge_noise(result)
    assert list(noise) == ["faithfulness"]  # mrr is not judged, so it has no repeats
    matrix = np.array([[np.nan if s is None else s for s in r] for r in repeats])
    assert noise["faithfulness"] == noise_from_matrix("faithfulness", matrix, 3)
    with pytest.raises(ValueError, match="'mrr' was not judged repeatedly"):
        judge_noise(result, metrics=["mrr"])


def test_a_run_without_repeats_says_how_to_get_them():
    with pytest.raises(ValueError, match=r"run with --repeats R \(R >= 2\)"):
        judge_noise(run({"faithfulness": [0.5, 0.7]}))
    with pytest.raises(ValueError, match="--repeats"):
        judge_noise(evaluated({"faithfulness": [0.5, 0.7]}))


def test_through_evaluate_with_repeats():
    class Repeated(Prepared):
        def score(self, sample: Sample) -> MetricResult:
            scores = self.scores[str(sample.id)]
            assert isinstance(scores, list)  # the repeats' scores, given as a list
            return MetricResult.ok(sum(scores) / len(scores), repeats=scores)

    metric = Repeated("faithfulness", {"a": [0.1, 0.3], "b": [0.5, 0.5], "c": [0.9, 0.6]})
    rows = [{"id": i, "user_input": "?"} for i in "abc"]
    result = evaluate(rows, [metric], repeats=2)
    noise = judge_noise(result)["faithfulness"]
    assert (noise.n_samples, noise.repeats) == (3, 2)
    assert noise.within_variance == pytest.approx((0.02 + 0 + 0.045) / 3)


def test_simulated_judge_noise_is_recovered_and_its_floor_holds():
    # True per-sample quality ~ Beta(5, 2) (variance 0.0255); the judge adds N(0, 0.05^2)
    # noise to every judgement; 3 repeats of 200 samples.
    rng = np.random.default_rng(9)
    n, r, judge_sd = 200, 3, 0.05
    truth = rng.beta(5, 2, size=n)

    def judged_run(shift=0.0):
        return truth[:, None] + shift + rng.normal(0, judge_sd, size=(n, r))

    noise = noise_from_matrix("m", judged_run())
    assert noise.within_variance == pytest.approx(judge_sd**2, rel=0.15)
    assert noise.share == pytest.approx(judge_sd**2 / (0.0255 + judge_sd**2), abs=0.03)
    # The judge noise left in a run's mean: the spread of the mean over re-judged runs.
    means = [judged_run().mean() for _ in range(300)]
    assert np.std(means, ddof=1) == pytest.approx(noise.noise_sd_of_mean, rel=0.15)
    # Two runs whose only differences are a true shift of the MDE and judge noise: a paired
    # test detects the shift about 80% of the time.
    mde = noise.min_detectable_effect
    detected = sum(
        sign_flip_test(
            judged_run(mde).mean(axis=1) - judged_run().mean(axis=1), n_resamples=1000, seed=s
        )
        < 0.05
        for s in range(300)
    )
    assert 0.7 <= detected / 300 <= 0.9
