"""Bootstrap CIs: the same intervals as scipy.stats.bootstrap, and nominal coverage."""

import numpy as np
import pytest
from scipy import stats

from ragmeter.stats import Interval, bootstrap_ci, difference_ci

SCIPY_METHOD = {"bca": "BCa", "percentile": "percentile"}


def scipy_ci(data, statistic, method, n_resamples, seed, level=0.95):
    result = stats.bootstrap(
        data,
        statistic,
        method=SCIPY_METHOD[method],
        n_resamples=n_resamples,
        confidence_level=level,
        rng=np.random.default_rng(seed),
    )
    return result.confidence_interval


def mean_difference(baseline, candidate, axis):
    return candidate.mean(axis=axis) - baseline.mean(axis=axis)


@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_matches_scipy_within_monte_carlo_error_with_independent_resamples(method):
    x = np.random.default_rng(1).uniform(size=50)
    ours = bootstrap_ci(x, method=method, n_resamples=20_000, seed=11)
    theirs = scipy_ci((x,), np.mean, method, 20_000, seed=22)
    assert ours.low == pytest.approx(theirs.low, abs=0.01)
    assert ours.high == pytest.approx(theirs.high, abs=0.01)
    assert (ours.level, ours.method) == (0.95, method)


@pytest.mark.parametrize("method", ["bca", "percentile"])
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_same_seed_gives_scipy_interval_exactly(method, level):
    # The resamples are drawn as scipy draws them, so the same generator gives the same
    # bootstrap distribution and only floating-point noise separates the intervals.
    x = np.random.default_rng(2).beta(2, 5, size=37)
    ours = bootstrap_ci(x, level=level, method=method, n_resamples=3000, seed=7)
    theirs = scipy_ci((x,), np.mean, method, 3000, seed=7, level=level)
    assert (ours.low, ours.high) == pytest.approx((theirs.low, theirs.high), abs=1e-12)


def test_resampling_in_chunks_keeps_scipy_stream():
    # 400 x 5000 indices are drawn in several chunks; the interval is still scipy's.
    x = np.random.default_rng(3).beta(5, 2, size=5000)
    ours = bootstrap_ci(x, n_resamples=400, seed=3)
    theirs = scipy_ci((x,), np.mean, "bca", 400, seed=3)
    assert (ours.low, ours.high) == pytest.approx((theirs.low, theirs.high), abs=1e-12)


@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_difference_of_independent_means_matches_scipy_two_sample_bootstrap(method):
    rng = np.random.default_rng(4)
    b, c = rng.uniform(size=50), rng.beta(2, 2, size=40)
    ours = difference_ci(b, c, method=method, n_resamples=20_000, seed=1)
    same_seed = scipy_ci((b, c), mean_difference, method, 20_000, seed=1)
    assert (ours.low, ours.high) == pytest.approx((same_seed.low, same_seed.high), abs=1e-12)
    other_seed = scipy_ci((b, c), mean_difference, method, 20_000, seed=99)
    assert (ours.low, ours.high) == pytest.approx((other_seed.low, other_seed.high), abs=0.01)


def test_constant_values_give_a_point():
    assert bootstrap_ci([0.5, 0.5, 0.5]) == Interval(0.5, 0.5, 0.95, "bca")
    assert difference_ci(np.array([1.0, 1.0]), np.array([0.0, 0.0]), method="percentile") == (
        Interval(-1.0, -1.0, 0.95, "percentile")
    )


def test_seeded_and_deterministic():
    x = np.random.default_rng(5).uniform(size=30)
    assert bootstrap_ci(x, seed=3, n_resamples=500) == bootstrap_ci(x, seed=3, n_resamples=500)
    assert bootstrap_ci(x, seed=3, n_resamples=500) != bootstrap_ci(x, seed=4, n_resamples=500)


def test_interval_contains_and_serialises():
    ci = Interval(0.1, 0.3, 0.95, "bca")
    assert 0.2 in ci and 0.31 not in ci
    assert ci.to_dict() == {"low": 0.1, "high": 0.3, "level": 0.95, "method": "bca"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"values": [0.5]}, "at least 2 values"),
        ({"values": []}, "at least 2 values"),
        ({"values": [0.1, float("nan")]}, "finite"),
        ({"values": [[0.1, 0.2]]}, "one-dimensional"),
        ({"values": [0.1, 0.2], "level": 95}, "level"),
        ({"values": [0.1, 0.2], "method": "bootstrap-t"}, "method"),
        ({"values": [0.1, 0.2], "n_resamples": 0}, "n_resamples"),
    ],
)
def test_bad_input_is_a_clear_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bootstrap_ci(**kwargs)


def coverage(method, a, b, n=50, replications=1000, n_resamples=2000):
    true_mean = a / (a + b)
    rng = np.random.default_rng(2024)
    hits = 0
    for seed in range(replications):
        ci = bootstrap_ci(rng.beta(a, b, size=n), method=method, n_resamples=n_resamples, seed=seed)
        hits += ci.low <= true_mean <= ci.high
    return hits / replications


@pytest.mark.parametrize("method", ["bca", "percentile"])
@pytest.mark.parametrize(("a", "b"), [(2, 5), (8, 2)])
def test_95_percent_ci_covers_the_true_mean_about_95_percent_of_the_time(method, a, b):
    # Beta(2, 5) is skewed right like a strict metric's scores, Beta(8, 2) left like
    # faithfulness; n = 50 samples per synthetic run, 1000 runs.
    assert 0.92 <= coverage(method, a, b) <= 0.98


def test_many_values_of_few_kinds_draw_counts_per_value_with_the_same_distribution(monkeypatch):
    # 50,000 scores of 6 kinds (a retrieval metric's): resampled as multinomial counts per
    # distinct value. The interval agrees with drawing every value (within Monte Carlo
    # error) and with the normal theory of a mean of so many values.
    x = np.random.default_rng(5).choice([0, 0.2, 0.4, 0.6, 0.8, 1.0], size=50_000)

    def no_single_draws(*args):
        raise AssertionError("each value was drawn")

    with monkeypatch.context() as patched:
        patched.setattr("ragmeter._bootstrap._resampled_means", no_single_draws)
        grouped = bootstrap_ci(x, n_resamples=4000, seed=1)
    monkeypatch.setattr("ragmeter._bootstrap.GROUPED_MIN_N", 10**9)
    every = bootstrap_ci(x, n_resamples=4000, seed=1)
    assert grouped.low == pytest.approx(every.low, abs=4e-4)
    assert grouped.high == pytest.approx(every.high, abs=4e-4)
    half = 1.96 * x.std(ddof=1) / np.sqrt(len(x))
    assert grouped.high - grouped.low == pytest.approx(2 * half, rel=0.05)
    assert grouped.low < x.mean() < grouped.high
