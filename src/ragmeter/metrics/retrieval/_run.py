"""Scoring a whole TREC-style run against qrels in one vectorised pass."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ragmeter.metrics.retrieval._base import RankingMetric
from ragmeter.metrics.retrieval._judgments import build_judgments, rank_by_score


@dataclass
class RunScores:
    """Per-query scores of a run: ``scores[metric][i]`` belongs to ``query_ids[i]``."""

    query_ids: list[str]
    scores: dict[str, NDArray[np.float64]]

    def mean(self) -> dict[str, float]:
        return {
            name: float(values.mean()) if len(values) else float("nan")
            for name, values in self.scores.items()
        }


def evaluate_run(
    run: Mapping[str, Mapping[str, float] | Sequence[str]],
    qrels: Mapping[str, Mapping[str, float]],
    metrics: Sequence[RankingMetric | str],
) -> RunScores:
    """Score a run (query -> {doc: score} or a ranked list of docs) against qrels.

    As trec_eval: the queries scored are those in both the run and the qrels, documents are
    ranked by descending score with ties broken by descending id, and a query with no
    relevant document scores 0 (the per-sample metrics say "not applicable" instead).

    >>> scores = evaluate_run({"q1": ["A", "B", "C"]}, {"q1": {"C": 1}}, ["mrr", "precision@3"])
    >>> scores.scores["mrr"], scores.scores["precision@3"].round(4)
    (array([0.33333333]), array([0.3333]))
    """
    from ragmeter.metrics._registry import get_metric

    resolved = [m if isinstance(m, RankingMetric) else get_metric(m) for m in metrics]
    for metric in resolved:
        if not isinstance(metric, RankingMetric):
            raise ValueError(f"{metric.name!r} is not a ranking metric")
    query_ids = [q for q in run if q in qrels]
    rankings = [
        list(ranked) if not isinstance(ranked := run[q], Mapping) else rank_by_score(ranked)
        for q in query_ids
    ]
    levels = {m.relevance_level for m in resolved}
    judgments = {
        level: build_judgments(rankings, [qrels[q] for q in query_ids], relevance_level=level)
        for level in levels
    }
    return RunScores(query_ids, {m.name: m.compute(judgments[m.relevance_level]) for m in resolved})
