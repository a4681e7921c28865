from typing import ClassVar

from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings, cosine_similarity
from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics.llm._base import JudgedMetric
from ragmeter.steps import Facts, Need


class SemanticSimilarity(JudgedMetric):
    """Cosine similarity of the response's and the reference's embeddings (no judge call)."""

    name = "semantic_similarity"
    requires: ClassVar[Requirements] = (("response",), ("reference",))
    uses_judge: ClassVar[bool] = False
    uses_embeddings: ClassVar[bool] = True

    def needs(self, sample: Sample) -> list[Need]:
        return []

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        assert embeddings is not None
        vectors = await embeddings.embed([sample.response or "", sample.reference or ""])
        return MetricResult.ok(float(cosine_similarity(vectors[0], vectors[1])))
