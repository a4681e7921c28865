from typing import Any, Literal

from ragmeter.dataset import Sample
from ragmeter.metrics._base import Direction, MetricResult, Requirements
from ragmeter.metrics._details import ClaimCheck, Details, NoiseClaimVerdict
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.llm._claims import ResponseClaimsMetric
from ragmeter.steps import Facts, Need, Support, context_columns

Mode = Literal["relevant", "irrelevant", "all"]
SUPPORT = Need("support", claims_of="response", against=("reference", "contexts"), per_passage=True)
ATTRIBUTED = Need("statements", against=("contexts",))


@builtin_metric(
    "noise_sensitivity_relevant",
    family="llm",
    rank=90,
    summary="share of claims wrong and drawn from relevant contexts (lower is better)",
    aliases=("noise_sensitivity",),
)
@builtin_metric(
    "noise_sensitivity_irrelevant",
    family="llm",
    rank=100,
    summary="share of claims wrong and drawn from irrelevant contexts (lower is better)",
    params={"mode": "irrelevant"},
)
@builtin_metric(
    "noise_sensitivity_all",
    family="llm",
    rank=110,
    summary=(
        "share of claims wrong, wherever they came from (= relevant + "
        "irrelevant + hallucination; lower is better)"
    ),
    params={"mode": "all"},
)
class NoiseSensitivity(ResponseClaimsMetric):
    """Share of the response's claims that are wrong (not supported by the reference) and
    that came from retrieved contexts: in mode ``relevant`` from a relevant context (one
    that supports some reference statement), in mode ``irrelevant`` only from irrelevant
    ones. Lower is better. A constant number of judge calls, whatever the contexts.

    Both modes follow RAGAS's and RAGChecker's code: a wrong claim that no context supports
    counts 0 in both (it is a ``hallucination``, RAGChecker's third share; Ru et al. 2024).
    The simpler definition is incorrect claims / all claims, wherever they came from:
    mode ``all`` (``noise_sensitivity_all``) gives it, and it equals relevant + irrelevant +
    hallucination, since the three split the wrong claims. Example (the AirPods sample of
    tests/metrics/llm/scripts.py): the AppleCare+ claim is wrong and in no context, the
    other two are right: 0 in both modes, hallucination 1 / 3, mode ``all`` 1 / 3.
    """

    requires: Requirements = (("response",), ("reference",), ("retrieved_contexts",))
    direction: Direction = Direction.LOWER_IS_BETTER
    support_need = SUPPORT

    def __init__(self, mode: Mode = "relevant", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if mode not in ("relevant", "irrelevant", "all"):
            raise ValueError(f"mode must be 'relevant', 'irrelevant' or 'all', got {mode!r}")
        self.mode: Mode = mode
        self.name = f"noise_sensitivity_{mode}"

    def params(self) -> dict[str, Any]:
        return {**super().params(), "mode": self.mode}

    def needs(self, sample: Sample) -> list[Need]:
        return [Need("response_claims"), ATTRIBUTED, SUPPORT]

    def score_claims(
        self, sample: Sample, facts: Facts, claims: list[str], support: Support, reference: int
    ) -> MetricResult:
        columns = context_columns(support)
        relevant = {i for s in facts.statements or [] for i in s.contexts}
        relevant_cols = {columns[i] for i in relevant if i < len(columns)}
        irrelevant_cols = set(columns) - relevant_cols
        flagged, details = 0, list[NoiseClaimVerdict]()
        for i, claim in enumerate(claims):
            correct = support.matrix[i][reference]
            from_relevant = support.supported(i, relevant_cols)
            from_irrelevant = support.supported(i, irrelevant_cols)
            if self.mode == "relevant":
                noisy = not correct and from_relevant
            elif self.mode == "all":
                noisy = not correct
            else:
                noisy = not correct and from_irrelevant and not from_relevant
            flagged += noisy
            details.append(
                NoiseClaimVerdict(
                    claim,
                    ClaimCheck.CORRECT,
                    correct,
                    from_relevant_context=from_relevant,
                    from_irrelevant_context=from_irrelevant,
                    counted=noisy,
                )
            )
        return MetricResult.ok(
            flagged / len(claims),
            reason=f"{flagged} of {len(claims)} claims are incorrect"
            + ("" if self.mode == "all" else f" and come from {self.mode} contexts"),
            details=Details(
                claims=tuple(details),
                extra={"relevant_contexts": sorted(i + 1 for i in relevant)},
            ),
        )
