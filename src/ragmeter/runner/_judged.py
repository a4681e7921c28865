"""The services per-sample metrics run with: each metric's judge and embeddings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragmeter.embed import Embeddings
from ragmeter.judge import Judge, VerdictCalibration
from ragmeter.metrics import SampleMetric


@dataclass
class JudgedSetup:
    """The judge and embeddings each per-sample metric runs with."""

    metrics: list[SampleMetric]
    judges: dict[str, Judge | None]  # metric name -> judge (None: it uses none)
    embeddings: dict[str, Embeddings | None]  # metric name -> embeddings


def judges_for(metrics: Sequence[SampleMetric], judge: Judge | None) -> dict[str, Judge | None]:
    """Each metric's judge: its own, else ``judge``, else the default one, made once (for a
    run, :func:`setup`, and for its estimate)."""
    shared = judge
    chosen: dict[str, Judge | None] = {}
    for metric in metrics:
        own = metric.judge or shared
        if own is None and metric.uses_judge:
            from ragmeter.judge import default_judge

            own = shared = default_judge()
        chosen[metric.name] = own
    return chosen


def setup(
    metrics: Sequence[SampleMetric], judge: Judge | None, embeddings: Embeddings | None
) -> JudgedSetup:
    """Each metric's own judge / embeddings if it has one, else the run's, else the default.
    Defaults are created once and shared by every metric."""
    judges = judges_for(metrics, judge)
    shared_embeddings = embeddings
    vectors: dict[str, Embeddings | None] = {}
    for metric in metrics:
        chosen = (metric.embeddings or shared_embeddings) if metric.uses_embeddings else None
        if metric.uses_embeddings and chosen is None:
            from ragmeter.embed import default_embeddings

            # Vectors are cached where the run's judge caches its answers (on disk by
            # default), so a resumed or repeated run does not pay for them again.
            cache = judge.cache if judge is not None else None
            chosen = shared_embeddings = default_embeddings(cache=cache)
        vectors[metric.name] = chosen
    return JudgedSetup(list(metrics), judges, vectors)


def calibrate(services: JudgedSetup, calibration: VerdictCalibration, *, force: bool) -> None:
    """Every judge of the run with ``calibration`` applied to its verdicts (a judge shared
    by metrics stays shared); a judge other than the one it was fitted for is refused
    unless ``force``."""
    calibrated: dict[int, Judge] = {}
    for name, judge in services.judges.items():
        if judge is None:
            continue
        if id(judge) not in calibrated:
            calibration.check_judge(judge.describe(), force=force)
            calibrated[id(judge)] = judge.with_calibration(calibration)
        services.judges[name] = calibrated[id(judge)]


async def release(services: JudgedSetup) -> None:
    """Close what the judges and embeddings bound to the current event loop (HTTP clients)."""
    unique = {id(x): x for x in [*services.judges.values(), *services.embeddings.values()] if x}
    for service in unique.values():
        await service.release_loop_resources()
