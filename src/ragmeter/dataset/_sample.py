"""The evaluation sample: a question, what the RAG system did with it, what it should have done."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictStr,
    field_serializer,
    model_validator,
)

from ragmeter.dataset._fields import SAMPLE_FIELDS
from ragmeter.dataset._values import json_safe_metadata

#: Names other tools give the fields, accepted transparently (each from the tool's own
#: documentation or source). RAGAS 0.2+ uses ragmeter's names; ``ground_truths`` (RAGAS 0.1,
#: a list) is handled by :func:`canonical_record`. Left out as ambiguous: ``query_id``
#: (TruLens; a query's id may be shared by several samples), ``text``, ``passage``, ``docs``.
LEGACY_NAMES: dict[str, str] = {
    # RAGAS 0.1
    "question": "user_input",
    "answer": "response",
    "contexts": "retrieved_contexts",  # also TruLens and LlamaIndex predictions
    "ground_truth": "reference",
    # DeepEval LLMTestCase and Golden (expected_output and input also Langfuse)
    "input": "user_input",
    "actual_output": "response",
    "expected_output": "reference",
    "retrieval_context": "retrieved_contexts",
    "context": "reference_contexts",  # DeepEval: the ideal context, not the retrieved one
    "additional_metadata": "metadata",
    # Langfuse dataset items (expectedOutput in its HTTP API) and traces
    "output": "response",
    "expectedOutput": "reference",
    # TruLens ground truth datasets, LlamaIndex LabelledRagDataExample
    "query": "user_input",
    "expected_response": "reference",
    "expected_chunks": "reference_contexts",
    "reference_answer": "reference",
    # seed data sets written by hand (seed 004)
    "ground_truth_contexts": "reference_contexts",
    "ground_truth_context_ids": "reference_context_ids",
    "sample_id": "id",
}

#: What an alias that other data means otherwise stands for, for the messages that say how
#: such a column was read.
ALIAS_SOURCES: dict[str, str] = {"context": "DeepEval's name for the ideal context"}

#: Keys under which an object given for a text (Langfuse's ``input``, say, often
#: ``{"question": ...}``) holds its text; an object with exactly one of them is read as it.
TEXT_KEYS: tuple[str, ...] = (
    "question",
    "query",
    "input",
    "user_input",
    "prompt",
    "answer",
    "output",
    "response",
    "reference",
    "expected_output",
    "ground_truth",
    "text",
    "content",
)
#: Langfuse's names for its fields of any JSON value; only these are unwrapped (ragmeter's
#: own names, and those of tools that hold plain texts, stay strict).
JSON_VALUE_COLUMNS: frozenset[str] = frozenset(
    {"input", "output", "expected_output", "expectedOutput"}
)

#: :data:`SAMPLE_FIELDS` for look-ups.
_CANONICAL_FIELDS: frozenset[str] = frozenset(SAMPLE_FIELDS)

LIST_FIELDS: frozenset[str] = frozenset(
    {"retrieved_contexts", "retrieved_context_ids", "reference_contexts", "reference_context_ids"}
)


def _id_to_str(value: Any) -> Any:
    # Document ids are often integers in user data; they are compared as strings.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _ids_to_str(value: Any) -> Any:
    if isinstance(value, list) and not set(map(type, value)) <= {str}:
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


class ChatMessage(BaseModel):
    """One message of a conversation before the turn a sample evaluates.

    >>> ChatMessage(role="user", content="AirPods Pro 2 多少钱？").content
    'AirPods Pro 2 多少钱？'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["user", "assistant"]
    content: StrictStr


def format_conversation(history: Any) -> str:
    """The earlier turns as the judge reads them: one ``role: content`` line per message
    (``ChatMessage`` objects, or the plain dicts of a sample built without validation).

    >>> print(format_conversation([{"role": "user", "content": "How much are AirPods Pro 2?"},
    ...                            ChatMessage(role="assistant", content="$249.")]))
    user: How much are AirPods Pro 2?
    assistant: $249.
    """
    return "\n".join(
        f"{m['role']}: {m['content']}" if isinstance(m, Mapping) else f"{m.role}: {m.content}"
        for m in history or ()
    )


def field_name(key: Any, column_map: Mapping[str, str] | None) -> Any:
    """The field a column names: after ``column_map``, then the names of other tools."""
    name = (column_map or {}).get(key, key)
    return LEGACY_NAMES.get(name, name)


def _unwrap_text(value: Mapping[Any, Any]) -> tuple[str, dict[str, Any]] | None:
    """The text of an object with exactly one :data:`TEXT_KEYS` key holding a string, and
    its other entries; None for any other object."""
    found = [k for k in TEXT_KEYS if isinstance(value.get(k), str)]
    if len(found) != 1:
        return None
    return value[found[0]], {str(k): v for k, v in value.items() if k != found[0]}


def _chunk_texts(value: Any) -> Any:
    """TruLens' ``expected_chunks`` items are objects ``{"text": ..., "title": ...}``."""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, Mapping) and isinstance(v.get("text"), str) for v in value)
    ):
        return [v["text"] for v in value]
    return value


