"""The Wilcoxon signed-rank test (scipy), the rank-based alternative to the sign-flip test."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ragmeter._validate import as_values


def wilcoxon_test(differences: Iterable[float] | np.ndarray) -> float:
    """Two-sided p-value of ``scipy.stats.wilcoxon(differences)`` (its defaults: zero
    differences dropped, exact distribution for small samples without ties, else the normal
    approximation). All differences zero gives p = 1. Needs scipy (``ragmeter[stats]``).

    >>> round(wilcoxon_test([0.1, 0.2, -0.05, 0.3, 0.15, 0.12, 0.25, 0.08]), 4)
    0.0156
    """
    d = as_values(differences, "differences")
    if len(d) < 2:
        raise ValueError(f"a paired test needs at least 2 differences, got {len(d)}")
    if not np.any(d):
        return 1.0
    try:
        from scipy import stats
    except ImportError:
        raise ImportError(
            "test='wilcoxon' needs scipy: pip install 'ragmeter[stats]' "
            "(or use the default test='permutation')"
        ) from None
    return float(stats.wilcoxon(d).pvalue)
