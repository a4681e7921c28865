from typing import ClassVar

from ragmeter.dataset import Sample
from ragmeter.metrics._base import Metric, MetricResult, Requirements


class IDContextRecall(Metric):
    """Share of the reference context ids that were retrieved (no LLM).

    >>> s = Sample(retrieved_context_ids=["a", "x"], reference_context_ids=["a", "b"])
    >>> IDContextRecall().score(s).score
    0.5
    """

    name = "id_context_recall"
    requires: ClassVar[Requirements] = (("retrieved_context_ids",), ("reference_context_ids",))

    def score(self, sample: Sample) -> MetricResult:
        reference = set(sample.reference_context_ids or ())
        if not reference:
            return MetricResult.not_applicable("reference_context_ids is empty")
        found = reference & set(sample.retrieved_context_ids or ())
        return MetricResult.ok(
            len(found) / len(reference),
            reason=f"{len(found)} of {len(reference)} reference ids retrieved",
            missing=sorted(reference - found),
        )
