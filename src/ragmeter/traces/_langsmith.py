"""LangSmith run exports read into spans, then samples.

Read (matched against ``langsmith.schemas.Run`` of the LangSmith Python SDK 0.11, 2026-08,
and LangChain's tracer): JSON or JSONL files of runs as ``client.list_runs()`` returns them,
serialized (``run.model_dump(mode="json")`` or ``run.json()``): a list, ``{"runs": [...]}``,
one run a line, or runs with their ``child_runs`` nested (``client.read_run(...,
load_child_runs=True)``).

A trace is the runs sharing a ``trace_id`` (else the first id of ``dotted_order``); the run
without ``parent_run_id`` is the root: its ``inputs`` give the question (``question``,
``input``, ``query``, or the last user message of ``messages``) and its ``outputs`` the answer
(``answer``, ``output``, ``result``, or the last assistant message). By ``run_type``:
``retriever`` runs give the contexts (``outputs.documents``, LangChain ``Document`` objects:
``page_content``, ``metadata.id``, ``metadata.score``), a retriever named like a reranker or a
compression retriever gives the final ranking, ``llm`` runs the model
(``extra.metadata.ls_model_name``, else the invocation parameters), tokens
(``prompt_tokens`` / ``completion_tokens``, else the LLM output's token usage) and latency.
The root's ``extra.metadata`` gives the session (``session_id``, ``thread_id`` or
``conversation_id``), the user (``user_id``) and tags (``ls_*`` keys are LangSmith's own and
left out); its ``tags``, ``feedback_stats`` (as ``feedback``: key -> average) and
``reference_example_id`` are kept too. ``prompt`` and ``parser`` runs have no sample field and
are listed as unmapped with that reason.
"""

from __future__ import annotations

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

#: Run types and the span kind each is read as.
KINDS: dict[str, SpanKind] = {
    "chain": "chain",
    "llm": "llm",
    "retriever": "retriever",
    "tool": "tool",
    "embedding": "embedding",
}
#: Run types with no sample field, and why.
NOT_MAPPED: dict[str, str] = {
    "prompt": "LangSmith prompt run: a prompt template filled in, no sample field holds it",
    "parser": "LangSmith parser run: the model output parsed, the root's output is the answer",
}
NOT_AN_OBJECT = "not a JSON object: a LangSmith export holds run objects"
NOT_A_RUN = "not a LangSmith run (no id or run_type)"
NO_TRACE = (
    "LangSmith run without trace_id, dotted_order or a parent in the files: its trace is unknown"
)
NOT_DOCUMENTS = (
    "retriever run whose outputs are not a list of documents (outputs.documents of "
    "page_content objects, or texts): no contexts read from it"
)
#: Metadata keys that name the session (LangSmith threads: session_id, thread_id,
#: conversation_id, in its order of precedence).
SESSION_KEYS = ("session_id", "thread_id", "conversation_id")

_JSON_COLUMNS = frozenset(
    {"inputs", "outputs", "extra", "events", "tags", "feedback_stats", "serialized"}
)
_RERANK_NAME = re.compile(r"re-?rank|compress", re.IGNORECASE)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def read_langsmith(paths: Sequence[str | Path]) -> TraceImport:
    """Samples from LangSmith run exports: one sample per trace; what could not be mapped is
    in ``unmapped`` with its reason."""
    unmapped: list[Unmapped] = []
    runs: dict[str, tuple[dict[str, Any], str]] = {}
    n_records = 0
    for path in paths:
        tabular = Path(path).suffix.lower() in (".parquet", ".csv")
        for source, record in read_records(Path(path), list_keys=("runs", "data")):
            if tabular and isinstance(record, Mapping):
                record = _decode_columns(record)
            with reading(source):
                flat = _flatten(record, source, None)
            for run, where in flat:
                n_records += 1
                if not isinstance(run, Mapping):
                    unmapped.append(Unmapped(NOT_AN_OBJECT, source=where))
                    continue
                run_id = as_str(run.get("id")) or as_str(run.get("run_id"))
                if run_id is None or not isinstance(run.get("run_type"), str):
                    unmapped.append(Unmapped(NOT_A_RUN, span_id=run_id, source=where))
                    continue
                runs.setdefault(run_id, (dict(run), where))
    spans: list[Span] = []
    for run_id, (run, source) in runs.items():
        trace_id = _trace_id(run_id, runs)
        if trace_id is None:
            unmapped.append(Unmapped(NO_TRACE, span_id=run_id, source=source))
            continue
        with reading(source):
            span = _span(run_id, trace_id, run, source, unmapped)
        if span is not None:
            spans.append(span)
    del runs  # the records, read into spans: not held while the samples are built
    return build_samples(spans, format="langsmith", n_records=n_records, unmapped=unmapped)


