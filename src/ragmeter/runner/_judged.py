"""Scoring the judged metrics: per sample, the needs of every metric are gathered into one
set of step calls, so metrics share the judge's work; samples run concurrently."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings
from ragmeter.judge import Judge, JudgeConfigError, Usage
from ragmeter.metrics import MetricResult
from ragmeter.metrics.llm import JudgedMetric
from ragmeter.prompts import Language
from ragmeter.steps import StepRunner


@dataclass
class JudgedSetup:
    """The judge and embeddings each judged metric runs with."""

    metrics: list[JudgedMetric]
    judges: dict[str, Judge]  # metric name -> judge
    embeddings: dict[str, Embeddings | None]  # metric name -> embeddings
    #: Set when the judge refused its configuration (wrong key, model, endpoint, missing
    #: extra): the run stopped calling it and the remaining judged results say so.
    configuration_error: str | None = None


def setup(
    metrics: Sequence[JudgedMetric], judge: Judge | None, embeddings: Embeddings | None
) -> JudgedSetup:
    """Each metric's own judge / embeddings if it has one, else the run's, else the default.
    Defaults are created once and shared by every metric."""
    shared_judge = judge
    shared_embeddings = embeddings
    judges: dict[str, Judge] = {}
    vectors: dict[str, Embeddings | None] = {}
    for metric in metrics:
        chosen = metric.judge or shared_judge
        if chosen is None and metric.uses_judge:
            from ragmeter.judge._default import default_judge

            chosen = shared_judge = default_judge()
        judges[metric.name] = chosen  # type: ignore[assignment]
        if metric.uses_embeddings:
            chosen_embeddings = metric.embeddings or shared_embeddings
            if chosen_embeddings is None:
                from ragmeter.embed import default_embeddings

                chosen_embeddings = shared_embeddings = default_embeddings()
            vectors[metric.name] = chosen_embeddings
        else:
            vectors[metric.name] = None
    return JudgedSetup(list(metrics), judges, vectors)


async def score_sample(
    sample: Sample, sample_id: str, plan: JudgedSetup, language: Language | None
) -> tuple[dict[str, MetricResult], Usage, set[str]]:
    """Every judged metric's result for one sample, the judge usage, the prompt versions."""
    results: dict[str, MetricResult] = {}
    usage = Usage()
    versions: set[str] = set()
    groups: dict[tuple[int, Language | None], list[JudgedMetric]] = {}
    for metric in plan.metrics:
        early = metric.precheck(sample)
        if early is not None:
            results[metric.name] = early
            continue
        key = (id(plan.judges[metric.name]), metric.language or language)
        groups.setdefault(key, []).append(metric)
    for (_, group_language), group in groups.items():
        judge = plan.judges[group[0].name]
        needs = [need for metric in group for need in metric.needs(sample)]
        # With no needs (e.g. semantic similarity only) this makes no call.
        runner = StepRunner(judge, language=group_language, sample_id=sample_id)
        facts = await runner.gather(sample, needs)
        usage = usage + facts.usage
        versions |= facts.prompt_versions
        for metric in group:
            results[metric.name] = await metric.finish(sample, facts, plan.embeddings[metric.name])
    return results, usage, versions


async def score_all(
    samples: Sequence[Sample],
    sample_ids: Sequence[str],
    plan: JudgedSetup,
    *,
    language: Language | None,
    concurrency: int,
) -> list[tuple[dict[str, MetricResult], Usage, set[str]]]:
    gate = asyncio.Semaphore(concurrency)
    stop: list[JudgeConfigError] = []

    async def one(
        sample: Sample, sample_id: str
    ) -> tuple[dict[str, MetricResult], Usage, set[str]]:
        async with gate:
            if not stop:
                try:
                    return await score_sample(sample, sample_id, plan, language)
                except JudgeConfigError as error:
                    stop.append(error)
            message = f"not judged: {type(stop[0]).__name__}: {stop[0]}"
            return {m.name: MetricResult.failed(message) for m in plan.metrics}, Usage(), set()

    try:
        outcomes = list(await asyncio.gather(*(one(s, i) for s, i in zip(samples, sample_ids))))
        if stop:
            plan.configuration_error = f"{type(stop[0]).__name__}: {stop[0]}"
        return outcomes
    finally:
        # This loop ends with the run: close what is bound to it (HTTP clients).
        services = {id(x): x for x in [*plan.judges.values(), *plan.embeddings.values()] if x}
        for service in services.values():
            await service.release_loop_resources()
