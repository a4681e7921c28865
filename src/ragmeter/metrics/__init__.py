"""Metrics: what they need, which way is better, and how they score a sample."""

from ragmeter.metrics._base import (
    BatchContext,
    Direction,
    Metric,
    MetricResult,
    Requirements,
    Status,
)
from ragmeter.metrics._registry import (
    SPECS,
    MetricSpec,
    UnknownMetricError,
    get_metric,
    resolve_metrics,
)
from ragmeter.metrics.context import (
    IDContextPrecision,
    IDContextRecall,
    StringContextPrecision,
    StringContextRecall,
)
from ragmeter.metrics.retrieval import (
    MAP,
    MRR,
    NDCG,
    F1AtK,
    HitAtK,
    PrecisionAtK,
    RecallAtK,
    RPrecision,
    evaluate_run,
)
from ragmeter.metrics.text import BLEU, ChrF, ExactMatch, Rouge, StringPresence

__all__ = [
    "BLEU",
    "MAP",
    "MRR",
    "NDCG",
    "SPECS",
    "BatchContext",
    "ChrF",
    "Direction",
    "ExactMatch",
    "F1AtK",
    "HitAtK",
    "IDContextPrecision",
    "IDContextRecall",
    "Metric",
    "MetricResult",
    "MetricSpec",
    "PrecisionAtK",
    "RPrecision",
    "RecallAtK",
    "Requirements",
    "Rouge",
    "Status",
    "StringContextPrecision",
    "StringContextRecall",
    "StringPresence",
    "UnknownMetricError",
    "evaluate_run",
    "get_metric",
    "resolve_metrics",
]
