from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.retrieval._base import Judgments, RankingMetric, Scores
from ragmeter.metrics.retrieval._ranking import r_precision


@builtin_metric(
    "r_precision",
    family="retrieval",
    rank=260,
    summary="precision at R = number relevant",
    aliases=("rprec",),
)
class RPrecision(RankingMetric):
    """Precision at rank R, R being the number of relevant contexts (trec_eval's Rprec).

    >>> from ragmeter import Sample
    >>> s = Sample(retrieved_context_ids=list("ABCDE"), reference_context_ids=["A", "C", "D", "F"])
    >>> RPrecision().score(s).score
    0.75
    """

    base_name = "r_precision"

    def __init__(self, *, relevance_level: float = 1.0) -> None:
        super().__init__(None, relevance_level=relevance_level)

    def compute(self, judgments: Judgments) -> Scores:
        return r_precision(
            judgments.relevance, judgments.n_relevant, relevance_level=self.relevance_level
        )
