"""Runs built from given scores, for the statistics tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmeter import MetricResult, Sample, evaluate
from ragmeter.metrics import Direction
from ragmeter.results import EvaluationResult, MetricInfo, SampleResult
from tests._prepared import Prepared


def score(value: float | None) -> MetricResult:
    return MetricResult.not_applicable("none") if value is None else MetricResult.ok(value)


def run(
    columns: dict[str, Sequence[float | None]],
    *,
    ids: Sequence[str] | None = None,
    tags: Sequence[dict[str, Any]] | None = None,
    lower_is_better: Sequence[str] = (),
    config: dict[str, Any] | None = None,
    details: dict[str, Sequence[dict[str, Any]]] | None = None,
) -> EvaluationResult:
    """An in-memory run: per metric, one score per sample (None: not applicable)."""
    n = len(next(iter(columns.values())))
    ids = list(ids) if ids is not None else [f"s{i}" for i in range(n)]
    tags = list(tags) if tags is not None else [{}] * n
    samples = []
    for i in range(n):
        scores = {}
        for name, values in columns.items():
            result = score(values[i])
            if details and name in details:
                result = MetricResult(result.score, result.status, details=dict(details[name][i]))
            scores[name] = result
        samples.append(SampleResult(i, i + 1, ids[i], Sample(id=ids[i], metadata=tags[i]), scores))
    metrics = [
        MetricInfo(
            name,
            Direction.LOWER_IS_BETTER if name in lower_is_better else Direction.HIGHER_IS_BETTER,
        )
        for name in columns
    ]
    return EvaluationResult(samples=samples, metrics=metrics, config=config or {})


def evaluated(
    columns: dict[str, Sequence[float | None]],
    *,
    ids: Sequence[str] | None = None,
    tags: Sequence[dict[str, Any]] | None = None,
) -> EvaluationResult:
    """The same through :func:`ragmeter.evaluate` (a store-backed run)."""
    n = len(next(iter(columns.values())))
    ids = list(ids) if ids is not None else [f"s{i}" for i in range(n)]
    tags = list(tags) if tags is not None else [{}] * n
    metrics = [Prepared(name, dict(zip(ids, values))) for name, values in columns.items()]
    rows = [{"id": i, "user_input": "What is the warranty?", **t} for i, t in zip(ids, tags)]
    return evaluate(rows, metrics)
