"""Output schemas of the test-set generation calls; the judgments' answers are the table's
``output`` models (``schema_for``: a call doing several tasks gets a combined schema)."""

from __future__ import annotations

from pydantic import BaseModel, Field


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
