"""``ragmeter import``: the summary, the samples file, --since/--until, --sample, and one clear
error line (never a traceback) for input it cannot read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.traces import FORMATS, import_traces
from tests.traces.expected import OPENINFERENCE

FIXTURES = Path(__file__).parent / "fixtures"
runner = CliRunner()


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def read_jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_import_writes_the_samples_and_prints_what_was_not_mapped(tmp_path: Path) -> None:
    out = tmp_path / "samples.jsonl"
    done = invoke("import", "otel", str(FIXTURES / "otel_openinference.jsonl"), "-o", str(out))
    assert done.exit_code == 0, done.output
    assert read_jsonl(out) == OPENINFERENCE
    assert done.output.splitlines()[:4] == [
        "5 traces -> 4 samples (from 16 otel records); 4 not mapped:",
        "  2 x tool span: tool calls are not sample fields",
        "  1 x embedding span: vectors are not sample fields",
        "  1 x trace without a question: no text input on its root or any chain/agent/LLM span",
    ]
    assert f"wrote 4 samples to {out}" in done.output


def test_since_and_until_keep_a_window_of_start_times(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    done = invoke(
        "import",
        "phoenix",
        str(FIXTURES / "phoenix_spans.parquet"),
        "-o",
        str(out),
        "--since",
        "2026-03-02T09:00:30Z",
        "--until",
        "2026-03-02",
    )
    assert done.exit_code == 0, done.output
    # a1 started at 09:00:00 (before), a4 on March 3rd (after the day of --until)
    assert [s["id"] for s in read_jsonl(out)] == [
        "000000000000000000000000000000a2",
        "000000000000000000000000000000a3",
    ]
    assert "  1 x trace started before --since" in done.output
    assert "  1 x trace started at or after --until" in done.output


def test_sample_with_a_seed_is_reproducible_and_stratified(tmp_path: Path) -> None:
    runs = []
    for name in ("a.jsonl", "b.jsonl"):
        out = tmp_path / name
        done = invoke(
            "import",
            "phoenix",
            str(FIXTURES / "phoenix_spans.json"),
            "-o",
            str(out),
            "--sample",
            "2",
            "--seed",
            "3",
            "--stratify",
            "session_id",
        )
        assert done.exit_code == 0, done.output
        assert "--sample 2: 2 of 4 samples kept" in done.output
        runs.append([s["id"] for s in read_jsonl(out)])
    assert runs[0] == runs[1]
    # two strata (session s-1: three turns; no session: one trace), one draw each
    assert "000000000000000000000000000000a4" in runs[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["otel", str(FIXTURES / "phoenix_spans.json")], "no 'resourceSpans'"),
        (["phoenix", str(FIXTURES / "otel_genai.json")], "format 'otel'"),
        (["zipkin", str(FIXTURES / "otel_genai.json")], "unknown trace format 'zipkin'"),
        (["otel", str(FIXTURES / "otel_genai.json"), "--since", "soon"], "not an ISO 8601"),
        (["otel", str(FIXTURES / "otel_genai.json"), "--stratify", "x"], "--stratify needs"),
        (
            ["otel", str(FIXTURES / "otel_genai.json"), "--sample", "1", "--stratify", "nope"],
            "no sample has the metadata tag 'nope'",
        ),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    done = invoke("import", *args, "-o", str(tmp_path / "out.jsonl"))
    assert done.exit_code == 2, done.output
    assert expected in done.output
    assert "Traceback" not in done.output
    assert not (tmp_path / "out.jsonl").exists()


def test_a_missing_file_is_exit_4(tmp_path: Path) -> None:
    done = invoke("import", "otel", str(tmp_path / "nope.json"), "-o", str(tmp_path / "o.jsonl"))
    assert done.exit_code == 4
    assert "nope.json: no such file or directory (ENOENT)" in done.output


def test_python_api_and_registry() -> None:
    assert set(FORMATS) == {"openinference", "phoenix", "otel", "langfuse", "langsmith"} | {
        "otlp",
        "traceloop",
        "openllmetry",
    }
    for format in FORMATS:  # each has a reader
        assert import_traces(format, []).samples == []
    # a date as --until keeps that whole day: a4 started on March 3rd at 09:00
    result = import_traces("openinference", [FIXTURES / "phoenix_spans.json"], until="2026-03-02")
    assert [s["id"] for s in result.samples] == [s["id"] for s in OPENINFERENCE[:3]]
    late = import_traces("openinference", FIXTURES / "phoenix_spans.json", since="2026-03-03")
    assert [s["id"] for s in late.samples] == [OPENINFERENCE[3]["id"]]
    assert result.to_dataset().ids == [s["id"] for s in OPENINFERENCE[:3]]
    # --until 2026-03-03 is midnight after that day; a time with a zone is read in UTC
    day = import_traces("openinference", FIXTURES / "phoenix_spans.json", until="2026-03-03")
    assert [s["id"] for s in day.samples] == [s["id"] for s in OPENINFERENCE]
    zoned = "2026-03-03T17:00:00+08:00"  # a4's start, 09:00 UTC
    before = import_traces("openinference", FIXTURES / "phoenix_spans.json", until=zoned)
    assert [s["id"] for s in before.samples] == [s["id"] for s in OPENINFERENCE[:3]]
    after = import_traces("openinference", FIXTURES / "phoenix_spans.json", since=zoned)
    assert [s["id"] for s in after.samples] == [OPENINFERENCE[3]["id"]]


def test_phoenix_is_an_alias_of_openinference() -> None:
    spans = FIXTURES / "phoenix_spans.json"
    assert import_traces("phoenix", spans) == import_traces("openinference", spans)
    otel = FIXTURES / "otel_openinference.jsonl"
    assert import_traces("OTLP", otel) == import_traces("otel", otel)
