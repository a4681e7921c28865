"""Permutation tests of a difference in means: paired sign-flip and unpaired label shuffle."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

import numpy as np

from ragmeter._validate import as_values, check_resamples, chunks

# Null statistics within this relative distance of the observed one count as ties (as in
# scipy.stats.permutation_test): sums taken in another order differ in the last bits.
_TIE = 100 * np.finfo(float).eps


def sign_flip_test(
    differences: Iterable[float] | np.ndarray, *, n_resamples: int = 10_000, seed: int = 0
) -> float:
    """Two-sided p-value of a paired sign-flip permutation test that the mean of
    ``differences`` (candidate - baseline, one per sample) is zero.

    Under no change each difference is as likely to have either sign, so the test flips signs
    at random and counts how often the mean is at least as far from zero as the one observed.
    With ``2 ** n <= n_resamples`` every sign pattern is enumerated (an exact p-value);
    otherwise ``n_resamples`` random patterns give p = (b + 1) / (m + 1), where b of the m
    patterns are as extreme, so the p-value is never 0. All differences zero gives p = 1.

    >>> sign_flip_test([0.1, 0.2, 0.05, 0.3, 0.15, 0.1, -0.05, 0.2, 0.1, 0.25, 0.1, 0.2, 0.3, 0.1])
    0.00059994
    >>> sign_flip_test([0.1, 0.2, -0.05, 0.3, 0.15])  # 2 ** 5 sign patterns: exact
    0.125
    >>> sign_flip_test([0.1, -0.1, 0.2, -0.2])
    1.0
    """
    d = as_values(differences, "differences")
    if len(d) < 2:
        raise ValueError(f"a paired test needs at least 2 differences, got {len(d)}")
    check_resamples(n_resamples)
    if not np.any(d):
        return 1.0
    n = len(d)
    observed = abs(float(d.sum()))
    threshold = observed - _TIE * observed
    if 2**n <= n_resamples:
        patterns = np.arange(2**n)[:, None] >> np.arange(n) & 1
        null = np.abs((2.0 * patterns - 1) @ d)
        return float(np.count_nonzero(null >= threshold) / 2**n)
    rng = np.random.default_rng(seed)
    extreme = 0
    for size in chunks(n_resamples, n):
        signs = 2.0 * rng.integers(0, 2, (size, n)) - 1
        extreme += int(np.count_nonzero(np.abs(signs @ d) >= threshold))
    return (extreme + 1) / (n_resamples + 1)


def label_permutation_test(
    baseline: Iterable[float] | np.ndarray,
    candidate: Iterable[float] | np.ndarray,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> float:
    """Two-sided p-value of an unpaired permutation test that two groups have the same mean.

    The scores of both groups are pooled and relabelled at random; the p-value is the share of
    relabellings whose difference of means is at least as large as the one observed, with the
    (b + 1) / (m + 1) estimator, or exact when there are no more relabellings than
    ``n_resamples``.

    >>> label_permutation_test([0.2, 0.3, 0.25, 0.4], [0.6, 0.7, 0.65, 0.8])
    0.02857142857142857
    """
    b, c = as_values(baseline, "baseline"), as_values(candidate, "candidate")
    if len(b) < 1 or len(c) < 1:
        raise ValueError(f"each group needs at least 1 value, got {len(b)} and {len(c)}")
    check_resamples(n_resamples)
    pooled = np.concatenate([c, b])
    n, n_c = len(pooled), len(c)
    if pooled.min() == pooled.max():
        return 1.0
    total = float(pooled.sum())

    def distance(candidate_sums: np.ndarray) -> np.ndarray:
        return np.abs(candidate_sums / n_c - (total - candidate_sums) / (n - n_c))

    observed = float(distance(np.array([c.sum()]))[0])
    threshold = observed - _TIE * observed
    n_labellings = math.comb(n, n_c)
    if n_labellings <= n_resamples:
        extreme = 0
        combos = itertools.combinations(range(n), n_c)
        for size in chunks(n_labellings, n_c):
            picks = np.array(list(itertools.islice(combos, size)), dtype=np.intp)
            extreme += int(np.count_nonzero(distance(pooled[picks].sum(axis=1)) >= threshold))
        return extreme / n_labellings
    rng = np.random.default_rng(seed)
    extreme = 0
    for size in chunks(n_resamples, n):
        order = rng.permuted(np.broadcast_to(np.arange(n), (size, n)), axis=1)
        sums = pooled[order[:, :n_c]].sum(axis=1)
        extreme += int(np.count_nonzero(distance(sums) >= threshold))
    return (extreme + 1) / (n_resamples + 1)
