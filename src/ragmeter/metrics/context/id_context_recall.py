from ragmeter.dataset import Sample
from ragmeter.metrics._base import BatchMetric, MetricResult
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.context._ids import ID_REQUIREMENTS, relevant_ids


@builtin_metric(
    "id_context_recall",
    family="context",
    rank=280,
    summary="share of reference ids retrieved",
    aliases=("id_based_context_recall",),
)
class IDContextRecall(BatchMetric):
    """Share of the reference context ids that were retrieved (no LLM).

    >>> s = Sample(retrieved_context_ids=["a", "x"], reference_context_ids=["a", "b"])
    >>> IDContextRecall().score(s).score
    0.5
    """

    name = "id_context_recall"
    requires = ID_REQUIREMENTS

    def score(self, sample: Sample) -> MetricResult:
        reference = relevant_ids(sample)
        if not reference:
            return MetricResult.not_applicable(
                "no relevant context id (reference_context_ids / relevance)"
            )
        found = reference & set(sample.retrieved_context_ids or ())
        return MetricResult.ok(
            len(found) / len(reference),
            reason=f"{len(found)} of {len(reference)} reference ids retrieved",
            missing=sorted(reference - found),
        )
