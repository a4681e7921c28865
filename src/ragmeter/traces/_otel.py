"""OpenTelemetry OTLP/JSON files (the collector's file exporter) read into :class:`Span` objects.

A file holds ``{"resourceSpans": [...]}`` objects, one per line or a single one. A span that
carries ``openinference.span.kind`` is read with the OpenInference mapping; any other with the
OpenTelemetry GenAI semantic conventions (``gen_ai.*``; docs/production.md says which
version): ``gen_ai.operation.name`` gives the kind (``chat``/``text_completion``/
``generate_content`` a model call, ``retrieval`` a retriever, ``invoke_agent`` an agent,
``execute_tool`` a tool, ``embeddings`` an embedding); ``gen_ai.input.messages`` /
``gen_ai.output.messages`` (or the older ``gen_ai.prompt`` / ``gen_ai.completion`` attributes
and events) the question and the answer; ``gen_ai.retrieval.query.text`` and
``gen_ai.retrieval.documents`` (``[{"id", "score", "content"?}]``) a retrieval.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter.traces._build import build_samples
from ragmeter.traces._openinference import (
    _indexed,
    _json,
    _message_text,
    _text,
    collect_spans,
    flatten,
    last_user_message,
    span_from_attributes,
)
from ragmeter.traces._otlp_proto import is_protobuf, protobuf_objects
from ragmeter.traces._shapes import (
    DOCUMENT,
    as_int,
    read_json,
    reading,
    time_field,
)
from ragmeter.traces._span import Document, Span, SpanKind, TraceFileError, TraceImport
from ragmeter.traces._traceloop import merge_nested_retrievals, openllmetry_span

OPERATIONS: dict[str, SpanKind] = {
    "chat": "llm",
    "text_completion": "llm",
    "generate_content": "llm",
    "retrieval": "retriever",
    "invoke_agent": "agent",
    "create_agent": "agent",
    "invoke_workflow": "chain",
    "execute_tool": "tool",
    "embeddings": "embedding",
}
NO_IDS = "OTLP span without a traceId or spanId"
_STATUS_ERROR = (2, "2", "STATUS_CODE_ERROR")


def any_value(value: Any) -> Any:
    """An OTLP/JSON ``AnyValue`` (``{"stringValue": ...}``, ...) as a Python value."""
    if not isinstance(value, Mapping) or not value:
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])  # int64 is a JSON string in OTLP/JSON
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return key_values((value["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def key_values(items: Any) -> dict[str, Any]:
    """A list of OTLP ``KeyValue`` objects as a dict."""
    if not isinstance(items, list):
        return {}
    return {
        str(kv["key"]): any_value(kv.get("value"))
        for kv in items
        if isinstance(kv, Mapping) and "key" in kv
    }


def hex_id(value: Any, size: int) -> str | None:
    """An OTLP id as lower-case hex. OTLP/JSON writes hex; base64 (what protobuf's generic
    JSON mapping writes for bytes) is accepted too."""
    if not isinstance(value, str) or not value:
        return None
    if len(value) == 2 * size:
        try:
            bytes.fromhex(value)
            return value.lower()
        except ValueError:
            pass
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) == size else None


def _nanos(raw: Mapping[str, Any], key: str) -> dt.datetime | None:
    """``startTimeUnixNano`` / ``endTimeUnixNano``: nanoseconds since the epoch (0: unset)."""
    return None if raw.get(key) in ("0", 0) else time_field(raw, key, unit="ns")


def _messages(value: Any) -> list[Any] | None:
    value = _json(value)
    return value if isinstance(value, list) else None


def _assistant_text(messages: list[Any] | None) -> str | None:
    for message in messages or []:
        if isinstance(message, Mapping) and message.get("role") in ("assistant", None):
            text = _message_text(message)
            if text is not None:
                return text
    return None


def _from_events(events: list[Mapping[str, Any]]) -> tuple[str | None, str | None]:
    """The question and the answer from the older GenAI events: ``gen_ai.content.prompt`` /
    ``gen_ai.content.completion`` (attributes ``gen_ai.prompt`` / ``gen_ai.completion``) and
    ``gen_ai.user.message`` / ``gen_ai.choice``."""
    question = answer = None
    for event in events:
        name, attrs = event.get("name"), key_values(event.get("attributes"))
        if name == "gen_ai.content.prompt":
            prompt = _json(attrs.get("gen_ai.prompt"))
            question = last_user_message(prompt) if isinstance(prompt, list) else _text(prompt)
        elif name == "gen_ai.content.completion":
            completion = _json(attrs.get("gen_ai.completion"))
            answer = (
                _assistant_text(completion) if isinstance(completion, list) else _text(completion)
            )
        elif name == "gen_ai.user.message":
            content = _json(attrs.get("content"))
            question = _text(content) if not isinstance(content, list) else question
        elif name == "gen_ai.choice":
            message = _json(attrs.get("message"))
            if isinstance(message, Mapping):
                answer = _message_text(message)
    return question, answer


def _genai_documents(value: Any) -> list[Document]:
    docs = _json(value)
    return [
        Document(
            content=_text(doc.get("content")),
            id=None if doc.get("id") is None else str(doc["id"]),
            score=float(doc["score"]) if isinstance(doc.get("score"), int | float) else None,
        )
        for doc in (docs if isinstance(docs, list) else [])
        if isinstance(doc, Mapping)
    ]


def _genai_span(base: dict[str, Any], attrs: dict[str, Any], events: list[Any]) -> Span:
    operation = str(attrs.get("gen_ai.operation.name") or "")
    kind: SpanKind = OPERATIONS.get(operation, "other")
    question = last_user_message(_messages(attrs.get("gen_ai.input.messages")))
    answer = _assistant_text(_messages(attrs.get("gen_ai.output.messages")))
    if question is None and answer is None:
        prompt = _json(attrs.get("gen_ai.prompt"))
        completion = _json(attrs.get("gen_ai.completion"))
        if isinstance(prompt, list):
            question = last_user_message(prompt)
        elif prompt is not None:
            question = _text(prompt)
        else:  # OpenLLMetry: gen_ai.prompt.N.role / .content
            question = last_user_message(
                [
                    {"role": p.get("role"), "content": p.get("content")}
                    for p in _indexed(attrs, "gen_ai.prompt")
                ]
            )
        if isinstance(completion, list):
            answer = _assistant_text(completion)
        elif completion is not None:
            answer = _text(completion)
        else:
            outputs = _indexed(attrs, "gen_ai.completion")
            answer = _text(outputs[0].get("content")) if outputs else None
    if question is None and answer is None:
        question, answer = _from_events([e for e in events if isinstance(e, Mapping)])
    if kind == "retriever":
        question = _text(attrs.get("gen_ai.retrieval.query.text")) or question
    model = attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model")
    prompt_tokens = attrs.get("gen_ai.usage.input_tokens", attrs.get("gen_ai.usage.prompt_tokens"))
    completion_tokens = attrs.get(
        "gen_ai.usage.output_tokens", attrs.get("gen_ai.usage.completion_tokens")
    )
    session = attrs.get("gen_ai.conversation.id") or attrs.get("session.id")
    user = attrs.get("user.id") or attrs.get("enduser.id")
    return Span(
        **base,
        kind=kind,
        input=question,
        output=answer,
        documents=_genai_documents(attrs.get("gen_ai.retrieval.documents")),
        model=None if model is None else str(model),
        prompt_tokens=as_int(prompt_tokens, "gen_ai.usage.input_tokens"),
        completion_tokens=as_int(completion_tokens, "gen_ai.usage.output_tokens"),
        session_id=None if session is None else str(session),
        user_id=None if user is None else str(user),
        attributes=attrs,
    )


def _span(raw: Mapping[str, Any]) -> Span | None:
    trace_id = hex_id(raw.get("traceId"), 16)
    span_id = hex_id(raw.get("spanId"), 8)
    if trace_id is None or span_id is None:
        return None
    attrs = key_values(raw.get("attributes"))
    found = raw.get("status")
    status: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    error = None
    if status.get("code") in _STATUS_ERROR:
        error = str(status.get("message") or attrs.get("error.type") or "error")
    base: dict[str, Any] = {
        "trace_id": trace_id,
        "span_id": span_id,
        "parent_id": hex_id(raw.get("parentSpanId"), 8),
        "name": str(raw.get("name") or ""),
        "start": _nanos(raw, "startTimeUnixNano"),
        "end": _nanos(raw, "endTimeUnixNano"),
        "error": error,
    }
    if "openinference.span.kind" in attrs:
        # flattened again: a structured attribute (kvlist/array) reads like a flat one
        return span_from_attributes(attrs=flatten(attrs), **base)
    events = raw.get("events")
    found = [e for e in events if isinstance(e, Mapping)] if isinstance(events, list) else []
    named = [(str(e.get("name") or ""), key_values(e.get("attributes"))) for e in found]
    return openllmetry_span(_genai_span(base, attrs, found), attrs, named)


def _objects(path: Path) -> Iterator[tuple[str, Any]]:
    """``(where, object)`` for each ``{"resourceSpans": ...}`` object of a file."""
    if is_protobuf(path):  # OTLP protobuf (issue 38): read as protobuf's JSON mapping
        yield from protobuf_objects(path)
        return
    expected = 'an OTLP/JSON file holds one {"resourceSpans": [...]} object per line'
    for where, value in read_json(path, expected):
        if where is not DOCUMENT:
            yield where, value
        elif value != []:  # an empty file holds no spans
            yield str(path), value


def _items(container: Mapping[str, Any], key: str, where: str) -> list[Any]:
    """``container[key]``, a list (missing is empty); anything else is an error naming it."""
    found = container.get(key)
    if found is None:
        return []
    if not isinstance(found, list):
        raise TraceFileError(
            f"{where}: '{key}' is {type(found).__name__}, not a list; is this an OTLP/JSON "
            "trace file?"
        )
    return found


def _raw_spans(data: Mapping[str, Any], where: str) -> Iterator[tuple[str, Any]]:
    """``(where, span)`` for each span of a ``{"resourceSpans": ...}`` object."""
    for r, resource in enumerate(_items(data, "resourceSpans", where), start=1):
        at_resource = f"{where}, resourceSpans[{r}]"
        if not isinstance(resource, Mapping):
            raise TraceFileError(f"{at_resource}: not an object; is this an OTLP/JSON file?")
        for s, scope in enumerate(_items(resource, "scopeSpans", at_resource), start=1):
            at_scope = f"{at_resource}.scopeSpans[{s}]"
            if not isinstance(scope, Mapping):
                raise TraceFileError(f"{at_scope}: not an object; is this an OTLP/JSON file?")
            for k, raw in enumerate(_items(scope, "spans", at_scope), start=1):
                yield f"{at_scope}.spans[{k}]", raw


def _file_spans(path: Path) -> Iterator[tuple[str, Span | None]]:
    """``(where, span)`` for each span of an OTLP/JSON file (``None``: no ids)."""
    for where, data in _objects(path):
        if not isinstance(data, Mapping) or "resourceSpans" not in data:
            raise TraceFileError(
                f"{where}: no 'resourceSpans': not an OTLP/JSON trace file (the collector's "
                "file exporter writes one such object per line); Phoenix span exports are "
                "read with the format 'openinference'"
            )
        for where_span, raw in _raw_spans(data, where):
            try:
                with reading(where_span):
                    span = _span(raw) if isinstance(raw, Mapping) else None
            except TypeError as error:  # a typed field holding another type
                raise TraceFileError(
                    f"{where_span}: {error}; OTLP/JSON gives each attribute value as one typed "
                    "field (stringValue, intValue...)"
                ) from None
            yield where_span, span


def read_otel(paths: Sequence[str | Path]) -> TraceImport:
    """OTLP/JSON trace files (OpenInference or GenAI attributes) read into samples."""
    spans, unmapped, n_records = collect_spans(
        (found for path in map(Path, paths) for found in _file_spans(path)), NO_IDS
    )
    spans, nested = merge_nested_retrievals(spans)  # OpenLLMetry: LangChain over a vector store
    return build_samples(spans, format="otel", n_records=n_records, unmapped=unmapped + nested)
