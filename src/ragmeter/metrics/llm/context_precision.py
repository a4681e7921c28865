from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._details import ContextCriterion, ContextJudgment, Details
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.llm._contexts import RetrievedContextsMetric
from ragmeter.metrics.retrieval._ranking import average_precision
from ragmeter.steps import ContextVerdict, Facts, Need


def precision_result(verdicts: list[ContextVerdict], target: str) -> MetricResult:
    """Rank-weighted Average Precision of the usefulness verdicts (RAGAS's definition)."""
    useful = [int(v.useful) for v in verdicts]
    score = float(average_precision([useful])[0])
    return MetricResult.ok(
        score,
        reason=f"{sum(useful)} of {len(useful)} contexts are useful for the {target}",
        details=Details(
            contexts=tuple(
                ContextJudgment(i + 1, ContextCriterion.USEFUL, v.useful, v.reason, v.probability)
                for i, v in enumerate(verdicts)
            )
        ),
    )


@builtin_metric(
    "context_precision",
    family="llm",
    rank=40,
    summary="rank-weighted share of contexts useful for the reference (AP)",
    aliases=(
        "llm_context_precision_with_reference",
        "contextual_precision",
        "ContextualPrecisionMetric",
    ),
)
class ContextPrecision(RetrievedContextsMetric):
    """Are the useful contexts ranked first? Each retrieved context is judged useful or not
    for reaching the reference answer; the verdicts combine as Average Precision.

    Worked examples (docs/llm-metrics.md, context_precision): useful at ranks {1, 3} of 5
    -> 0.833, {1, 2} -> 1.0, {4, 5} -> 0.325.
    No useful context scores 0; no retrieved context is not applicable.
    """

    name = "context_precision"
    requires: Requirements = (("user_input",), ("reference",), ("retrieved_contexts",))
    context_needs = (Need("usefulness_reference"),)

    def judged(self, facts: Facts) -> MetricResult:
        return precision_result(facts.usefulness_reference or [], "reference answer")
