"""Spans -> samples: the one place every trace format's spans become ragmeter samples.

The rules (docs/production.md, "Import traces", says the same to users):

* **One trace, one sample**; its id is the trace id, its ``metadata["timestamp"]`` the start
  of its root span (ISO 8601, UTC).
* **The root span** is the span without a parent (or, when none lacks one, the earliest span
  whose parent is not in the file). Its input is the question (``user_input``) and its output
  the answer (``response``). When the root has no text input (or output), the first chain,
  then agent, then LLM span (by start time) that has one gives it.
* **Retriever spans** give ``retrieved_contexts``, ``retrieved_context_ids`` and
  ``metadata["retrieved_context_scores"]`` in rank order. Several retrievals (multi-query)
  are joined in start-time order, a document seen before (same id, or same text when it has
  no id) left out; ``metadata["n_retrievals"]`` counts the retriever spans.
* **A reranker span** (the last one) decides the final ranking, what the model saw: its
  output documents are the contexts, and the ids before reranking are kept in
  ``metadata["pre_rerank_context_ids"]``.
* Contexts are given when every document has a text, ids when every document has an id.
* **LLM spans**: ``model`` (of the last LLM call), ``prompt_tokens`` and ``completion_tokens``
  (summed over the calls), ``llm_latency_s`` (summed); ``latency_s`` is the root's latency.
* ``session_id``, ``user_id`` and ``tags`` from the root (else the first span that has them);
  the root's own metadata is kept too. Traces of one session are the turns of a conversation:
  ``metadata["turn"]`` is the 1-based turn by start time, ``metadata["conversation_id"]`` the
  session id, and ``history`` the earlier turns' questions and answers (user and assistant
  messages, by start time; a turn without an answer gives its question only).
* **A failed root** (error status) or a root without output still gives a sample when there
  is a question: ``response`` is left out (metrics that need it say so) and
  ``metadata["error"]`` holds the error. A trace with no question gives no sample.
* A trace whose sample would hold a lone surrogate (``"\\ud800"``: no UTF-8 file can hold
  it) gives no sample: it is an :class:`Unmapped` entry, the other traces are imported (and
  the later turns of its session do not carry it in their history).
  ``TraceImport.to_dataset`` moves any other sample that is not valid as a dataset row
  (metadata nested too deeply...) to ``unmapped`` the same way, with the problem.
* Nothing is dropped silently: each span with no use (a tool call, an embedding, a chain step
  below the root, an orphan of unknown kind...) and each trace without a question is an
  :class:`Unmapped` entry with its reason.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

from ragmeter.dataset import lone_surrogate
from ragmeter.traces._span import Document, Span, TraceImport, Unmapped

#: Why a span of each kind that gave the sample nothing is left out.
_NO_USE: dict[str, str] = {
    "chain": "chain span below the root: only the root's question and answer are read",
    "agent": "agent span below the root: only the root's question and answer are read",
    "tool": "tool span: tool calls are not sample fields",
    "embedding": "embedding span: vectors are not sample fields",
    "llm": "llm span without model, tokens or timing",
    "other": "span of no known kind (not a chain, retriever, reranker or LLM call)",
    # in a trace with a question these are always used: only a trace without one leaves them
    "retriever": "retriever span of a trace without a question",
    "reranker": "reranker span of a trace without a question",
}
NO_QUESTION = "trace without a question: no text input on its root or any chain/agent/LLM span"
EARLIER_RERANKER = "reranker span superseded by a later reranker in the same trace"
DUPLICATE_SPAN = "span id seen twice in the trace (the first record is used)"
ORPHAN = "orphan span of no use: its parent is not in the file"
LONE_SURROGATE = (
    "trace whose text holds a lone surrogate (half of a UTF-16 pair, such as a \\ud800 escape), "
    "which no UTF-8 file can hold: export it again, or fix the escape"
)


def as_utc(moment: dt.datetime) -> dt.datetime:
    """``moment`` in UTC; a time without a zone is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc)


