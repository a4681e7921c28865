"""What an experiment run gives back: the evaluation, the stored run, and per-sample pipeline
records (outputs, latency, attempts, error), all in dataset order."""

from __future__ import annotations

import html
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.results import Aggregate, EvaluationResult, SampleResult
from ragmeter.store import RunInfo


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, linearly interpolated.

    >>> percentile([1.0, 2.0, 3.0, 4.0], 50), percentile([5.0], 95)
    (2.5, 5.0)
    """
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class ExperimentResult:
    """One run of an experiment.

    ``result`` scores every sample of the dataset (a sample whose pipeline failed has every
    metric failed with the pipeline's error); ``run`` is the stored run's record (``None``
    with ``store=False``); ``pipeline`` holds, per sample in dataset order, what the pipeline
    returned, its latency, attempts and error (the records the store keeps).
    """

    result: EvaluationResult
    run: RunInfo | None
    pipeline: list[dict[str, Any]]
    name: str
    params: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.pipeline)

    def __iter__(self) -> Iterator[SampleResult]:
        return iter(self.result)

    @property
    def aggregates(self) -> dict[str, Aggregate]:
        return self.result.aggregates

    @property
    def failed(self) -> list[str]:
        """Ids of the samples whose pipeline failed (after its retries)."""
        return [record["id"] for record in self.pipeline if not record["ok"]]

    @property
    def latency(self) -> dict[str, float | int | None]:
        """Latency of the successful pipeline calls in seconds: n, mean, p50, p95, max
        (``None`` when no call succeeded)."""
        times = [r["latency_s"] for r in self.pipeline if r["ok"] and r["latency_s"] is not None]
        if not times:
            return {"n": 0, "mean": None, "p50": None, "p95": None, "max": None}
        return {
            "n": len(times),
            "mean": sum(times) / len(times),
            "p50": percentile(times, 50),
            "p95": percentile(times, 95),
            "max": max(times),
        }

    def __repr__(self) -> str:
        run = f", run={self.run.id[:12]!r}" if self.run is not None else ""
        return (
            f"ExperimentResult({self.name!r}, {len(self)} samples, {len(self.failed)} failed{run})"
        )

    def _repr_html_(self) -> str:
        """The evaluation's notebook summary under the experiment's name, run and failures."""
        run = f" · run {self.run.id[:12]}" if self.run is not None else ""
        title = f"{self.name}{run} · {len(self.failed)} of {len(self)} pipeline calls failed"
        return f"<div><strong>{html.escape(title)}</strong></div>{self.result._repr_html_()}"
