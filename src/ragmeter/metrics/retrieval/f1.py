from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.retrieval._base import CutoffMetric, Judgments, Scores
from ragmeter.metrics.retrieval._ranking import f1_at_k


@builtin_metric(
    "f1",
    family="retrieval",
    rank=200,
    summary="harmonic mean of precision@K, recall@K",
    cutoff="required",
)
class F1AtK(CutoffMetric):
    """Harmonic mean of Precision@K and Recall@K.

    >>> from ragmeter import Sample
    >>> s = Sample(retrieved_context_ids=list("ABCDE"), reference_context_ids=list("ACDF"))
    >>> round(F1AtK(5).score(s).score, 4)
    0.6667
    """

    base_name = "f1"

    def compute(self, judgments: Judgments) -> Scores:
        return f1_at_k(
            judgments.relevance, judgments.n_relevant, self.k, relevance_level=self.relevance_level
        )