def _start_key(span: Span) -> tuple[int, dt.datetime]:
    # spans without a start time sort after the others, in file order (sorted is stable)
    if span.start is None:
        return (1, dt.datetime.min.replace(tzinfo=dt.timezone.utc))
    return (0, as_utc(span.start))


def build_samples(
    spans: Iterable[Span],
    *,
    format: str,
    n_records: int,
    unmapped: Sequence[Unmapped] = (),
) -> TraceImport:
    """Group ``spans`` by trace and turn each trace into a sample (the rules above);
    ``unmapped`` are the records the format itself could not read as spans."""
    result = TraceImport(format=format, n_records=n_records, unmapped=list(unmapped))
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    result.n_traces = len(traces)
    built: list[tuple[tuple[int, dt.datetime], dict[str, Any], str | None]] = []
    for trace_id, members in traces.items():
        sample, start, session = _build_trace(trace_id, members, result.unmapped)
        if sample is not None and lone_surrogate(sample) is not None:
            result.unmapped.append(Unmapped(LONE_SURROGATE, trace_id=trace_id))
        elif sample is not None:
            built.append((start, sample, session))
    built.sort(key=lambda item: (item[0], item[1]["id"]))
    histories: dict[str, list[dict[str, str]]] = {}
    for _, sample, session in built:
        if session is not None:
            history = histories.setdefault(session, [])
            sample["metadata"]["turn"] = sum(m["role"] == "user" for m in history) + 1
            sample["metadata"]["conversation_id"] = session
            sample["history"] = list(history)
            history.append({"role": "user", "content": sample["user_input"]})
            if sample.get("response") is not None:
                history.append({"role": "assistant", "content": sample["response"]})
        result.samples.append(sample)
    return result


def _build_trace(
    trace_id: str, members: list[Span], unmapped: list[Unmapped]
) -> tuple[dict[str, Any] | None, tuple[int, dt.datetime], str | None]:
    """The sample of one trace (or ``None``), its start (for ordering) and its session."""
    spans: list[Span] = []
    seen: set[str] = set()
    for span in members:
        if span.span_id in seen:
            unmapped.append(Unmapped(DUPLICATE_SPAN, trace_id=trace_id, span_id=span.span_id))
        else:
            seen.add(span.span_id)
            spans.append(span)
    spans.sort(key=_start_key)
    # parents that loop (a -> b -> a) leave no top: the earliest span is the root then
    tops = [s for s in spans if s.parent_id is None or s.parent_id not in seen] or spans[:1]
    root = min(tops, key=lambda s: (s.parent_id is not None, _start_key(s)))
    used: set[str] = {root.span_id}

    question, question_span = _text_of(root, spans, "input")
    answer, answer_span = _text_of(root, spans, "output")
    used.update(s.span_id for s in (question_span, answer_span) if s is not None)
    if question is None:
        unmapped.append(Unmapped(NO_QUESTION, trace_id=trace_id, span_id=root.span_id))
        _account(spans, used, root, unmapped)
        return None, _start_key(root), None

    metadata: dict[str, Any] = {}
    sample: dict[str, Any] = {"id": trace_id, "user_input": question}
    if answer is not None:
        sample["response"] = answer
    if root.error is not None:
        metadata["error"] = root.error
    elif answer is None:
        metadata["error"] = "the trace recorded no answer (the root span has no output)"
    _contexts(spans, sample, metadata, used, unmapped)
    _llm_calls(spans, metadata, used)
    if root.start is not None:
        metadata["timestamp"] = as_utc(root.start).isoformat()
    if root.latency_s is not None:
        metadata["latency_s"] = root.latency_s
    for name in ("session_id", "user_id"):
        value = _first(spans, root, name)
        if value is not None:
            metadata[name] = value
    session = metadata.get("session_id")
    tags = list(dict.fromkeys(tag for s in [root, *spans] for tag in s.tags))
    if tags:
        metadata["tags"] = tags
    for key, value in root.metadata.items():
        metadata.setdefault(key, value)
    sample["metadata"] = metadata
    _account(spans, used, root, unmapped)
    return sample, _start_key(root), session


