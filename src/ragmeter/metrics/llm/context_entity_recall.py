from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings
from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._details import Details, EntityFinding
from ragmeter.metrics._sample import SampleMetric
from ragmeter.metrics._spec import builtin_metric
from ragmeter.steps import Facts, Need


@builtin_metric(
    "context_entity_recall",
    family="llm",
    rank=80,
    summary="share of reference entities present in the contexts",
    aliases=("context_entities_recall",),
)
class ContextEntityRecall(SampleMetric):
    """Share of the reference's named entities that appear in the retrieved contexts.

    Entities are matched in any surface form (the judge's verdict, or a case- and
    width-insensitive fuzzy match), not by exact string only.
    """

    name = "context_entity_recall"
    requires: Requirements = (("reference",), ("retrieved_contexts",))

    def needs(self, sample: Sample) -> list[Need]:
        return [Need("entities")]

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        entities = facts.entities or []
        if not entities:
            return MetricResult.not_applicable("the reference names no entity")
        if not sample.retrieved_contexts:
            return MetricResult.ok(0.0, reason="no context was retrieved")
        found = sum(e.in_contexts for e in entities)
        return MetricResult.ok(
            found / len(entities),
            reason=f"{found} of {len(entities)} reference entities are in the contexts",
            details=Details(entities=tuple(EntityFinding(e.text, e.in_contexts) for e in entities)),
        )
