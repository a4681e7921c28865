from typing import Any

from ragmeter.dataset import Sample
from ragmeter.metrics._base import BatchMetric, MetricResult, Requirements
from ragmeter.metrics._details import Details, PassageMatch
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.context._similarity import SimilarityMeasure, check_measure, similarity_matrix


@builtin_metric(
    "string_context_recall",
    family="context",
    rank=300,
    summary="share of reference contexts matched by string similarity",
    aliases=("non_llm_context_recall",),
)
class StringContextRecall(BatchMetric):
    """Share of the reference contexts matched by a retrieved context, by string similarity.

    RAGAS's NonLLMContextRecall: a reference context counts as found when its best
    similarity to any retrieved context reaches ``threshold``.

    >>> s = Sample(retrieved_contexts=["Paris is the capital of France."],
    ...            reference_contexts=["Paris is the capital of France.", "Berlin is in Germany."])
    >>> StringContextRecall().score(s).score
    0.5
    """

    name = "string_context_recall"
    requires: Requirements = (("retrieved_contexts",), ("reference_contexts",))

    def __init__(self, threshold: float = 0.5, measure: SimilarityMeasure = "levenshtein") -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {threshold}")
        self.threshold = threshold
        self.measure = check_measure(measure)

    def params(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "measure": self.measure}

    def score(self, sample: Sample) -> MetricResult:
        reference = sample.reference_contexts or []
        if not reference:
            return MetricResult.not_applicable("reference_contexts is empty")
        retrieved = sample.retrieved_contexts or []
        best = (
            similarity_matrix(reference, retrieved, self.measure).max(axis=1).tolist()
            if retrieved
            else [0.0] * len(reference)
        )
        found = [int(x >= self.threshold) for x in best]
        return MetricResult.ok(
            sum(found) / len(found),
            reason=f"{sum(found)} of {len(found)} reference contexts found",
            details=Details(
                matches=tuple(PassageMatch(bool(v), round(x, 4)) for v, x in zip(found, best)),
            ),
        )
