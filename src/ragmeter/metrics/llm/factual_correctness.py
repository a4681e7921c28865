from typing import Any, Literal

from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings
from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._details import Details
from ragmeter.metrics._sample import SampleMetric
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.llm.answer_correctness import (
    REFERENCE_VS_RESPONSE,
    RESPONSE_VS_REFERENCE,
    claim_counts,
)
from ragmeter.steps import Facts, Need

Mode = Literal["f1", "precision", "recall"]


@builtin_metric(
    "factual_correctness", family="llm", rank=160, summary="claim F1 of response vs reference"
)
class FactualCorrectness(SampleMetric):
    """Claim-level precision, recall or F-beta of the response against the reference.

    precision = TP / (TP + FP): how much of what the response says the reference backs;
    recall = TP / (TP + FN): how much of the reference the response covers.
    """

    name = "factual_correctness"
    requires: Requirements = (("response",), ("reference",))

    def __init__(self, mode: Mode = "f1", beta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if mode not in ("f1", "precision", "recall"):
            raise ValueError(f"mode must be f1, precision or recall, got {mode!r}")
        self.mode: Mode = mode
        self.beta = beta

    def params(self) -> dict[str, Any]:
        return {**super().params(), "mode": self.mode, "beta": self.beta}

    def needs(self, sample: Sample) -> list[Need]:
        needs = [Need("response_claims"), RESPONSE_VS_REFERENCE]
        if self.mode != "precision":
            needs += [Need("statements"), REFERENCE_VS_RESPONSE]
        return needs

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        if self.mode == "precision":
            forward = facts.support_for(RESPONSE_VS_REFERENCE)
            if not forward.claims:
                return MetricResult.not_applicable("the response makes no factual claim")
            tp = sum(forward.supported(i) for i in range(len(forward.claims)))
            return MetricResult.ok(
                tp / len(forward.claims), reason=f"{tp} of {len(forward.claims)} claims backed"
            )
        counts, claims = claim_counts(facts)
        value = counts.recall if self.mode == "recall" else counts.f_beta(self.beta)
        if value is None:
            return MetricResult.not_applicable("no claim to compare")
        return MetricResult.ok(
            value,
            reason=f"TP {counts.tp}, FP {counts.fp}, FN {counts.fn}",
            details=Details(
                claims=tuple(claims), extra={"tp": counts.tp, "fp": counts.fp, "fn": counts.fn}
            ),
        )
