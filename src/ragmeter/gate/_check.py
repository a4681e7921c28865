"""Applying a gate's rules to a candidate run (and its baseline): pass or fail per rule,
with the figures behind each verdict, and the coverage floor every rule's metric must meet."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from ragmeter._percent import percent
from ragmeter.gate._rules import Agreement, GateRules, Regression, Threshold
from ragmeter.metrics import Direction
from ragmeter.results import Aggregate, EvaluationResult
from ragmeter.stats import (
    Comparison,
    MeanEstimate,
    Validation,
    comparability,
    compare,
    estimate_group_means,
    estimate_means,
    statistic_name,
)


class GateUsageError(ValueError):
    """The gate cannot be applied as asked (a metric the run lacks, no baseline...)."""


class JudgeChangedError(GateUsageError):
    """The baseline and the candidate were judged (or embedded) differently on a metric a
    regression rule compares: the message names both sides."""


#: The share of a gated metric's results that must be scored unless a rule says otherwise
#: (``run_gate(min_coverage=...)``, ``--min-coverage``): all of them, n/a aside.
DEFAULT_MIN_COVERAGE = 1.0

#: How a coverage shortfall is remedied, after the shortfalls themselves.
COVERAGE_FIX = (
    "compute them again with ragmeter eval --resume RUN_DIR, or lower the floor with "
    "--min-coverage (min_coverage=) or a rule's min_coverage"
)


def floor_text(floor: float) -> str:
    """A coverage floor as a percentage, as precise as it was given: 100%, 95%, 99.5%."""
    return f"{floor * 100:g}%"


@dataclass(frozen=True)
class Coverage:
    """How many of a rule's results the candidate scored, against the rule's ``floor``.

    ``scored`` of ``total`` results (samples of the rule's metric, over its group if it has
    one) got a score, ``not_applicable`` were n/a: the metric does not apply there (a response
    with no claims), a legitimate outcome that is left out of the share. The rest failed or
    were never computed, the run having stopped first (``missing``): the share is
    ``scored / (total - not_applicable)``.
    """

    metric: str
    scored: int
    total: int
    not_applicable: int
    floor: float
    group: str = ""

    @property
    def applicable(self) -> int:
        return self.total - self.not_applicable

    @property
    def missing(self) -> int:
        """Results that failed or were never computed."""
        return self.applicable - self.scored

    @property
    def share(self) -> float:
        """Scored over applicable; 1.0 when nothing applies (nothing failed)."""
        return self.scored / self.applicable if self.applicable else 1.0

    @property
    def passed(self) -> bool:
        return self.share >= self.floor

    def figures(self) -> str:
        """ "coverage 2/30 (7%)", with the n/a results left out when there are any."""
        text = f"coverage {self.scored}/{self.applicable} ({percent(self.share)})"
        if self.not_applicable:
            text += f", {self.not_applicable} n/a not counted"
        return text

    def shortfall(self) -> str:
        """ "coverage 2/30 (7%) < 100% (28 results failed or missing)"."""
        missing = f"{self.missing} result{'s' * (self.missing != 1)} failed or missing"
        na = f"; {self.not_applicable} n/a not counted" if self.not_applicable else ""
        return (
            f"coverage {self.scored}/{self.applicable} ({percent(self.share)}) < "
            f"{floor_text(self.floor)} ({missing}{na})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "scored": self.scored,
            "total": self.total,
            "not_applicable": self.not_applicable,
            "applicable": self.applicable,
            "missing": self.missing,
            "share": self.share,
            "min_coverage": self.floor,
            "passed": self.passed,
        }


@dataclass(frozen=True)
class RuleOutcome:
    """One rule's verdict: ``passed``, and in ``message`` the figures it rests on.

    ``coverage`` is how many of the rule's results the candidate scored against its floor; a
    rule whose coverage falls short fails whatever its figures (``coverage_failed``).
    """

    kind: Literal["threshold", "regression", "agreement"]
    rule: str
    metric: str
    passed: bool
    message: str
    figures: dict[str, Any] = field(default_factory=dict)
    coverage: Coverage | None = None

    @property
    def coverage_failed(self) -> bool:
        return self.coverage is not None and not self.coverage.passed


@dataclass
class GateReport:
    outcomes: list[RuleOutcome]
    candidate: str
    baseline: str | None = None
    #: How the baseline and the candidate were measured differently on the metrics the
    #: regression rules compare (judge, embedding model, settings, prompt versions): warnings.
    differences: list[str] = field(default_factory=list)
    #: The coverage floor of the rules that set none of their own.
    min_coverage: float = DEFAULT_MIN_COVERAGE

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outcomes)

    @property
    def failures(self) -> list[RuleOutcome]:
        return [o for o in self.outcomes if not o.passed]

    @property
    def coverage_failures(self) -> list[RuleOutcome]:
        """The rules whose metric has fewer results scored than their floor."""
        return [o for o in self.outcomes if o.coverage_failed]

    def coverage_reason(self) -> str | None:
        """Why coverage failed, each metric (and group) once, and the fix; None when it did
        not: "faithfulness: coverage 2/30 (7%) < 100% (28 results failed or missing):
        compute them again with ragmeter eval --resume RUN_DIR, or lower the floor ..." """
        found = [
            f"{o.metric}{o.coverage.group}: {o.coverage.shortfall()}"
            for o in self.coverage_failures
            if o.coverage is not None
        ]
        if not found:
            return None
        return f"{'; '.join(dict.fromkeys(found))}: {COVERAGE_FIX}"


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def _metric_names(result: EvaluationResult) -> list[str]:
    return [m.name for m in result.metrics]


