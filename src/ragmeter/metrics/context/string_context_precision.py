from typing import Any

import numpy as np

from ragmeter.dataset import Sample
from ragmeter.metrics._base import BatchMetric, MetricResult, Requirements
from ragmeter.metrics._details import Details, PassageMatch
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.context._similarity import SimilarityMeasure, check_measure, similarity_matrix
from ragmeter.metrics.retrieval._ranking import average_precision


@builtin_metric(
    "string_context_precision",
    family="context",
    rank=290,
    summary="rank-weighted precision by string similarity",
    aliases=("non_llm_context_precision_with_reference",),
)
class StringContextPrecision(BatchMetric):
    """Rank-weighted precision of the retrieved contexts by string similarity (no LLM).

    A retrieved context is useful when its best similarity to any reference context reaches
    ``threshold``; verdicts combine as Average Precision (RAGAS's
    NonLLMContextPrecisionWithReference).

    >>> s = Sample(retrieved_contexts=["巴黎是法国的首都。", "今天天气很好。"],
    ...            reference_contexts=["巴黎是法国首都。"])
    >>> StringContextPrecision().score(s).score
    1.0
    """

    name = "string_context_precision"
    requires: Requirements = (("retrieved_contexts",), ("reference_contexts",))

    def __init__(self, threshold: float = 0.5, measure: SimilarityMeasure = "levenshtein") -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {threshold}")
        self.threshold = threshold
        self.measure = check_measure(measure)

    def params(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "measure": self.measure}

    def score(self, sample: Sample) -> MetricResult:
        retrieved = sample.retrieved_contexts or []
        reference = sample.reference_contexts or []
        if not retrieved:
            return MetricResult.not_applicable("no context was retrieved")
        best = (
            similarity_matrix(retrieved, reference, self.measure).max(axis=1)
            if reference
            else np.zeros(len(retrieved))  # the reference says no context is relevant
        )
        verdicts = (best >= self.threshold).astype(int).tolist()
        return MetricResult.ok(
            float(average_precision([verdicts])[0]),
            reason=f"{sum(verdicts)} of {len(verdicts)} retrieved contexts match a reference",
            details=Details(
                matches=tuple(
                    PassageMatch(bool(v), round(x, 4)) for v, x in zip(verdicts, best.tolist())
                ),
            ),
        )
