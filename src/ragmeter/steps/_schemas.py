"""Output schemas of the test-set generation calls; the judgments' schemas come from the
table (``schema_for``: a call doing several tasks gets a combined schema)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ragmeter.steps._judgments import (
    EntityItem,
    StatementItem,
    SupportItem,
    UsefulnessItem,
)
from ragmeter.steps._table import JUDGMENTS, schema_for

#: The output fields of each built-in task (the table's ``fields``, by task name).
TASK_FIELDS: dict[str, dict[str, Any]] = {
    kind.task: dict(kind.fields) for kind in JUDGMENTS.values() if kind.task
}

__all__ = [
    "TASK_FIELDS",
    "EntityItem",
    "StatementItem",
    "SupportItem",
    "UsefulnessItem",
    "schema_for",
]


# -- test-set generation ---------------------------------------------------------------------
class ChunkAnalysisOutput(BaseModel):
    summary: str
    keyphrases: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)


class PersonaItem(BaseModel):
    name: str
    description: str = ""


class PersonasOutput(BaseModel):
    personas: list[PersonaItem]


class QuestionOutput(BaseModel):
    question: str
    answer: str


class FalsePremiseOutput(BaseModel):
    question: str
    premise: str
    answer: str


class ValueItem(BaseModel):
    value: str | float
    passage: int


class CalculationOutput(BaseModel):
    question: str
    values: list[ValueItem] = Field(default_factory=list)
    expression: str
    answer: str
