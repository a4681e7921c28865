"""A share as a percentage that never reads as 0% or 100% when it is neither."""

from __future__ import annotations


def percent(share: float) -> str:
    """``share`` as a percentage with as many decimals as it needs to not read as 0 or 100.

    >>> percent(0.3), percent(0.001), percent(0.9996), percent(1.0)
    ('30%', '0.1%', '99.96%', '100%')
    """
    for digits in range(3):
        text = f"{share * 100:.{digits}f}%"
        if (share == 0 or text != f"{0:.{digits}f}%") and (
            share == 1 or text != f"{100:.{digits}f}%"
        ):
            return text
    return f"{share * 100:.3f}%"
