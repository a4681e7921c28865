"""``ragmeter import`` against generated hostile input, in each of the four formats: every one
gets exit 0 with the right samples, or one error line naming the file (and the record and
the field where there is one) with exit 2, never a traceback; and an earlier ``-o`` file is
never left empty or cut short (it is replaced whole, or left as it was).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.traces import import_traces

runner = CliRunner()
FORMATS = ("langfuse", "langsmith", "phoenix", "otel")
TIME = "2026-03-02T09:00:00Z"
OLD_OUTPUT = '{"id": "earlier", "user_input": "kept"}\n'
ROOT = "11111111-1111-4111-8111-111111111111"
CHILD = "22222222-2222-4222-8222-222222222222"


def records(format: str, *, time: Any = TIME, tokens: Any = 3, deep: Any = "q") -> Any:
    """One trace of ``format`` (its root span and an LLM call), with ``time`` as its start,
    ``tokens`` as the LLM call's prompt tokens and ``deep`` inside its input."""
    if format == "langfuse":
        trace = {"id": "t1", "timestamp": time, "name": "chat", "input": {"question": deep}}
        generation = {
            "id": "o1",
            "traceId": "t1",
            "type": "GENERATION",
            "startTime": TIME,
            "model": "m",
            "usageDetails": {"input": tokens},
        }
        return [{**trace, "output": "a"}, generation]
    if format == "langsmith":
        root = {"id": ROOT, "trace_id": ROOT, "run_type": "chain", "name": "root"}
        llm = {"id": CHILD, "trace_id": ROOT, "parent_run_id": ROOT, "run_type": "llm"}
        return [
            {**root, "inputs": {"question": deep}, "outputs": {"answer": "a"}, "start_time": time},
            {**llm, "name": "llm", "prompt_tokens": tokens, "start_time": TIME},
        ]
    if format == "phoenix":
        root = {"name": "root", "span_kind": "CHAIN", "context.span_id": "s1"}
        llm = {"name": "llm", "span_kind": "LLM", "context.span_id": "s2", "parent_id": "s1"}
        return [
            {
                **root,
                "context.trace_id": "t1",
                "start_time": time,
                "attributes": {"input": {"value": "q", "extra": deep}, "output": {"value": "a"}},
            },
            {**llm, "context.trace_id": "t1", "attributes.llm.token_count.prompt": tokens},
        ]
    nanos = time if time != TIME else "1772442000000000000"
    attributes = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.prompt", "value": {"stringValue": "q"}},
        {"key": "gen_ai.usage.input_tokens", "value": {typed(tokens): tokens}},
        {"key": "extra", "value": deep if isinstance(deep, dict) else {"stringValue": deep}},
    ]
    span = {"traceId": "1" * 32, "spanId": "2" * 16, "name": "chat", "attributes": attributes}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [{**span, "startTimeUnixNano": nanos}]}]}]}


def typed(value: Any) -> str:
    return "stringValue" if isinstance(value, str) else "doubleValue"


