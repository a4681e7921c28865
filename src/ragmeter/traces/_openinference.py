"""OpenInference spans, as Arize Phoenix exports them, read into :class:`Span` objects.

Three shapes are read (docs/production.md lists the versions they were matched against):

* **Phoenix's span dataframe** (``px.Client().get_spans_dataframe()``, saved with
  ``df.to_parquet``, ``df.to_json(orient="records")`` or ``orient="records", lines=True``):
  columns ``name``, ``span_kind``, ``parent_id``, ``start_time``, ``end_time``,
  ``status_code``, ``status_message``, ``context.span_id``, ``context.trace_id`` and one
  ``attributes.<name>`` column per attribute, list attributes (``attributes.retrieval.documents``)
  holding lists of ``{"document.content": ..., "document.id": ...}`` objects;
  ``df.to_json()``'s default column orientation is read too.
* **Phoenix span JSON** (its span encoder, the REST API's ``{"data": [...]}``): ``context``
  ``{"trace_id", "span_id"}`` and ``attributes`` nested (``{"input": {"value": ...}}``) or flat.
* **OpenTelemetry attributes** with flat keys (``retrieval.documents.0.document.content``),
  which ``_otel`` hands to :func:`span_from_attributes`.

All are flattened to dotted keys first, so one mapping serves every shape.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter.traces._build import build_samples
from ragmeter.traces._shapes import (
    DOCUMENT,
    as_int,
    decode_cell,
    parquet_rows,
    read_json,
    reading,
    time_field,
)
from ragmeter.traces._span import Document, Span, SpanKind, TraceFileError, TraceImport, Unmapped

KINDS: dict[str, SpanKind] = {
    "CHAIN": "chain",
    "AGENT": "agent",
    "RETRIEVER": "retriever",
    "RERANKER": "reranker",
    "LLM": "llm",
    "EMBEDDING": "embedding",
    "TOOL": "tool",
}
#: Attributes whose value is one JSON object, kept whole rather than flattened.
_OBJECT_KEYS = ("metadata", "document.metadata", "llm.prompt_template.variables", "tool.parameters")
#: Keys under which a JSON input or output holds its text, in the order they are tried.
_QUESTION_KEYS = ("question", "query", "input", "user_input", "prompt", "text", "content")
_ANSWER_KEYS = ("answer", "output", "response", "result", "text", "content")
NO_IDS = "record without a span id or a trace id (not an OpenInference span)"


# -- flattening -------------------------------------------------------------------------------
def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def flatten(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nested attributes as dotted keys (``{"input": {"value": "q"}}`` -> ``input.value``);
    lists of objects get index keys (``retrieval.documents.0.document.id``)."""
    out = {} if out is None else out
    if isinstance(value, Mapping) and not (prefix and prefix.endswith(_OBJECT_KEYS)):
        for key, item in value.items():
            flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif (
        isinstance(value, Sequence)
        and not isinstance(value, str | bytes)
        and any(isinstance(item, Mapping) for item in value)
    ):
        for index, item in enumerate(value):
            flatten(item, f"{prefix}.{index}", out)
    elif not _missing(value) and prefix:
        out[prefix] = list(value) if _is_array(value) else value
    return out


def _is_array(value: Any) -> bool:
    # numpy arrays (pandas list cells) and tuples become lists; text stays text
    return (
        not isinstance(value, str | bytes | Mapping)
        and hasattr(value, "__len__")
        and (hasattr(value, "tolist") or isinstance(value, tuple))
    )


