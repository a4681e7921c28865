"""An import that gives no sample exits 2 (docs/cli.md: input that cannot be read as asked)
and says why: a file of another tool's format is recognised and the right command named; a
file of the format asked for says what its records carry against what the format reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.traces import format_name, guess_format, nothing_read

FIXTURES = Path(__file__).parent / "fixtures"
runner = CliRunner()


def _invoke(*args: str) -> Any:
    return runner.invoke(app, ["import", *args], env={"COLUMNS": "400"})


@pytest.mark.parametrize(
    ("asked", "fixture", "right"),
    [
        ("langfuse", "langsmith_runs.jsonl", "langsmith"),
        ("langsmith", "otel_genai.json", "otel"),
        ("langfuse", "phoenix_spans.json", "openinference"),
        ("langsmith", "langfuse_traces.json", "langfuse"),
        ("langfuse", "otel_traceloop.jsonl", "otel"),
        ("otel", "langsmith_runs.jsonl", "langsmith"),
        ("phoenix", "otel_openinference.jsonl", "otel"),
    ],
)
def test_another_tools_export_is_named_with_its_command(
    tmp_path: Path, asked: str, fixture: str, right: str
) -> None:
    out = tmp_path / "samples.jsonl"
    out.write_text("earlier\n", "utf-8")
    done = _invoke(asked, str(FIXTURES / fixture), "-o", str(out))
    assert done.exit_code == 2, done.output
    name = format_name(right)
    assert f"look like {'an' if name[0] in 'AEIOU' else 'a'} {name} export" in done.output
    assert f"ragmeter import {right} {FIXTURES / fixture}" in done.output
    assert "Traceback" not in done.output
    assert out.read_text("utf-8") == "earlier\n"  # left as it was


def test_spans_of_no_instrumentation_ragmeter_reads_say_what_they_carry(tmp_path: Path) -> None:
    """Plain HTTP server spans (no GenAI, OpenInference or OpenLLMetry attribute)."""
    spans = [
        {
            "traceId": f"{n:032x}",
            "spanId": f"{n:016x}",
            "name": "GET /ask",
            "attributes": [
                {"key": "http.request.method", "value": {"stringValue": "GET"}},
                {"key": "http.route", "value": {"stringValue": "/ask"}},
                {"key": "server.address", "value": {"stringValue": "rag.internal"}},
            ],
        }
        for n in (1, 2, 3)
    ]
    path = tmp_path / "http.jsonl"
    path.write_text(
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n", "utf-8"
    )
    done = _invoke("otel", str(path), "-o", str(tmp_path / "out.jsonl"))
    assert done.exit_code == 2, done.output
    assert "3 traces -> 0 samples" in done.output
    assert f"no sample from {path} as otel traces" in done.output
    assert "the 3 spans read carry http.* (3), server.* (3)" in done.output
    assert "traceloop.span.kind" in done.output  # what otel reads, OpenLLMetry included
    assert not (tmp_path / "out.jsonl").exists()
    assert guess_format([path]) == "otel"


def test_a_window_that_leaves_out_every_trace_says_so(tmp_path: Path) -> None:
    done = _invoke(
        "langsmith",
        str(FIXTURES / "langsmith_runs.jsonl"),
        "--since",
        "2030-01-01",
        "-o",
        str(tmp_path / "out.jsonl"),
    )
    assert done.exit_code == 2, done.output
    assert "trace started before --since" in done.output
    assert "--since/--until left out the traces outside the window" in done.output


def test_nothing_read_from_an_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", "utf-8")
    assert nothing_read("otel", [empty]).startswith("no record read; the format reads spans")
    done = _invoke("otel", str(empty), "-o", str(tmp_path / "out.jsonl"))
    assert done.exit_code == 2, done.output
    assert "0 traces -> 0 samples" in done.output
