from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.retrieval._base import Judgments, RankingMetric, Scores
from ragmeter.metrics.retrieval._ranking import average_precision


@builtin_metric(
    "map",
    family="retrieval",
    rank=230,
    summary="average precision (trec_eval map / map_cut)",
    cutoff="optional",
    aliases=("ap", "average_precision"),
)
class MAP(RankingMetric):
    """Average Precision of the ranking (its mean over samples is MAP), as trec_eval's map.

    The sum of precisions at relevant ranks is divided by the number of relevant contexts
    that exist, retrieved or not; with K, only the top K are summed (trec_eval's map_cut).

    >>> from ragmeter import Sample
    >>> s = Sample(retrieved_context_ids=list("ABCDEF"), reference_context_ids=["A", "C", "F"])
    >>> round(MAP().score(s).score, 3)
    0.722
    """

    base_name = "map"

    def compute(self, judgments: Judgments) -> Scores:
        return average_precision(
            judgments.relevance, judgments.n_relevant, self.k, relevance_level=self.relevance_level
        )
