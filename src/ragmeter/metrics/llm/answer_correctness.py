from typing import Any

from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings, cosine_similarity
from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._details import ClaimCheck, ClaimVerdict, Details
from ragmeter.metrics._sample import SampleMetric
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.llm._claims import ClaimCounts
from ragmeter.steps import Facts, Need

RESPONSE_VS_REFERENCE = Need("support", claims_of="response", against=("reference",))
REFERENCE_VS_RESPONSE = Need("support", claims_of="reference", against=("response",))


def claim_counts(facts: Facts) -> tuple[ClaimCounts, list[ClaimVerdict]]:
    """TP / FP / FN from the two support checks, with per-claim details."""
    forward = facts.support_for(RESPONSE_VS_REFERENCE)
    backward = facts.support_for(REFERENCE_VS_RESPONSE)
    tp = sum(forward.supported(i) for i in range(len(forward.claims)))
    fn = sum(not backward.supported(i) for i in range(len(backward.claims)))
    details = [
        ClaimVerdict(c, ClaimCheck.IN_REFERENCE, forward.supported(i))
        for i, c in enumerate(forward.claims)
    ] + [
        ClaimVerdict(c, ClaimCheck.IN_RESPONSE, backward.supported(i))
        for i, c in enumerate(backward.claims)
    ]
    return ClaimCounts(tp=tp, fp=len(forward.claims) - tp, fn=fn), details


def answer_correctness(f_score: float, similarity: float, weights: tuple[float, float]) -> float:
    """The weighted mix: claim F1 0.8 (TP 4, FP 1, FN 1) and similarity 0.9 give 0.825.

    >>> answer_correctness(0.8, 0.9, (0.75, 0.25))
    0.825
    """
    return (weights[0] * f_score + weights[1] * similarity) / sum(weights)


@builtin_metric(
    "answer_correctness",
    family="llm",
    rank=30,
    summary="0.75 x claim F1 vs reference + 0.25 x embedding similarity",
)
class AnswerCorrectness(SampleMetric):
    """``weights[0]`` x claim-level F-beta of response vs reference + ``weights[1]`` x
    embedding similarity (0.75 / 0.25 by default, beta = 1)."""

    name = "answer_correctness"
    requires: Requirements = (("response",), ("reference",))
    _uses_embeddings = True

    def __init__(
        self, weights: tuple[float, float] = (0.75, 0.25), beta: float = 1.0, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        if len(weights) != 2 or min(weights) < 0 or sum(weights) == 0:
            raise ValueError(f"weights must be two non-negative numbers, not both 0: {weights}")
        self.weights = (float(weights[0]), float(weights[1]))
        self.beta = beta
        self.uses_embeddings = self.weights[1] > 0
        self.uses_judge = self.weights[0] > 0

    def params(self) -> dict[str, Any]:
        return {**super().params(), "weights": list(self.weights), "beta": self.beta}

    def needs(self, sample: Sample) -> list[Need]:
        if self.weights[0] == 0:
            return []
        return [
            Need("response_claims"),
            Need("statements"),
            RESPONSE_VS_REFERENCE,
            REFERENCE_VS_RESPONSE,
        ]

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        f_score, claims, counts = 0.0, list[ClaimVerdict](), None
        if self.weights[0] > 0:
            counts, claims = claim_counts(facts)
            value = counts.f_beta(self.beta)
            if value is None:
                return MetricResult.not_applicable("neither response nor reference makes a claim")
            f_score = value
        similarity = 0.0
        if self.weights[1] > 0:
            assert embeddings is not None
            vectors = await embeddings.embed([sample.response or "", sample.reference or ""])
            similarity = float(cosine_similarity(vectors[0], vectors[1]))
        score = answer_correctness(f_score, similarity, self.weights)
        extra = {"tp": counts.tp, "fp": counts.fp, "fn": counts.fn} if counts else {}
        return MetricResult.ok(
            score,
            reason=f"claim F{self.beta:g} {f_score:.3f}, similarity {similarity:.3f}",
            details=Details(
                claims=tuple(claims),
                extra={"f_score": f_score, "similarity": similarity, **extra},
            ),
        )
