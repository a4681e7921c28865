"""OpenInference spans in Phoenix's export shapes: the span dataframe as JSON, JSON lines and
Parquet, Phoenix span JSON with nested attributes, the REST API's ``{"data": [...]}``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ragmeter.traces import TraceFileError, import_traces
from tests.traces.expected import OPENINFERENCE, OPENINFERENCE_UNMAPPED

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("name", ["phoenix_spans.json", "phoenix_spans.parquet"])
def test_phoenix_dataframe_exports_give_the_expected_samples(name: str) -> None:
    result = import_traces("phoenix", FIXTURES / name)
    assert result.samples == OPENINFERENCE
    assert result.unmapped_counts() == OPENINFERENCE_UNMAPPED
    assert (result.n_records, result.n_traces, result.format) == (16, 5, "openinference")


def _frame() -> pd.DataFrame:
    return pd.read_json(FIXTURES / "phoenix_spans.json", orient="records")


def test_json_lines_and_column_oriented_json_read_the_same(tmp_path: Path) -> None:
    lines = tmp_path / "spans.jsonl"
    _frame().to_json(lines, orient="records", lines=True, date_format="iso")
    columns = tmp_path / "columns.json"
    # df.to_json()'s default orientation: {column: {row label: value}}
    _frame().set_index("context.span_id", drop=False).to_json(columns, date_format="iso")
    assert import_traces("openinference", lines).samples == OPENINFERENCE
    assert import_traces("openinference", columns).samples == OPENINFERENCE


def _nested(record: dict[str, Any]) -> dict[str, Any]:
    """A dataframe row as Phoenix's span JSON encoder writes a span: ``context`` and nested
    ``attributes`` (``{"input": {"value": ...}}``, documents as ``{"document": {...}}``)."""
    attributes: dict[str, Any] = {}
    for key, value in record.items():
        if key.startswith("attributes.") and value is not None:
            node = attributes
            *parents, leaf = key[len("attributes.") :].split(".")
            for part in parents:
                node = node.setdefault(part, {})
            if isinstance(value, list) and value and isinstance(value[0], dict):
                value = [
                    {"document": {k.split(".")[1]: v for k, v in item.items()}}
                    if all(k.startswith("document.") for k in item)
                    else item
                    for item in value
                ]
            node[leaf] = value
    return {
        "name": record["name"],
        "context": {"trace_id": record["context.trace_id"], "span_id": record["context.span_id"]},
        "span_kind": record["span_kind"],
        "parent_id": record["parent_id"],
        "start_time": record["start_time"],
        "end_time": record["end_time"],
        "status_code": record["status_code"],
        "status_message": record["status_message"],
        "attributes": attributes,
    }


def test_phoenix_span_json_with_nested_attributes_and_the_rest_api_shape(tmp_path: Path) -> None:
    records = json.loads((FIXTURES / "phoenix_spans.json").read_text("utf-8"))
    spans = [_nested(r) for r in records]
    assert spans[0]["attributes"]["openinference"]["span"]["kind"] == "EMBEDDING"
    path = tmp_path / "spans.json"
    path.write_text(json.dumps({"data": spans, "next_cursor": None}), "utf-8")
    assert import_traces("openinference", path).samples == OPENINFERENCE


def test_several_files_are_one_import(tmp_path: Path) -> None:
    records = json.loads((FIXTURES / "phoenix_spans.json").read_text("utf-8"))
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps(records[:7]), "utf-8")
    second.write_text(json.dumps(records[7:]), "utf-8")
    assert import_traces("openinference", [first, second]).samples == OPENINFERENCE


def test_flat_attributes_json_inputs_and_llm_messages(tmp_path: Path) -> None:
    spans = [
        {
            "context.trace_id": "t",
            "context.span_id": "root",
            "parent_id": None,
            "name": "agent",
            "span_kind": "AGENT",
            "start_time": "2026-01-01T00:00:00Z",
            "end_time": "2026-01-01T00:00:02Z",
            "attributes": {
                "openinference.span.kind": "AGENT",
                "input.value": json.dumps(
                    {
                        "messages": [
                            {"role": "user", "content": "first"},
                            {"role": "assistant", "content": "x"},
                            {"role": "user", "content": "second question"},
                        ]
                    }
                ),
                "input.mime_type": "application/json",
                "output.value": json.dumps({"answer": "the answer"}),
                "output.mime_type": "application/json",
                "tag.tags": json.dumps(["a", "b"]),
                "metadata": json.dumps({"tenant": "acme"}),
            },
        },
        {"name": "no ids here"},
    ]
    path = tmp_path / "flat.json"
    path.write_text(json.dumps(spans), "utf-8")
    result = import_traces("openinference", path)
    assert result.samples == [
        {
            "id": "t",
            "user_input": "second question",
            "response": "the answer",
            "metadata": {
                "timestamp": "2026-01-01T00:00:00+00:00",
                "latency_s": 2.0,
                "tags": ["a", "b"],
                "tenant": "acme",
            },
        }
    ]
    (entry,) = result.unmapped
    assert entry.source == f"{path}, record 2" and "without a span id" in entry.reason


def _span(
    span_id: str,
    kind: str,
    attributes: dict[str, Any],
    *,
    parent: str | None = None,
    start: object = "2026-03-02T09:00:00Z",
) -> dict[str, Any]:
    """One span of trace ``t`` as a Phoenix export writes it, with nested ``attributes``."""
    span = {
        "name": kind.lower(),
        "span_kind": kind,
        "context.span_id": span_id,
        "context.trace_id": "t",
        "start_time": start,
        "end_time": "2026-03-02T09:00:02Z",
        "attributes": {"openinference.span.kind": kind, **attributes},
    }
    return span if parent is None else {**span, "parent_id": parent}


def _samples(tmp_path: Path, *spans: dict[str, Any]) -> list[dict[str, Any]]:
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(list(spans)), "utf-8")
    return import_traces("openinference", path).samples


def test_nested_attributes_flatten_lists_and_keep_metadata_whole(tmp_path: Path) -> None:
    """Nested lists of objects read as indexed keys (both spellings of a document's id),
    metadata stays one object, a list of tags stays a list, a None is no attribute."""
    root = {
        "input.value": "q",
        "output.value": "a",
        "metadata": {"k": {"deep": 1}},
        "tag.tags": ["x"],
        "skip": None,
    }
    documents: list[dict[str, Any]] = [{"document.id": "a", "document.content": "A"}]
    documents.append({"document": {"id": "b", "content": "B"}})
    retriever = {"retrieval": {"documents": documents}}
    (sample,) = _samples(
        tmp_path, _span("r", "CHAIN", root), _span("c", "RETRIEVER", retriever, parent="r")
    )
    assert sample["retrieved_context_ids"] == ["a", "b"]
    assert sample["retrieved_contexts"] == ["A", "B"]
    assert sample["metadata"] == {
        "n_retrievals": 1,
        "timestamp": "2026-03-02T09:00:00+00:00",
        "latency_s": 2.0,
        "tags": ["x"],
        "k": {"deep": 1},
    }


@pytest.mark.parametrize(
    ("value", "question"),
    [
        ('{"query": "q1"}', "q1"),
        ('{"question": "q2", "query": "other"}', "q2"),
        ('[{"role": "user", "content": "q3"}]', "q3"),
        ("plain text", "plain text"),
    ],
)
def test_questions_and_answers_unwrap_from_json_shapes(
    tmp_path: Path, value: str, question: str
) -> None:
    answer = json.dumps({"choices": [{"message": {"content": "c"}}]})
    attributes = {"input.value": value, "output.value": answer}
    attributes |= {"input.mime_type": "application/json", "output.mime_type": "application/json"}
    (sample,) = _samples(tmp_path, _span("r", "CHAIN", attributes))
    assert (sample["user_input"], sample["response"]) == (question, "c")


@pytest.mark.parametrize(
    "value",
    [
        "2026-03-02T09:00:00Z",
        "2026-03-02T10:00:00+01:00",
        1772442000000,  # epoch milliseconds (df.to_json's default)
        1772442000,
        1772442000000000000,
    ],
)
def test_times_in_every_export_form(tmp_path: Path, value: object) -> None:
    attributes = {"input.value": "q", "output.value": "a"}
    (sample,) = _samples(tmp_path, _span("r", "CHAIN", attributes, start=value))
    assert sample["metadata"]["timestamp"] == "2026-03-02T09:00:00+00:00"


def test_a_file_of_another_format_says_which_format_reads_it() -> None:
    with pytest.raises(TraceFileError, match=r"otel_openinference.jsonl.*format 'otel'"):
        import_traces("phoenix", FIXTURES / "otel_openinference.jsonl")


def test_bad_json_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    path.write_text('{"context.span_id": "s", "context.trace_id": "t"}\n{oops\n', "utf-8")
    with pytest.raises(TraceFileError, match=r"spans.jsonl, line 2: invalid JSON"):
        import_traces("phoenix", path)


def test_a_bad_time_names_the_record(tmp_path: Path) -> None:
    path = tmp_path / "spans.json"
    path.write_text(
        json.dumps(
            [{"context.span_id": "s", "context.trace_id": "t", "start_time": "last tuesday"}]
        ),
        "utf-8",
    )
    with pytest.raises(TraceFileError, match=r"spans.json, record 1: .*ISO 8601"):
        import_traces("phoenix", path)


def test_a_binary_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "spans.json"
    path.write_bytes((FIXTURES / "phoenix_spans.parquet").read_bytes())
    with pytest.raises(TraceFileError, match=r"spans.json, line 1: not UTF-8 text.*\.parquet"):
        import_traces("phoenix", path)
    with pytest.raises(TraceFileError, match=r"spans.json, line 1: not UTF-8 text"):
        import_traces("otel", path)
