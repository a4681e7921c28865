"""Number and label formatting shared by the HTML and markdown reports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from ragmeter._services import redact_url
from ragmeter.metrics import Direction

if TYPE_CHECKING:
    from ragmeter.stats import Comparison as StatsComparison
    from ragmeter.stats import Interval

#: Shown where there is no value (never 0, which would read as a score).
NONE = "—"

#: How a score moved, as the reports colour it: one sample's move, or a metric's change
#: when it is significant (:func:`metric_change`).
Change = Literal["better", "worse", "same"]


def score(value: float | None, digits: int = 4) -> str:
    """A score with ``digits`` decimals, or "—" when there is none."""
    return NONE if value is None else f"{value:.{digits}f}"


def interval(low: float, high: float, digits: int = 4) -> str:
    """A confidence interval as "0.2500–0.8750"."""
    return f"{score(low, digits)}–{score(high, digits)}"


def mean_ci(n_scored: int, ci: Interval | None, digits: int = 4) -> str:
    """The CI of a mean over ``n_scored`` samples, or why there is none (a bootstrap needs
    at least 2 scores): "n/a: 1 scored, needs 2"."""
    if ci is None:
        return f"n/a: {n_scored} scored, needs 2"
    return interval(ci.low, ci.high, digits)


def signed(value: float | None, digits: int = 4) -> str:
    """A difference with its sign (+0.2500, -0.1000, 0.0000), or "—"."""
    if value is None:
        return NONE
    if round(value, digits) == 0:
        return f"{0:.{digits}f}"
    return f"{value:+.{digits}f}"


def count(value: int | float) -> str:
    """An integer with thousands separators."""
    return f"{int(value):,}"


def plural(n: int, noun: str) -> str:
    """ "1 sample", "2 samples"."""
    return f"{count(n)} {noun}{'' if n == 1 else 's'}"


def percent(share: float) -> str:
    """A share as a whole percentage."""
    return f"{share:.0%}"


def arrow(direction: Direction) -> str:
    """↑ when higher is better, ↓ when lower is."""
    return "↑" if direction is Direction.HIGHER_IS_BETTER else "↓"


def change(delta: float | None, direction: Direction, tolerance: float = 1e-9) -> Change:
    """Whether a move of ``delta`` is an improvement for a metric going ``direction``: one
    sample's move. A metric's change between two runs is :func:`metric_change`."""
    if delta is None or abs(delta) <= tolerance:
        return "same"
    up = delta > 0
    return "better" if up == (direction is Direction.HIGHER_IS_BETTER) else "worse"


def metric_change(found: StatsComparison | None) -> tuple[Change, str]:
    """A metric's change between two runs as the reports show it: its colour ("better" and
    "worse" only when significant, else "same": neutral) and its word, the statistics' own
    (:attr:`ragmeter.stats.Comparison.change`: "better", "worse", "no significant change",
    "not comparable"); ``("same", "")`` when the metric was not compared.
    """
    if found is None:
        return "same", ""
    word = found.change
    if word == "better" or word == "worse":
        return word, word
    return "same", word


def cost(usage: Mapping[str, Any]) -> str:
    """The cost of a usage record, with its currency, or why it is unknown."""
    currency = usage.get("currency")
    if not currency:
        return "not counted (no price set)"
    return f"{float(usage.get('cost') or 0.0):.4f} {currency}"


def usage_line(usage: Mapping[str, Any], what: str = "judge") -> str:
    """One line: calls, cached calls, tokens and cost of a usage record."""
    parts = [
        f"{count(usage.get('calls', 0))} {what} calls",
        f"{count(usage.get('cached_calls', 0))} cached",
        f"{count(usage.get('prompt_tokens', 0))} prompt + "
        f"{count(usage.get('completion_tokens', 0))} completion tokens",
    ]
    if usage.get("estimated_calls"):
        parts.append(f"tokens estimated for {count(usage['estimated_calls'])} calls")
    if what == "judge" or usage.get("currency"):
        parts.append(f"cost {cost(usage)}")
    return ", ".join(parts)


def describe_service(described: Mapping[str, Any]) -> str:
    """A judge's or embedding model's ``describe()`` as one short line (its base URL without
    credentials, also from a run recorded before ``describe()`` left them out)."""
    kind = str(described.get("kind", "unknown"))
    model = described.get("model") or described.get("name")
    parts = [str(model)] if model else []
    if kind not in parts:
        parts.append(kind)
    if described.get("base_url"):
        parts.append(redact_url(str(described["base_url"])))
    if described.get("sha256"):
        parts.append(f"sha256 {described['sha256']}")
    return " · ".join(parts)
