"""Output schemas of the judge calls; a call doing several tasks gets a combined schema."""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model


class StatementItem(BaseModel):
    text: str
    contexts: list[int] = Field(default_factory=list)


class UsefulnessItem(BaseModel):
    index: int
    useful: Literal[0, 1]
    reason: str = ""


class EntityItem(BaseModel):
    entity: str
    in_contexts: Literal[0, 1] = 0


class SupportItem(BaseModel):
    claim: int
    passages: list[int] = Field(default_factory=list)
    reason: str = ""


TASK_FIELDS: dict[str, dict[str, Any]] = {
    "claims": {"claims": (list[str], ...)},
    "questions": {"questions": (list[str], ...), "noncommittal": (Literal[0, 1], 0)},
    "statements": {"statements": (list[StatementItem], ...)},
    "usefulness": {"usefulness": (list[UsefulnessItem], ...)},
    "entities": {"entities": (list[EntityItem], ...)},
    "support": {"support": (list[SupportItem], ...)},
}


@cache
def schema_for(template: str, tasks: tuple[str, ...]) -> type[BaseModel]:
    """The output model of ``template`` doing ``tasks`` (its title names both)."""
    fields: dict[str, Any] = {}
    for task in tasks:
        fields.update(TASK_FIELDS[task])
    name = "".join(part.title() for part in (template, *tasks) for part in part.split("_"))
    return create_model(name, **fields)  # type: ignore[call-overload, no-any-return]


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