def write(folder: Path, format: str, content: Any, name: str = "export.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(content), "utf-8")  # NaN and Infinity as Python writes them
    return path


def run(*args: str) -> tuple[int, str]:
    """``ragmeter import ARGS`` in this process: the exit code and the output; an uncaught
    exception is the code -1 and a traceback in the output."""
    done = runner.invoke(app, ["import", *args], env={"COLUMNS": "300"})
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        return -1, f"{done.output}\nTraceback (uncaught {done.exception!r})"
    return done.exit_code, done.output


def refused(tmp_path: Path, format: str, path: Path, *named: str) -> str:
    """Import ``path``: exit 2, one error line naming the file and each of ``named``, and the
    earlier samples file left as it was; the error line."""
    out = tmp_path / "out.jsonl"
    out.write_text(OLD_OUTPUT, "utf-8")
    code, output = run(format, str(path), "-o", str(out))
    assert code == 2, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    for name in (path.name, *named):
        assert name in errors[0], output
    assert out.read_text("utf-8") == OLD_OUTPUT
    return errors[0]


@pytest.mark.parametrize("format", FORMATS)
def test_the_generated_trace_of_each_format_imports(tmp_path: Path, format: str) -> None:
    """The baseline the hostile variants below change one value of."""
    out = tmp_path / "out.jsonl"
    code, output = run(format, str(write(tmp_path, format, records(format))), "-o", str(out))
    assert code == 0, output
    [sample] = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert sample["metadata"]["timestamp"] == "2026-03-02T09:00:00+00:00"
    assert sample["metadata"]["prompt_tokens"] == 3


BAD_TIMES: dict[str, list[Any]] = {
    "text": ["garbage", "2026-13-45T25:61:00Z", "0001-01-01T00:00:00+01:00"],
    "number": [1e300, -1e300, math.inf, math.nan, True],
}
TIME_FIELD = {
    "langfuse": "timestamp",
    "langsmith": "start_time",
    "phoenix": "start_time",
    "otel": "startTimeUnixNano",
}


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("value", [*BAD_TIMES["text"], *BAD_TIMES["number"], "9" * 40])
def test_a_time_that_cannot_be_read_names_the_record_and_the_field(
    tmp_path: Path, format: str, value: Any
) -> None:
    """Never dropped silently (exit 0 without it) and never an OverflowError."""
    if format == "otel" and not isinstance(value, str):
        value = str(value)  # OTLP/JSON gives times as text
    path = write(tmp_path, format, records(format, time=value))
    error = refused(tmp_path, format, path, repr(TIME_FIELD[format]))
    assert "ISO 8601" in error


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("tokens", [math.inf, -math.inf, math.nan, "12 tokens", -4, 2.5])
def test_a_token_count_that_is_no_count_names_the_record(
    tmp_path: Path, format: str, tokens: float
) -> None:
    if format == "phoenix" and isinstance(tokens, float) and math.isnan(tokens):
        return  # a Phoenix dataframe's missing value: no count (tested below)
    path = write(tmp_path, format, records(format, tokens=tokens))
    assert "not a token count" in refused(tmp_path, format, path)


def test_a_missing_phoenix_count_is_no_count(tmp_path: Path) -> None:
    [sample] = import_traces(
        "phoenix", write(tmp_path, "phoenix", records("phoenix", tokens=None))
    ).samples
    assert "prompt_tokens" not in sample["metadata"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1772442000, "2026-03-02T09:00:00+00:00"),  # seconds
        (1772442000.25, "2026-03-02T09:00:00.250000+00:00"),
        (1772442000250, "2026-03-02T09:00:00.250000+00:00"),  # milliseconds
        (1772442000250001, "2026-03-02T09:00:00.250001+00:00"),  # microseconds
        (1772442000250001999, "2026-03-02T09:00:00.250001+00:00"),  # nanoseconds
        ("1772442000250", "2026-03-02T09:00:00.250000+00:00"),  # digits as text
        ("2026-03-02T10:30:00+01:30", "2026-03-02T09:00:00+00:00"),  # an offset
        ("2026-03-02 04:00:00-05:00", "2026-03-02T09:00:00+00:00"),
        ("2026-03-02T09:00:00", "2026-03-02T09:00:00+00:00"),  # naive: UTC
    ],
)
@pytest.mark.parametrize("format", ["langfuse", "langsmith", "phoenix"])
def test_times_in_every_epoch_unit_and_offset_are_utc(
    tmp_path: Path, format: str, value: Any, expected: str
) -> None:
    path = write(tmp_path, format, records(format, time=value))
    [sample] = import_traces(format, path).samples
    assert sample["metadata"]["timestamp"] == expected
    assert dt.datetime.fromisoformat(expected).utcoffset() == dt.timedelta(0)


