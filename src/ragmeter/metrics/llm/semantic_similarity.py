from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings, cosine_similarity
from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._sample import SampleMetric
from ragmeter.metrics._spec import builtin_metric
from ragmeter.steps import Facts


@builtin_metric(
    "semantic_similarity",
    family="embedding",
    rank=170,
    summary="cosine of response and reference embeddings",
    aliases=("answer_similarity",),
)
class SemanticSimilarity(SampleMetric):
    """Cosine similarity of the response's and the reference's embeddings (no judge call)."""

    name = "semantic_similarity"
    requires: Requirements = (("response",), ("reference",))
    _uses_judge = False
    _uses_embeddings = True

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        assert embeddings is not None
        vectors = await embeddings.embed([sample.response or "", sample.reference or ""])
        return MetricResult.ok(float(cosine_similarity(vectors[0], vectors[1])))
