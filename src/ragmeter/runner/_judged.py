"""The services per-sample metrics run with: each metric's judge and embeddings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragmeter.embed import Embeddings
from ragmeter.judge import Judge
from ragmeter.metrics import SampleMetric


@dataclass
class JudgedSetup:
    """The judge and embeddings each per-sample metric runs with."""

    metrics: list[SampleMetric]
    judges: dict[str, Judge | None]  # metric name -> judge (None: it uses none)
    embeddings: dict[str, Embeddings | None]  # metric name -> embeddings


def setup(
    metrics: Sequence[SampleMetric], judge: Judge | None, embeddings: Embeddings | None
) -> JudgedSetup:
    """Each metric's own judge / embeddings if it has one, else the run's, else the default.
    Defaults are created once and shared by every metric."""
    shared_judge = judge
    shared_embeddings = embeddings
    judges: dict[str, Judge | None] = {}
    vectors: dict[str, Embeddings | None] = {}
    for metric in metrics:
        chosen = metric.judge or shared_judge
        if chosen is None and metric.uses_judge:
            from ragmeter.judge import default_judge

            chosen = shared_judge = default_judge()
        judges[metric.name] = chosen
        if metric.uses_embeddings:
            chosen_embeddings = metric.embeddings or shared_embeddings
            if chosen_embeddings is None:
                from ragmeter.embed import default_embeddings

                # Vectors are cached where the run's judge caches its answers (on disk by
                # default), so a resumed or repeated run does not pay for them again.
                cache = judge.cache if judge is not None else None
                chosen_embeddings = shared_embeddings = default_embeddings(cache=cache)
            vectors[metric.name] = chosen_embeddings
        else:
            vectors[metric.name] = None
    return JudgedSetup(list(metrics), judges, vectors)


async def release(services: JudgedSetup) -> None:
    """Close what the judges and embeddings bound to the current event loop (HTTP clients)."""
    unique = {id(x): x for x in [*services.judges.values(), *services.embeddings.values()] if x}
    for service in unique.values():
        await service.release_loop_resources()
