from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.llm._contexts import RetrievedContextsMetric
from ragmeter.metrics.llm.context_precision import precision_result
from ragmeter.steps import Facts, Need


@builtin_metric(
    "context_utilization",
    family="llm",
    rank=50,
    summary="rank-weighted share of contexts the response used (AP)",
    aliases=("llm_context_precision_without_reference", "context_precision_without_reference"),
)
class ContextUtilization(RetrievedContextsMetric):
    """Context precision without a reference: each context is judged useful or not for the
    response actually given, and the verdicts combine as Average Precision."""

    name = "context_utilization"
    requires: Requirements = (("user_input",), ("response",), ("retrieved_contexts",))
    context_needs = (Need("usefulness_response"),)

    def judged(self, facts: Facts) -> MetricResult:
        return precision_result(facts.usefulness_response or [], "response")
