from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.retrieval._base import CutoffMetric, Judgments, Scores
from ragmeter.metrics.retrieval._ranking import recall_at_k


@builtin_metric(
    "recall",
    family="retrieval",
    rank=190,
    summary="share of the relevant found in the top K",
    cutoff="required",
)
class RecallAtK(CutoffMetric):
    """Share of the relevant contexts found in the top K (Recall@K).

    >>> from ragmeter import Sample
    >>> s = Sample(retrieved_context_ids=list("ABCDE"), reference_context_ids=list("ACDF"))
    >>> RecallAtK(5).score(s).score
    0.75
    """

    base_name = "recall"

    def compute(self, judgments: Judgments) -> Scores:
        return recall_at_k(
            judgments.relevance, judgments.n_relevant, self.k, relevance_level=self.relevance_level
        )
