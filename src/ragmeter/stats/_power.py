"""How large a change a dataset can detect, and how many samples a change needs (normal
approximation of a two-sided test at a given power)."""

from __future__ import annotations

import math
from statistics import NormalDist

from ragmeter._validate import check_level, is_finite_number

_NORMAL = NormalDist()


def _z_sum(alpha: float, power: float) -> float:
    check_level(alpha, "alpha")
    check_level(power, "power")
    return _NORMAL.inv_cdf(1 - alpha / 2) + _NORMAL.inv_cdf(power)


def _check_sd(sd: float) -> float:
    if not is_finite_number(sd) or sd < 0:
        raise ValueError(f"sd must be a finite number >= 0, got {sd!r}")
    return float(sd)


def min_detectable_effect(sd: float, n: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true change in a mean that a two-sided test at ``alpha`` detects with
    probability ``power`` from ``n`` samples whose scores (or paired differences) have
    standard deviation ``sd``: (z_{1-alpha/2} + z_power) * sd / sqrt(n).

    >>> round(min_detectable_effect(0.1, 50), 4)
    0.0396
    """
    sd = _check_sd(sd)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return _z_sum(alpha, power) * sd / math.sqrt(n)


def samples_needed(effect: float, sd: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """How many samples (or pairs) a two-sided test at ``alpha`` needs to detect a true change
    of ``effect`` (either sign) with probability ``power``, when the scores or paired
    differences have standard deviation ``sd``; at least 2.

    >>> samples_needed(0.03, 0.1)
    88
    >>> min_detectable_effect(0.1, 88) <= 0.03 < min_detectable_effect(0.1, 87)
    True
    """
    sd = _check_sd(sd)
    if not is_finite_number(effect) or effect == 0:
        raise ValueError(f"effect must be a finite non-zero number, got {effect!r}")
    n = (_z_sum(alpha, power) * sd / abs(effect)) ** 2
    # A hair below an integer is that integer (floating-point error, not a real shortfall).
    return max(2, math.ceil(n - 1e-9))
