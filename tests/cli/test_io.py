"""I/O failures from the command line: a full disk, read-only media, a corrupt run.db or store,
a store server that does not answer. One clear line and exit 4, never a traceback, nothing
already computed lost; ``show`` and ``report`` read a run on read-only media."""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import socket
import sqlite3
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter import EvaluationResult
from ragmeter.cli import app
from ragmeter.results import RunDatabase
from ragmeter.testing import FakeOpenAIServer
from tests.cli.test_exit import KEY, faithfulness_reply, judge_file, last_line, write_samples

runner = CliRunner()
EXAMPLES = Path(__file__).parents[2] / "examples"
RUNNING_AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def invoke(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def a_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    done = invoke("eval", str(EXAMPLES / "retrieval.jsonl"), "-m", "mrr", "-o", str(run), "-q")
    assert done.exit_code == 0, done.output
    return run


def test_a_full_disk_stops_the_run_with_exit_4_and_resume_finishes_it(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", KEY)
    written = []
    put_results = RunDatabase.put_results

    def disk_fills_after_two(self, *args, **kwargs):
        if len(written) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(self.path))
        put_results(self, *args, **kwargs)
        written.append(1)

    monkeypatch.setattr(RunDatabase, "put_results", disk_fills_after_two)
    data = write_samples(tmp_path / "data.jsonl", 5)
    run = tmp_path / "run"
    with FakeOpenAIServer(responder=faithfulness_reply, api_key=KEY) as server:
        judge = judge_file(tmp_path, server.base_url)
        args = ["-q", "--no-cache", "--concurrency", "1", "--judge-config", str(judge)]
        full = invoke("eval", str(data), "-m", "faithfulness", "-o", str(run), *args)
        assert full.exit_code == 4, full.output
        assert "Traceback" not in full.output
        assert error_lines(full.output) == [
            f"error: {run / 'run.db'}: no space left on device (ENOSPC)"
        ]
        assert last_line(full.output) == (
            f"exit 4: the run stopped; what was computed before is kept in {run}: fix the "
            f"cause (free space, a writable folder), then run ragmeter eval --resume {run}"
        )
        monkeypatch.setattr(RunDatabase, "put_results", put_results)
        assert EvaluationResult.load(run).scores("faithfulness") == [0.5, 0.5] + [None] * 3
        resumed = invoke("eval", "--resume", str(run), *args)
        assert resumed.exit_code == 0, resumed.output
    assert EvaluationResult.load(run).scores("faithfulness") == [0.5] * 5


@pytest.mark.parametrize("cut", [False, True], ids=["garbage", "truncated"])
def test_a_corrupt_run_database_is_one_line_and_exit_4(tmp_path, cut):
    run = a_run(tmp_path)
    path = run / "run.db"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3] if cut else os.urandom(8192))
    gate = tmp_path / "gate.toml"
    gate.write_text('[[thresholds]]\nmetric = "mrr"\nmin = 0.1\n', encoding="utf-8")
    for args in (
        ["show", str(run)],
        ["report", str(run), "-o", str(tmp_path / "r.html")],
        ["gate", str(run), "--gate", str(gate)],
        ["eval", "--resume", str(run), "-q"],
    ):
        result = invoke(*args)
        assert result.exit_code == 4, (args, result.output)
        assert "Traceback" not in result.output
        [line] = error_lines(result.output)
        assert line.startswith(f"error: {path} is not a ragmeter run database or is corrupt (")
    assert path.read_bytes() != data  # left as it was found, for the user to look at


