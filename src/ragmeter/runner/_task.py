"""The runner's unit of work: one sample's per-sample metrics, as a plain serialisable task.

A task names the sample and the metrics to compute; the services it runs with (judges,
embeddings, their limits and caches) are given separately, so a distributed backend can ship
tasks to workers that hold their own handles on shared services.
"""

from __future__ import annotations

import asyncio
import dataclasses
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from ragmeter.dataset import Sample
from ragmeter.judge import Usage
from ragmeter.metrics import MetricResult, Status, score_sample
from ragmeter.prompts import Language
from ragmeter.runner._judged import JudgedSetup


@dataclass(frozen=True)
class SampleTask:
    """Compute ``metrics`` (names of per-sample metrics) for the sample at ``index``."""

    index: int
    sample_id: str
    sample: Sample
    metrics: tuple[str, ...]
    language: Language | None = None
    #: Judge the sample this many times (judge-noise runs); each repeat is cached apart.
    repeats: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "sample": self.sample.to_record(), "metrics": list(self.metrics)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SampleTask:
        return cls(
            data["index"],
            data["sample_id"],
            Sample.model_validate(data["sample"]),
            tuple(data["metrics"]),
            data.get("language"),
            data.get("repeats", 1),
        )


@dataclass
class TaskOutcome:
    """What a task produced: a result per metric, the judge usage, the prompt versions."""

    index: int
    sample_id: str
    results: dict[str, MetricResult]
    usage: Usage = field(default_factory=Usage)
    prompt_versions: set[str] = field(default_factory=set)


async def run_task(task: SampleTask, services: JudgedSetup) -> TaskOutcome:
    """Run one task. Metrics of the sample that share a judge and a language share one set of
    step calls (so e.g. faithfulness and context_recall never pay twice for the same facts).

    With ``repeats`` R > 1 the sample is judged R times; each metric's score is then the mean
    of its ok repeats, with every repeat's score in ``details["repeats"]``.

    A judge that refuses its configuration raises :class:`ragmeter.judge.JudgeConfigError`;
    every other failure becomes a failed result of the metrics it touched.
    """
    if task.repeats <= 1:
        return await _judge_once(task, services, repeat=0)
    runs = await asyncio.gather(*(_judge_once(task, services, r) for r in range(task.repeats)))
    outcome = TaskOutcome(task.index, task.sample_id, {})
    for run in runs:
        outcome.usage = outcome.usage + run.usage
        outcome.prompt_versions |= run.prompt_versions
    for name in task.metrics:
        outcome.results[name] = combine_repeats([run.results[name] for run in runs])
    return outcome


def combine_repeats(results: list[MetricResult]) -> MetricResult:
    """One result from a metric's repeats: the mean of the ok scores (with the first ok
    repeat's reason and details), else the first repeat's own result."""
    scores = [r.score if r.status is Status.OK else None for r in results]
    ok = [r for r in results if r.status is Status.OK and r.score is not None]
    if not ok:
        first = results[0]
        return dataclasses.replace(first, details=first.details.with_extra(repeats=scores))
    mean = statistics.fmean(r.score for r in ok if r.score is not None)
    details = {**ok[0].details, "repeats": scores}
    if all("soft_score" in r.details for r in ok):
        # Probabilistic scores of the same repeats, to measure how much noise they remove.
        details["soft_repeats"] = [
            r.details["soft_score"] if r.status is Status.OK else None for r in results
        ]
        details["soft_score"] = statistics.fmean(r.details["soft_score"] for r in ok)
    return MetricResult.ok(mean, ok[0].reason, **details)


async def _judge_once(task: SampleTask, services: JudgedSetup, repeat: int) -> TaskOutcome:
    by_name = {m.name: m for m in services.metrics}
    scored = await score_sample(
        task.sample,
        [by_name[name] for name in task.metrics],
        lambda metric: (services.judges[metric.name], services.embeddings[metric.name]),
        language=task.language,
        sample_id=task.sample_id,
        repeat=repeat,
    )
    return TaskOutcome(
        task.index, task.sample_id, scored.results, scored.usage, scored.prompt_versions
    )
