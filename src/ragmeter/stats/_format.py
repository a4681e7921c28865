"""Numbers as the plain-language verdicts print them."""

from __future__ import annotations

import math


def decimals_for(scale: float) -> int:
    """Decimals that show a quantity of size ``scale`` (a CI width, a difference) to about
    one significant digit: 2 for scores on a 0-1 scale, more for tiny changes, at most 6."""
    if not scale or not math.isfinite(scale):
        return 2
    return min(6, max(2, -math.floor(math.log10(abs(scale)))))


def signed(value: float, decimals: int) -> str:
    """``+0.05`` / ``-0.03``; a value that rounds to zero prints as ``+0.00``."""
    text = f"{value:+.{decimals}f}"
    return "+" + text[1:] if float(text) == 0 else text


def p_text(p: float) -> str:
    """Two decimals from 0.1 up (0.19, 0.10, 1.00), two significant digits below (0.047,
    0.0031), and ``< 0.001`` below 0.001."""
    if p < 0.001:
        return "< 0.001"
    return f"= {p:.2f}" if round(p, 2) >= 0.1 else f"= {p:.2g}"


def about(n: int) -> str:
    """A sample count as a plan: exact below 100, else rounded up to two significant digits
    (173 -> 180, 1234 -> 1300)."""
    if n < 100:
        return str(n)
    step = 10 ** (len(str(n)) - 2)
    return str(math.ceil(n / step) * step)


def percent(level: float) -> str:
    return f"{round(level * 100, 6):g}%"
