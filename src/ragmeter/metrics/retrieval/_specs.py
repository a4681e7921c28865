"""The ranking metrics by name, for the registry and :func:`evaluate_run`."""

from __future__ import annotations

from ragmeter.metrics._index import INDEX
from ragmeter.metrics._spec import MetricSpec, build_metric
from ragmeter.metrics.retrieval._base import RankingMetric

#: The built-in metrics of family ``retrieval`` (declared with ``@builtin_metric``).
RANKING_SPECS: tuple[MetricSpec, ...] = tuple(
    declared.spec() for declared in INDEX if declared.family == "retrieval"
)


def ranking_metric(name: str) -> RankingMetric:
    """The ranking metric ``name`` stands for (``@K`` for a cutoff).

    >>> ranking_metric("ap@3").name
    'map@3'
    """
    metric = build_metric(name, RANKING_SPECS, kind="ranking metric")
    assert isinstance(metric, RankingMetric)
    return metric
