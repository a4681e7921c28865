"""OTLP/JSON files as the collector's file exporter writes them, with OpenInference attributes
or the OpenTelemetry GenAI semantic conventions."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter.traces import TraceFileError, import_traces
from tests.traces.expected import GENAI, OPENINFERENCE, OPENINFERENCE_UNMAPPED

FIXTURES = Path(__file__).parent / "fixtures"


def test_openinference_attributes_in_otlp_json_lines() -> None:
    result = import_traces("otel", FIXTURES / "otel_openinference.jsonl")
    assert result.samples == OPENINFERENCE
    assert result.unmapped_counts() == OPENINFERENCE_UNMAPPED
    assert (result.n_records, result.n_traces, result.format) == (16, 5, "otel")


def test_genai_conventions_in_one_pretty_printed_object() -> None:
    result = import_traces("otel", FIXTURES / "otel_genai.json")
    assert result.samples == GENAI
    assert result.unmapped_counts() == {"tool span: tool calls are not sample fields": 1}


def test_the_fixtures_are_otlp_json_as_the_collector_writes_it() -> None:
    """Ids hex, int64 as strings, enums as integers (OTLP/JSON's rules), camelCase names."""
    data = json.loads((FIXTURES / "otel_openinference.jsonl").read_text("utf-8"))
    spans = [s for r in data["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]
    assert all(len(s["traceId"]) == 32 and len(s["spanId"]) == 16 for s in spans)
    failed = [s for s in spans if s.get("status")]
    assert {s["status"]["code"] for s in failed} == {2}
    assert all(isinstance(s["startTimeUnixNano"], str) for s in spans)


def _span(**fields: Any) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": [fields]}]}]}


def _attr(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "value": value}


def test_base64_ids_and_structured_genai_messages(tmp_path: Path) -> None:
    """Protobuf's generic JSON writes ids in base64; structured (kvlist/array) messages."""
    trace = base64.b64encode(bytes.fromhex("0a" * 16)).decode()
    span = base64.b64encode(bytes.fromhex("0b" * 8)).decode()
    text = {
        "kvlistValue": {
            "values": [
                _attr("type", {"stringValue": "text"}),
                _attr("content", {"stringValue": "Hi?"}),
            ]
        }
    }
    user = {
        "kvlistValue": {
            "values": [
                _attr("role", {"stringValue": "user"}),
                _attr("parts", {"arrayValue": {"values": [text]}}),
            ]
        }
    }
    path = tmp_path / "trace.json"
    path.write_text(
        json.dumps(
            _span(
                traceId=trace,
                spanId=span,
                name="chat",
                startTimeUnixNano="1000000000",
                endTimeUnixNano="3500000000",
                attributes=[
                    _attr("gen_ai.operation.name", {"stringValue": "chat"}),
                    _attr("gen_ai.request.model", {"stringValue": "m"}),
                    _attr("gen_ai.usage.input_tokens", {"intValue": "7"}),
                    _attr("gen_ai.input.messages", {"arrayValue": {"values": [user]}}),
                ],
                status={"code": "STATUS_CODE_ERROR", "message": "boom"},
            )
        ),
        "utf-8",
    )
    (sample,) = import_traces("otel", path).samples
    assert sample == {
        "id": "0a" * 16,
        "user_input": "Hi?",
        "metadata": {
            "error": "boom",
            "model": "m",
            "prompt_tokens": 7,
            "llm_latency_s": 2.5,
            "timestamp": "1970-01-01T00:00:01+00:00",
            "latency_s": 2.5,
        },
    }


def test_openllmetry_style_indexed_prompt_attributes(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text(
        json.dumps(
            _span(
                traceId="1" * 32,
                spanId="2" * 16,
                name="openai.chat",
                attributes=[
                    _attr("gen_ai.operation.name", {"stringValue": "chat"}),
                    _attr("gen_ai.prompt.0.role", {"stringValue": "system"}),
                    _attr("gen_ai.prompt.0.content", {"stringValue": "Be brief."}),
                    _attr("gen_ai.prompt.1.role", {"stringValue": "user"}),
                    _attr("gen_ai.prompt.1.content", {"stringValue": "Capital of France?"}),
                    _attr("gen_ai.completion.0.content", {"stringValue": "Paris."}),
                ],
            )
        )
        + "\n",
        "utf-8",
    )
    (sample,) = import_traces("otel", path).samples
    assert (sample["user_input"], sample["response"]) == ("Capital of France?", "Paris.")


def test_spans_without_ids_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(_span(name="no ids")), "utf-8")
    result = import_traces("otel", path)
    assert result.samples == []
    (entry,) = result.unmapped
    assert entry.source == f"{path}, resourceSpans[1].scopeSpans[1].spans[1]"


def test_any_values_and_ids(tmp_path: Path) -> None:
    """OTLP AnyValues as Python values (in the metadata they are read into), and ids in hex
    or base64 as lower-case hex (the sample's id); what is not an id leaves the span out."""
    metadata = {
        "kvlistValue": {
            "values": [
                _attr("int", {"intValue": "42"}),
                _attr("double", {"doubleValue": 0.5}),
                _attr("bool", {"boolValue": True}),
                _attr("array", {"arrayValue": {"values": [{"stringValue": "a"}]}}),
                _attr("empty", {}),  # no value: left out
            ]
        }
    }
    attributes = [
        _attr("openinference.span.kind", {"stringValue": "CHAIN"}),
        _attr("input.value", {"stringValue": "q?"}),
        _attr("output.value", {"stringValue": "a."}),
        _attr("metadata", metadata),
    ]
    ids = [
        ("AAAAAAAAAAAAAAAAAAAAAQ==", "AAAAAAAAAAE="),  # base64
        ("000000000000000000000000000000FF", "00000000000000FF"),  # hex, upper case
        ("1" * 32, "not an id"),
    ]
    spans = [_span(traceId=t, spanId=s, name="rag", attributes=attributes) for t, s in ids]
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(span) + "\n" for span in spans), "utf-8")
    result = import_traces("otel", path)
    assert [sample["id"] for sample in result.samples] == ["0" * 31 + "1", "0" * 30 + "ff"]
    for sample in result.samples:
        assert sample["metadata"] == {"int": 42, "double": 0.5, "bool": True, "array": ["a"]}
    assert [entry.reason for entry in result.unmapped] == ["OTLP span without a traceId or spanId"]


def test_a_phoenix_file_read_as_otel_says_which_format(tmp_path: Path) -> None:
    with pytest.raises(
        TraceFileError, match=r"phoenix_spans.json: no 'resourceSpans'.*openinference"
    ):
        import_traces("otel", FIXTURES / "phoenix_spans.json")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"resourceSpans": []}\nnot json\n', "utf-8")
    with pytest.raises(TraceFileError, match=r"bad.jsonl, line 2: invalid JSON"):
        import_traces("otel", bad)


def test_spans_of_a_trace_split_over_lines_are_one_trace(tmp_path: Path) -> None:
    """The file exporter writes a line per batch: a trace's spans may be on several lines."""
    data = json.loads((FIXTURES / "otel_openinference.jsonl").read_text("utf-8"))
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    lines = [_span(**span) for span in spans]
    path = tmp_path / "split.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    assert import_traces("otel", path).samples == OPENINFERENCE


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ({"resourceSpans": {"x": 1}}, r"'resourceSpans' is dict, not a list"),
        ({"resourceSpans": [{"scopeSpans": [7]}]}, r"resourceSpans\[1\].scopeSpans\[1\]: not an"),
        (
            _span(traceId="1" * 32, spanId="2" * 16, startTimeUnixNano="noon"),
            r"spans\[1\]: field 'startTimeUnixNano': not a time: 'noon'; give an ISO 8601",
        ),
    ],
)
def test_malformed_otlp_names_the_place(tmp_path: Path, content: object, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content), "utf-8")
    with pytest.raises(TraceFileError, match=expected):
        import_traces("otel", path)
