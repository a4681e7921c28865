"""Metrics: what they need, which way is better, and how they score a sample.

Two protocols: a :class:`BatchMetric` is pure and scores a batch at a time; a
:class:`SampleMetric` is async, per sample, and computes from the facts it declares it needs
(:func:`score_sample` runs a set of them on a sample, sharing every judge call).
"""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.metrics._base import (
        BatchContext,
        BatchMetric,
        Direction,
        Metric,
        MetricResult,
        Requirements,
        ScoreColumn,
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
        ENTRY_POINT_GROUP,
        METRIC_FILE_SUFFIXES,
        SPECS,
        MetricSource,
        get_metric,
        metric_specs,
        register,
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
    from ragmeter.metrics._spec import MetricLoadError, MetricSpec, UnknownMetricError
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
    "ENTRY_POINT_GROUP",
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
    "MetricLoadError",
    "MetricResult",
    "MetricSource",
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
    "ScoreColumn",
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
    "metric_specs",
    "missing_fields_result",
    "parse_direction",
    "register",
    "resolve_metric",
    "resolve_metrics",
    "run_sync",
    "score_sample",
]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter.metrics._base": (
            "BatchContext",
            "BatchMetric",
            "Direction",
            "Metric",
            "MetricResult",
            "Requirements",
            "ScoreColumn",
            "Status",
            "missing_fields_result",
            "parse_direction",
        ),
        "ragmeter.metrics._details": (
            "ClaimCheck",
            "ClaimVerdict",
            "ContextCriterion",
            "ContextJudgment",
            "Details",
            "EntityFinding",
            "GeneratedQuestion",
            "HopUse",
            "NoiseClaimVerdict",
            "PassageMatch",
            "StatementFinding",
        ),
        "ragmeter.metrics._registry": (
            "ENTRY_POINT_GROUP",
            "METRIC_FILE_SUFFIXES",
            "SPECS",
            "MetricSource",
            "get_metric",
            "metric_specs",
            "register",
            "resolve_metric",
            "resolve_metrics",
        ),
        "ragmeter.metrics._sample": (
            "CannotScore",
            "Fallback",
            "SampleMetric",
            "SampleOutcome",
            "ServicesOf",
            "score_sample",
        ),
        "ragmeter.metrics._spec": ("MetricLoadError", "MetricSpec", "UnknownMetricError"),
        "ragmeter.metrics._sync": ("is_async", "run_sync"),
        "ragmeter.metrics.context": (
            "IDContextPrecision",
            "IDContextRecall",
            "StringContextPrecision",
            "StringContextRecall",
        ),
        "ragmeter.metrics.retrieval": (
            "MAP",
            "MRR",
            "NDCG",
            "F1AtK",
            "HitAtK",
            "PrecisionAtK",
            "RecallAtK",
            "RPrecision",
            "evaluate_run",
        ),
        "ragmeter.metrics.text": ("BLEU", "ChrF", "ExactMatch", "Rouge", "StringPresence"),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
