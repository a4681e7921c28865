from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.retrieval._base import Judgments, RankingMetric, Scores
from ragmeter.metrics.retrieval._ranking import reciprocal_rank


@builtin_metric(
    "mrr",
    family="retrieval",
    rank=220,
    summary="1 / rank of the first relevant context",
    cutoff="optional",
    aliases=("reciprocal_rank",),
)
class MRR(RankingMetric):
    """Reciprocal rank of the first relevant context (its mean over samples is MRR).

    With K, a first relevant context below rank K scores 0.

    >>> from ragmeter import Sample
    >>> MRR().score(Sample(retrieved_context_ids=["x", "A"], reference_context_ids=["A"])).score
    0.5
    """

    base_name = "mrr"

    def compute(self, judgments: Judgments) -> Scores:
        return reciprocal_rank(judgments.relevance, self.k, relevance_level=self.relevance_level)
