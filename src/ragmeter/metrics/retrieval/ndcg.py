from typing import Any

from ragmeter.dataset import Sample
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.retrieval._base import Judgments, RankingMetric, Scores, cutoff_name
from ragmeter.metrics.retrieval._ranking import Gain, ndcg_at_k

#: 2^1000 leaves room to add up millions of gains below float's largest value (about 2^1024).
MAX_EXPONENTIAL_GRADE = 1000


@builtin_metric(
    "ndcg",
    family="retrieval",
    rank=240,
    summary="NDCG, linear gain (trec_eval ndcg_cut)",
    cutoff="optional",
)
@builtin_metric(
    "ndcg_exp",
    family="retrieval",
    rank=250,
    summary="NDCG, exponential gain 2^rel - 1",
    cutoff="optional",
    params={"gain": "exponential"},
)
class NDCG(RankingMetric):
    """Normalised discounted cumulative gain over graded relevance (NDCG@K).

    ``gain="linear"`` uses the grade as the gain (trec_eval's ndcg); ``"exponential"`` uses
    2^grade - 1 (Burges et al. 2005's gain; named ``ndcg_exp``). The ideal ranking sorts
    every judged context of the sample, retrieved or not.

    >>> from ragmeter import Sample
    >>> grades = {"A": 3, "B": 0, "C": 2, "D": 1, "E": 2}
    >>> s = Sample(retrieved_context_ids=list("ABCDE"), relevance=grades)
    >>> round(NDCG(5, gain="exponential").score(s).score, 3)
    0.932
    """

    base_name = "ndcg"

    def __init__(
        self, k: int | None = None, *, gain: Gain = "linear", relevance_level: float = 1.0
    ) -> None:
        super().__init__(k, relevance_level=relevance_level)
        if gain not in ("linear", "exponential"):
            raise ValueError(f"gain must be 'linear' or 'exponential', got {gain!r}")
        self.gain: Gain = gain
        self.name = cutoff_name("ndcg" if gain == "linear" else "ndcg_exp", k)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "gain": self.gain}

    def sample_problem(self, sample: Sample) -> str | None:
        problem = super().sample_problem(sample)
        if problem is None and self.gain == "exponential" and sample.relevance:
            doc, grade = max(sample.relevance.items(), key=lambda item: item[1])
            if grade > MAX_EXPONENTIAL_GRADE:
                return (
                    f"grade {grade:g} of {doc!r} is too large for {self.name}: 2^grade "
                    f"overflows; use ndcg (linear gain) or grades <= {MAX_EXPONENTIAL_GRADE}"
                )
        return problem

    def compute(self, judgments: Judgments) -> Scores:
        return ndcg_at_k(judgments.relevance, judgments.ideal, self.k, gain=self.gain)
