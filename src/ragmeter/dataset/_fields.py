"""The sample's field names, apart from its model: what reads a stored run's records (the
results, the run store) knows them without loading pydantic."""

from __future__ import annotations

#: Canonical field names, in the order they are written out.
SAMPLE_FIELDS: tuple[str, ...] = (
    "id",
    "user_input",
    "response",
    "retrieved_contexts",
    "retrieved_context_ids",
    "reference",
    "reference_contexts",
    "reference_context_ids",
    "relevance",
    "history",
    "metadata",
)