def _require(result: EvaluationResult, metric: str, which: str) -> None:
    if metric not in _metric_names(result):
        raise GateUsageError(
            f"the gate names metric {metric!r}, which the {which} run does not have "
            f"(it has {_metric_names(result)}): evaluate it, or drop the rule"
        )


def _estimate(
    result: EvaluationResult, rule: Threshold | Regression, rules: GateRules
) -> MeanEstimate | None:
    metrics = [rule.metric]
    if rule.tag is None:
        return estimate_means(result, level=rules.level, seed=rules.seed, metrics=metrics).get(
            rule.metric
        )
    groups = estimate_group_means(
        result, rule.tag, level=rules.level, seed=rules.seed, metrics=metrics
    )
    return groups.get(str(rule.value), {}).get(rule.metric)


class _Counts:
    """Each metric's result counts over the candidate, and over each tag group asked for
    (one pass over the run per tag)."""

    def __init__(self, result: EvaluationResult) -> None:
        self.result = result
        self.by_tag: dict[str, dict[str, dict[str, Aggregate]]] = {}

    def coverage(self, rule: Threshold | Regression, floor: float) -> Coverage:
        if rule.min_coverage is not None:
            floor = rule.min_coverage
        if rule.tag is None:
            agg: Aggregate | None = self.result.aggregates.get(rule.metric)
            group = ""
        else:
            if rule.tag not in self.by_tag:
                groups = self.result.breakdowns([rule.tag]).get(rule.tag, [])
                self.by_tag[rule.tag] = {g.value: g.aggregates for g in groups}
            agg = self.by_tag[rule.tag].get(str(rule.value), {}).get(rule.metric)
            group = f" [{rule.tag}={rule.value}]"
        if agg is None:
            return Coverage(rule.metric, 0, 0, 0, floor, group)
        return Coverage(rule.metric, agg.n_ok, agg.n_total, agg.n_not_applicable, floor, group)


