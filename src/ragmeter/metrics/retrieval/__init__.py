"""Retrieval metrics without an LLM: ranked context ids against relevant ids."""

from ragmeter.metrics.retrieval._base import RankingMetric
from ragmeter.metrics.retrieval._judgments import Judgments, build_judgments, rank_by_score
from ragmeter.metrics.retrieval._ranking import (
    average_precision,
    dcg_at_k,
    f1_at_k,
    hit_at_k,
    ndcg_at_k,
    precision_at_k,
    r_precision,
    recall_at_k,
    reciprocal_rank,
)
from ragmeter.metrics.retrieval._run import RunScores, evaluate_run
from ragmeter.metrics.retrieval._specs import RANKING_SPECS, ranking_metric
from ragmeter.metrics.retrieval.f1 import F1AtK
from ragmeter.metrics.retrieval.hit import HitAtK
from ragmeter.metrics.retrieval.map import MAP
from ragmeter.metrics.retrieval.mrr import MRR
from ragmeter.metrics.retrieval.ndcg import NDCG
from ragmeter.metrics.retrieval.precision import PrecisionAtK
from ragmeter.metrics.retrieval.r_precision import RPrecision
from ragmeter.metrics.retrieval.recall import RecallAtK

__all__ = [
    "MAP",
    "MRR",
    "NDCG",
    "RANKING_SPECS",
    "F1AtK",
    "HitAtK",
    "Judgments",
    "PrecisionAtK",
    "RPrecision",
    "RankingMetric",
    "RecallAtK",
    "RunScores",
    "average_precision",
    "build_judgments",
    "dcg_at_k",
    "evaluate_run",
    "f1_at_k",
    "hit_at_k",
    "ndcg_at_k",
    "precision_at_k",
    "r_precision",
    "rank_by_score",
    "ranking_metric",
    "recall_at_k",
    "reciprocal_rank",
]
