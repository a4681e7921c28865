"""Gate files: absolute floors and ceilings per metric, and regression rules against a
baseline, optionally per tag group. TOML or YAML; both read into the same rules."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ragmeter._services import read_settings
from ragmeter.stats import statistic_name

Statistic = Literal["mean", "ci_low", "ci_high"]


class GateFileError(ValueError):
    """A gate file that cannot be read; the message names the rule and the fix."""


@dataclass(frozen=True)
class Threshold:
    """``metric`` (over the group ``tag=value`` if given) must have ``statistic`` >= ``min``
    and/or <= ``max``, and at least ``min_coverage`` of the results it applies to scored (not
    n/a); without ``min_coverage``, the gate's floor (:func:`run_gate`'s ``min_coverage``,
    ``--min-coverage``, 1.0 by default: every one)."""

    metric: str
    min: float | None = None
    max: float | None = None
    statistic: Statistic = "mean"
    min_coverage: float | None = None
    tag: str | None = None
    value: str | None = None

    @property
    def name(self) -> str:
        bounds = []
        if self.min is not None:
            bounds.append(f"{self.statistic} >= {self.min:g}")
        if self.max is not None:
            bounds.append(f"{self.statistic} <= {self.max:g}")
        if self.min_coverage is not None:
            bounds.append(f"coverage >= {self.min_coverage:g}")
        return f"{self.metric}{_group(self.tag, self.value)}: {' and '.join(bounds)}"


@dataclass(frozen=True)
class Regression:
    """Fail when ``metric`` gets worse than the baseline by more than ``max_drop`` (in its
    own direction: a rise for lower-is-better metrics), and, when ``significant``, the change
    is significant at ``alpha`` (paired test, Holm-corrected over the gate's metrics). The
    candidate must have at least ``min_coverage`` of the results the metric applies to scored
    (else the gate's floor, as for a :class:`Threshold`)."""

    metric: str
    max_drop: float = 0.0
    significant: bool = True
    tag: str | None = None
    value: str | None = None
    min_coverage: float | None = None

    @property
    def name(self) -> str:
        rule = f"worse by more than {self.max_drop:g}"
        if self.significant:
            rule += " and significant"
        name = f"{self.metric}{_group(self.tag, self.value)}: not {rule}"
        if self.min_coverage is not None:
            name += f", coverage >= {self.min_coverage:g}"
        return name


#: The labels an agreement rule needs unless it sets ``min_labels``.
DEFAULT_MIN_LABELS = 30
#: How an agreement rule may name its statistic -> the statistic's name in a validation.
AGREEMENT_STATISTICS = {
    "kappa": "cohen_kappa",
    "cohen_kappa": "cohen_kappa",
    "spearman": "spearman",
    "preference": "preference_agreement",
    "preference_agreement": "preference_agreement",
}


@dataclass(frozen=True)
class Agreement:
    """``metric`` must be validated on the team's own labels: at least ``min_labels`` of
    them lined up with the run's verdicts, and its agreement with them at least
    ``min_agreement``, measured as ``statistic`` (``cohen_kappa`` for pass / fail labels,
    ``spearman`` for score labels, ``preference_agreement`` for preferences; ``None``:
    whichever the labels call for), on its value or (``on="ci_low"``) on the lower bound of
    its confidence interval, so that a few lucky labels cannot pass it."""

    metric: str
    min_agreement: float
    statistic: str | None = None
    min_labels: int = DEFAULT_MIN_LABELS
    on: str = "value"

    @property
    def name(self) -> str:
        statistic = statistic_name(self.statistic) or "agreement"
        bound = "'s CI lower bound" if self.on == "ci_low" else ""
        return (
            f"{self.metric}: validated on >= {self.min_labels} of your labels, "
            f"{statistic}{bound} >= {self.min_agreement:g}"
        )


@dataclass(frozen=True)
class GateRules:
    thresholds: tuple[Threshold, ...]
    regressions: tuple[Regression, ...]
    alpha: float = 0.05
    level: float = 0.95
    seed: int = 0
    agreements: tuple[Agreement, ...] = ()


def _group(tag: str | None, value: str | None) -> str:
    return f" [{tag}={value}]" if tag else ""


_THRESHOLD_KEYS = {"metric", "min", "max", "statistic", "min_coverage", "tag", "value"}
_REGRESSION_KEYS = {"metric", "max_drop", "significant", "tag", "value", "min_coverage"}
_AGREEMENT_KEYS = {"metric", "min_agreement", "statistic", "min_labels", "on"}


def _check_keys(where: str, entry: Any, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise GateFileError(f"{where}: expected a table of settings, got {entry!r}")
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise GateFileError(f"{where}: unknown setting(s) {unknown}; allowed: {sorted(allowed)}")
    if not isinstance(entry.get("metric"), str):
        raise GateFileError(f'{where}: give the metric, e.g. metric = "faithfulness"')
    if ("tag" in entry) != ("value" in entry):
        raise GateFileError(f"{where}: give both tag and value (e.g. question_type, multi_hop)")
    return entry


def parse_rules(data: dict[str, Any]) -> GateRules:
    """Rules from a parsed gate file (see :func:`load_rules` for the format)."""
    settings = data.get("gate", {})
    thresholds = []
    for i, entry in enumerate(data.get("thresholds", data.get("threshold", []))):
        where = f"threshold rule {i + 1}"
        entry = _check_keys(where, entry, _THRESHOLD_KEYS)
        if entry.get("min") is None and entry.get("max") is None and "min_coverage" not in entry:
            raise GateFileError(f"{where} ({entry['metric']}): give min, max or min_coverage")
        statistic = entry.get("statistic", "mean")
        if statistic not in ("mean", "ci_low", "ci_high"):
            raise GateFileError(f"{where}: statistic must be mean, ci_low or ci_high")
        thresholds.append(
            Threshold(
                entry["metric"],
                _number(entry.get("min"), f"{where} min"),
                _number(entry.get("max"), f"{where} max"),
                statistic,
                _coverage(entry.get("min_coverage"), f"{where} min_coverage"),
                entry.get("tag"),
                None if entry.get("value") is None else str(entry["value"]),
            )
        )
    regressions = []
    for i, entry in enumerate(data.get("regressions", data.get("regression", []))):
        where = f"regression rule {i + 1}"
        entry = _check_keys(where, entry, _REGRESSION_KEYS)
        regressions.append(
            Regression(
                entry["metric"],
                _number(entry.get("max_drop", 0.0), f"{where} max_drop") or 0.0,
                bool(entry.get("significant", True)),
                entry.get("tag"),
                None if entry.get("value") is None else str(entry["value"]),
                _coverage(entry.get("min_coverage"), f"{where} min_coverage"),
            )
        )
    agreements = [
        _agreement(f"agreement rule {i + 1}", entry)
        for i, entry in enumerate(data.get("agreements", data.get("agreement", [])))
    ]
    if not thresholds and not regressions and not agreements:
        raise GateFileError(
            "the gate file has no rule: add [[thresholds]], [[regressions]] and/or "
            "[[agreements]] entries"
        )
    return GateRules(
        tuple(thresholds),
        tuple(regressions),
        alpha=float(settings.get("alpha", 0.05)),
        level=float(settings.get("level", 0.95)),
        seed=int(settings.get("seed", 0)),
        agreements=tuple(agreements),
    )


def _agreement(where: str, entry: Any) -> Agreement:
    """An ``[[agreements]]`` entry: metric, min_agreement, optional statistic and
    min_labels."""
    entry = _check_keys(where, entry, _AGREEMENT_KEYS)
    value = _number(entry.get("min_agreement"), f"{where} min_agreement")
    if value is None:
        raise GateFileError(
            f"{where} ({entry['metric']}): give min_agreement, e.g. min_agreement = 0.6 "
            "(Cohen's kappa for pass / fail labels)"
        )
    statistic = entry.get("statistic")
    if statistic is not None and statistic not in AGREEMENT_STATISTICS:
        raise GateFileError(
            f"{where}: statistic must be one of {sorted(AGREEMENT_STATISTICS)}, got "
            f"{statistic!r} (kappa for pass / fail labels, spearman for score labels)"
        )
    labels = entry.get("min_labels", DEFAULT_MIN_LABELS)
    if isinstance(labels, bool) or not isinstance(labels, int) or labels < 1:
        raise GateFileError(f"{where}: min_labels is a whole number from 1, got {labels!r}")
    on = entry.get("on", "value")
    if on not in ("value", "ci_low"):
        raise GateFileError(
            f"{where}: on must be value (the agreement itself) or ci_low (the lower bound of "
            f"its confidence interval), got {on!r}"
        )
    return Agreement(
        entry["metric"],
        value,
        None if statistic is None else AGREEMENT_STATISTICS[statistic],
        labels,
        on,
    )


def _number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GateFileError(f"{where}: expected a number, got {value!r}")
    if not math.isfinite(value):  # every score is >= nan: it would pass anything
        raise GateFileError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _coverage(value: Any, where: str) -> float | None:
    share = _number(value, where)
    if share is not None and not 0.0 <= share <= 1.0:
        raise GateFileError(f"{where}: a share of the results from 0 to 1, got {value!r}")
    return share


def load_rules(path: str | Path) -> GateRules:
    """Read a gate file (``.toml``, ``.yaml`` / ``.yml``)::

    [gate]
    alpha = 0.05          # significance level of regression rules

    [[thresholds]]
    metric = "faithfulness"
    min = 0.8             # the mean must be at least 0.8
    statistic = "ci_low"  # ...or its confidence interval's lower end
    min_coverage = 0.95   # 95% of its results scored (default: all; n/a is not counted)

    [[thresholds]]
    metric = "noise_sensitivity_relevant"
    max = 0.2             # lower is better: a ceiling

    [[regressions]]
    metric = "faithfulness"
    max_drop = 0.02       # fail if it drops by more than 0.02 and the drop is significant
    tag = "question_type" # optional: only over this group
    value = "multi_hop"

    [[agreements]]
    metric = "faithfulness"
    min_agreement = 0.6   # its agreement with your labels (run store) at least 0.6...
    statistic = "kappa"   # ...as Cohen's kappa (default: kappa, Spearman for score labels)
    min_labels = 30       # on at least 30 labels lined up with the run's verdicts (default)
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no gate file at {str(path)!r}")
    try:
        data = read_settings(path, what="gate file") or {}
    except ValueError as error:
        raise GateFileError(str(error)) from None
    if not isinstance(data, dict):
        raise GateFileError(f"{path}: expected a mapping of settings at the top level")
    return parse_rules(data)