def _check_threshold(
    result: EvaluationResult, rule: Threshold, rules: GateRules, coverage: Coverage
) -> RuleOutcome:
    estimate = _estimate(result, rule, rules)
    problems: list[str] = []
    figures: dict[str, Any] = {}
    summary = ""
    if estimate is None or estimate.n == 0:
        where = f" in group {rule.tag}={rule.value}" if rule.tag else ""
        problems.append(f"no sample{where} has a score")
    else:
        value = {
            "mean": estimate.mean,
            "ci_low": estimate.ci.low if estimate.ci else None,
            "ci_high": estimate.ci.high if estimate.ci else None,
        }[rule.statistic]
        if value is None:
            problems.append(f"{rule.statistic} is undefined with {estimate.n} scored sample(s)")
        else:
            if rule.min is not None and value < rule.min:
                problems.append(f"{rule.statistic} {value:.4f} < {rule.min:g}")
            if rule.max is not None and value > rule.max:
                problems.append(f"{rule.statistic} {value:.4f} > {rule.max:g}")
        ci = (
            f" ({estimate.ci.level:.0%} CI {estimate.ci.low:.4f} to {estimate.ci.high:.4f})"
            if estimate.ci
            else ""
        )
        summary = (
            f"mean {_fmt(estimate.mean)}{ci} over {estimate.n}/{estimate.n_total} scored samples"
        )
        if coverage.not_applicable:
            summary += f" ({coverage.not_applicable} n/a)"
        figures = {
            "mean": estimate.mean,
            "ci": None if estimate.ci is None else [estimate.ci.low, estimate.ci.high],
            "n": estimate.n,
            "n_total": estimate.n_total,
        }
    if not coverage.passed:
        problems.append(coverage.shortfall())
    message = ": ".join(part for part in ("; ".join(problems), summary) if part)
    return RuleOutcome(
        "threshold",
        rule.name,
        rule.metric,
        not problems,
        message,
        {**figures, "coverage": coverage.to_dict()},
        coverage,
    )


def _check_regression(rule: Regression, comparison: Comparison, coverage: Coverage) -> RuleOutcome:
    short = "" if coverage.passed else f"{coverage.shortfall()}; "
    figures = {**comparison.to_dict(), "coverage": coverage.to_dict()}
    if comparison.difference is None:
        passed, verdict = False, f"cannot compare: {comparison.verdict()}"
    else:
        sign = 1 if comparison.direction is Direction.HIGHER_IS_BETTER else -1
        worse_by = -sign * comparison.difference
        regressed = worse_by > rule.max_drop and (not rule.significant or comparison.significant)
        passed, verdict = not regressed and coverage.passed, comparison.verdict()
    return RuleOutcome(
        "regression", rule.name, rule.metric, passed, f"{short}{verdict}", figures, coverage
    )


#: How a metric gets validated, or better validated, on the team's labels.
LABEL_FIX = (
    "label the run's verdicts (ragmeter labels queue RUN -o queue.jsonl, fill value, then "
    "ragmeter labels import queue.jsonl; or the dashboard's /label page)"
)


def _measured(rule: Agreement, validation: Validation) -> float | None:
    """What an agreement rule compares with its floor: the agreement, or its CI's low end."""
    if rule.on == "ci_low":
        return None if validation.ci is None else validation.ci[0]
    return validation.value


def _check_agreement(rule: Agreement, validation: Validation) -> RuleOutcome:
    """An agreement rule's verdict on the metric's validation on the team's labels."""
    figures: dict[str, Any] = validation.to_dict()
    asked = rule.statistic or validation.statistic
    shown = validation.describe()
    if validation.n_labels == 0:
        problem = f"not validated on your data: {LABEL_FIX}, at least {rule.min_labels}"
    elif validation.n_labels < rule.min_labels:
        more = rule.min_labels - validation.n_labels
        problem = (
            f"{shown}: fewer than the {rule.min_labels} labels the rule needs; "
            f"{LABEL_FIX}, {more} more"
        )
    elif validation.statistic != asked:
        problem = (
            f"{shown}: the rule asks for {statistic_name(asked)}, which these labels do not "
            "measure (kappa needs pass / fail labels, Spearman score labels, preference "
            "agreement preference labels): drop "
            "statistic, or label the other way"
        )
    elif rule.on == "ci_low" and validation.value is not None and validation.ci is None:
        problem = f"{shown}: no confidence interval to bound (label more items)"
    elif (measured := _measured(rule, validation)) is None or measured < rule.min_agreement:
        said = "" if rule.on == "value" or measured is None else f" (lower bound {measured:.2f})"
        problem = (
            f"{shown}{said}: below {rule.min_agreement:g}; see the disagreements (ragmeter labels "
            "agreement RUN), then calibrate the judge (ragmeter calibrate fit) or change it"
        )
    else:
        problem = ""
    return RuleOutcome("agreement", rule.name, rule.metric, not problem, problem or shown, figures)


