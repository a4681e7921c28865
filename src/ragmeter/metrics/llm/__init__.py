"""LLM-judged metrics, built on the shared steps."""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter._services import run_sync
    from ragmeter.metrics.llm._base import JudgedMetric
    from ragmeter.metrics.llm.abstention import Abstention
    from ragmeter.metrics.llm.answer_correctness import AnswerCorrectness
    from ragmeter.metrics.llm.answer_relevancy import AnswerRelevancy
    from ragmeter.metrics.llm.claim_context_utilization import ClaimContextUtilization
    from ragmeter.metrics.llm.context_entity_recall import ContextEntityRecall
    from ragmeter.metrics.llm.context_precision import ContextPrecision
    from ragmeter.metrics.llm.context_recall import ContextRecall
    from ragmeter.metrics.llm.context_relevance import ContextRelevance
    from ragmeter.metrics.llm.context_utilization import ContextUtilization
    from ragmeter.metrics.llm.factual_correctness import FactualCorrectness
    from ragmeter.metrics.llm.faithfulness import Faithfulness
    from ragmeter.metrics.llm.hallucination import Hallucination
    from ragmeter.metrics.llm.noise_sensitivity import NoiseSensitivity
    from ragmeter.metrics.llm.self_knowledge import SelfKnowledge
    from ragmeter.metrics.llm.semantic_similarity import SemanticSimilarity

__all__ = [
    "Abstention",
    "AnswerCorrectness",
    "AnswerRelevancy",
    "ClaimContextUtilization",
    "ContextEntityRecall",
    "ContextPrecision",
    "ContextRecall",
    "ContextRelevance",
    "ContextUtilization",
    "FactualCorrectness",
    "Faithfulness",
    "Hallucination",
    "JudgedMetric",
    "NoiseSensitivity",
    "SelfKnowledge",
    "SemanticSimilarity",
    "run_sync",
]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter._services": ("run_sync",),
        "ragmeter.metrics.llm._base": ("JudgedMetric",),
        "ragmeter.metrics.llm.abstention": ("Abstention",),
        "ragmeter.metrics.llm.answer_correctness": ("AnswerCorrectness",),
        "ragmeter.metrics.llm.answer_relevancy": ("AnswerRelevancy",),
        "ragmeter.metrics.llm.claim_context_utilization": ("ClaimContextUtilization",),
        "ragmeter.metrics.llm.context_entity_recall": ("ContextEntityRecall",),
        "ragmeter.metrics.llm.context_precision": ("ContextPrecision",),
        "ragmeter.metrics.llm.context_recall": ("ContextRecall",),
        "ragmeter.metrics.llm.context_relevance": ("ContextRelevance",),
        "ragmeter.metrics.llm.context_utilization": ("ContextUtilization",),
        "ragmeter.metrics.llm.factual_correctness": ("FactualCorrectness",),
        "ragmeter.metrics.llm.faithfulness": ("Faithfulness",),
        "ragmeter.metrics.llm.hallucination": ("Hallucination",),
        "ragmeter.metrics.llm.noise_sensitivity": ("NoiseSensitivity",),
        "ragmeter.metrics.llm.self_knowledge": ("SelfKnowledge",),
        "ragmeter.metrics.llm.semantic_similarity": ("SemanticSimilarity",),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
