"""Applying a gate's rules to a candidate run (and its baseline): pass or fail per rule,
with the figures behind each verdict."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ragmeter.gate._rules import GateRules, Regression, Threshold
from ragmeter.metrics import Direction
from ragmeter.results import EvaluationResult
from ragmeter.stats import (
    Comparison,
    MeanEstimate,
    comparability,
    compare,
    estimate_group_means,
    estimate_means,
)


class GateUsageError(ValueError):
    """The gate cannot be applied as asked (a metric the run lacks, no baseline...)."""


class JudgeChangedError(GateUsageError):
    """The baseline and the candidate were judged (or embedded) differently on a metric a
    regression rule compares: the message names both sides."""


@dataclass(frozen=True)
class RuleOutcome:
    """One rule's verdict: ``passed``, and in ``message`` the figures it rests on."""

    kind: Literal["threshold", "regression"]
    rule: str
    metric: str
    passed: bool
    message: str
    figures: dict[str, Any] = field(default_factory=dict)


@dataclass
class GateReport:
    outcomes: list[RuleOutcome]
    candidate: str
    baseline: str | None = None
    #: How the baseline and the candidate were measured differently on the metrics the
    #: regression rules compare (judge, embedding model, settings, prompt versions): warnings.
    differences: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outcomes)

    @property
    def failures(self) -> list[RuleOutcome]:
        return [o for o in self.outcomes if not o.passed]


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


def _check_threshold(result: EvaluationResult, rule: Threshold, rules: GateRules) -> RuleOutcome:
    estimate = _estimate(result, rule, rules)
    if estimate is None or estimate.n == 0:
        where = f" in group {rule.tag}={rule.value}" if rule.tag else ""
        return RuleOutcome(
            "threshold", rule.name, rule.metric, False, f"no sample{where} has a score"
        )
    value = {
        "mean": estimate.mean,
        "ci_low": estimate.ci.low if estimate.ci else None,
        "ci_high": estimate.ci.high if estimate.ci else None,
    }[rule.statistic]
    coverage = estimate.n / estimate.n_total if estimate.n_total else 0.0
    problems = []
    if value is None:
        problems.append(f"{rule.statistic} is undefined with {estimate.n} scored sample(s)")
    else:
        if rule.min is not None and value < rule.min:
            problems.append(f"{rule.statistic} {value:.4f} < {rule.min:g}")
        if rule.max is not None and value > rule.max:
            problems.append(f"{rule.statistic} {value:.4f} > {rule.max:g}")
    if rule.min_coverage is not None and coverage < rule.min_coverage:
        problems.append(f"coverage {coverage:.0%} < {rule.min_coverage:.0%}")
    ci = (
        f" ({estimate.ci.level:.0%} CI {estimate.ci.low:.4f} to {estimate.ci.high:.4f})"
        if estimate.ci
        else ""
    )
    figures = f"mean {_fmt(estimate.mean)}{ci} over {estimate.n}/{estimate.n_total} scored samples"
    message = f"{'; '.join(problems)}: {figures}" if problems else figures
    return RuleOutcome(
        "threshold",
        rule.name,
        rule.metric,
        not problems,
        message,
        {
            "mean": estimate.mean,
            "ci": None if estimate.ci is None else [estimate.ci.low, estimate.ci.high],
            "n": estimate.n,
            "n_total": estimate.n_total,
        },
    )


def _check_regression(rule: Regression, comparison: Comparison) -> RuleOutcome:
    if comparison.difference is None:
        return RuleOutcome(
            "regression",
            rule.name,
            rule.metric,
            False,
            f"cannot compare: {comparison.verdict()}",
        )
    sign = 1 if comparison.direction is Direction.HIGHER_IS_BETTER else -1
    worse_by = -sign * comparison.difference
    regressed = worse_by > rule.max_drop and (not rule.significant or comparison.significant)
    return RuleOutcome(
        "regression",
        rule.name,
        rule.metric,
        not regressed,
        comparison.verdict(),
        comparison.to_dict(),
    )


def run_gate(
    candidate: EvaluationResult,
    rules: GateRules,
    baseline: EvaluationResult | None = None,
    *,
    candidate_name: str = "candidate",
    baseline_name: str | None = None,
    allow_judge_change: bool = False,
) -> GateReport:
    """Every rule's verdict on ``candidate`` (regression rules against ``baseline``).

    Raises :class:`GateUsageError` when a rule names a metric a run lacks, or regression
    rules are given without a baseline; :class:`JudgeChangedError` when a regression rule's
    metric was judged (or embedded) by a different model or with different generation
    settings in the two runs, unless ``allow_judge_change``. The report's ``differences``
    list every difference of the compared metrics (refused or allowed, settings, prompts).
    """
    every_rule: list[Threshold | Regression] = [*rules.thresholds, *rules.regressions]
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
    outcomes = [_check_threshold(candidate, rule, rules) for rule in rules.thresholds]
    if baseline is not None and rules.regressions:
        # Rules over the whole run are compared together, so Holm corrects across them;
        # each group's rule is compared on its own group.
        whole = [r for r in rules.regressions if r.tag is None]
        by_metric: dict[str, Comparison] = {}
        if whole:
            found = compare(
                baseline,
                candidate,
                metrics=sorted({r.metric for r in whole}),
                level=rules.level,
                alpha=rules.alpha,
                seed=rules.seed,
                allow_judge_change=allow_judge_change,
            )
            by_metric = {c.metric: c for c in found}
        for rule in rules.regressions:
            if rule.tag is None:
                comparison = by_metric[rule.metric]
            else:
                (comparison,) = compare(
                    baseline,
                    candidate,
                    metrics=[rule.metric],
                    level=rules.level,
                    alpha=rules.alpha,
                    seed=rules.seed,
                    tag=rule.tag,
                    value=rule.value,
                    allow_judge_change=allow_judge_change,
                )
            outcomes.append(_check_regression(rule, comparison))
    return GateReport(outcomes, candidate_name, baseline_name, differences)