def _text_of(root: Span, spans: list[Span], side: str) -> tuple[str | None, Span | None]:
    """The root's input (or output), else that of the first chain, agent, then LLM span."""
    value: str | None = getattr(root, side)
    if value is not None and value.strip():
        return value, None
    for kind in ("chain", "agent", "llm"):
        for span in spans:
            text: str | None = getattr(span, side)
            if span.kind == kind and text is not None and text.strip():
                return text, span
    return None, None


def _first(spans: list[Span], root: Span, name: str) -> str | None:
    for span in [root, *spans]:
        value: str | None = getattr(span, name)
        if value is not None and value != "":
            return value
    return None


def _merge(retrievals: list[Span]) -> list[Document]:
    """The documents of the retriever spans in start order, each document once."""
    merged: list[Document] = []
    keys: set[tuple[str, str]] = set()
    for span in retrievals:
        for doc in span.documents:
            key = ("id", doc.id) if doc.id is not None else ("text", doc.content or "")
            if key not in keys:
                keys.add(key)
                merged.append(doc)
    return merged


def _contexts(
    spans: list[Span],
    sample: dict[str, Any],
    metadata: dict[str, Any],
    used: set[str],
    unmapped: list[Unmapped],
) -> None:
    retrievals = [s for s in spans if s.kind == "retriever"]
    rerankers = [s for s in spans if s.kind == "reranker"]
    if not retrievals and not rerankers:
        return
    used.update(s.span_id for s in retrievals)
    docs = _merge(retrievals)
    if retrievals:
        metadata["n_retrievals"] = len(retrievals)
    if rerankers:
        reranker = rerankers[-1]
        used.add(reranker.span_id)
        for earlier in rerankers[:-1]:
            used.add(earlier.span_id)  # counted here, with its own reason
            unmapped.append(
                Unmapped(EARLIER_RERANKER, trace_id=earlier.trace_id, span_id=earlier.span_id)
            )
        before = reranker.input_documents or docs
        if before and all(d.id is not None for d in before):
            metadata["pre_rerank_context_ids"] = [d.id for d in before]
        # A reranker that reports only ids takes the texts from the documents it reranked.
        texts = {d.id: d.content for d in [*docs, *reranker.input_documents] if d.id is not None}
        docs = [
            Document(content=texts.get(d.id), id=d.id, score=d.score)
            if d.content is None and d.id is not None
            else d
            for d in reranker.documents
        ]
    contexts = [d.content for d in docs]
    ids = [d.id for d in docs]
    if all(c is not None for c in contexts):
        sample["retrieved_contexts"] = contexts
    if docs and all(i is not None for i in ids):
        sample["retrieved_context_ids"] = ids
    if any(d.score is not None for d in docs):
        metadata["retrieved_context_scores"] = [d.score for d in docs]


def _llm_calls(spans: list[Span], metadata: dict[str, Any], used: set[str]) -> None:
    calls = [s for s in spans if s.kind == "llm"]
    models = [s.model for s in calls if s.model]
    if models:
        metadata["model"] = models[-1]
    for name in ("prompt_tokens", "completion_tokens"):
        counts = [getattr(s, name) for s in calls if getattr(s, name) is not None]
        if counts:
            metadata[name] = sum(counts)
    latencies = [s.latency_s for s in calls if s.latency_s is not None]
    if latencies:
        metadata["llm_latency_s"] = sum(latencies)
    used.update(
        s.span_id
        for s in calls
        if s.model
        or s.prompt_tokens is not None
        or s.completion_tokens is not None
        or s.latency_s is not None
    )


def _account(spans: list[Span], used: set[str], root: Span, unmapped: list[Unmapped]) -> None:
    """An :class:`Unmapped` entry for every span that gave the sample nothing."""
    known = {s.span_id for s in spans}
    for span in spans:
        if span.span_id in used:
            continue
        orphan = span is not root and span.parent_id is not None and span.parent_id not in known
        reason = ORPHAN if orphan and span.kind == "other" else _NO_USE[span.kind]
        unmapped.append(Unmapped(reason, trace_id=span.trace_id, span_id=span.span_id))
