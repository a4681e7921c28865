"""OpenLLMetry (Traceloop) spans in OTLP files: what its instrumentations record, read into
the :class:`Span` fields the builder needs.

``_otel`` reads every span without ``openinference.span.kind`` with the GenAI conventions
(``gen_ai.input.messages``, ``gen_ai.prompt.N.role/content``, ``gen_ai.usage.*``...) and then
hands it here; a span that OpenLLMetry recorded (a ``traceloop.*`` attribute,
``llm.request.type``, a vector store's ``db.query.result`` events) is completed with what only
OpenLLMetry writes. Attribute names as opentelemetry-semantic-conventions-ai (0.4 and 0.5)
defines them, and as the LangChain, Chroma and Pinecone instrumentations set them:

* **kind**: ``llm.request.type`` (``chat``/``completion`` a model call, ``embedding``,
  ``rerank``); ``gen_ai.operation.name`` ``vector_db_retrieve`` (LangChain's retriever span),
  or a vector store's query (``db.system`` with ``db.query.result`` / ``db.search.result``
  events) a retrieval; ``traceloop.span.kind`` ``workflow``/``task`` a chain, ``agent``,
  ``tool``.
* **question and answer** of a workflow or task: ``traceloop.entity.input`` /
  ``traceloop.entity.output`` (JSON: LangChain's ``{"inputs": ...}`` / ``{"outputs": ...}``,
  the SDK decorators' ``{"args": [...], "kwargs": {...}}`` and return value), else
  ``gen_ai.task.input`` / ``gen_ai.task.output``.
* **documents**: one ``db.query.result`` event per hit (``db.query.result.id``, ``.score``,
  ``.document``; Pinecone's text is in ``.metadata``, Chroma's ``.distance`` is a distance,
  not a score, and is not kept), ``db.search.result`` events alike; a LangChain retriever's
  ``{"documents": [{"page_content", "metadata"}]}`` output.
* **session and user**: ``traceloop.association.properties.session_id`` (or ``chat_id``,
  ``conversation_id``, ``thread_id``) and ``.user_id``; the other association properties of the
  root are its metadata. A model named ``unknown`` (what OpenLLMetry writes when it found none)
  is no model.

A LangChain retriever span and the vector store's query span below it report one retrieval
twice: :func:`merge_nested_retrievals` keeps the retriever's, with the store's ids and scores.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ragmeter.traces._shapes import (
    RETRIEVAL_NAME,
    answer_text,
    as_float,
    as_str,
    documents,
    is_document_list,
    question_text,
)
from ragmeter.traces._span import Document, Span, SpanKind, Unmapped

#: ``llm.request.type`` -> kind
REQUEST_TYPES: dict[str, SpanKind] = {
    "chat": "llm",
    "completion": "llm",
    "embedding": "embedding",
    "rerank": "reranker",
}
#: ``traceloop.span.kind`` -> kind
SPAN_KINDS: dict[str, SpanKind] = {
    "workflow": "chain",
    "task": "chain",
    "agent": "agent",
    "tool": "tool",
}
RESULT_EVENTS = ("db.query.result", "db.search.result")
_SESSION_KEYS = ("session_id", "chat_id", "conversation_id", "thread_id")
_ASSOCIATION = "traceloop.association.properties."
_RANKED = re.compile(r"Doc (\d+), Score: ([-+.\deE]+)(?:\n(.*))?\Z", re.DOTALL)
_TEXT_KEYS = ("text", "page_content", "content", "document", "chunk")
NESTED_RETRIEVAL = (
    "vector store query inside a retriever span: the same retrieval, read once (the "
    "retriever's documents, with the store's ids and scores)"
)


def is_openllmetry(attrs: Mapping[str, Any], events: Sequence[tuple[str, dict[str, Any]]]) -> bool:
    """Whether OpenLLMetry recorded this span: a ``traceloop.*`` attribute,
    ``llm.request.type``, a ``vector_db_retrieve`` operation or a vector store's result
    events."""
    return (
        "llm.request.type" in attrs
        or attrs.get("gen_ai.operation.name") == "vector_db_retrieve"
        or any(key.startswith("traceloop.") for key in attrs)
        or any(name in RESULT_EVENTS for name, _ in events)
    )


def openllmetry_span(
    span: Span, attrs: Mapping[str, Any], events: Sequence[tuple[str, dict[str, Any]]]
) -> Span:
    """``span`` (read with the GenAI conventions) completed with OpenLLMetry's attributes;
    a span OpenLLMetry did not record is returned as it is."""
    if not is_openllmetry(attrs, events):
        return span
    kind = _kind(span, attrs, events)
    entity_in = _json(attrs.get("traceloop.entity.input", attrs.get("gen_ai.task.input")))
    entity_out = _json(attrs.get("traceloop.entity.output", attrs.get("gen_ai.task.output")))
    question, answer, found = span.input, span.output, span.documents
    if kind in ("chain", "agent", "tool", "retriever") and entity_in is not None:
        question = question_text(_unwrapped(entity_in, "inputs")) or question
    if kind in ("chain", "agent", "tool") and entity_out is not None:
        answer = answer_text(_unwrapped(entity_out, "outputs")) or answer
    inputs: list[Document] = []
    if kind == "retriever":
        found = _event_documents(events) or documents(_unwrapped(entity_out, "outputs")) or found
        answer = None
    elif kind == "reranker":
        inputs, found = _reranked(attrs)
        if not found:  # content not traced (TRACELOOP_TRACE_CONTENT=false): no ranking to read
            kind = "other"
    properties = {
        key[len(_ASSOCIATION) :]: value
        for key, value in attrs.items()
        if key.startswith(_ASSOCIATION) and value is not None
    }
    session = span.session_id or next(
        (str(properties[k]) for k in _SESSION_KEYS if properties.get(k) not in (None, "")), None
    )
    user = span.user_id or as_str(properties.get("user_id"))
    return replace(
        span,
        kind=kind,
        input=question,
        output=answer,
        documents=found,
        input_documents=inputs or span.input_documents,
        model=None if span.model == "unknown" else span.model,
        session_id=session,
        user_id=user,
        metadata={
            **{k: v for k, v in properties.items() if k not in (*_SESSION_KEYS, "user_id")},
            **span.metadata,
        },
    )


def _kind(
    span: Span, attrs: Mapping[str, Any], events: Sequence[tuple[str, dict[str, Any]]]
) -> SpanKind:
    request = str(attrs.get("llm.request.type") or "")
    if request in REQUEST_TYPES:
        return REQUEST_TYPES[request]
    if attrs.get("gen_ai.operation.name") == "vector_db_retrieve":
        return "retriever"
    if "db.system" in attrs and (
        any(name in RESULT_EVENTS for name, _ in events)
        or str(attrs.get("db.operation") or "") in ("query", "search")
        or str(span.name).endswith(".query")
    ):
        return "retriever"
    traceloop = SPAN_KINDS.get(str(attrs.get("traceloop.span.kind") or ""))
    if traceloop == "chain":
        # a task returning LangChain documents (a retriever made of runnables) retrieves
        output = _unwrapped(_json(attrs.get("traceloop.entity.output")), "outputs")
        if is_document_list(output) or (
            RETRIEVAL_NAME.search(span.name) and documents(output) is not None
        ):
            return "retriever"
    if traceloop is not None and span.kind in ("other", "chain", "agent"):
        return traceloop  # LangChain's workflows say invoke_agent too: traceloop.span.kind decides
    return span.kind  # what gen_ai.operation.name said (chat, embeddings, execute_tool...)


def _reranked(attrs: Mapping[str, Any]) -> tuple[list[Document], list[Document]]:
    """A rerank call as Cohere's instrumentation records it: the documents in as
    ``gen_ai.prompt.N`` (role ``system``; the query is the ``user`` prompt), the ranking out
    as ``gen_ai.completion.N.content`` ``"Doc {index}, Score: {score}\\n{text}"``."""
    given = [
        Document(content=as_str(p.get("content")))
        for p in _indexed(attrs, "gen_ai.prompt")
        if p.get("role") == "system"
    ]
    ranked = []
    for item in _indexed(attrs, "gen_ai.completion"):
        match = _RANKED.match(str(item.get("content") or ""))
        if match is None:
            continue
        index, score, text = int(match[1]), as_float(match[2]), match[3]
        if text is None and index < len(given):
            text = given[index].content
        ranked.append(Document(content=text, score=score))
    return given, ranked


def _indexed(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.N.rest`` attributes as ``[{rest: value}, ...]`` in index order."""
    items: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if key.startswith(prefix + "."):
            index, _, rest = key[len(prefix) + 1 :].partition(".")
            if index.isdigit() and rest:
                items.setdefault(int(index), {})[rest] = value
    return [items[n] for n in sorted(items)]


