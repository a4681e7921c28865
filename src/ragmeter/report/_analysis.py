"""What both reports show, computed once: worst samples, failures, run-vs-run changes."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from ragmeter.metrics import Direction, MetricResult, Status
from ragmeter.report._format import change, describe_service
from ragmeter.results import Aggregate, EvaluationResult, MetricInfo, SampleResult

if TYPE_CHECKING:
    from ragmeter.stats import Comparison as StatsComparison
    from ragmeter.stats import JudgeErrorEstimate, LabelledPairs, MeanEstimate, Validation

#: Per metric, (judge score, human label) pairs of labelled items, or a
#: :class:`~ragmeter.stats.LabelledPairs` (with its method): what a report's line "with judge
#: error" is computed from (the caller reads them from the run store's labels).
Labelled = Mapping[str, "Sequence[Sequence[Any]] | LabelledPairs"]
#: Per judged metric, its validation on the team's labels (``ragmeter.align.validations``).
Validations = Mapping[str, "Validation"]

#: Bootstrap resamples of the summary's confidence intervals (as ``ragmeter show`` draws).
CI_RESAMPLES = 2_000
#: What the summary's "not started" column counts (shown when a run has any).
NOT_STARTED_NOTE = (
    "Not started: the run stopped before computing it (its budget, a refused judge, a "
    "kill); not a failure, and resuming the run computes it."
)


def ok_result(sample: SampleResult, metric: str) -> MetricResult | None:
    """``sample``'s result for ``metric`` when it is ok (so it has a score), else ``None``."""
    result = sample.scores.get(metric)
    return result if result is not None and result.status is Status.OK else None


def worst_samples(
    samples: Sequence[SampleResult], metric: MetricInfo, n: int
) -> list[SampleResult]:
    """The ``n`` ok samples that score worst on ``metric`` (lowest when higher is better,
    highest when lower is), worst first; ties keep dataset order."""
    sign = -1.0 if metric.direction is Direction.LOWER_IS_BETTER else 1.0
    scored = [s for s in samples if ok_result(s, metric.name) is not None]
    scored.sort(key=lambda s: (sign * (s.scores[metric.name].score or 0.0), s.index))
    return scored[: max(0, n)]


def mean_estimates(result: EvaluationResult) -> dict[str, MeanEstimate]:
    """Each metric's mean with its 95% bootstrap CI, as ``ragmeter show`` computes them
    (:func:`ragmeter.stats.estimate_means`, BCa, ``CI_RESAMPLES`` resamples, seed 0)."""
    from ragmeter.stats import estimate_means

    return estimate_means(result, n_resamples=CI_RESAMPLES)


def judge_error_estimates(
    result: EvaluationResult, labelled: Labelled | None
) -> list[JudgeErrorEstimate]:
    """Per metric in ``labelled``: its mean with the sampling-only interval and the one with
    the judge's measured error (:func:`ragmeter.stats.with_judge_error`, ``CI_RESAMPLES``
    resamples, seed 0). Bad pairs raise ``ValueError`` naming the row."""
    from ragmeter.stats import with_judge_error

    return [
        with_judge_error(result, metric, pairs, n_resamples=CI_RESAMPLES)
        for metric, pairs in (labelled or {}).items()
    ]


def validation_lines(validations: Validations | None) -> list[tuple[str, str]]:
    """(metric, "validated on 120 of your labels: kappa 0.71 [0.58, 0.83]" or "not
    validated on your data") per metric given."""
    return [(metric, v.describe()) for metric, v in (validations or {}).items()]


def judge_error_text(estimate: JudgeErrorEstimate) -> str:
    """``0.82, 95% CI 0.78-0.86 (sampling), 0.75-0.88 (with judge error)`` and how."""
    return estimate.sentence() + (f" ({estimate.basis})" if estimate.basis else "")


@dataclass(frozen=True)
class WorstSamples:
    """A metric's samples that score worse than ``cut`` (below it when higher is better,
    above it when lower is), worst first, at most the number asked for. ``rule`` names the
    cut ("median" or "threshold"); ``n_scored`` and ``n_below`` count all, not only those
    listed."""

    metric: MetricInfo
    rule: str
    cut: float | None
    n_scored: int
    n_below: int
    samples: list[SampleResult]


def worse_than(value: float, cut: float, direction: Direction) -> bool:
    """Whether a score of ``value`` is strictly worse than ``cut`` for a metric going
    ``direction`` (a score equal to the cut is not)."""
    return value > cut if direction is Direction.LOWER_IS_BETTER else value < cut


