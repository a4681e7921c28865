"""Bootstrap confidence intervals of a mean and of a difference of means (percentile, BCa).

Below the packages that use it: :mod:`ragmeter.results` (conversation aggregates, a result's
notebook display) and :mod:`ragmeter.stats`, which exports :class:`Interval` and
:func:`bootstrap_ci` as public names."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any, cast

import numpy as np

from ragmeter._validate import as_values, check_level, check_resamples, chunks

METHODS = ("bca", "percentile")
#: From this many values, a bootstrap of values with at most 1 in GROUPED_SHARE of them
#: distinct draws how often each distinct value is hit (multinomial) instead of each draw.
GROUPED_MIN_N = 10_000
GROUPED_SHARE = 8
_NORMAL = NormalDist()


@dataclass(frozen=True)
class Interval:
    """A confidence interval: ``low`` to ``high`` at confidence ``level`` (e.g. 0.95), made
    with ``method`` ("bca" or "percentile")."""

    low: float
    high: float
    level: float
    method: str

    def __contains__(self, value: float) -> bool:
        return self.low <= value <= self.high

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def mean_with_ci(
    scores: Sequence[float | None],
    *,
    level: float = 0.95,
    method: str = "bca",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> tuple[int, float | None, Interval | None]:
    """Over the scores that are numbers (``None``: not scored): how many there are, their
    mean (None when none) and its :func:`bootstrap_ci` (None under 2). What
    :func:`ragmeter.stats.estimate_means` gives per metric, and what the run store keeps
    with a run so that its trends need not read its samples.

    >>> n, mean, ci = mean_with_ci([0.5, None, 1.0], n_resamples=2000)
    >>> n, mean, ci.method
    (2, 0.75, 'bca')
    """
    ok = np.array([s for s in scores if s is not None], dtype=float)
    ci = (
        bootstrap_ci(ok, level=level, method=method, n_resamples=n_resamples, seed=seed)
        if len(ok) >= 2
        else None
    )
    return len(ok), (float(ok.mean()) if len(ok) else None), ci


def check_method(method: str) -> str:
    key = method.lower() if isinstance(method, str) else method
    if key not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return key


def bootstrap_ci(
    values: Iterable[float] | np.ndarray,
    *,
    level: float = 0.95,
    method: str = "bca",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Interval:
    """Bootstrap confidence interval of the mean of ``values``.

    ``method`` is "bca" (bias-corrected and accelerated, the default: it corrects for the skew
    that bounded scores such as faithfulness usually have) or "percentile". Resamples are
    drawn from ``numpy.random.default_rng(seed)`` exactly as ``scipy.stats.bootstrap`` draws
    them, so both give the same interval for the same seed. From :data:`GROUPED_MIN_N` values
    of which few are distinct (at most 1 in :data:`GROUPED_SHARE`, as a retrieval metric's
    scores), each resample draws how often it hits each distinct value (multinomial): the
    same bootstrap distribution at a fraction of the cost, the interval then differing from
    scipy's by resampling noise only. Constant values give a zero-width interval.

    >>> ci = bootstrap_ci([0.2, 0.4, 0.5, 0.9, 1.0, 0.7, 0.6, 0.8], n_resamples=2000)
    >>> round(ci.low, 2), round(ci.high, 2), ci.level, ci.method
    (0.45, 0.8, 0.95, 'bca')
    >>> bootstrap_ci([1.0, 1.0, 1.0])
    Interval(low=1.0, high=1.0, level=0.95, method='bca')
    """
    x = as_values(values)
    if len(x) < 2:
        raise ValueError(f"a bootstrap CI needs at least 2 values, got {len(x)}")
    level, method = check_level(level), check_method(method)
    check_resamples(n_resamples)
    if x.min() == x.max():
        return Interval(float(x[0]), float(x[0]), level, method)
    rng = np.random.default_rng(seed)
    theta_b = np.empty(n_resamples)
    done = 0
    values, counts = np.unique(x, return_counts=True) if len(x) >= GROUPED_MIN_N else (x, None)
    if counts is not None and len(values) * GROUPED_SHARE <= len(x):
        # Many values, few of them distinct (a retrieval metric's scores): a resample's mean
        # depends only on how many draws hit each distinct value, which are multinomial.
        # The same bootstrap distribution, drawn in values x resamples, not n x resamples.
        shares = counts / len(x)
        for size in chunks(n_resamples, len(values)):
            hits = rng.multinomial(len(x), shares, size=size)
            theta_b[done : done + size] = hits @ values / len(x)
            done += size
    else:
        for size in chunks(n_resamples, len(x)):
            theta_b[done : done + size] = _resampled_means(x, size, rng)
            done += size
    return _interval(float(x.mean()), theta_b, [_jackknife_means(x)], level, method)


def difference_ci(
    baseline: np.ndarray,
    candidate: np.ndarray,
    *,
    level: float = 0.95,
    method: str = "bca",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Interval:
    """Bootstrap CI of ``mean(candidate) - mean(baseline)`` for two independent groups: each
    group is resampled on its own (as ``scipy.stats.bootstrap`` does with two samples)."""
    b, c = as_values(baseline, "baseline"), as_values(candidate, "candidate")
    if len(b) < 2 or len(c) < 2:
        raise ValueError(
            f"a bootstrap CI needs at least 2 values per group, got {len(b)}, {len(c)}"
        )
    level, method = check_level(level), check_method(method)
    check_resamples(n_resamples)
    theta_hat = float(c.mean() - b.mean())
    if b.min() == b.max() and c.min() == c.max():
        return Interval(theta_hat, theta_hat, level, method)
    rng = np.random.default_rng(seed)
    theta_b = np.empty(n_resamples)
    done = 0
    for size in chunks(n_resamples, max(len(b), len(c))):
        mean_b = _resampled_means(b, size, rng)
        theta_b[done : done + size] = _resampled_means(c, size, rng) - mean_b
        done += size
    # The statistic with one group left out at a time, for the BCa acceleration.
    jackknives = [c.mean() - _jackknife_means(b), _jackknife_means(c) - b.mean()]
    return _interval(theta_hat, theta_b, jackknives, level, method)


def groups_ci(
    groups: Sequence[Iterable[float] | np.ndarray],
    statistic: Callable[..., np.ndarray],
    *,
    level: float = 0.95,
    method: str = "bca",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Interval:
    """Bootstrap CI of ``statistic(mean_1, ..., mean_k)``, a function of the means of k
    independent groups, each group resampled on its own as :func:`difference_ci` resamples
    its two. ``statistic`` is called with one array of means per group and must work
    element-wise (numpy) and give finite values; BCa's acceleration comes from leaving out
    one value of one group at a time. The judge-error correction
    (:func:`ragmeter.stats.estimate_with_judge_error`) is its caller."""
    xs = [as_values(g, f"group {i}") for i, g in enumerate(groups)]
    if not xs or any(len(x) < 1 for x in xs):
        raise ValueError("a bootstrap CI needs at least 1 value in every group")
    level, method = check_level(level), check_method(method)
    check_resamples(n_resamples)
    full = [np.asarray([x.mean()]) for x in xs]
    theta_hat = float(np.asarray(statistic(*full))[0])
    rng = np.random.default_rng(seed)
    means = [np.empty(n_resamples) for _ in xs]
    done = 0
    for size in chunks(n_resamples, max(len(x) for x in xs)):
        for x, out in zip(xs, means):
            out[done : done + size] = _resampled_means(x, size, rng)
        done += size
    theta_b = np.asarray(statistic(*means), dtype=float)
    jackknives = [
        np.asarray(statistic(*full[:i], _jackknife_means(x), *full[i + 1 :]), dtype=float)
        for i, x in enumerate(xs)
        if len(x) >= 2
    ]
    if not (np.isfinite(theta_hat) and np.all(np.isfinite(theta_b))):
        raise ValueError("the statistic of the group means is not a finite number")
    if theta_b.min() == theta_b.max():
        return Interval(theta_hat, theta_hat, level, method)
    return _interval(theta_hat, theta_b, jackknives, level, method)


def _resampled_means(x: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    return cast(np.ndarray, x[rng.integers(0, len(x), (size, len(x)))].mean(axis=1))


def _jackknife_means(x: np.ndarray) -> np.ndarray:
    """The mean of ``x`` without each value in turn."""
    return cast(np.ndarray, (x.sum() - x) / (len(x) - 1))


def _interval(
    theta_hat: float,
    theta_b: np.ndarray,
    jackknives: Sequence[np.ndarray],
    level: float,
    method: str,
) -> Interval:
    alpha = (1 - level) / 2
    if method == "percentile":
        quantiles = (alpha, 1 - alpha)
    else:
        quantiles = _bca_quantiles(theta_hat, theta_b, jackknives, alpha)
    low, high = np.percentile(theta_b, [100 * quantiles[0], 100 * quantiles[1]])
    return Interval(float(low), float(high), level, method)


def _bca_quantiles(
    theta_hat: float, theta_b: np.ndarray, jackknives: Sequence[np.ndarray], alpha: float
) -> tuple[float, float]:
    """The percentiles a BCa interval takes (Efron & Tibshirani 1993, 14.3 and 15.4), computed
    as ``scipy.stats.bootstrap`` computes them."""
    n_b = len(theta_b)
    below = np.count_nonzero(theta_b < theta_hat) + np.count_nonzero(theta_b <= theta_hat)
    # Clipped so that a bootstrap distribution entirely on one side still gives a finite z0.
    share = min(max(below / (2 * n_b), 0.5 / n_b), 1 - 0.5 / n_b)
    z0 = _NORMAL.inv_cdf(share)
    num = den = 0.0
    for theta_i in jackknives:
        n = len(theta_i)
        u = (n - 1) * (theta_i.mean() - theta_i)
        num += float(np.sum(u**3)) / n**3
        den += float(np.sum(u**2)) / n**2
    accel = num / (6 * den**1.5) if den > 0 else 0.0
    z_alpha = _NORMAL.inv_cdf(alpha)
    return _bca_shift(z0, z0 + z_alpha, accel), _bca_shift(z0, z0 - z_alpha, accel)


def _bca_shift(z0: float, z: float, accel: float) -> float:
    denominator = 1 - accel * z
    if denominator <= 0:  # acceleration past the formula's range: the interval's extreme end
        return 1.0 if z > 0 else 0.0
    return _NORMAL.cdf(z0 + z / denominator)
