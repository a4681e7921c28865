"""LLM-judged metrics, built on the shared steps."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter._services import run_sync as run_sync
    from ragmeter.metrics.llm._base import JudgedMetric as JudgedMetric
    from ragmeter.metrics.llm.abstention import Abstention as Abstention
    from ragmeter.metrics.llm.answer_correctness import AnswerCorrectness as AnswerCorrectness
    from ragmeter.metrics.llm.answer_relevancy import AnswerRelevancy as AnswerRelevancy
    from ragmeter.metrics.llm.claim_context_utilization import (
        ClaimContextUtilization as ClaimContextUtilization,
    )
    from ragmeter.metrics.llm.context_entity_recall import (
        ContextEntityRecall as ContextEntityRecall,
    )
    from ragmeter.metrics.llm.context_precision import ContextPrecision as ContextPrecision
    from ragmeter.metrics.llm.context_recall import ContextRecall as ContextRecall
    from ragmeter.metrics.llm.context_relevance import ContextRelevance as ContextRelevance
    from ragmeter.metrics.llm.context_utilization import ContextUtilization as ContextUtilization
    from ragmeter.metrics.llm.factual_correctness import FactualCorrectness as FactualCorrectness
    from ragmeter.metrics.llm.faithfulness import Faithfulness as Faithfulness
    from ragmeter.metrics.llm.hallucination import Hallucination as Hallucination
    from ragmeter.metrics.llm.noise_sensitivity import NoiseSensitivity as NoiseSensitivity
    from ragmeter.metrics.llm.self_knowledge import SelfKnowledge as SelfKnowledge
    from ragmeter.metrics.llm.semantic_similarity import SemanticSimilarity as SemanticSimilarity

_lazy.attach(__name__, __file__)