def nested(depth: int) -> Any:
    value: Any = "q"
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("depth", [100_000, 5_000, 990, 900, 700])
@pytest.mark.parametrize("lines", [False, True])
def test_deep_nesting_is_an_error_naming_the_file_not_a_recursion_error(
    tmp_path: Path, format: str, depth: int, lines: bool
) -> None:
    """Nested past what can be read (when parsing, or when its values are read): exit 2
    naming the file; what can be read imports."""
    content = records(format, deep={"k": "v"})
    text = json.dumps(content)
    marker = json.dumps({"k": "v"})
    deep = '{"a": ' * depth + '"q"' + "}" * depth
    if lines and format != "otel":
        text = "\n".join(json.dumps(record) for record in content)
    text = text.replace(marker, deep, 1)
    path = tmp_path / ("export.jsonl" if lines else "export.json")
    path.write_text(text, "utf-8")
    out = tmp_path / "out.jsonl"
    out.write_text(OLD_OUTPUT, "utf-8")
    code, output = run(format, str(path), "-o", str(out))
    assert code in (0, 2), output
    if code == 2:
        assert path.name in output and "nested too deeply" in output, output
        assert out.read_text("utf-8") == OLD_OUTPUT
    assert depth < 5_000 or code == 2


def csv_export(folder: Path, *rows: str) -> Path:
    path = folder / "traces.csv"
    header = "id,timestamp,name,input,output"
    path.write_text("\n".join([header, *rows]) + "\n", "utf-8")
    return path


def test_a_langfuse_csv_cell_over_128_kib_is_read(tmp_path: Path) -> None:
    big = "x" * 300_000
    path = csv_export(tmp_path, f"t1,{TIME},chat,{big},a", f"t2,{TIME},chat,q2,a2")
    out = tmp_path / "out.jsonl"
    code, output = run("langfuse", str(path), "-o", str(out))
    assert code == 0, output
    samples = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [len(s["user_input"]) for s in samples] == [300_000, 2]


def test_an_unterminated_csv_quote_names_the_row_instead_of_swallowing_the_rest(
    tmp_path: Path,
) -> None:
    path = csv_export(
        tmp_path, f"t1,{TIME},chat,q1,a1", f't2,{TIME},chat,"q2,a2', f"t3,{TIME},c,q3,a3"
    )
    error = refused(tmp_path, "langfuse", path, "row 2", "never closed")
    assert "line 3" in error


def test_a_csv_row_with_more_cells_than_the_header_names_the_row(tmp_path: Path) -> None:
    path = csv_export(tmp_path, f"t1,{TIME},chat,q1,a1", f"t2,{TIME},chat,q2,a2,extra")
    refused(tmp_path, "langfuse", path, "row 2", "more cell")


