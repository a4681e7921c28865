"""Permutation tests: scipy's p-values, the (b + 1) / (m + 1) estimator, size and power."""

import numpy as np
import pytest
from scipy import stats

from ragmeter.stats import label_permutation_test, sign_flip_test


def mean_of_differences(x, y, axis):
    return np.mean(x - y, axis=axis)


def distance_of_means(x, y, axis):
    return np.abs(np.mean(x, axis=axis) - np.mean(y, axis=axis))


def scipy_paired(d, n_resamples, seed=1):
    # Swapping a pair's two scores flips the sign of its difference: scipy's "samples"
    # permutation of (d, 0) is the sign-flip test.
    return stats.permutation_test(
        (d, np.zeros_like(d)),
        mean_of_differences,
        permutation_type="samples",
        n_resamples=n_resamples,
        rng=seed,
    ).pvalue


def scipy_unpaired(b, c, n_resamples, seed=1):
    # Two-sided as |difference of means|: with groups of different sizes the null
    # distribution of the difference is not symmetric, and scipy's two-sided p (twice the
    # smaller tail) is another, equally valid, definition.
    return stats.permutation_test(
        (c, b),
        distance_of_means,
        permutation_type="independent",
        n_resamples=n_resamples,
        alternative="greater",
        rng=seed,
    ).pvalue


@pytest.mark.parametrize("shift", [0.0, 0.02, 0.04, 0.06])
def test_sign_flip_matches_scipy_within_monte_carlo_error(shift):
    rng = np.random.default_rng(10)
    d = rng.normal(shift, 0.15, size=60)
    ours = sign_flip_test(d, n_resamples=20_000, seed=3)
    theirs = scipy_paired(d, 20_000)
    # Monte Carlo sd of either estimate is at most sqrt(0.25 / 20000) = 0.0035.
    assert ours == pytest.approx(theirs, abs=0.015)


def test_sign_flip_enumerates_small_samples_exactly_as_scipy():
    d = np.random.default_rng(11).normal(0.05, 0.1, size=12)  # 4096 sign patterns
    assert sign_flip_test(d, n_resamples=10_000) == pytest.approx(
        scipy_paired(d, 10_000), abs=1e-12
    )
    assert sign_flip_test([0.1, 0.2, 0.3]) == 0.25  # only all-plus and all-minus as extreme


def test_sign_flip_p_is_never_zero_and_uses_b_plus_one():
    d = np.full(40, 0.1) + np.linspace(0, 0.01, 40)
    assert sign_flip_test(d, n_resamples=999) == pytest.approx(1 / 1000)


def test_sign_flip_edge_cases():
    assert sign_flip_test([0.0, 0.0, 0.0]) == 1.0
    with pytest.raises(ValueError, match="at least 2"):
        sign_flip_test([0.1])
    with pytest.raises(ValueError, match="finite"):
        sign_flip_test([0.1, float("inf")])
    with pytest.raises(ValueError, match="n_resamples"):
        sign_flip_test([0.1, 0.2], n_resamples=-5)


def test_sign_flip_counts_exact_ties_as_extreme():
    # Every sign pattern with three of four +0.1 ties the observed |sum| up to rounding.
    assert sign_flip_test([0.1, 0.1, 0.1, 0.1, -0.1]) == pytest.approx(12 / 32)


@pytest.mark.parametrize("shift", [0.0, 0.05, 0.1])
def test_label_permutation_matches_scipy_within_monte_carlo_error(shift):
    rng = np.random.default_rng(12)
    b, c = rng.beta(5, 2, size=45), rng.beta(5, 2, size=55) + shift
    ours = label_permutation_test(b, c, n_resamples=20_000, seed=5)
    assert ours == pytest.approx(scipy_unpaired(b, c, 20_000), abs=0.015)


def test_label_permutation_enumerates_small_samples_exactly_as_scipy():
    rng = np.random.default_rng(13)
    b, c = rng.uniform(size=6), rng.uniform(size=7) + 0.2  # 1716 relabellings
    ours = label_permutation_test(b, c, n_resamples=5000)
    assert ours == pytest.approx(scipy_unpaired(b, c, 5000), abs=1e-12)


def test_label_permutation_edge_cases():
    assert label_permutation_test([0.5, 0.5], [0.5, 0.5, 0.5]) == 1.0
    with pytest.raises(ValueError, match="at least 1"):
        label_permutation_test([], [0.5])


def rejection_rate(make_differences, replications, n_resamples=2000, alpha=0.05):
    rng = np.random.default_rng(77)
    rejected = 0
    for seed in range(replications):
        rejected += (
            sign_flip_test(make_differences(rng), n_resamples=n_resamples, seed=seed) < alpha
        )
    return rejected / replications


def test_sign_flip_size_under_no_change_is_nominal():
    # Two runs with no real change: each sample's two scores are independent draws of the
    # same Beta distribution, so the differences are symmetric about zero.
    def no_change(rng):
        return rng.beta(2, 2, size=50) - rng.beta(2, 2, size=50)

    assert 0.02 <= rejection_rate(no_change, 1000) <= 0.08


def test_sign_flip_power_under_a_real_change_is_high():
    # A change of half the spread of the differences, 50 samples: normal-theory power 0.94.
    def improved(rng):
        return rng.normal(0.05, 0.1, size=50)

    assert rejection_rate(improved, 300) >= 0.85


def test_label_permutation_size_under_no_change_is_nominal():
    rng = np.random.default_rng(78)
    rejected = sum(
        label_permutation_test(
            rng.beta(2, 5, size=40), rng.beta(2, 5, size=50), n_resamples=1000, seed=s
        )
        < 0.05
        for s in range(400)
    )
    assert 0.02 <= rejected / 400 <= 0.08