def _indexed(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.N.rest`` keys as a list of ``{rest: value}``, in index order."""
    items: dict[int, dict[str, Any]] = {}
    head = prefix + "."
    for key, value in attrs.items():
        if key.startswith(head):
            index, _, rest = key[len(head) :].partition(".")
            if index.isdigit() and rest:
                items.setdefault(int(index), {})[rest] = value
    return [items[i] for i in sorted(items)]


# -- values -----------------------------------------------------------------------------------
def _text(value: Any) -> str | None:
    if _missing(value):
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or _missing(value):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _count(value: Any, name: str) -> int | None:
    return None if _missing(value) else as_int(value, name)


def _json(value: Any) -> Any:
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        return decode_cell(value)
    return value


def _message_text(message: Mapping[str, Any]) -> str | None:
    """The text of a chat message: ``content`` as text, or its text parts joined."""
    content = message.get("content", message.get("message.content"))
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else message.get("parts")
    if isinstance(parts, list):
        texts = [
            p.get("text") or p.get("content")
            for p in parts
            if isinstance(p, Mapping) and p.get("type", "text") == "text"
        ]
        joined = "\n".join(t for t in texts if isinstance(t, str))
        return joined or None
    return None


def last_user_message(messages: Any) -> str | None:
    """The text of the last ``user`` message of a list of chat messages."""
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, Mapping):
            role = message.get("role", message.get("message.role"))
            if role in ("user", "human"):
                return _message_text(message)
    return None


def unwrap(value: Any, keys: Sequence[str]) -> str | None:
    """A question or an answer from a JSON value: a text as it is; from an object, the first
    of ``keys`` holding text (or the last user message of its ``messages``)."""
    value = _json(value)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in keys:
            if isinstance(value.get(key), str):
                return str(value[key])
        from_messages = last_user_message(value.get("messages"))
        if from_messages is not None:
            return from_messages
        choices = value.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
            message = choices[0].get("message")
            if isinstance(message, Mapping):
                return _message_text(message)
            if isinstance(choices[0].get("text"), str):
                return str(choices[0]["text"])
    if isinstance(value, list):
        return last_user_message(value)
    return _text(value)


def _value(attrs: Mapping[str, Any], key: str, keys: Sequence[str]) -> str | None:
    raw = attrs.get(f"{key}.value")
    if _missing(raw):
        return None
    mime = attrs.get(f"{key}.mime_type")
    if mime == "application/json" or (isinstance(raw, str) and raw.strip()[:1] == "{"):
        return unwrap(raw, keys)
    return _text(raw)


def documents(attrs: Mapping[str, Any], prefix: str) -> list[Document]:
    """``prefix.N.document.content/id/score``, in rank order."""
    return [
        Document(
            content=_text(item.get("document.content")),
            id=None if _missing(item.get("document.id")) else str(item["document.id"]),
            score=_number(item.get("document.score")),
        )
        for item in _indexed(attrs, prefix)
    ]


def _tags(value: Any) -> list[str]:
    value = _json(value)
    if isinstance(value, list):
        return [str(tag) for tag in value if not _missing(tag)]
    return [] if _missing(value) else [str(value)]


def _metadata(value: Any) -> dict[str, Any]:
    value = _json(value)
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items() if not _missing(v)}
    return {}


def span_from_attributes(
    *,
    trace_id: str,
    span_id: str,
    parent_id: str | None,
    name: str,
    attrs: Mapping[str, Any],
    start: dt.datetime | None,
    end: dt.datetime | None,
    error: str | None,
    kind: str | None = None,
) -> Span:
    """A :class:`Span` from flat OpenInference attributes."""
    kind_name = str(attrs.get("openinference.span.kind") or kind or "").upper()
    span_kind: SpanKind = KINDS.get(kind_name, "other")
    question = _value(attrs, "input", _QUESTION_KEYS)
    answer = _value(attrs, "output", _ANSWER_KEYS)
    if span_kind == "llm":
        messages = [
            {"role": m.get("message.role"), "content": m.get("message.content")}
            for m in _indexed(attrs, "llm.input_messages")
        ]
        question = last_user_message(messages) or question
        outputs = _indexed(attrs, "llm.output_messages")
        if outputs and isinstance(outputs[0].get("message.content"), str):
            answer = outputs[0]["message.content"]
    model = attrs.get("llm.model_name") or attrs.get("llm.response.model_name")
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=parent_id,
        name=name,
        kind=span_kind,
        start=start,
        end=end,
        input=question,
        output=answer,
        documents=documents(
            attrs,
            "reranker.output_documents" if span_kind == "reranker" else "retrieval.documents",
        ),
        input_documents=documents(attrs, "reranker.input_documents"),
        model=None if _missing(model) else str(model),
        prompt_tokens=_count(attrs.get("llm.token_count.prompt"), "llm.token_count.prompt"),
        completion_tokens=_count(
            attrs.get("llm.token_count.completion"), "llm.token_count.completion"
        ),
        session_id=_text(attrs.get("session.id")),
        user_id=_text(attrs.get("user.id")),
        tags=_tags(attrs.get("tag.tags")),
        metadata=_metadata(attrs.get("metadata")),
        error=error,
        attributes=dict(attrs),
    )


# -- Phoenix records ----------------------------------------------------------------------------
def _phoenix_span(record: Mapping[str, Any]) -> Span | None:
    found = record.get("context")
    context: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    span_id = record.get("context.span_id", context.get("span_id", record.get("span_id")))
    trace_id = record.get("context.trace_id", context.get("trace_id", record.get("trace_id")))
    if _missing(span_id) or _missing(trace_id):
        return None
    attrs: dict[str, Any] = {}
    nested = _json(record.get("attributes"))
    if isinstance(nested, Mapping):
        flatten(nested, "", attrs)
    for key, value in record.items():
        if key.startswith("attributes."):
            flatten(value, key[len("attributes.") :], attrs)
    parent = record.get("parent_id", record.get("parent_span_id"))
    status = str(record.get("status_code") or "").upper()
    error = None
    if status in ("ERROR", "STATUS_CODE_ERROR", "2"):
        error = _text(record.get("status_message")) or "ERROR"
    return span_from_attributes(
        trace_id=str(trace_id),
        span_id=str(span_id),
        parent_id=None if _missing(parent) or parent == "" else str(parent),
        name=str(record.get("name") or ""),
        attrs=attrs,
        start=time_field(record, "start_time"),  # ISO 8601 text, a datetime, epoch ms...
        end=time_field(record, "end_time"),
        error=error,
        kind=None if _missing(record.get("span_kind")) else str(record.get("span_kind")),
    )


def _records(path: Path) -> Iterator[tuple[str, Any]]:
    """``(where, record)`` for each span record of an export file."""
    if path.suffix.lower() == ".parquet":
        fix = "export the spans with px.Client().get_spans_dataframe().to_parquet(...)"
        for index, row in enumerate(parquet_rows(path, fix), start=1):
            yield f"{path}, row {index}", row
        return
    values = read_json(path, "give a JSON list of spans or one span object per line (JSON lines)")
    where, data = next(values)
    if where is not DOCUMENT:  # JSON lines
        yield where, data
        yield from ((str(at), value) for at, value in values)
        return
    if isinstance(data, Mapping) and isinstance(data.get("data"), list):
        data = data["data"]  # Phoenix REST API: {"data": [...], "next_cursor": ...}
    elif isinstance(data, Mapping) and _is_columns(data):
        labels = dict.fromkeys(label for column in data.values() for label in column)
        data = [{c: data[c].get(label) for c in data} for label in labels]
    elif isinstance(data, Mapping):
        data = [data]
    if not isinstance(data, list):
        raise TraceFileError(
            f"{path}: expected a JSON list of spans, got {type(data).__name__}; export with "
            "get_spans_dataframe().to_json(orient='records')"
        )
    for index, record in enumerate(data, start=1):
        yield f"{path}, record {index}", record


def _is_columns(data: Mapping[str, Any]) -> bool:
    """``df.to_json()``'s default: ``{column: {row label: value}}``."""
    return (
        bool(data)
        and all(isinstance(v, Mapping) for v in data.values())
        and ("name" in data or "context.span_id" in data)
    )


def collect_spans(
    read: Iterable[tuple[str, Span | None]], no_ids: str
) -> tuple[list[Span], list[Unmapped], int]:
    """The spans of ``read`` (``(where, span)`` a record; ``None``: a record without ids,
    listed as unmapped with the reason ``no_ids``), the unmapped records, and the count of
    records read."""
    spans: list[Span] = []
    unmapped: list[Unmapped] = []
    n_records = 0
    for where, span in read:
        n_records += 1
        if span is None:
            unmapped.append(Unmapped(no_ids, source=where))
        else:
            spans.append(span)
    return spans, unmapped, n_records


def _phoenix_spans(path: Path) -> Iterator[tuple[str, Span | None]]:
    """``(where, span)`` for each record of a Phoenix export (``None``: no ids)."""
    for where, record in _records(path):
        if not isinstance(record, Mapping):
            raise TraceFileError(
                f"{where}: expected a span object, got {type(record).__name__}; is this "
                "an OpenInference / Phoenix span export?"
            )
        with reading(where):
            span = _phoenix_span(record)
        yield where, span


def read_openinference(paths: Sequence[str | Path]) -> TraceImport:
    """Spans exported from Phoenix (JSON, JSON lines or Parquet) read into samples."""
    spans, unmapped, n_records = collect_spans(
        (found for path in map(Path, paths) for found in _phoenix_spans(path)), NO_IDS
    )
    if n_records and not spans:
        raise TraceFileError(
            f"{', '.join(map(str, paths))}: no record has a span id and a trace id "
            "(context.span_id, context.trace_id); is this an OpenInference / Phoenix export? "
            "OTLP files (resourceSpans) are read with the format 'otel'"
        )
    return build_samples(spans, format="openinference", n_records=n_records, unmapped=unmapped)