def _json(value: Any) -> Any:
    """An attribute holding JSON (``traceloop.entity.*`` are ``json.dumps`` of any value: a
    returned text is a quoted string) as its value; other text as it is."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "[", '"'):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def _unwrapped(value: Any, key: str) -> Any:
    """LangChain's ``{"inputs": x, "tags", "metadata", "kwargs"}`` (``{"outputs": x,
    "kwargs"}``) as ``x``; any other value as it is."""
    if (
        isinstance(value, Mapping)
        and key in value
        and set(value)
        <= {
            key,
            "tags",
            "metadata",
            "kwargs",
        }
    ):
        return value[key]
    return value


def _event_documents(events: Iterable[tuple[str, dict[str, Any]]]) -> list[Document]:
    """The hits a vector store's ``db.query.result`` / ``db.search.result`` events report."""
    found = []
    for name, attrs in events:
        if name not in RESULT_EVENTS:
            continue
        prefix = name + "."
        metadata = _metadata(attrs.get(prefix + "metadata", attrs.get(prefix + "entity")))
        content = as_str(attrs.get(prefix + "document")) or next(
            (str(metadata[k]) for k in _TEXT_KEYS if isinstance(metadata.get(k), str)), None
        )
        found.append(
            Document(
                content=content,
                id=as_str(attrs.get(prefix + "id")) or as_str(metadata.get("id")),
                score=as_float(attrs.get(prefix + "score")),
            )
        )
    return found


