"""Langfuse exports read into spans, then samples.

Read (matched against the Langfuse Python SDK 4.14 API types, ``langfuse/api/commons/types``,
and the docs at langfuse.com, 2026-08):

* ``GET /api/public/traces`` and ``GET /api/public/observations`` (v1 and v2) pages:
  ``{"data": [...], "meta": {...}}``, a bare list of the records, or JSONL; traces may embed
  their ``observations`` (objects, or ids only) and ``scores``.
* The UI's downloads: a trace (``{"trace": {...}, "observations": [...], "scores": [...]}``
  or the trace with its observations embedded), a session (``{"id": ..., "traces": [...]}``),
  and the tables' CSV / JSON / JSONL exports (cells holding JSON are decoded).
* camelCase (the API's) and snake_case (the SDK's ``model_dump()``) field names alike.

A trace is the root span: its ``input`` is the question, its ``output`` the answer, its
``sessionId``, ``userId``, ``tags``, ``metadata``, ``release``, ``version`` and scores the
sample's tags. Observations are its spans by ``type``: GENERATION -> LLM call (model,
``usageDetails`` tokens, latency), RETRIEVER -> retrieval (its output read as documents, see
:func:`ragmeter.traces._shapes.documents`), SPAN / CHAIN -> chain, AGENT, TOOL, EMBEDDING.
A SPAN, TOOL or CHAIN named like a retrieval (``retrieve``, ``search``...) whose output
is a list of documents, or whose output is LangChain ``Document`` objects, is a retrieval;
one named ``rerank`` a reranker. EVENT, EVALUATOR and GUARDRAIL observations have no sample
field: each is listed as unmapped with its reason, as is a retrieval whose output is not a
list of documents.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter.traces._build import build_samples
from ragmeter.traces._shapes import (
    RETRIEVAL_NAME,
    answer_text,
    as_float,
    as_int,
    as_str,
    decode_cell,
    documents,
    is_document_list,
    question_text,
    read_records,
    reading,
    time_field,
)
from ragmeter.traces._span import Document, Span, SpanKind, TraceImport, Unmapped

#: Observation types and the span kind each is read as.
KINDS: dict[str, SpanKind] = {
    "SPAN": "chain",
    "CHAIN": "chain",
    "GENERATION": "llm",
    "AGENT": "agent",
    "TOOL": "tool",
    "RETRIEVER": "retriever",
    "EMBEDDING": "embedding",
}
#: Observation types with no sample field, and why.
NOT_MAPPED: dict[str, str] = {
    "EVENT": "Langfuse EVENT observation: a point-in-time log entry, no sample field holds it",
    "EVALUATOR": "Langfuse EVALUATOR observation: an evaluation of the output, not part of the "
    "RAG run (its scores are read from the trace's scores)",
    "GUARDRAIL": "Langfuse GUARDRAIL observation: a content check, no sample field holds it",
}
NOT_A_RECORD = "not a Langfuse trace, observation or score (no id, type or timestamp)"
NOT_AN_OBJECT = "not a JSON object: a Langfuse export holds trace, observation and score objects"
NO_ID = "Langfuse record without an id"
DATASET_ITEM = (
    "Langfuse dataset item, not a trace: give dataset items to ragmeter eval or load_dataset, "
    "which read their input, expectedOutput and metadata"
)
NO_TRACE_ID = "Langfuse observation without a traceId: export it with its trace"
NOT_DOCUMENTS = (
    "retriever or reranker observation whose output is not a list of documents (texts, or "
    "objects with page_content / content / text): no contexts read from it"
)
MISSING_OBSERVATION = (
    "observation listed by its trace but not in the files: export the observations too "
    "(GET /api/public/observations?traceId=...)"
)
ORPHAN_SCORE = "Langfuse score of a trace that is not in the files"

_RERANK_NAME = re.compile(r"re-?rank", re.IGNORECASE)
_SNAKE_TO_CAMEL = {
    "trace_id": "traceId",
    "parent_observation_id": "parentObservationId",
    "start_time": "startTime",
    "end_time": "endTime",
    "session_id": "sessionId",
    "user_id": "userId",
    "usage_details": "usageDetails",
    "provided_model_name": "providedModelName",
    "status_message": "statusMessage",
    "prompt_tokens": "promptTokens",
    "completion_tokens": "completionTokens",
    "string_value": "stringValue",
    "data_type": "dataType",
    "observation_id": "observationId",
}
_TRACE_KEYS = ("timestamp", "input", "output", "observations", "sessionId", "name")


def read_langfuse(paths: Sequence[str | Path]) -> TraceImport:
    """Samples from Langfuse exports (traces, observations and scores, in any of the files):
    one sample per trace; what could not be mapped is in ``unmapped`` with its reason."""
    reader = _Reader()
    for path in paths:
        is_csv = Path(path).suffix.lower() in (".csv", ".parquet")
        for source, record in read_records(Path(path)):
            reader.n_records += 1
            if is_csv and isinstance(record, Mapping):  # cells holding JSON are decoded
                record = {k: decode_cell(v) for k, v in record.items()}
            with reading(source):
                reader.add(record, source)
    spans = reader.spans()
    n_records, unmapped = reader.n_records, reader.unmapped
    del reader  # the records, read into spans: not held while the samples are built
    return build_samples(spans, format="langfuse", n_records=n_records, unmapped=unmapped)


def _normal(record: Mapping[str, Any]) -> dict[str, Any]:
    """camelCase keys (the SDK's snake_case ones renamed)."""
    return {_SNAKE_TO_CAMEL.get(str(k), str(k)): v for k, v in record.items()}


def _keep(
    records: dict[str, tuple[dict[str, Any], str]], key: str, new: dict[str, Any], source: str
) -> None:
    """Keep a record under ``key``. One record read twice (a trace's embedded observation and
    the observations export): the first reading's values win, the second fills what it
    lacked, and the first reading's source is kept."""
    if key in records:
        old, source = records[key]
        new = {
            **{k: v for k, v in new.items() if v is not None},
            **{k: v for k, v in old.items() if v is not None},
        }
    records[key] = (new, source)


class _Reader:
    """Collects the records of all files, then turns them into spans."""

    def __init__(self) -> None:
        self.n_records = 0
        self.unmapped: list[Unmapped] = []
        self.traces: dict[str, tuple[dict[str, Any], str]] = {}
        self.observations: dict[str, tuple[dict[str, Any], str]] = {}
        self.listed: dict[str, list[str]] = {}  # trace id -> observation ids it lists
        self.scores: list[tuple[dict[str, Any], str]] = []

    # -- reading ---------------------------------------------------------------------------

    def add(self, record: Any, source: str, *, trace_id: str | None = None) -> None:
        if not isinstance(record, Mapping):
            self.unmapped.append(Unmapped(NOT_AN_OBJECT, source=source))
            return
        data = _normal(record)
        if isinstance(data.get("trace"), Mapping):  # the UI's trace download
            trace = dict(data["trace"])
            for key in ("observations", "scores"):
                if isinstance(data.get(key), list):
                    trace.setdefault(key, data[key])
            self.add(trace, source)
            return
        if isinstance(data.get("traces"), list):  # the UI's session download
            for n, trace in enumerate(data["traces"], start=1):
                if isinstance(trace, Mapping) and data.get("id") is not None:
                    trace = {"sessionId": data["id"], **_normal(trace)}
                self.add(trace, f"{source} trace {n}")
            return
        kind = str(data.get("type") or "").upper()
        if "datasetId" in data or "dataset_id" in data:
            self.unmapped.append(
                Unmapped(DATASET_ITEM, span_id=as_str(data.get("id")), source=source)
            )
        elif kind in KINDS or kind in NOT_MAPPED or ("startTime" in data and "traceId" in data):
            self._observation(data, source, trace_id)
        elif ("value" in data or "stringValue" in data) and (
            "dataType" in data or "source" in data or "traceId" in data
        ):
            if trace_id is not None:
                data.setdefault("traceId", trace_id)
            self.scores.append((data, source))
        elif "id" in data and any(key in data for key in _TRACE_KEYS):
            self._trace(data, source)
        else:
            self.unmapped.append(Unmapped(NOT_A_RECORD, source=source))

    def _trace(self, data: dict[str, Any], source: str) -> None:
        trace_id = as_str(data.get("id"))
        if trace_id is None:
            self.unmapped.append(Unmapped(NO_ID, source=source))
            return
        embedded = data.pop("observations", None)
        scores = data.pop("scores", None)
        _keep(self.traces, trace_id, data, source)
        for n, item in enumerate(embedded if isinstance(embedded, list) else [], start=1):
            if isinstance(item, str):
                self.listed.setdefault(trace_id, []).append(item)
            else:
                self.n_records += 1
                self.add(item, f"{source} observation {n}", trace_id=trace_id)
        for n, item in enumerate(scores if isinstance(scores, list) else [], start=1):
            if isinstance(item, Mapping):
                self.n_records += 1
                self.add({"traceId": trace_id, **item}, f"{source} score {n}", trace_id=trace_id)

    def _observation(self, data: dict[str, Any], source: str, trace_id: str | None) -> None:
        obs_id = as_str(data.get("id"))
        if obs_id is None:
            self.unmapped.append(Unmapped(NO_ID, trace_id=trace_id, source=source))
            return
        if data.get("traceId") is None and trace_id is not None:
            data["traceId"] = trace_id
        if data.get("traceId") is None:
            self.unmapped.append(Unmapped(NO_TRACE_ID, span_id=obs_id, source=source))
            return
        _keep(self.observations, obs_id, data, source)

    # -- spans -----------------------------------------------------------------------------

    def spans(self) -> list[Span]:
        by_trace: dict[str, list[Span]] = {}
        for obs_id, (data, source) in self.observations.items():
            with reading(source):
                span = self._observation_span(obs_id, data, source)
            if span is not None:
                by_trace.setdefault(span.trace_id, []).append(span)
        for trace_id, (data, source) in self.traces.items():
            with reading(source):
                trace = self._trace_span(trace_id, data, by_trace)
            by_trace.setdefault(trace_id, []).insert(0, trace)
        spans = [span for members in by_trace.values() for span in members]
        for trace_id, ids in self.listed.items():
            for obs_id in dict.fromkeys(ids):
                if obs_id not in self.observations:
                    self.unmapped.append(Unmapped(MISSING_OBSERVATION, trace_id, obs_id))
        self._attach_scores(spans)
        return spans

    def _trace_span(
        self, trace_id: str, data: dict[str, Any], by_trace: Mapping[str, list[Span]]
    ) -> Span:
        start = time_field(data, "timestamp")
        latency = as_float(data.get("latency"))
        end = None
        if start is not None and latency is not None:
            try:
                end = start + dt.timedelta(seconds=latency)
            except OverflowError:
                raise ValueError(
                    f"field 'latency': {latency} s after {start.isoformat()} is past year 9999; "
                    "give the latency in seconds"
                ) from None
        metadata: dict[str, Any] = {}
        raw = data.get("metadata")
        if isinstance(raw, Mapping):
            metadata.update({str(k): v for k, v in raw.items()})
        elif raw is not None:
            metadata["trace_metadata"] = raw
        for key in ("release", "version", "environment"):
            if data.get(key) not in (None, ""):
                metadata.setdefault(key, data[key])
        tags = data.get("tags")
        # The trace has no status of its own: a failed top-level observation is its error.
        spans = by_trace.get(trace_id, [])
        errors = [s.error for s in spans if s.parent_id is None and s.error is not None]
        for span in spans:  # top-level observations hang below the trace
            if span.parent_id is None:
                span.parent_id = trace_id
        return Span(
            trace_id=trace_id,
            span_id=trace_id,
            parent_id=None,
            name=as_str(data.get("name")) or "trace",
            kind="chain",
            start=start,
            end=end,
            input=question_text(data.get("input")),
            output=answer_text(data.get("output")),
            session_id=as_str(data.get("sessionId")),
            user_id=as_str(data.get("userId")),
            tags=[str(t) for t in tags] if isinstance(tags, list) else [],
            metadata=metadata,
            error=errors[0] if errors else None,
            attributes={"langfuse.record": "trace"},
        )

    def _observation_span(self, obs_id: str, data: dict[str, Any], source: str) -> Span | None:
        trace_id = str(data["traceId"])
        obs_type = str(data.get("type") or "").upper()
        name = as_str(data.get("name")) or obs_type.lower() or "observation"
        if obs_type in NOT_MAPPED:
            self.unmapped.append(Unmapped(NOT_MAPPED[obs_type], trace_id, obs_id, source))
            return None
        if obs_type not in KINDS:
            reason = (
                f"Langfuse observation of type {obs_type or 'unknown'!r}: not a type ragmeter reads"
            )
            self.unmapped.append(Unmapped(reason, trace_id, obs_id, source))
            return None
        kind: SpanKind = KINDS[obs_type]
        raw_input, raw_output = data.get("input"), data.get("output")
        docs: list[Document] = []
        input_docs: list[Document] = []
        reranker = _RERANK_NAME.search(name) and kind in ("retriever", "chain", "tool")
        if reranker or kind == "retriever":
            found = documents(raw_output)
            if found is None:
                self.unmapped.append(Unmapped(NOT_DOCUMENTS, trace_id, obs_id, source))
                return None
            docs = found
            if reranker:
                kind, input_docs = "reranker", documents(raw_input) or []
        elif kind in ("chain", "tool") and (
            RETRIEVAL_NAME.search(name) or is_document_list(raw_output)
        ):
            found = documents(raw_output)
            if found is not None:
                kind, docs = "retriever", found
        level = str(data.get("level") or "").upper()
        error = None
        if level == "ERROR":
            error = as_str(data.get("statusMessage")) or "observation level ERROR"
        prompt, completion = _usage(data) if kind in ("llm", "embedding") else (None, None)
        tags = data.get("tags")
        metadata = data.get("metadata")
        return Span(
            trace_id=trace_id,
            span_id=obs_id,
            parent_id=as_str(data.get("parentObservationId")),
            name=name,
            kind=kind,
            start=time_field(data, "startTime"),
            end=time_field(data, "endTime"),
            input=question_text(raw_input),
            output=None if kind in ("retriever", "reranker") else answer_text(raw_output),
            documents=docs,
            input_documents=input_docs,
            model=as_str(data.get("providedModelName")) or as_str(data.get("model")),
            prompt_tokens=prompt,
            completion_tokens=completion,
            session_id=as_str(data.get("sessionId")),
            user_id=as_str(data.get("userId")),
            tags=[str(t) for t in tags] if isinstance(tags, list) else [],
            metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
            error=error,
            attributes={"langfuse.type": obs_type, "langfuse.level": level or None},
        )

    def _attach_scores(self, spans: list[Span]) -> None:
        """Trace scores (user feedback, evaluations) become the root's ``scores`` tag."""
        roots: dict[str, Span] = {}
        for span in spans:
            if span.parent_id is None:
                roots.setdefault(span.trace_id, span)
        for data, source in self.scores:
            trace_id = as_str(data.get("traceId"))
            root = roots.get(trace_id or "")
            if root is None:
                span_id = as_str(data.get("id"))
                self.unmapped.append(Unmapped(ORPHAN_SCORE, trace_id, span_id, source))
                continue
            name = as_str(data.get("name")) or "score"
            value = data.get("stringValue")
            if value is None:
                value = data.get("value")
            scores = root.metadata.setdefault("scores", {})
            if name in scores:
                previous = scores[name]
                value = [*previous, value] if isinstance(previous, list) else [previous, value]
            scores[name] = value


def _usage(data: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """Input and output tokens: ``usageDetails`` (SDK v3+; empty when none were reported),
    else ``usage`` (deprecated), else the v1 API's ``promptTokens`` / ``completionTokens``."""
    details = data.get("usageDetails")
    usage = details if isinstance(details, Mapping) else data.get("usage")
    if isinstance(usage, Mapping):
        return _first_int(usage, ("input", "prompt_tokens", "input_tokens", "promptTokens")), (
            _first_int(usage, ("output", "completion_tokens", "output_tokens", "completionTokens"))
        )
    return _first_int(data, ("promptTokens", "inputUsage")), _first_int(
        data, ("completionTokens", "outputUsage")
    )


def _first_int(fields: Mapping[str, Any], keys: Sequence[str]) -> int | None:
    for key in keys:
        value = as_int(fields.get(key), key)
        if value is not None:
            return value
    return None
