"""LLM-judged metrics, built on the shared steps."""

from ragmeter._services import run_sync
from ragmeter.metrics.llm._base import JudgedMetric
from ragmeter.metrics.llm.answer_correctness import AnswerCorrectness
from ragmeter.metrics.llm.answer_relevancy import AnswerRelevancy
from ragmeter.metrics.llm.context_entity_recall import ContextEntityRecall
from ragmeter.metrics.llm.context_precision import ContextPrecision
from ragmeter.metrics.llm.context_recall import ContextRecall
from ragmeter.metrics.llm.context_relevance import ContextRelevance
from ragmeter.metrics.llm.context_utilization import ContextUtilization
from ragmeter.metrics.llm.factual_correctness import FactualCorrectness
from ragmeter.metrics.llm.faithfulness import Faithfulness
from ragmeter.metrics.llm.noise_sensitivity import NoiseSensitivity
from ragmeter.metrics.llm.semantic_similarity import SemanticSimilarity

__all__ = [
    "AnswerCorrectness",
    "AnswerRelevancy",
    "ContextEntityRecall",
    "ContextPrecision",
    "ContextRecall",
    "ContextRelevance",
    "ContextUtilization",
    "FactualCorrectness",
    "Faithfulness",
    "JudgedMetric",
    "NoiseSensitivity",
    "SemanticSimilarity",
    "run_sync",
]