def _decode_columns(row: Mapping[str, Any]) -> dict[str, Any]:
    """A bulk-export (Parquet) or CSV row: its object and list columns, held as JSON text,
    decoded; empty cells as None."""
    return {str(k): decode_cell(v) if k in _JSON_COLUMNS or v == "" else v for k, v in row.items()}


def _flatten(record: Any, source: str, parent: str | None) -> list[tuple[Any, str]]:
    """A run and its nested ``child_runs`` (depth first), each child given its parent."""
    if not isinstance(record, Mapping):
        return [(record, source)]
    run = {k: v for k, v in record.items() if k != "child_runs"}
    if parent is not None and run.get("parent_run_id") is None:
        run["parent_run_id"] = parent
    out: list[tuple[Any, str]] = [(run, source)]
    children = record.get("child_runs")
    for n, child in enumerate(children if isinstance(children, list) else [], start=1):
        out += _flatten(child, f"{source} child {n}", as_str(record.get("id")))
    return out


def _dotted_ids(run: Mapping[str, Any]) -> list[str]:
    """The run ids of ``dotted_order`` (``<time><uuid>.<time><uuid>...``), root first."""
    order = run.get("dotted_order")
    if not isinstance(order, str) or not order:
        return []
    return [m.group(0) for part in order.split(".") if (m := _UUID.search(part))]


def _parent_id(run: Mapping[str, Any]) -> str | None:
    parent = as_str(run.get("parent_run_id"))
    if parent is not None:
        return parent
    ids = _dotted_ids(run)
    return ids[-2] if len(ids) >= 2 else None


def _trace_id(run_id: str, runs: Mapping[str, tuple[dict[str, Any], str]]) -> str | None:
    """``trace_id``, else the first id of ``dotted_order``, else the root up the parents."""
    seen: set[str] = set()
    current: str | None = run_id
    while current is not None and current in runs and current not in seen:
        seen.add(current)
        run = runs[current][0]
        trace = as_str(run.get("trace_id"))
        if trace is not None:
            return trace
        ids = _dotted_ids(run)
        if ids:
            return ids[0]
        parent = _parent_id(run)
        if parent is None:
            return current
        current = parent
    return None


def _span(
    run_id: str, trace_id: str, run: dict[str, Any], source: str, unmapped: list[Unmapped]
) -> Span | None:
    run_type = str(run["run_type"]).lower()
    name = as_str(run.get("name")) or run_type
    if run_type in NOT_MAPPED:
        unmapped.append(Unmapped(NOT_MAPPED[run_type], trace_id, run_id, source))
        return None
    if run_type not in KINDS:
        reason = f"LangSmith run of type {run_type!r}: not a type ragmeter reads"
        unmapped.append(Unmapped(reason, trace_id, run_id, source))
        return None
    kind: SpanKind = KINDS[run_type]
    inputs, outputs = run.get("inputs"), run.get("outputs")
    docs: list[Document] = []
    if kind == "retriever" or (
        kind in ("chain", "tool") and (RETRIEVAL_NAME.search(name) or is_document_list(outputs))
    ):
        found = documents(outputs)
        if found is not None:
            kind, docs = "reranker" if _RERANK_NAME.search(name) else "retriever", found
        elif kind == "retriever":
            unmapped.append(Unmapped(NOT_DOCUMENTS, trace_id, run_id, source))
            return None
    extra = run.get("extra")
    extra = extra if isinstance(extra, Mapping) else {}
    meta = extra.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    parent = _parent_id(run)
    is_root = parent is None
    error = as_str(run.get("error"))
    if error is None and str(run.get("status") or "").lower() == "error":
        error = "run status error"
    prompt, completion = _tokens(run, outputs) if kind in ("llm", "embedding") else (None, None)
    tags = run.get("tags")
    session = next((as_str(meta[k]) for k in SESSION_KEYS if meta.get(k) not in (None, "")), None)
    return Span(
        trace_id=trace_id,
        span_id=run_id,
        parent_id=parent,
        name=name,
        kind=kind,
        start=time_field(run, "start_time"),
        end=time_field(run, "end_time"),
        input=question_text(inputs),
        output=None if kind in ("retriever", "reranker") else answer_text(outputs),
        documents=docs,
        model=_model(extra, meta, outputs) if kind in ("llm", "embedding") else None,
        prompt_tokens=prompt,
        completion_tokens=completion,
        session_id=session,
        user_id=as_str(meta.get("user_id")),
        # children inherit the root's tags and add their own (seq:step:1...): the root's only
        tags=[str(t) for t in tags] if is_root and isinstance(tags, list) else [],
        metadata=_root_metadata(run, meta) if is_root else {},
        error=error,
        attributes={"langsmith.run_type": run_type, "langsmith.name": name},
    )


