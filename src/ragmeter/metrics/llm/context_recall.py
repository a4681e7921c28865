from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings
from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._details import Details, StatementFinding
from ragmeter.metrics._sample import SampleMetric
from ragmeter.metrics._spec import builtin_metric
from ragmeter.steps import Facts, Need

ATTRIBUTED = Need("statements", against=("contexts",))


@builtin_metric(
    "context_recall",
    family="llm",
    rank=60,
    summary="share of reference statements the contexts support",
    aliases=("llm_context_recall", "contextual_recall", "ContextualRecallMetric"),
)
class ContextRecall(SampleMetric):
    """Share of the reference's statements that the retrieved contexts support.

    Worked example (docs/llm-metrics.md, context_recall): 4 of the reference's 5
    statements are found in the contexts: 0.8.
    With no retrieved context the score is 0 (never 1); a reference without a factual
    statement is not applicable.
    """

    name = "context_recall"
    requires: Requirements = (("reference",), ("retrieved_contexts",))

    def needs(self, sample: Sample) -> list[Need]:
        return [ATTRIBUTED] if sample.retrieved_contexts else []

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        if not sample.retrieved_contexts:
            return MetricResult.ok(0.0, reason="no context was retrieved")
        statements = facts.statements or []
        if not statements:
            return MetricResult.not_applicable("the reference makes no factual statement")
        found = [bool(s.contexts) for s in statements]
        return MetricResult.ok(
            sum(found) / len(found),
            reason=f"{sum(found)} of {len(found)} reference statements are in the contexts",
            details=Details(
                statements=tuple(
                    StatementFinding(s.text, f, tuple(i + 1 for i in s.contexts))
                    for s, f in zip(statements, found)
                )
            ),
        )
