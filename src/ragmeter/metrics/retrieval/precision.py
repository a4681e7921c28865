from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.retrieval._base import CutoffMetric, Judgments, Scores
from ragmeter.metrics.retrieval._ranking import precision_at_k


@builtin_metric(
    "precision",
    family="retrieval",
    rank=180,
    summary="share of the top K that is relevant",
    cutoff="required",
)
class PrecisionAtK(CutoffMetric):
    """Share of the top K retrieved contexts that are relevant (Precision@K).

    >>> from ragmeter import Sample
    >>> s = Sample(retrieved_context_ids=list("ABCDE"), reference_context_ids=list("ACDF"))
    >>> PrecisionAtK(5).score(s).score
    0.6
    """

    base_name = "precision"
    defined_without_relevant = True

    def compute(self, judgments: Judgments) -> Scores:
        return precision_at_k(judgments.relevance, self.k, relevance_level=self.relevance_level)
