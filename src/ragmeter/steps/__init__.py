"""Steps: the shared, batched judge work that metrics are built from. Only steps call the judge."""

from ragmeter.steps._facts import (
    ContextVerdict,
    Entity,
    Facts,
    Need,
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
from ragmeter.steps._runner import StepError, StepRunner, context_columns

__all__ = [
    "LENGTHS",
    "STYLES",
    "Answerability",
    "ChunkAnalysis",
    "ContextVerdict",
    "Entity",
    "Facts",
    "GenerationSteps",
    "Length",
    "Need",
    "Persona",
    "QuestionKind",
    "Statement",
    "StepError",
    "StepRunner",
    "Style",
    "Support",
    "WrittenQuestion",
    "context_columns",
]
