from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._details import ContextCriterion, ContextJudgment, Details
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.llm._contexts import RetrievedContextsMetric
from ragmeter.steps import Facts, Need


@builtin_metric(
    "context_relevance",
    family="llm",
    rank=70,
    summary=(
        "share of contexts relevant to the question (no reference, no response; RAGAS's "
        "NVIDIA-style ContextRelevance rates all contexts at once, 0-2)"
    ),
)
class ContextRelevance(RetrievedContextsMetric):
    """Share of the retrieved contexts relevant to the question, judged from the question
    alone (no reference, no response). Split long contexts into sentences to get the RAGAS
    paper's sentence-level context relevance."""

    name = "context_relevance"
    requires: Requirements = (("user_input",), ("retrieved_contexts",))
    context_needs = (Need("usefulness_question"),)

    def judged(self, facts: Facts) -> MetricResult:
        verdicts = facts.usefulness_question or []
        relevant = sum(v.useful for v in verdicts)
        contexts = tuple(
            ContextJudgment(i + 1, ContextCriterion.RELEVANT, v.useful, v.reason, v.probability)
            for i, v in enumerate(verdicts)
        )
        reason = f"{relevant} of {len(verdicts)} contexts are relevant to the question"
        score, extra = relevant / len(verdicts), {}
        known = [v.probability for v in verdicts if v.probability is not None]
        if facts.calibrated_verdicts and verdicts and len(known) == len(verdicts):
            # Calibrated verdicts: the mean P(relevant) is the score (the count in details).
            score, extra = sum(known) / len(known), {"verdict_score": score}
            reason += " (score: their mean P(relevant))"
        return MetricResult.ok(
            score, reason=reason, details=Details(contexts=contexts, extra=extra)
        )
