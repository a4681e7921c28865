"""How well each sample of a run scored, over all its metrics, for over-sampling the worst."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragmeter.metrics import Direction, Status

if TYPE_CHECKING:
    from ragmeter.results import EvaluationResult


@dataclass(frozen=True)
class Standing:
    """A sample's scores in a run: ``score`` is the mean over its scored metrics, each on a
    0-1 scale where 1 is best (see :func:`standings`); ``scores`` the raw ok scores."""

    score: float
    scores: dict[str, float]


def load_run(ref: str | Path) -> EvaluationResult:
    """A run directory (``ragmeter eval -o``), else a run id, id prefix or name in the run
    store (``$RAGMETER_STORE_URL``)."""
    from ragmeter.results import STORE_FILE, EvaluationResult

    path = Path(ref)
    if path.is_dir() and ((path / STORE_FILE).is_file() or (path / "summary.json").is_file()):
        return EvaluationResult.load(path)
    from ragmeter.store import RunNotFoundError, Store, store_exists

    if not store_exists(None):
        raise FileNotFoundError(
            f"no run {str(ref)!r}: it is not a run directory (a folder holding {STORE_FILE} or "
            "summary.json) and no run store has been written yet; give the directory passed "
            "to ragmeter eval -o"
        )
    store = Store()
    try:
        return store.load(store.get(str(ref)).id)
    except RunNotFoundError as error:
        raise FileNotFoundError(
            f"no run {str(ref)!r}: not a run directory (no {STORE_FILE} or summary.json), "
            f"and {error}"
        ) from None


def standings(result: EvaluationResult) -> dict[str, Standing]:
    """Per sample id with at least one ok score, its standing.

    Metrics of different scales must weigh the same: a metric whose ok scores all lie in
    0-1 is taken as it is (``1 - score`` when lower is better); any other is rescaled by its
    minimum and maximum over the run (a constant one counts as 1, the best). Failed and not
    applicable results are left out; a sample with none ok has no standing.
    """
    raw: dict[str, dict[str, float]] = {}
    for sample in result:
        for name, metric_result in sample.scores.items():
            if metric_result.status is Status.OK and metric_result.score is not None:
                raw.setdefault(sample.sample_id, {})[name] = float(metric_result.score)
    scale: dict[str, tuple[float, float]] = {}
    for info in result.metrics:
        values = [s[info.name] for s in raw.values() if info.name in s]
        if values:
            low, high = min(values), max(values)
            scale[info.name] = (0.0, 1.0) if low >= 0.0 and high <= 1.0 else (low, high)
    directions = {info.name: info.direction for info in result.metrics}
    out: dict[str, Standing] = {}
    for sample_id, scores in raw.items():
        oriented = []
        for name, value in scores.items():
            low, high = scale.get(name, (0.0, 1.0))
            if high == low:
                unit = 1.0
            else:
                unit = (value - low) / (high - low)
                if directions.get(name) is Direction.LOWER_IS_BETTER:
                    unit = 1.0 - unit
            oriented.append(unit)
        out[sample_id] = Standing(sum(oriented) / len(oriented), scores)
    return out
