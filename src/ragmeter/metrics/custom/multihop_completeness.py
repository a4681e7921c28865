"""Multi-hop completeness: does the answer use every hop the question needs?

The shipped example of a metric built from the shared steps (the subclass API): it declares
its needs, the response's claims and their support against the reference contexts, and
scores from the facts the steps established. It never calls the judge itself, so with
faithfulness or answer correctness in the same run the claims are extracted once, and with a
judge that batches verdicts one ``verify`` call checks the claims against the retrieved and
the reference contexts together.
"""

from __future__ import annotations

from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings
from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._details import ClaimVerdict, Details, HopUse
from ragmeter.metrics._sample import SampleMetric
from ragmeter.metrics._spec import builtin_metric
from ragmeter.steps import Facts, Need

CLAIMS = Need("response_claims")
#: Each response claim against each reference context (a hop): which hops support which
#: claims. The steps give ``reference_contexts`` one column per passage, so no swapped copy of
#: the sample is needed: the runner gathers the needs of every metric of a sample on the
#: sample itself, and shares this verification with the other metrics' verifications.
HOP_SUPPORT = Need(
    "support", claims_of="response", against=("reference_contexts",), per_passage=True
)


@builtin_metric(
    "multihop_completeness",
    family="custom",
    rank=420,
    summary="share of the question's hops (reference contexts) the response's claims use",
    aliases=("multi_hop_completeness",),
)
class MultiHopCompleteness(SampleMetric):
    """Share of the question's hops (reference contexts) the response uses.

    A hop is used when it supports at least one of the response's claims. A question written
    from two passages ("Which warranty covers the headphones bought with the phone?") is
    answered completely only when the answer draws on both: with claims supported by passage
    1 only, the score is 1 / 2. Samples with fewer than two reference contexts are not
    applicable (not multi-hop); a response without a factual claim uses no hop (0).
    ``details.hops`` says, per hop, which claims (1-based, in ``details.claims``) use it.
    """

    name = "multihop_completeness"
    requires: Requirements = (("response",), ("reference_contexts",))

    def needs(self, sample: Sample) -> list[Need]:
        if len(sample.reference_contexts or []) < 2:
            return []  # not applicable: no judge call
        return [CLAIMS, HOP_SUPPORT]

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        hops = sample.reference_contexts or []
        if len(hops) < 2:
            return MetricResult.not_applicable(
                f"{len(hops)} reference context(s): a multi-hop question has at least 2"
            )
        claims = facts.response_claims or []
        if not claims:
            return MetricResult.ok(
                0.0,
                reason=f"the response makes no factual claim: it uses none of the {len(hops)} hops",
                details=Details(hops=tuple(HopUse(i + 1) for i in range(len(hops)))),
            )
        support = facts.support_for(HOP_SUPPORT)
        columns = [support.column(f"reference_context:{i + 1}") for i in range(len(hops))]
        entries = [
            HopUse(i + 1, tuple(c + 1 for c in range(len(claims)) if support.matrix[c][column]))
            for i, column in enumerate(columns)
        ]
        used = sum(entry.used for entry in entries)
        unused = [entry.hop for entry in entries if not entry.used]
        reason = f"the response uses {used} of {len(hops)} hops"
        if unused:
            reason += f"; hop(s) {', '.join(map(str, unused))} support none of its claims"
        return MetricResult.ok(
            used / len(hops),
            reason=reason,
            details=Details(hops=tuple(entries), claims=tuple(ClaimVerdict(c) for c in claims)),
        )
