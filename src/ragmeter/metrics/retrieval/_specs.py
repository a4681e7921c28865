"""The ranking metrics by name, for the registry and :func:`evaluate_run`."""

from __future__ import annotations

from ragmeter.metrics._spec import MetricSpec, build_metric, no_k, with_k
from ragmeter.metrics.retrieval._base import RankingMetric
from ragmeter.metrics.retrieval.f1 import F1AtK
from ragmeter.metrics.retrieval.hit import HitAtK
from ragmeter.metrics.retrieval.map import MAP
from ragmeter.metrics.retrieval.mrr import MRR
from ragmeter.metrics.retrieval.ndcg import NDCG
from ragmeter.metrics.retrieval.precision import PrecisionAtK
from ragmeter.metrics.retrieval.r_precision import RPrecision
from ragmeter.metrics.retrieval.recall import RecallAtK

RANKING_SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "precision",
        with_k(PrecisionAtK),
        "required",
        "retrieval",
        "share of the top K that is relevant",
    ),
    MetricSpec(
        "recall",
        with_k(RecallAtK),
        "required",
        "retrieval",
        "share of the relevant found in the top K",
    ),
    MetricSpec(
        "f1", with_k(F1AtK), "required", "retrieval", "harmonic mean of precision@K, recall@K"
    ),
    MetricSpec(
        "hit",
        with_k(HitAtK),
        "required",
        "retrieval",
        "1 if anything relevant is in the top K",
        ("hit_rate", "success"),
    ),
    MetricSpec(
        "mrr",
        MRR,
        "optional",
        "retrieval",
        "1 / rank of the first relevant context",
        ("reciprocal_rank",),
    ),
    MetricSpec(
        "map",
        MAP,
        "optional",
        "retrieval",
        "average precision (trec_eval map / map_cut)",
        ("ap", "average_precision"),
    ),
    MetricSpec("ndcg", NDCG, "optional", "retrieval", "NDCG, linear gain (trec_eval ndcg_cut)"),
    MetricSpec(
        "ndcg_exp",
        lambda k: NDCG(k, gain="exponential"),
        "optional",
        "retrieval",
        "NDCG, exponential gain 2^rel - 1",
    ),
    MetricSpec(
        "r_precision",
        no_k(RPrecision),
        "none",
        "retrieval",
        "precision at R = number relevant",
        ("rprec",),
    ),
)


def ranking_metric(name: str) -> RankingMetric:
    """The ranking metric ``name`` stands for (``@K`` for a cutoff).

    >>> ranking_metric("ap@3").name
    'map@3'
    """
    metric = build_metric(name, RANKING_SPECS, kind="ranking metric")
    assert isinstance(metric, RankingMetric)
    return metric
