from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.retrieval._base import CutoffMetric, Judgments, Scores
from ragmeter.metrics.retrieval._ranking import hit_at_k


@builtin_metric(
    "hit",
    family="retrieval",
    rank=210,
    summary="1 if anything relevant is in the top K",
    cutoff="required",
    aliases=("hit_rate", "success"),
)
class HitAtK(CutoffMetric):
    """1 when a relevant context is in the top K, else 0 (Hit@K, trec_eval's success@K).

    >>> from ragmeter import Sample
    >>> s = Sample(retrieved_context_ids=["x", "y", "A"], reference_context_ids=["A"])
    >>> HitAtK(3).score(s).score
    1.0
    """

    base_name = "hit"

    def compute(self, judgments: Judgments) -> Scores:
        return hit_at_k(judgments.relevance, self.k, relevance_level=self.relevance_level)