def in_a_process(*args: str, timeout: float = 60) -> tuple[int, str]:
    """``ragmeter import ARGS`` in a process of its own (a regression would block)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ragmeter", "import", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return -1, f"no answer within {timeout} s"
    return done.returncode, done.stdout + done.stderr


def fifo(folder: Path) -> Path:
    path = folder / "spans.jsonl"
    os.mkfifo(path)
    return path


def dev_zero(folder: Path) -> Path:
    path = folder / "spans.jsonl"
    path.symlink_to("/dev/zero")
    return path


def directory(folder: Path) -> Path:
    path = folder / "spans.jsonl"
    path.mkdir()
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("make", [fifo, dev_zero, directory])
def test_a_special_file_is_refused_before_it_is_opened(
    tmp_path: Path, format: str, make: Callable[[Path], Path]
) -> None:
    path = make(tmp_path)
    out = tmp_path / "out.jsonl"
    out.write_text(OLD_OUTPUT, "utf-8")
    code, output = in_a_process(format, str(path), "-o", str(out))
    assert code == 2, output
    assert "spans.jsonl" in output and "not a trace export file" in output, output
    assert "Traceback" not in output
    assert out.read_text("utf-8") == OLD_OUTPUT


@pytest.mark.parametrize("format", FORMATS)
def test_a_lone_surrogate_leaves_its_trace_out_and_says_so(tmp_path: Path, format: str) -> None:
    """``\\ud800`` in a JSON string: that trace is listed as not mapped with the reason; the
    others are written (the file can be written: no codec error, no empty ``-o``)."""
    text = json.dumps(records(format)).replace('"q"', '"q\\ud800"', 1)
    path = tmp_path / "export.json"
    path.write_text(text, "utf-8")
    out = tmp_path / "out.jsonl"
    out.write_text(OLD_OUTPUT, "utf-8")
    code, output = run(format, str(path), "-o", str(out))
    assert code == 2, output  # the one trace was left out: no sample
    assert "lone surrogate" in output and "Traceback" not in output, output
    assert out.read_text("utf-8") == OLD_OUTPUT
    good = tmp_path / "good.json"
    other = json.dumps(records(format))  # another trace: other ids
    for old, new in (("t1", "t9"), ("o1", "o9"), ("1" * 32, "9" * 32), (ROOT[:8], "99999999")):
        other = other.replace(old, new)
    good.write_text(other.replace(CHILD[:8], "88888888"), "utf-8")
    code, output = run(format, str(path), str(good), "-o", str(out))
    assert code == 0, output
    assert "1 x trace whose text holds a lone surrogate" in output, output
    assert len(out.read_text("utf-8").splitlines()) == 1


def test_a_non_utf8_file_name_imports(tmp_path: Path) -> None:
    name = os.fsdecode(os.fsencode(tmp_path) + b"/export\xff.json")
    Path(name).write_text(json.dumps(records("langfuse")), "utf-8")
    out = os.fsdecode(os.fsencode(tmp_path) + b"/out\xff.jsonl")
    code, output = run("langfuse", name, "-o", out)
    assert code == 0, output
    assert len(Path(out).read_text("utf-8").splitlines()) == 1


FIXTURES = Path(__file__).parent / "fixtures"
EXPORTS = {
    "langfuse": FIXTURES / "langfuse_traces.json",
    "langsmith": FIXTURES / "langsmith_runs.jsonl",
    "openinference": FIXTURES / "phoenix_spans.json",
    "otel": FIXTURES / "otel_genai.json",
}


@pytest.mark.parametrize("given", ["langfuse", "langsmith", "phoenix", "otel"])
@pytest.mark.parametrize("exported", list(EXPORTS))
def test_another_tools_export_is_recognised_and_its_format_named(
    tmp_path: Path, given: str, exported: str
) -> None:
    if exported in (given, "openinference" if given == "phoenix" else ""):
        return
    refused(tmp_path, given, EXPORTS[exported], f"ragmeter import {exported}")


def test_an_import_without_samples_says_why_and_exits_2(tmp_path: Path) -> None:
    trace = {"id": "t1", "timestamp": TIME, "name": "chat", "output": "a"}  # no question
    error = refused(tmp_path, "langfuse", write(tmp_path, "langfuse", [trace]), "no sample")
    assert "not mapped" in error
    out = tmp_path / "window.jsonl"
    path = write(tmp_path, "langfuse", records("langfuse"))
    code, output = run("langfuse", str(path), "-o", str(out), "--since", "2027-01-01")
    assert code == 2 and "1 x trace started before --since" in output, output
    assert not out.exists()


@pytest.mark.slow
def test_a_kill_while_the_samples_are_written_leaves_the_earlier_file_whole(
    tmp_path: Path,
) -> None:
    """kill -9 the moment the new samples file is being written: the earlier one is there,
    whole (or the new one, whole, if the kill came after the rename), never empty or cut."""
    n = 40_000
    path = tmp_path / "traces.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            trace = {"id": f"t{i}", "timestamp": TIME, "input": f"question {i} " * 8}
            handle.write(json.dumps({**trace, "output": "answer " * 20}) + "\n")
    out = tmp_path / "out.jsonl"
    out.write_text(OLD_OUTPUT, "utf-8")
    before = out.stat()
    partial = tmp_path / ".out.jsonl.partial.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "ragmeter", "import", "langfuse", str(path), "-o", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    try:
        while process.poll() is None and time.monotonic() < deadline:
            now = out.stat()
            if partial.exists() or (now.st_size, now.st_mtime_ns) != (
                before.st_size,
                before.st_mtime_ns,
            ):
                os.kill(process.pid, signal.SIGKILL)  # writing has begun
                break
            time.sleep(0.001)
        else:
            pytest.fail("the import ended (or ran 300 s) before it began to write")
    finally:
        process.kill()
        process.wait(timeout=60)
    text = out.read_text("utf-8")
    if text != OLD_OUTPUT:
        lines = text.splitlines()
        assert len(lines) == n and all(json.loads(line)["id"] for line in lines)
    assert not partial.exists() or process.returncode == -signal.SIGKILL


@pytest.mark.parametrize("format", ["langfuse", "langsmith", "phoenix", "otel"])
def test_json_lines_are_read_a_line_at_a_time_and_a_bad_line_is_named(
    tmp_path: Path, format: str
) -> None:
    """A line that is not JSON, or not UTF-8, far into a JSON lines file: the error names
    that line (the file is read a line at a time, not held whole)."""
    content = records(format)
    lines = [json.dumps(record) for record in (content if isinstance(content, list) else [content])]
    path = tmp_path / "export.jsonl"
    good = "\n".join(lines * 3) + "\n"
    path.write_bytes(good.encode() + b'{"id": "caf\xe9"}\n')
    error = refused(tmp_path, format, path, "not UTF-8")
    assert f"line {len(lines) * 3 + 1}: not UTF-8" in error
    path.write_text(good + '{"id": \n', "utf-8")
    refused(tmp_path, format, path, f"line {len(lines) * 3 + 1}: invalid JSON")


@pytest.mark.parametrize("stamp", ["garbage", 1e300, math.nan])
def test_since_with_a_metadata_timestamp_that_is_no_time_names_the_trace(
    tmp_path: Path, stamp: Any
) -> None:
    """A trace without a start time whose own metadata gives a ``timestamp``: --since reads
    it, and one that is no time is named, not a bare "Invalid isoformat string"."""
    trace = {"id": "t1", "name": "chat", "input": "q", "output": "a"}
    path = write(tmp_path, "langfuse", [{**trace, "metadata": {"timestamp": stamp}}])
    out = tmp_path / "out.jsonl"
    out.write_text(OLD_OUTPUT, "utf-8")
    code, output = run("langfuse", str(path), "-o", str(out), "--since", "2026-01-01")
    assert code == 2, output
    assert "trace 't1', metadata: field 'timestamp'" in output, output
    assert out.read_text("utf-8") == OLD_OUTPUT


def test_a_trace_whose_sample_is_not_valid_is_left_out_and_the_others_imported(
    tmp_path: Path,
) -> None:
    """Metadata nested past what a dataset row holds (but not past what can be read): that
    trace is listed as not mapped with the problem, not the end of the import ("row 1" of
    "langfuse traces", with a --skip-invalid that import does not have)."""
    deep: Any = {"x": 1}
    for _ in range(300):
        deep = {"a": deep}
    traces = [
        {"id": "t1", "timestamp": TIME, "input": "q1", "output": "a", "metadata": {"d": deep}},
        {"id": "t2", "timestamp": TIME, "input": "q2", "output": "a"},
    ]
    out = tmp_path / "out.jsonl"
    code, output = run("langfuse", str(write(tmp_path, "langfuse", traces)), "-o", str(out))
    assert code == 0, output
    assert "1 x trace whose sample is not valid: metadata: nested more than 100 levels" in output
    assert [json.loads(line)["id"] for line in out.read_text("utf-8").splitlines()] == ["t2"]