def canonical_record(
    record: Mapping[str, Any], column_map: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Rename a raw record's keys to ragmeter's field names.

    ``column_map`` (user name -> ragmeter name) is applied first, then the names of other
    tools (:data:`LEGACY_NAMES`). ``ground_truths`` (a list) becomes ``reference`` from its
    first item, as RAGAS 0.1 did; the full list is kept in ``metadata["ground_truths"]`` when
    it holds more than one. An object in Langfuse's ``input``, ``output`` or
    ``expected_output`` with one obvious text key (``{"question": ...}``, see
    :data:`TEXT_KEYS`) is read as that text, its other entries kept in ``metadata`` as
    ``column.key``. Keys that name no field go to ``metadata`` so that tags
    like ``question_type`` survive.
    """
    if not column_map and _CANONICAL_FIELDS.issuperset(record):
        metadata_given = record.get("metadata")
        if metadata_given is None or isinstance(metadata_given, dict):
            # Already ragmeter's names (most rows of a large file): what the loop below
            # makes of it, metadata last and only when it holds something.
            fields = {k: v for k, v in record.items() if k != "metadata"}
            if metadata_given:
                fields["metadata"] = dict(metadata_given)
            return fields
    out: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    names = {key: field_name(key, column_map) for key in record}
    column_of: dict[str, Any] = {}
    for key, value in record.items():
        name = names[key]
        if (column_map or {}).get(key, key) in JSON_VALUE_COLUMNS and isinstance(value, Mapping):
            unwrapped = _unwrap_text(value)
            if unwrapped is not None:
                value, rest = unwrapped
                metadata.update({f"{key}.{k}": v for k, v in rest.items()})
        elif name == "reference_contexts" and key == "expected_chunks":
            value = _chunk_texts(value)
        if name == "ground_truths" and "reference" not in names.values():
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
                    f"columns {column_of[name]!r} and {key!r} both map to {name!r} and "
                    "differ; drop one or rename it with column_map"
                )
            out[name] = value
            column_of[name] = key
        else:
            metadata[name] = value
    if metadata and "metadata" not in out:
        out["metadata"] = metadata
    return out


def _json_copy(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists and scalars)."""
    if isinstance(value, dict):
        return {key: _json_copy(v) for key, v in value.items()}
    if isinstance(value, list):
        return [_json_copy(v) for v in value]
    return value


class Sample(BaseModel):
    """One evaluation sample.

    Every field is optional; each metric declares the fields it needs and the dataset is
    checked against them before anything runs. The names of RAGAS 0.1 (``question``,
    ``answer``, ``contexts``, ``ground_truth``, ``ground_truths``), DeepEval, Langfuse,
    TruLens and LlamaIndex are accepted (:data:`LEGACY_NAMES`).

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
    history: list[ChatMessage] | None = Field(
        default=None,
        description="For a turn of a conversation: the messages before this turn's user "
        "message, oldest first (see ragmeter.dataset.expand_conversation).",
    )
    metadata: Metadata = Field(
        default_factory=dict,
        description="Tags, e.g. question_type; values of any type are kept as strict JSON "
        "(dates as ISO 8601 text, NaN and NA as null, numpy values as numbers).",
    )

    @field_serializer("history")
    def _plain_history(self, history: list[ChatMessage] | None) -> list[dict[str, str]] | None:
        # A sample read back from a run's store without validation (``model_construct``)
        # holds its messages as dicts already.
        if history is None:
            return None
        return [dict(m) if isinstance(m, Mapping) else m.model_dump() for m in history]

    @model_validator(mode="before")
    @classmethod
    def _accept_legacy_names(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return canonical_record(data)
        return data

    def has(self, field: str) -> bool:
        """Whether ``field`` holds a value (an empty list counts as a value)."""
        return getattr(self, field) is not None

    @property
    def conversation(self) -> str | None:
        """The earlier turns as text for the judge (:func:`format_conversation`); ``None``
        for a single-turn sample (no history, or an empty one).

        >>> Sample(user_input="and its price?",
        ...        history=[{"role": "user", "content": "What is the S3?"},
        ...                 {"role": "assistant", "content": "A pair of earbuds."}]).conversation
        'user: What is the S3?\\nassistant: A pair of earbuds.'
        """
        return format_conversation(self.history) if self.history else None

    @property
    def question_in_context(self) -> str:
        """The user's earlier messages and this turn's question, one per line: what a
        judge that reads no conversation block (one yes/no verdict at a time) is given as
        the question, so a follow-up keeps its referent. The question alone for a
        single-turn sample.

        >>> Sample(user_input="And its price?",
        ...        history=[{"role": "user", "content": "What is the S3?"},
        ...                 {"role": "assistant", "content": "A pair of earbuds."}]
        ...        ).question_in_context
        'What is the S3?\\nAnd its price?'
        >>> Sample(user_input="What is the S3?").question_in_context
        'What is the S3?'
        """
        earlier = [
            (m["content"] if isinstance(m, Mapping) else m.content)
            for m in self.history or ()
            if (m["role"] if isinstance(m, Mapping) else m.role) == "user"
        ]
        return "\n".join([*earlier, self.user_input or ""])

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
        """A plain dict with canonical names, ``None`` fields left out.

        >>> Sample(id=3, question="q", relevance={"d1": 2}).to_record()
        {'id': '3', 'user_input': 'q', 'relevance': {'d1': 2.0}, 'metadata': {}}
        """
        if self.history is not None:
            return self.model_dump(exclude_none=True)
        # model_dump(exclude_none=True) without its serializer, 4x faster: the fields hold
        # validated plain values (texts, lists of texts, a dict of grades, JSON-safe tags),
        # copied so the record never shares a list with the sample.
        values = self.__dict__
        out: dict[str, Any] = {}
        for name in _RECORD_FIELDS:
            value = values.get(name)
            if value is None:
                continue
            kind = type(value)
            if kind is list:
                value = list(value)
            elif kind is dict:
                value = _json_copy(value) if name == "metadata" else dict(value)
            out[name] = value
        return out


#: The fields of a sample's record, in their order.
_RECORD_FIELDS: tuple[str, ...] = tuple(Sample.model_fields)
