"""Each metric's mean with a bootstrap confidence interval, over a run or per tag group."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ragmeter._bootstrap import Interval, check_method, mean_with_ci
from ragmeter._validate import check_level, check_resamples
from ragmeter.results import EvaluationResult
from ragmeter.stats._runs import metric_names, read_scores, tag_values


@dataclass(frozen=True)
class MeanEstimate:
    """A metric's mean over the samples it scored, with its confidence interval.

    ``n`` samples scored (status ok) out of ``n_total``; ``mean`` is None when none did and
    ``ci`` is None when fewer than 2 did.
    """

    metric: str
    n: int
    n_total: int
    mean: float | None
    ci: Interval | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # the interval's too: Interval.to_dict() is asdict()


def _estimate(metric: str, scores: Sequence[float | None], options: dict[str, Any]) -> MeanEstimate:
    n, mean, ci = mean_with_ci(scores, **options)
    return MeanEstimate(metric, n, len(scores), mean, ci)


def _options(level: float, method: str, n_resamples: int, seed: int) -> dict[str, Any]:
    """:func:`mean_with_ci`'s options, checked."""
    check_resamples(n_resamples)
    level, method = check_level(level), check_method(method)
    return {"level": level, "method": method, "n_resamples": n_resamples, "seed": seed}


def estimate_means(
    result: EvaluationResult,
    *,
    level: float = 0.95,
    method: str = "bca",
    n_resamples: int = 10_000,
    seed: int = 0,
    metrics: Iterable[str] | None = None,
) -> dict[str, MeanEstimate]:
    """Per metric (all of the run's by default): the mean over the samples that scored, with
    a bootstrap confidence interval (see :func:`bootstrap_ci`).

    >>> from ragmeter import evaluate
    >>> result = evaluate(
    ...     [{"retrieved_context_ids": ["a", "b"], "reference_context_ids": [r]}
    ...      for r in ["a", "b", "a", "c", "b", "a"]],
    ...     ["mrr"],
    ... )
    >>> est = estimate_means(result, n_resamples=2000)["mrr"]
    >>> est.n, est.n_total, round(est.mean, 3)
    (6, 6, 0.667)
    >>> round(est.ci.low, 2), round(est.ci.high, 2)
    (0.33, 0.92)
    """
    options = _options(level, method, n_resamples, seed)
    return {m: _estimate(m, result.scores(m), options) for m in metric_names(result, metrics)}


def estimate_group_means(
    result: EvaluationResult,
    tag: str,
    *,
    level: float = 0.95,
    method: str = "bca",
    n_resamples: int = 10_000,
    seed: int = 0,
    metrics: Iterable[str] | None = None,
) -> dict[str, dict[str, MeanEstimate]]:
    """:func:`estimate_means` per value of the metadata field ``tag`` (value -> metric ->
    estimate, values sorted). A sample whose tag is a list counts in each of its groups.

    >>> from ragmeter import evaluate
    >>> rows = [
    ...     {"retrieved_context_ids": ["a", "b"], "reference_context_ids": [r], "hops": h}
    ...     for r, h in [("a", "one"), ("b", "two"), ("a", "one"), ("b", "two"), ("a", "one")]
    ... ]
    >>> groups = estimate_group_means(evaluate(rows, ["mrr"]), "hops", n_resamples=1000)
    >>> {value: (est["mrr"].n, est["mrr"].mean) for value, est in groups.items()}
    {'one': (3, 1.0), 'two': (2, 0.5)}
    """
    options = _options(level, method, n_resamples, seed)
    names = metric_names(result, metrics)
    run = read_scores(result, names)
    values = tag_values(run, tag)
    if not values:
        carried = sorted({t for tags in run.tags for t in tags})
        raise ValueError(f"no sample carries tag {tag!r}; tags in this run: {carried}")
    groups: dict[str, list[int]] = {v: [] for v in values}
    for i, tags in enumerate(run.tags):
        for v in tags.get(tag, []):
            groups[v].append(i)
    return {
        v: {m: _estimate(m, [run.scores[m][i] for i in rows], options) for m in names}
        for v, rows in groups.items()
    }
