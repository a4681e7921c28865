from ragmeter.dataset import Sample
from ragmeter.metrics._base import MetricResult
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.context._similarity import StringSimilarityMetric


@builtin_metric(
    "string_context_recall",
    family="context",
    rank=300,
    summary="share of reference contexts matched by string similarity",
    aliases=("non_llm_context_recall",),
)
class StringContextRecall(StringSimilarityMetric):
    """Share of the reference contexts matched by a retrieved context, by string similarity.

    RAGAS's NonLLMContextRecall: a reference context counts as found when its best
    similarity to any retrieved context reaches ``threshold``.

    >>> s = Sample(retrieved_contexts=["Paris is the capital of France."],
    ...            reference_contexts=["Paris is the capital of France.", "Berlin is in Germany."])
    >>> StringContextRecall().score(s).score
    0.5
    """

    name = "string_context_recall"

    def score(self, sample: Sample) -> MetricResult:
        reference = sample.reference_contexts or []
        if not reference:
            return MetricResult.not_applicable("reference_contexts is empty")
        found, details = self.match(reference, sample.retrieved_contexts or [])
        return MetricResult.ok(
            sum(found) / len(found),
            reason=f"{sum(found)} of {len(found)} reference contexts found",
            details=details,
        )