def test_a_corrupt_store_stops_eval_before_it_computes_anything(tmp_path):
    store = tmp_path / "runs.db"
    store.write_bytes(b"not a database, not at all " * 400)
    run = tmp_path / "run"
    url = f"sqlite:///{store}"
    data = str(EXAMPLES / "retrieval.jsonl")
    result = invoke("eval", data, "-m", "mrr", "-o", str(run), "-q", "--store", url)
    assert result.exit_code == 4, result.output
    assert error_lines(result.output) == [
        f"error: {store} is not a ragmeter database or is corrupt (file is not a database): "
        "move it aside or choose another store (--store, RAGMETER_STORE_URL); or pass --no-store"
    ]
    assert not run.exists()  # nothing was computed, so nothing is lost
    listed = invoke("runs", "list", "--store", url)
    assert listed.exit_code == 4 and "Traceback" not in listed.output
    assert invoke("eval", data, "-m", "mrr", "-o", str(run), "-q", "--no-store").exit_code == 0


def test_an_unreachable_store_is_one_line_in_bounded_time(tmp_path):
    pytest.importorskip("psycopg")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://ragmeter:pw-s3cret@127.0.0.1:{port}/runs"
    data = str(EXAMPLES / "retrieval.jsonl")
    for args in (
        ["eval", data, "-m", "mrr", "-o", str(tmp_path / "run"), "-q", "--store", url],
        ["runs", "list", "--store", url],
    ):
        started = time.monotonic()
        result = invoke(*args)
        assert time.monotonic() - started < 15
        assert result.exit_code == 4, result.output
        [line] = error_lines(result.output)
        assert line.startswith(
            f"error: cannot reach the run store postgresql+psycopg://127.0.0.1:{port}"
        )
        assert "pw-s3cret" not in result.output and "Traceback" not in result.output
    assert not (tmp_path / "run").exists()


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_show_and_report_read_a_run_on_read_only_media(tmp_path, monkeypatch):
    """Simulated (root ignores permissions): nothing can be written in the run folder, so
    SQLite can open its database neither for writing nor with a shared-memory file (what it
    says on a read-only folder), only as an unchanging file."""
    run = a_run(tmp_path)
    before = _snapshot(run)
    connect, real_open = sqlite3.connect, builtins.open

    def read_only_media(database, *args, **kwargs):
        if not (kwargs.get("uri") and "immutable=1" in database):
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return connect(database, *args, **kwargs)

    def no_writes_in_run(file, mode="r", *args, **kwargs):
        if str(run) in str(file) and any(c in mode for c in "wax+"):
            raise PermissionError(errno.EROFS, "Read-only file system", str(file))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only_media)
    monkeypatch.setattr(builtins, "open", no_writes_in_run)
    monkeypatch.setattr(io, "open", no_writes_in_run)
    shown = invoke("show", str(run))
    assert shown.exit_code == 0, shown.output
    assert "mrr" in shown.output
    report = tmp_path / "elsewhere" / "report.html"
    written = invoke("report", str(run), "-o", str(report))
    assert written.exit_code == 0, written.output
    assert report.stat().st_size > 1000
    monkeypatch.undo()
    assert _snapshot(run) == before


@pytest.mark.skipif(RUNNING_AS_ROOT, reason="root ignores file permissions")
def test_show_and_report_read_a_read_only_run_folder(tmp_path):
    run = a_run(tmp_path)
    before = _snapshot(run)
    paths = [run, *run.iterdir()]
    for path in paths:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        assert invoke("show", str(run)).exit_code == 0
        done = invoke("report", str(run), "-o", str(tmp_path / "report.html"))
        assert done.exit_code == 0, done.output
    finally:
        for path in paths:
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert _snapshot(run) == before