def _root_metadata(run: Mapping[str, Any], meta: Mapping[str, Any]) -> dict[str, Any]:
    used = {*SESSION_KEYS, "user_id"}
    out = {str(k): v for k, v in meta.items() if k not in used and not str(k).startswith("ls_")}
    stats = run.get("feedback_stats")
    if isinstance(stats, Mapping) and stats:
        feedback = {}
        for key, value in stats.items():
            avg = value.get("avg") if isinstance(value, Mapping) else value
            feedback[str(key)] = as_float(avg) if as_float(avg) is not None else avg
        out["feedback"] = feedback
    example = as_str(run.get("reference_example_id"))
    if example is not None:
        out["reference_example_id"] = example
    return out


def _model(extra: Mapping[str, Any], meta: Mapping[str, Any], outputs: Any) -> str | None:
    """``ls_model_name``, else the invocation parameters' model, else the LLM output's."""
    params = extra.get("invocation_params")
    params = params if isinstance(params, Mapping) else {}
    llm_output = outputs.get("llm_output") if isinstance(outputs, Mapping) else None
    llm_output = llm_output if isinstance(llm_output, Mapping) else {}
    found = (
        meta.get("ls_model_name"),
        params.get("model"),
        params.get("model_name"),
        llm_output.get("model_name"),
        llm_output.get("model"),
    )
    return next((as_str(value) for value in found if as_str(value) is not None), None)


def _tokens(run: Mapping[str, Any], outputs: Any) -> tuple[int | None, int | None]:
    """The run's ``prompt_tokens`` / ``completion_tokens`` (LangSmith computes them), else
    the LLM output's ``token_usage``, else the message's ``usage_metadata``."""
    prompt = as_int(run.get("prompt_tokens"), "prompt_tokens")
    completion = as_int(run.get("completion_tokens"), "completion_tokens")
    if prompt is not None or completion is not None:
        return prompt, completion
    if not isinstance(outputs, Mapping):
        return None, None
    llm_output = outputs.get("llm_output")
    usage = llm_output.get("token_usage") if isinstance(llm_output, Mapping) else None
    if isinstance(usage, Mapping):
        return (
            as_int(usage.get("prompt_tokens"), "token_usage.prompt_tokens"),
            as_int(usage.get("completion_tokens"), "token_usage.completion_tokens"),
        )
    for holder in (outputs, _first_generation_message(outputs)):
        usage = holder.get("usage_metadata") if isinstance(holder, Mapping) else None
        if isinstance(usage, Mapping):
            return (
                as_int(usage.get("input_tokens"), "usage_metadata.input_tokens"),
                as_int(usage.get("output_tokens"), "usage_metadata.output_tokens"),
            )
    return None, None


def _first_generation_message(outputs: Mapping[str, Any]) -> Mapping[str, Any] | None:
    generations = outputs.get("generations")
    if not isinstance(generations, list) or not generations:
        return None
    first = generations[0]
    if isinstance(first, list):
        first = first[0] if first else None
    message = first.get("message") if isinstance(first, Mapping) else None
    if not isinstance(message, Mapping):
        return None
    kwargs = message.get("kwargs")
    return kwargs if isinstance(kwargs, Mapping) else message
