"""Claim-level precision, recall and F-beta from support verdicts (one place for the formula)."""

from __future__ import annotations

from dataclasses import dataclass

from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings
from ragmeter.metrics._base import MetricResult
from ragmeter.metrics._sample import SampleMetric
from ragmeter.steps import Facts, Need, Support


@dataclass(frozen=True)
class ClaimCounts:
    """TP: response claims the reference supports; FP: those it does not; FN: reference
    statements the response does not support."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    def f_beta(self, beta: float = 1.0) -> float | None:
        """(1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP); ``None`` when there is no claim at all.

        >>> ClaimCounts(tp=2, fp=1, fn=1).f_beta()
        0.6666666666666666
        """
        b2 = beta * beta
        denominator = (1 + b2) * self.tp + b2 * self.fn + self.fp
        if denominator == 0:
            return None
        return (1 + b2) * self.tp / denominator


class ResponseClaimsMetric(SampleMetric):
    """A share of the response's claims, read from their support verdicts (each claim
    against the reference and the contexts): not applicable when the response makes no
    factual claim. Subclasses name the verdicts in ``support_need`` and score in
    :meth:`score_claims`."""

    #: The support verdicts read (one of the ``Need`` s the subclass's ``needs`` lists).
    support_need: Need

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        claims = facts.response_claims or []
        if not claims:
            return MetricResult.not_applicable("the response makes no factual claim")
        support = facts.support_for(self.support_need)
        return self.score_claims(sample, facts, claims, support, support.column("reference"))

    def score_claims(
        self, sample: Sample, facts: Facts, claims: list[str], support: Support, reference: int
    ) -> MetricResult:
        """The result from the response's ``claims`` (at least one), their ``support``
        verdicts and the index of its ``reference`` column."""
        raise NotImplementedError
