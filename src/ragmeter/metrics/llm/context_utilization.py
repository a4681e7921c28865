from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings
from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._sample import SampleMetric
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.llm.context_precision import precision_result
from ragmeter.steps import Facts, Need


@builtin_metric(
    "context_utilization",
    family="llm",
    rank=50,
    summary="rank-weighted share of contexts the response used (AP)",
    aliases=("llm_context_precision_without_reference", "context_precision_without_reference"),
)
class ContextUtilization(SampleMetric):
    """Context precision without a reference: each context is judged useful or not for the
    response actually given, and the verdicts combine as Average Precision."""

    name = "context_utilization"
    requires: Requirements = (("user_input",), ("response",), ("retrieved_contexts",))

    def needs(self, sample: Sample) -> list[Need]:
        return [Need("usefulness_response")] if sample.retrieved_contexts else []

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        if not sample.retrieved_contexts:
            return MetricResult.not_applicable("no context was retrieved")
        return precision_result(facts.usefulness_response or [], "response")