def worst_below(
    samples: Sequence[SampleResult],
    metric: MetricInfo,
    n: int,
    threshold: float | None = None,
) -> WorstSamples:
    """The ``n`` worst ok samples on ``metric`` among those strictly worse than ``threshold``
    when given, else than the median of the ok scores: a sample at or past the cut (a
    perfect score, or any score when all are equal) is never listed."""
    scored = [s for s in samples if ok_result(s, metric.name) is not None]
    values = [s.scores[metric.name].score or 0.0 for s in scored]
    cut: float | None
    if threshold is not None:
        rule, cut = "threshold", float(threshold)
    else:
        rule, cut = "median", (statistics.median(values) if values else None)
    below = (
        [s for s, v in zip(scored, values) if worse_than(v, cut, metric.direction)]
        if cut is not None
        else []
    )
    listed = worst_samples(below, metric, n)
    return WorstSamples(metric, rule, cut, len(scored), len(below), listed)


@dataclass(frozen=True)
class FailureGroup:
    """The samples on which ``metric`` failed with the same error."""

    metric: str
    error: str
    samples: list[SampleResult]


def failure_groups(
    samples: Sequence[SampleResult], metrics: Sequence[MetricInfo]
) -> list[FailureGroup]:
    """Failed results grouped by metric and error, largest group first."""
    groups: dict[tuple[str, str], list[SampleResult]] = {}
    for sample in samples:
        for metric in metrics:
            result = sample.scores.get(metric.name)
            if result is not None and result.status is Status.FAILED:
                key = (metric.name, result.error or "no error message")
                groups.setdefault(key, []).append(sample)
    ordered = sorted(groups.items(), key=lambda item: -len(item[1]))
    return [FailureGroup(metric, error, found) for (metric, error), found in ordered]


