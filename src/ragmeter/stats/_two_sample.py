"""Two independent groups of scores (e.g. a monitoring window against a baseline run): the
difference of means with a bootstrap interval and an unpaired permutation test."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ragmeter._bootstrap import Interval, check_method, difference_ci
from ragmeter._validate import as_values, check_level, check_resamples
from ragmeter.stats._permutation import label_permutation_test

TWO_SAMPLE_TEST = "permutation (unpaired, difference of means)"


@dataclass(frozen=True)
class TwoSampleTest:
    """``candidate`` against ``baseline``: their means, ``difference`` (candidate - baseline),
    its bootstrap interval ``ci`` (each group resampled on its own) and the two-sided p-value
    of a label permutation test that both groups have the same mean (``test`` names it)."""

    n_baseline: int
    n_candidate: int
    baseline_mean: float
    candidate_mean: float
    difference: float
    ci: Interval
    p_value: float
    test: str = TWO_SAMPLE_TEST

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # the interval's too: Interval.to_dict() is asdict()


def two_sample_test(
    baseline: Iterable[float] | np.ndarray,
    candidate: Iterable[float] | np.ndarray,
    *,
    level: float = 0.95,
    method: str = "bca",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> TwoSampleTest:
    """Compare two independent groups of scores (no sample in both, so no pairing).

    The p-value is a permutation test (the scores pooled and relabelled; exact when there
    are no more relabellings than ``n_resamples``); it assumes only that, with no change,
    the scores of both groups are exchangeable. The interval is a bootstrap of the
    difference of means ("bca" or "percentile"). Each group needs at least 2 scores.

    >>> t = two_sample_test([0.8, 0.9, 0.85, 0.95], [0.4, 0.5, 0.45, 0.55], n_resamples=2000)
    >>> round(t.difference, 2), round(t.p_value, 4), t.ci.high < 0
    (-0.4, 0.0286, True)
    """
    b, c = as_values(baseline, "baseline"), as_values(candidate, "candidate")
    if len(b) < 2 or len(c) < 2:
        raise ValueError(
            f"an unpaired comparison needs at least 2 scores per group, got {len(b)} "
            f"(baseline) and {len(c)} (candidate)"
        )
    level, method = check_level(level), check_method(method)
    check_resamples(n_resamples)
    ci = difference_ci(b, c, level=level, method=method, n_resamples=n_resamples, seed=seed)
    p = label_permutation_test(b, c, n_resamples=n_resamples, seed=seed)
    return TwoSampleTest(
        n_baseline=len(b),
        n_candidate=len(c),
        baseline_mean=float(b.mean()),
        candidate_mean=float(c.mean()),
        difference=float(c.mean() - b.mean()),
        ci=ci,
        p_value=p,
    )
