"""Metrics: what they need, which way is better, and how they score a sample.

Two protocols: a :class:`BatchMetric` is pure and scores a batch at a time; a
:class:`SampleMetric` is async, per sample, and computes from the facts it declares it needs
(:func:`score_sample` runs a set of them on a sample, sharing every judge call).
"""

from ragmeter.metrics._base import (
    BatchContext,
    BatchMetric,
    Direction,
    Metric,
    MetricResult,
    Requirements,
    Status,
    missing_fields_result,
    parse_direction,
)
from ragmeter.metrics._details import (
    ClaimCheck,
    ClaimVerdict,
    ContextCriterion,
    ContextJudgment,
    Details,
    EntityFinding,
    GeneratedQuestion,
    HopUse,
    NoiseClaimVerdict,
    PassageMatch,
    StatementFinding,
)
from ragmeter.metrics._registry import (
    METRIC_FILE_SUFFIXES,
    SPECS,
    get_metric,
    resolve_metric,
    resolve_metrics,
)
from ragmeter.metrics._sample import (
    CannotScore,
    Fallback,
    SampleMetric,
    SampleOutcome,
    ServicesOf,
    score_sample,
)
from ragmeter.metrics._spec import MetricSpec, UnknownMetricError
from ragmeter.metrics._sync import is_async, run_sync
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
    "METRIC_FILE_SUFFIXES",
    "MRR",
    "NDCG",
    "SPECS",
    "BatchContext",
    "BatchMetric",
    "CannotScore",
    "ChrF",
    "ClaimCheck",
    "ClaimVerdict",
    "ContextCriterion",
    "ContextJudgment",
    "Details",
    "Direction",
    "EntityFinding",
    "ExactMatch",
    "F1AtK",
    "Fallback",
    "GeneratedQuestion",
    "HitAtK",
    "HopUse",
    "IDContextPrecision",
    "IDContextRecall",
    "Metric",
    "MetricResult",
    "MetricSpec",
    "NoiseClaimVerdict",
    "PassageMatch",
    "PrecisionAtK",
    "RPrecision",
    "RecallAtK",
    "Requirements",
    "Rouge",
    "SampleMetric",
    "SampleOutcome",
    "ServicesOf",
    "StatementFinding",
    "Status",
    "StringContextPrecision",
    "StringContextRecall",
    "StringPresence",
    "UnknownMetricError",
    "evaluate_run",
    "get_metric",
    "is_async",
    "missing_fields_result",
    "parse_direction",
    "resolve_metric",
    "resolve_metrics",
    "run_sync",
    "score_sample",
]
