"""Holm's step-down correction of p-values for testing several metrics at once."""

from __future__ import annotations

from collections.abc import Sequence


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given.

    Comparing several metrics at once raises the chance that one of them looks significant by
    luck; an adjusted p-value below alpha keeps the chance of any false alarm among them below
    alpha. The k-th smallest of m p-values is multiplied by m - k + 1, then made no smaller
    than the adjusted ones before it, and capped at 1.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    >>> holm([])
    []
    """
    values = list(p_values)
    for p in values:
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
            raise ValueError(f"p-values must be numbers between 0 and 1, got {p!r}")
    m = len(values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: values[i])):
        running = max(running, min(1.0, (m - rank) * values[index]))
        adjusted[index] = running
    return adjusted
