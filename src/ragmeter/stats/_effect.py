"""Effect sizes: a change in units of its own spread, comparable across metrics."""

from __future__ import annotations

import math

import numpy as np


def cohens_dz(differences: np.ndarray) -> float | None:
    """Mean paired difference over the standard deviation of the differences (Cohen's d_z);
    0 when nothing changed, None when every difference is the same non-zero amount."""
    if len(differences) < 2:
        return None
    mean, sd = float(differences.mean()), float(differences.std(ddof=1))
    if sd == 0:
        return 0.0 if mean == 0 else None
    return mean / sd


def hedges_g(baseline: np.ndarray, candidate: np.ndarray) -> float | None:
    """Difference of means over the pooled standard deviation, with Hedges' small-sample
    correction; 0 when the means are equal, None when both groups are constant and differ."""
    n_b, n_c = len(baseline), len(candidate)
    if n_b < 2 or n_c < 2:
        return None
    diff = float(candidate.mean() - baseline.mean())
    pooled = math.sqrt(
        ((n_b - 1) * baseline.var(ddof=1) + (n_c - 1) * candidate.var(ddof=1)) / (n_b + n_c - 2)
    )
    if pooled == 0:
        return 0.0 if diff == 0 else None
    return diff / pooled * (1 - 3 / (4 * (n_b + n_c) - 9))
