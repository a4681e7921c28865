from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings
from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._details import ClaimCheck, ClaimVerdict, Details, LeftOut
from ragmeter.metrics._sample import SampleMetric
from ragmeter.metrics._spec import builtin_metric
from ragmeter.steps import Facts, Need, context_columns

CLAIMS = Need("response_claims")
SUPPORT = Need("support", claims_of="response", against=("contexts",))


@builtin_metric(
    "faithfulness",
    family="llm",
    rank=10,
    summary="share of the response's claims the contexts support",
)
class Faithfulness(SampleMetric):
    """Share of the response's claims that the retrieved contexts support.

    Worked example (docs/llm-metrics.md, faithfulness): of three claims ("AirPods Pro 2
    standard warranty is 1 year", "it starts from the date of purchase", "AppleCare+
    extends it to 3 years") the context supports the first two: 2 / 3 = 0.667. A response
    with no factual claim is not applicable (not 1.0, not NaN); with no retrieved context
    every claim is unsupported.
    """

    name = "faithfulness"
    requires: Requirements = (("response",), ("retrieved_contexts",))

    def needs(self, sample: Sample) -> list[Need]:
        return [CLAIMS, SUPPORT] if sample.retrieved_contexts else [CLAIMS]

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        claims = facts.response_claims or []
        left_out = LeftOut.of(facts.discarded("response_claims"))
        if not claims:
            dropped = f" ({len(left_out)} claims the judge wrote are not the response's)"
            return MetricResult.not_applicable(
                "the response makes no factual claim" + (dropped if left_out else "")
            )
        probabilities: list[float | None] = [None] * len(claims)
        if not sample.retrieved_contexts:
            verdicts = [False] * len(claims)
            reasons = ["no context was retrieved"] * len(claims)
        else:
            support = facts.support_for(SUPPORT)
            columns = set(context_columns(support))
            verdicts = [support.supported(i, columns) for i in range(len(claims))]
            reasons = list(support.reasons)
            # P(supported) by the contexts alone: the same cells as the verdict (the check
            # may also have been asked against the reference, for answer correctness).
            probabilities = [support.probability(i, columns) for i in range(len(claims))]
        supported = sum(verdicts)
        known = [p for p in probabilities if p is not None]
        soft = len(known) == len(probabilities)
        entries = tuple(
            ClaimVerdict(c, ClaimCheck.SUPPORTED, v, r, p if soft else None)
            for c, v, r, p in zip(claims, verdicts, reasons, probabilities)
        )
        # When the judge gave P(supported) per claim, their mean is a score with less judge
        # noise than the count of yes verdicts (see ragmeter.stats.judge_noise).
        extra = {"soft_score": sum(known) / len(claims)} if soft else {}
        score = supported / len(claims)
        reason = f"{supported} of {len(claims)} claims are supported by the contexts"
        if soft and facts.calibrated_verdicts:
            # Calibrated verdicts: the mean P(supported) is the score (the count in details).
            extra["verdict_score"], score = score, extra["soft_score"]
            reason += " (score: their mean P(supported))"
        details = Details(claims=entries, left_out=left_out, extra=extra)
        return MetricResult.ok(score, reason=reason, details=details)
