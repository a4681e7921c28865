"""RAGChecker's context utilization: of what the retriever found, how much the answer used."""

from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._details import ClaimCheck, ClaimVerdict, Details, StatementFinding
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.llm._contexts import RetrievedContextsMetric
from ragmeter.metrics.llm.answer_correctness import REFERENCE_VS_RESPONSE
from ragmeter.steps import Facts, Need

#: The reference's statements with the contexts that support them (context recall's).
ATTRIBUTED = Need("statements", against=("contexts",))


@builtin_metric(
    "claim_context_utilization",
    family="llm",
    rank=140,
    summary=(
        "share of the reference statements found in the contexts that the response states "
        "(RAGChecker's context utilization)"
    ),
)
class ClaimContextUtilization(RetrievedContextsMetric):
    """Of the reference's statements that the retrieved contexts support, the share the
    response also states: whether the generator used the relevant information it was given.

    RAGChecker's ``sum(in_contexts & in_response) / sum(in_contexts)``, from context
    recall's attribution and answer correctness's reference-vs-response verdicts (no new
    judgment; one ``verify`` call only when no answer/factual correctness is in the run).
    Worked example (tests/metrics/llm/test_claim_diagnostics.py): of the reference's
    statements "2-year warranty" (context 1), "covers battery defects" (context 2) and
    "repairs take 5 days" (no context), the response states the first and the third: of the
    two in the contexts it used one, 1 / 2 = 0.5 (the third, stated from memory, is
    self-knowledge, not utilization). Not applicable with no context, no reference
    statement, or no statement in the contexts (RAGChecker scores that 0, which would blame
    the generator for what the retriever missed: context recall already shows it).

    Unlike ``context_utilization`` (RAGAS: each context judged useful for the response, as
    AP), this one counts the reference's facts, not the contexts.
    """

    name = "claim_context_utilization"
    requires: Requirements = (("response",), ("reference",), ("retrieved_contexts",))
    context_needs = (ATTRIBUTED, REFERENCE_VS_RESPONSE)

    def judged(self, facts: Facts) -> MetricResult:
        statements = facts.statements or []
        if not statements:
            return MetricResult.not_applicable("the reference makes no factual statement")
        stated = facts.support_for(REFERENCE_VS_RESPONSE)
        found = [bool(s.contexts) for s in statements]
        if not any(found):
            return MetricResult.not_applicable(
                "no reference statement is in the retrieved contexts: nothing to use"
            )
        in_response = [stated.supported(i) for i in range(len(statements))]
        used = sum(f and r for f, r in zip(found, in_response))
        return MetricResult.ok(
            used / sum(found),
            reason=f"the response states {used} of the {sum(found)} reference statements "
            "found in the contexts",
            details=Details(
                claims=tuple(
                    ClaimVerdict(s.text, ClaimCheck.IN_RESPONSE, r)
                    for s, r in zip(statements, in_response)
                ),
                statements=tuple(
                    StatementFinding(s.text, f, tuple(i + 1 for i in s.contexts))
                    for s, f in zip(statements, found)
                ),
            ),
        )
