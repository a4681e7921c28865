from ragmeter.dataset import Sample
from ragmeter.metrics._base import MetricResult
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.context._similarity import StringSimilarityMetric
from ragmeter.metrics.retrieval._ranking import average_precision


@builtin_metric(
    "string_context_precision",
    family="context",
    rank=290,
    summary="rank-weighted precision by string similarity",
    aliases=("non_llm_context_precision_with_reference",),
)
class StringContextPrecision(StringSimilarityMetric):
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

    def score(self, sample: Sample) -> MetricResult:
        retrieved = sample.retrieved_contexts or []
        reference = sample.reference_contexts or []
        if not retrieved:
            return MetricResult.not_applicable("no context was retrieved")
        # No reference context: the reference says no context is relevant.
        verdicts, details = self.match(retrieved, reference)
        return MetricResult.ok(
            float(average_precision([verdicts])[0]),
            reason=f"{sum(verdicts)} of {len(verdicts)} retrieved contexts match a reference",
            details=details,
        )
