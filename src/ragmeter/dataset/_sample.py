"""The evaluation sample: a question, what the RAG system did with it, what it should have done."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from ragmeter.dataset._values import json_safe_metadata

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
    "metadata",
)

#: Names used by RAGAS 0.1 and other tools, accepted transparently.
LEGACY_NAMES: dict[str, str] = {
    "question": "user_input",
    "query": "user_input",
    "answer": "response",
    "contexts": "retrieved_contexts",
    "ground_truth": "reference",
    "sample_id": "id",
}

LIST_FIELDS: frozenset[str] = frozenset(
    {"retrieved_contexts", "retrieved_context_ids", "reference_contexts", "reference_context_ids"}
)


def _id_to_str(value: Any) -> Any:
    # Document ids are often integers in user data; they are compared as strings.
    if isinstance(value, bool):
        return value
    return str(value) if isinstance(value, int) else value


def _ids_to_str(value: Any) -> Any:
    if isinstance(value, list):
        return [_id_to_str(v) for v in value]
    return value


def _relevance_keys_to_str(value: Any) -> Any:
    if isinstance(value, dict):
        return {_id_to_str(k): v for k, v in value.items()}
    return value


Id = Annotated[str, BeforeValidator(_id_to_str)]
IdList = Annotated[list[str], BeforeValidator(_ids_to_str)]
Relevance = Annotated[dict[str, float], BeforeValidator(_relevance_keys_to_str)]


def _keys_to_str(value: Any) -> Any:
    # A DataFrame read without a header has integer column names; they become tags too.
    if isinstance(value, dict) and not all(isinstance(k, str) for k in value):
        return {k if isinstance(k, str) else str(k): v for k, v in value.items()}
    return value


#: Tags of any type (timestamps, decimals, bytes, numpy values, NaN...), kept as strict JSON.
Metadata = Annotated[
    dict[str, Any], BeforeValidator(_keys_to_str), AfterValidator(json_safe_metadata)
]


def canonical_record(
    record: Mapping[str, Any], column_map: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Rename a raw record's keys to ragmeter's field names.

    ``column_map`` (user name -> ragmeter name) is applied first, then the legacy names.
    ``ground_truths`` (a list) becomes ``reference`` from its first item, as RAGAS 0.1 did;
    the full list is kept in ``metadata["ground_truths"]`` when it holds more than one.
    Keys that name no field go to ``metadata`` so that tags like ``question_type`` survive.
    """
    out: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for key, value in record.items():
        name = (column_map or {}).get(key, key)
        name = LEGACY_NAMES.get(name, name)
        if name == "ground_truths" and "reference" not in record:
            if isinstance(value, list) and value:
                out["reference"] = value[0]
                if len(value) > 1:
                    metadata["ground_truths"] = value
            elif isinstance(value, list):
                out["reference"] = None
            else:
                out["reference"] = value
        elif name == "metadata":
            if isinstance(value, dict):
                metadata = {**value, **metadata}
            elif value is not None:
                out["metadata"] = value  # let validation report the wrong type
        elif name in SAMPLE_FIELDS:
            if name in out and out[name] != value:
                raise ValueError(
                    f"column {key!r} and another column both map to {name!r}; "
                    "drop one or rename it with column_map"
                )
            out[name] = value
        else:
            metadata[name] = value
    if metadata and "metadata" not in out:
        out["metadata"] = metadata
    return out


class Sample(BaseModel):
    """One evaluation sample.

    Every field is optional; each metric declares the fields it needs and the dataset is
    checked against them before anything runs. Legacy names (``question``, ``answer``,
    ``contexts``, ``ground_truth``, ``ground_truths``) are accepted.

    >>> s = Sample(question="什么是 RAG？", contexts=["RAG 即检索增强生成"], question_type="multi")
    >>> s.user_input, s.retrieved_contexts, s.metadata
    ('什么是 RAG？', ['RAG 即检索增强生成'], {'question_type': 'multi'})
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)

    id: Id | None = None
    user_input: str | None = None
    response: str | None = None
    retrieved_contexts: list[str] | None = None
    retrieved_context_ids: IdList | None = None
    reference: str | None = None
    reference_contexts: list[str] | None = None
    reference_context_ids: IdList | None = None
    relevance: Relevance | None = Field(
        default=None, description="Graded relevance per context id (0 = not relevant), for NDCG."
    )
    metadata: Metadata = Field(
        default_factory=dict,
        description="Tags, e.g. question_type; values of any type are kept as strict JSON "
        "(dates as ISO 8601 text, NaN and NA as null, numpy values as numbers).",
    )

    @model_validator(mode="before")
    @classmethod
    def _accept_legacy_names(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return canonical_record(data)
        return data

    def has(self, field: str) -> bool:
        """Whether ``field`` holds a value (an empty list counts as a value)."""
        return getattr(self, field) is not None

    def qrels(self) -> dict[str, float]:
        """Relevance judgments for the retrieval metrics: graded if given, else binary.

        >>> Sample(reference_context_ids=["d1", "d2"]).qrels()
        {'d1': 1.0, 'd2': 1.0}
        >>> Sample(relevance={"d1": 3, "d2": 0}).qrels()
        {'d1': 3.0, 'd2': 0.0}
        """
        if self.relevance is not None:
            return dict(self.relevance)
        return dict.fromkeys(self.reference_context_ids or (), 1.0)

    def to_record(self) -> dict[str, Any]:
        """A plain dict with canonical names, ``None`` fields left out."""
        return self.model_dump(exclude_none=True)