def judges(config: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """Each distinct judge of a run (as one line) with the metrics it judged."""
    return _services(config.get("judges"))


def embedding_models(config: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """Each distinct embedding model of a run (as one line) with the metrics that used it."""
    return _services(config.get("embeddings"))


def _services(described: Any) -> list[tuple[str, list[str]]]:
    found: dict[str, list[str]] = {}
    for metric, description in (described or {}).items():
        line = describe_service(description) if isinstance(description, dict) else str(description)
        found.setdefault(line, []).append(metric)
    return list(found.items())


def default_title(result: EvaluationResult) -> str:
    """ "ragmeter report — <dataset file name>", or just "ragmeter report"."""
    source = (result.config.get("dataset") or {}).get("source")
    return f"ragmeter report — {PurePath(str(source)).name}" if source else "ragmeter report"


def run_label(result: EvaluationResult) -> str:
    """A run in a few words: dataset, fingerprint and time."""
    dataset = result.config.get("dataset") or {}
    parts = [
        PurePath(str(dataset["source"])).name if dataset.get("source") else None,
        dataset.get("fingerprint"),
        result.config.get("created_at"),
        f"{len(result)} samples",
    ]
    return " · ".join(str(p) for p in parts if p)


@dataclass(frozen=True)
class SampleChange:
    """One shared sample's score on a metric in both runs."""

    sample: SampleResult
    baseline: float
    current: float

    @property
    def delta(self) -> float:
        return self.current - self.baseline


@dataclass(frozen=True)
class MetricDelta:
    """A metric in two runs: both aggregates, the change of the mean, and per shared sample
    how many moved which way (``changes``: the largest moves first)."""

    metric: str
    direction: Direction
    baseline: Aggregate | None
    current: Aggregate | None
    n_paired: int = 0
    n_better: int = 0
    n_worse: int = 0
    n_status_changed: int = 0
    changes: list[SampleChange] = field(default_factory=list)
    #: Every shared sample scored in both runs, in this run's order (``changes`` holds the
    #: ``top`` that moved most).
    pairs: list[SampleChange] = field(default_factory=list)

    @property
    def delta(self) -> float | None:
        """Current mean minus baseline mean (``None`` unless both runs have a mean)."""
        if self.baseline is None or self.current is None:
            return None
        if self.baseline.mean is None or self.current.mean is None:
            return None
        return self.current.mean - self.baseline.mean


@dataclass(frozen=True)
class Comparison:
    """How a run differs from a baseline run; samples are matched by sample id."""

    n_shared: int
    n_only_current: int
    n_only_baseline: int
    same_dataset: bool | None
    metrics: list[MetricDelta]

    @property
    def same_samples(self) -> bool:
        return self.n_only_current == 0 and self.n_only_baseline == 0

    def sample_note(self) -> str:
        """One plain sentence on which samples the per-sample comparison covers."""
        if self.same_samples:
            return f"Both runs have the same {self.n_shared} samples (matched by id)."
        return (
            f"The runs' sample sets differ: compared on {self.n_shared} shared samples "
            f"({self.n_only_current} only in this run, {self.n_only_baseline} only in the "
            "baseline). Means are over each run's own samples."
        )


def compare_runs(
    current: EvaluationResult,
    baseline: EvaluationResult,
    top: int = 10,
    current_samples: Sequence[SampleResult] | None = None,
) -> Comparison:
    """``current`` against ``baseline``: deltas are current minus baseline."""
    samples = list(current_samples if current_samples is not None else current.samples)
    before: dict[str, SampleResult] = {}
    for sample in baseline:
        before.setdefault(sample.sample_id, sample)
    current_ids = {s.sample_id for s in samples}
    shared: list[tuple[SampleResult, SampleResult]] = []
    seen: set[str] = set()
    for sample in samples:
        if sample.sample_id in before and sample.sample_id not in seen:
            seen.add(sample.sample_id)
            shared.append((sample, before[sample.sample_id]))
    infos = {m.name: m for m in baseline.metrics} | {m.name: m for m in current.metrics}
    order = [m.name for m in current.metrics] + [
        m.name for m in baseline.metrics if m.name not in {c.name for c in current.metrics}
    ]
    deltas = [_metric_delta(infos[name], current, baseline, shared, top) for name in order]
    fingerprints = (
        (current.config.get("dataset") or {}).get("fingerprint"),
        (baseline.config.get("dataset") or {}).get("fingerprint"),
    )
    return Comparison(
        n_shared=len(shared),
        n_only_current=len(current_ids - before.keys()),
        n_only_baseline=len(before.keys() - current_ids),
        same_dataset=None if None in fingerprints else fingerprints[0] == fingerprints[1],
        metrics=deltas,
    )


def _metric_delta(
    metric: MetricInfo,
    current: EvaluationResult,
    baseline: EvaluationResult,
    shared: Sequence[tuple[SampleResult, SampleResult]],
    top: int,
) -> MetricDelta:
    changes: list[SampleChange] = []
    status_changed = 0
    for now, then in shared:
        new, old = now.scores.get(metric.name), then.scores.get(metric.name)
        if new is None or old is None:
            continue
        if new.status is not old.status:
            status_changed += 1
        elif new.status is Status.OK and new.score is not None and old.score is not None:
            changes.append(SampleChange(now, old.score, new.score))
    moves = [change(c.delta, metric.direction) for c in changes]
    moved = sorted(
        (c for c in changes if abs(c.delta) > 1e-9), key=lambda c: (-abs(c.delta), c.sample.index)
    )
    return MetricDelta(
        metric=metric.name,
        direction=metric.direction,
        baseline=baseline.aggregates.get(metric.name),
        current=current.aggregates.get(metric.name),
        n_paired=len(changes),
        n_better=moves.count("better"),
        n_worse=moves.count("worse"),
        n_status_changed=status_changed,
        changes=moved[: max(0, top)],
        pairs=changes,
    )


def metric_tests(
    baseline: EvaluationResult, result: EvaluationResult, allow_judge_change: bool = False
) -> list[StatsComparison]:
    """:func:`ragmeter.stats.compare` on the metrics both runs have: per metric the change,
    its bootstrap CI, the test behind its verdict (``verdict()``) and its change in words
    (``change``: better or worse only when significant)."""
    from ragmeter.stats import compare

    names = {m.name for m in baseline.metrics}
    shared = [m.name for m in result.metrics if m.name in names]
    if not shared:
        return []
    return compare(baseline, result, metrics=shared, allow_judge_change=allow_judge_change)


@dataclass(frozen=True)
class Measured:
    """How a baseline and this run were measured differently, for a banner: ``refused``
    (a changed judge or embedding model: no verdict), ``allowed`` (the same, compared anyway)
    and ``warnings`` (prompt versions, settings, what a run did not record)."""

    refused: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.refused or self.allowed or self.warnings)


def measured(
    baseline: EvaluationResult, result: EvaluationResult, allow_judge_change: bool = False
) -> Measured:
    """The differences :func:`ragmeter.stats.comparability` finds, sorted for a banner."""
    from ragmeter.stats import comparability

    checked = comparability(baseline, result)
    changed = checked.lines(refusing=True)
    return Measured(
        refused=[] if allow_judge_change else changed,
        allowed=changed if allow_judge_change else [],
        warnings=checked.lines(refusing=False),
    )