def run_gate(
    candidate: EvaluationResult,
    rules: GateRules,
    baseline: EvaluationResult | None = None,
    *,
    candidate_name: str = "candidate",
    baseline_name: str | None = None,
    allow_judge_change: bool = False,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
    validations: Mapping[str, Validation] | None = None,
) -> GateReport:
    """Every rule's verdict on ``candidate`` (regression rules against ``baseline``).

    Every rule also needs ``min_coverage`` (its own ``min_coverage`` if it sets one) of the
    candidate's results of its metric (over its group) scored, n/a not counted: by default
    all of them, so a run whose judge was down fails rather than passing on the few samples
    it scored. A rule short of its floor fails; :attr:`GateReport.coverage_failures` lists
    them and :meth:`GateReport.coverage_reason` says why and how to lower the floor.

    Raises :class:`GateUsageError` when a rule names a metric a run lacks, or regression
    rules are given without a baseline; :class:`JudgeChangedError` when a regression rule's
    metric was judged (or embedded) by a different model or with different generation
    settings in the two runs, unless ``allow_judge_change``. The report's ``differences``
    list every difference of the compared metrics (refused or allowed, settings, prompts).

    Agreement rules (``min_agreement``) read each metric's validation on the team's labels
    from ``validations`` (:func:`ragmeter.align.validations`; a metric missing there is not
    validated): the caller measures it, the gate only compares.
    """
    if not 0.0 <= min_coverage <= 1.0:
        raise GateUsageError(
            f"min_coverage is a share of the results from 0 to 1, got {min_coverage!r}"
        )
    every_rule: list[Threshold | Regression | Agreement] = [
        *rules.thresholds,
        *rules.regressions,
        *rules.agreements,
    ]
    for rule in every_rule:
        _require(candidate, rule.metric, "candidate")
    if rules.regressions:
        if baseline is None:
            raise GateUsageError(
                "the gate has regression rules but no baseline run: pass --baseline RUN_DIR "
                "(or drop the [[regressions]] entries)"
            )
        for rule in rules.regressions:
            _require(baseline, rule.metric, "baseline")
    differences: list[str] = []
    if baseline is not None and rules.regressions:
        checked = comparability(
            baseline, candidate, metrics=sorted({r.metric for r in rules.regressions})
        )
        refused = checked.lines(refusing=True)
        if refused and not allow_judge_change:
            raise JudgeChangedError(
                "the baseline and the candidate were not judged the same way, so a regression "
                "gate between them would measure the judges, not the system: "
                + "; ".join(refused)
                + ". Re-run the baseline with the candidate's judge, or pass "
                "--allow-judge-change (allow_judge_change=True) to gate anyway."
            )
        differences = checked.lines()
    counts = _Counts(candidate)
    outcomes = [
        _check_threshold(candidate, rule, rules, counts.coverage(rule, min_coverage))
        for rule in rules.thresholds
    ]
    if baseline is not None and rules.regressions:
        # Rules over the whole run are compared together, so Holm corrects across them;
        # each group's rule is compared on its own group.
        runs = partial(
            compare,
            baseline,
            candidate,
            level=rules.level,
            alpha=rules.alpha,
            seed=rules.seed,
            allow_judge_change=allow_judge_change,
        )
        whole = [r for r in rules.regressions if r.tag is None]
        by_metric: dict[str, Comparison] = {}
        if whole:
            by_metric = {c.metric: c for c in runs(metrics=sorted({r.metric for r in whole}))}
        for rule in rules.regressions:
            if rule.tag is None:
                comparison = by_metric[rule.metric]
            else:
                (comparison,) = runs(metrics=[rule.metric], tag=rule.tag, value=rule.value)
            outcomes.append(
                _check_regression(rule, comparison, counts.coverage(rule, min_coverage))
            )
    for agreement in rules.agreements:
        found = (validations or {}).get(agreement.metric) or Validation(agreement.metric, 0)
        outcomes.append(_check_agreement(agreement, found))
    return GateReport(outcomes, candidate_name, baseline_name, differences, min_coverage)
