"""RAGChecker's hallucination: wrong claims that no retrieved context backs.

Read from the same verdicts as faithfulness and noise sensitivity (each response claim
against the reference and the contexts), so it adds no judge call to a run that has them.
"""

from typing import Any

from ragmeter.dataset import Sample
from ragmeter.metrics._base import Direction, MetricResult, Requirements
from ragmeter.metrics._details import ClaimCheck, ClaimVerdict, Details
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.llm._claims import ResponseClaimsMetric
from ragmeter.steps import Facts, Need, Support, context_columns

#: Each response claim against the reference (correct?) and the contexts (from them?).
GROUNDING = Need("support", claims_of="response", against=("reference", "contexts"))


@builtin_metric(
    "hallucination",
    family="llm",
    rank=120,
    summary="share of claims wrong and supported by no context (RAGChecker; lower is better)",
)
class Hallucination(ResponseClaimsMetric):
    """Share of the response's claims that are incorrect (the reference does not support
    them) and that no retrieved context supports: made up by the generator. Lower is better.

    RAGChecker's ``mean(unfaithful & incorrect)`` over the response's claims. Worked
    example (tests/metrics/llm/test_claim_diagnostics.py): five claims, of which "2-year
    warranty" is correct and in context 1, "covers water damage" wrong and in context 2,
    "extended warranty costs $50" wrong and in context 3, "repairs take 5 days" correct and
    in no context, "the warranty can be transferred" wrong and in no context. Only the last
    is a hallucination: 1 / 5 = 0.2. With no retrieved context every wrong claim is one;
    a response without a factual claim is not applicable.

    The three wrong-claim shares partition the wrong claims: noise_sensitivity_relevant +
    noise_sensitivity_irrelevant + hallucination = incorrect claims / all claims (noise
    sensitivity wherever the claim came from, ``noise_sensitivity_all``): 0.2 + 0.2 + 0.2 =
    0.6 above.
    """

    name = "hallucination"
    requires: Requirements = (("response",), ("reference",), ("retrieved_contexts",))
    direction: Direction = Direction.LOWER_IS_BETTER
    #: The claims counted: wrong ones (hallucination) or correct ones (self-knowledge).
    counts_correct = False
    support_need = GROUNDING

    def needs(self, sample: Sample) -> list[Need]:
        return [Need("response_claims"), GROUNDING]

    def score_claims(
        self, sample: Sample, facts: Facts, claims: list[str], support: Support, reference: int
    ) -> MetricResult:
        columns = set(context_columns(support))
        counted, entries, in_contexts = list[int](), list[ClaimVerdict](), list[bool]()
        for i, claim in enumerate(claims):
            correct = support.matrix[i][reference]
            grounded = support.supported(i, columns)
            if not grounded and correct == self.counts_correct:
                counted.append(i + 1)
            in_contexts.append(grounded)
            entries.append(ClaimVerdict(claim, ClaimCheck.CORRECT, correct, support.reasons[i]))
        kind = "correct" if self.counts_correct else "incorrect"
        reason = f"{len(counted)} of {len(claims)} claims are {kind} and in no context"
        if not sample.retrieved_contexts:
            reason += " (no context was retrieved)"
        extra: dict[str, Any] = {"in_contexts": in_contexts, "counted": counted}
        return MetricResult.ok(
            len(counted) / len(claims),
            reason=reason,
            details=Details(claims=tuple(entries), extra=extra),
        )
