"""Input checks shared by the statistics functions (stats, align): clear errors, not NaN."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

#: The bootstrap and permutation methods draw resamples in chunks of about this many elements
#: (index matrix rows x sample size), so memory stays bounded for any run size.
CHUNK_ELEMENTS = 1 << 20


def as_values(values: Iterable[float] | np.ndarray, name: str = "values") -> np.ndarray:
    """``values`` as a 1-D float array of finite numbers."""
    array = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite numbers (drop the samples that did not score)")
    return array


def check_level(level: float, name: str = "level") -> float:
    if not isinstance(level, int | float) or not 0 < level < 1:
        raise ValueError(f"{name} must be between 0 and 1 (e.g. 0.95), got {level!r}")
    return float(level)


def check_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    return n_resamples


def chunks(total: int, width: int) -> Iterable[int]:
    """Sizes of the chunks that make up ``total`` rows of ``width`` columns."""
    step = max(1, CHUNK_ELEMENTS // max(1, width))
    for start in range(0, total, step):
        yield min(step, total - start)


def is_finite_number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