def test_a_report_or_gate_file_that_cannot_be_written_is_one_line(tmp_path):
    run = a_run(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    report = invoke("report", str(run), "-o", str(blocker / "report.html"))
    assert report.exit_code == 4, report.output
    assert "Traceback" not in report.output
    [line] = error_lines(report.output)
    assert line.startswith(f"error: {blocker}") and ("(EEXIST)" in line or "(ENOTDIR)" in line)
    gate = tmp_path / "gate.toml"
    gate.write_text('[[thresholds]]\nmetric = "mrr"\nmin = 0.1\n', encoding="utf-8")
    junit = invoke("gate", str(run), "--gate", str(gate), "--junit", str(blocker / "g.xml"))
    assert junit.exit_code == 4, junit.output
    assert "the gate's report was not written" in junit.output


def test_a_store_or_report_that_fails_after_the_run_is_exit_4_and_the_run_is_kept(
    tmp_path, monkeypatch
):
    from ragmeter.store import Store, StoreError

    def full_disk(self, *args, **kwargs):
        raise StoreError("run store: cannot use runs.db: no space left on device (ENOSPC)")

    monkeypatch.setattr(Store, "record", full_disk)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    run = tmp_path / "run"
    result = invoke(
        "eval", str(EXAMPLES / "retrieval.jsonl"), "-m", "mrr", "-o", str(run), "-q",
        "--report", str(blocker / "report.html"),
    )  # fmt: skip
    assert result.exit_code == 4, result.output
    assert "Traceback" not in result.output
    assert error_lines(result.output)[0] == (
        "error: the run was not recorded in the run store (run store: cannot use runs.db: no "
        "space left on device (ENOSPC)); its results are in the run directory"
    )
    assert last_line(result.output) == (
        "exit 4: the run was not recorded in the run store (also: the report "
        f"{blocker / 'report.html'} was not written)"
    )
    assert len(EvaluationResult.load(run)) == 12


def test_the_console_script_turns_a_stray_os_error_into_one_line(monkeypatch, capsys):
    from ragmeter.cli import main  # the console script

    def full_disk() -> None:
        raise OSError(errno.ENOSPC, "No space left on device", "out/x.json")

    monkeypatch.setattr("ragmeter.cli._app.app", full_disk)  # the commands main runs
    with pytest.raises(SystemExit) as raised:
        main()
    assert raised.value.code == 4
    assert capsys.readouterr().err.strip() == (
        "error: out/x.json: no space left on device (ENOSPC)"
    )


def test_a_dataset_whose_file_name_is_not_utf8_is_evaluated_recorded_and_resumed(tmp_path):
    """A file name with a byte that is not UTF-8 reaches the run record, summary.json and
    the store as an escape (JSON reads it back as the same name), so --resume finds it."""
    name = os.fsdecode(bytes(tmp_path) + b"/data\xff.jsonl")
    Path(name).write_text('{"user_input": "q", "response": "a", "reference": "a"}\n', "utf-8")
    run = tmp_path / "run"
    first = CliRunner().invoke(app, ["eval", name, "--metrics", "exact_match", "-o", str(run)])
    assert first.exit_code == 0, first.output
    assert json.loads((run / "summary.json").read_text("utf-8"))["n_samples"] == 1
    again = CliRunner().invoke(app, ["eval", "--resume", str(run)])
    assert again.exit_code == 0, again.output
    assert EvaluationResult.load(run).scores("exact_match") == [1.0]


def test_an_empty_run_database_is_no_run_and_its_files_are_read_instead(tmp_path):
    """Found by bench/probe_surfaces.py: a zero-byte run.db was opened as a new, empty run
    ("0 samples", exit 0) although results.jsonl held the results."""
    run = tmp_path / "run"
    data = tmp_path / "data.jsonl"
    data.write_text('{"user_input": "q", "response": "a", "reference": "a"}\n', "utf-8")
    made = CliRunner().invoke(app, ["eval", str(data), "--metrics", "exact_match", "-o", str(run)])
    assert made.exit_code == 0, made.output
    (run / "run.db").write_bytes(b"")
    shown = CliRunner().invoke(app, ["show", str(run)])
    assert shown.exit_code == 0 and "exact_match" in shown.output, shown.output
    assert (run / "run.db").stat().st_size == 0  # reading wrote nothing
    (run / "summary.json").unlink()
    refused = CliRunner().invoke(app, ["show", str(run)])
    assert refused.exit_code == 4 and "is empty" in refused.output, refused.output