def _metadata(value: Any) -> dict[str, Any]:
    """A hit's metadata: JSON (Chroma), or a Python dict's repr (Pinecone writes
    ``str(metadata)``)."""
    if isinstance(value, Mapping):
        return dict(value)
    if not isinstance(value, str) or not value.startswith("{") or len(value) > 1_000_000:
        return {}
    decoded = _json(value)
    if isinstance(decoded, Mapping):
        return dict(decoded)
    try:
        literal = ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return {}
    return dict(literal) if isinstance(literal, dict) else {}


def merge_nested_retrievals(spans: list[Span]) -> tuple[list[Span], list[Unmapped]]:
    """One retrieval reported by a retriever span and by the vector store's query span below
    it (LangChain over Chroma or Pinecone, both instrumented) read once: the retriever keeps
    its documents' texts and takes the store's ids and scores (when both list as many
    documents; else the retriever's documents, or the store's if it has none); the store's
    span is listed as unmapped, and its children hang from the retriever."""
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    inner: dict[tuple[str, str], list[Span]] = {}
    for span in spans:
        if span.kind != "retriever" or "db.system" not in span.attributes:
            continue
        outer = _retriever_above(span, by_id)
        if outer is not None:
            inner.setdefault((outer.trace_id, outer.span_id), []).append(span)
    if not inner:
        return spans, []
    dropped: dict[tuple[str, str], str | None] = {}
    for key, stores in inner.items():
        outer = by_id[key]
        hits = [doc for store in sorted(stores, key=_start) for doc in store.documents]
        outer.documents = _joined(outer.documents, hits)
        for store in stores:
            dropped[(store.trace_id, store.span_id)] = outer.span_id
    kept = []
    for span in spans:
        if (span.trace_id, span.span_id) in dropped:
            continue
        parent = (span.trace_id, span.parent_id or "")
        while parent in dropped:  # a child of a dropped span hangs from the retriever
            parent = (span.trace_id, dropped[parent] or "")
        kept.append(replace(span, parent_id=parent[1] or None))
    unmapped = [Unmapped(NESTED_RETRIEVAL, trace_id=t, span_id=s) for t, s in dropped]
    return kept, unmapped


def _retriever_above(span: Span, by_id: Mapping[tuple[str, str], Span]) -> Span | None:
    seen = {span.span_id}
    parent = by_id.get((span.trace_id, span.parent_id or ""))
    while parent is not None and parent.span_id not in seen:
        if parent.kind == "retriever" and "db.system" not in parent.attributes:
            return parent
        seen.add(parent.span_id)
        parent = by_id.get((span.trace_id, parent.parent_id or ""))
    return None


def _start(span: Span) -> tuple[bool, Any]:
    return (span.start is None, span.start.timestamp() if span.start else 0.0)


def _joined(outer: list[Document], hits: list[Document]) -> list[Document]:
    if not outer:
        return hits
    if len(outer) != len(hits):
        return outer
    return [
        Document(
            content=mine.content if mine.content is not None else hit.content,
            id=mine.id if mine.id is not None else hit.id,
            score=hit.score if hit.score is not None else mine.score,
        )
        for mine, hit in zip(outer, hits, strict=True)
    ]
