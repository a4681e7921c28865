"""Steps: the shared, batched judge work that metrics are built from. Only steps call the judge."""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.steps._facts import (
        AnswerRelevance,
        ClaimSource,
        ContextVerdict,
        CustomAnswer,
        Entity,
        Facts,
        Need,
        PassageSource,
        Statement,
        Support,
    )
    from ragmeter.steps._generation import (
        LENGTHS,
        STYLES,
        Answerability,
        ChunkAnalysis,
        GenerationSteps,
        Length,
        Persona,
        QuestionKind,
        Style,
        WrittenQuestion,
    )
    from ragmeter.steps._judgments import (
        ANSWER_RELEVANCE,
        CUSTOM,
        ENTITIES,
        QUESTIONS,
        RESPONSE_CLAIMS,
        STATEMENT_CONTEXTS,
        STATEMENTS,
        SUPPORT_REFERENCE,
        SUPPORT_RESPONSE,
        USEFULNESS_QUESTION,
        USEFULNESS_REFERENCE,
        USEFULNESS_RESPONSE,
        StepError,
        context_columns,
        is_claim,
        stated_verbatim,
    )
    from ragmeter.steps._runner import StepRunner
    from ragmeter.steps._table import (
        JUDGMENTS,
        DataValue,
        Generate,
        JudgmentKind,
        Request,
        Stage,
        Verdict,
        judgment,
        register,
        schema_for,
        unregister,
        verifies,
    )

__all__ = [
    "ANSWER_RELEVANCE",
    "CUSTOM",
    "ENTITIES",
    "JUDGMENTS",
    "LENGTHS",
    "QUESTIONS",
    "RESPONSE_CLAIMS",
    "STATEMENTS",
    "STATEMENT_CONTEXTS",
    "STYLES",
    "SUPPORT_REFERENCE",
    "SUPPORT_RESPONSE",
    "USEFULNESS_QUESTION",
    "USEFULNESS_REFERENCE",
    "USEFULNESS_RESPONSE",
    "AnswerRelevance",
    "Answerability",
    "ChunkAnalysis",
    "ClaimSource",
    "ContextVerdict",
    "CustomAnswer",
    "DataValue",
    "Entity",
    "Facts",
    "Generate",
    "GenerationSteps",
    "JudgmentKind",
    "Length",
    "Need",
    "PassageSource",
    "Persona",
    "QuestionKind",
    "Request",
    "Stage",
    "Statement",
    "StepError",
    "StepRunner",
    "Style",
    "Support",
    "Verdict",
    "WrittenQuestion",
    "context_columns",
    "is_claim",
    "judgment",
    "register",
    "schema_for",
    "stated_verbatim",
    "unregister",
    "verifies",
]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter.steps._facts": (
            "ClaimSource",
            "AnswerRelevance",
            "ContextVerdict",
            "CustomAnswer",
            "Entity",
            "Facts",
            "Need",
            "PassageSource",
            "Statement",
            "Support",
        ),
        "ragmeter.steps._generation": (
            "LENGTHS",
            "STYLES",
            "Answerability",
            "ChunkAnalysis",
            "GenerationSteps",
            "Length",
            "Persona",
            "QuestionKind",
            "Style",
            "WrittenQuestion",
        ),
        "ragmeter.steps._judgments": (
            "ANSWER_RELEVANCE",
            "CUSTOM",
            "ENTITIES",
            "QUESTIONS",
            "RESPONSE_CLAIMS",
            "STATEMENT_CONTEXTS",
            "STATEMENTS",
            "SUPPORT_REFERENCE",
            "SUPPORT_RESPONSE",
            "USEFULNESS_QUESTION",
            "USEFULNESS_REFERENCE",
            "USEFULNESS_RESPONSE",
            "StepError",
            "context_columns",
            "is_claim",
            "stated_verbatim",
        ),
        "ragmeter.steps._runner": ("StepRunner",),
        "ragmeter.steps._table": (
            "JUDGMENTS",
            "DataValue",
            "Generate",
            "JudgmentKind",
            "Request",
            "Stage",
            "Verdict",
            "judgment",
            "register",
            "schema_for",
            "unregister",
            "verifies",
        ),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
