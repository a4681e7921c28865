"""`ragmeter eval`'s options: what a run records, and `--resume` of a run directory."""

import json
import sqlite3
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from ragmeter import EvaluationResult, load_dataset
from ragmeter.cli import app
from ragmeter.testing import FakeOpenAIServer

runner = CliRunner()

#: An ``invocation`` exactly as `ragmeter eval` has recorded it in run.db and config.json.
RECORDED = {
    "data": "DATA",
    "metrics": "exact_match,rouge_l",
    "column_map": ["answer=response"],
    "format": None,
    "skip_invalid": True,
    "language": "en",
    "judge": {
        "model": "m",
        "base_url": "http://127.0.0.1:9/v1",
        "provider": None,
        "config": None,
        "logprobs": False,
        "temperature": 0.5,
    },
    "repeats": 1,
}


def _old_run_dir(run_dir: Path, data: Path) -> None:
    """A run directory as today's `ragmeter eval` leaves it when stopped after one result:
    run.db with its meta (the ``invocation`` among them), its samples and one result."""
    fingerprint = load_dataset(data, column_map={"answer": "response"}).fingerprint()
    run_dir.mkdir()
    meta = {
        "schema_version": 1,
        "dataset": {
            "source": str(data),
            "fingerprint": fingerprint,
            "n_samples": 2,
            "n_skipped": 0,
        },
        "created_at": "2026-01-01T00:00:00+00:00",
        "repeats": 1,
        "invocation": {**RECORDED, "data": str(data)},
    }
    with sqlite3.connect(run_dir / "run.db") as db:
        db.executescript(
            """
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE samples (idx INTEGER PRIMARY KEY, row INTEGER NOT NULL,
                sample_id TEXT NOT NULL, sample TEXT NOT NULL, tags TEXT NOT NULL, usage TEXT);
            CREATE TABLE results (idx INTEGER NOT NULL, metric TEXT NOT NULL,
                status TEXT NOT NULL, score REAL, result TEXT NOT NULL,
                PRIMARY KEY (idx, metric));
            """
        )
        db.executemany(
            "INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in meta.items()]
        )
        # Every sample is stored when a run starts; it stopped after one result.
        for idx, (sample_id, response, reference) in enumerate([("a", "x", "x"), ("b", "y", "z")]):
            sample = {"id": sample_id, "response": response, "reference": reference}
            db.execute(
                "INSERT INTO samples VALUES (?, ?, ?, ?, '{}', NULL)",
                (idx, idx + 1, sample_id, json.dumps(sample)),
            )
        # Not the score exact_match would give: proves the resumed run kept it.
        db.execute(
            "INSERT INTO results VALUES (0, 'exact_match', 'ok', 0.25, ?)",
            (json.dumps({"score": 0.25, "status": "ok"}),),
        )


def _data(tmp_path: Path) -> Path:
    """Two rows whose answers are in an ``answer`` column (the recorded column map's)."""
    data = tmp_path / "data.jsonl"
    rows = [
        {"id": "a", "answer": "x", "reference": "x"},
        {"id": "b", "answer": "y", "reference": "z"},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return data


def _resume(run_dir: Path, *options: str):
    return runner.invoke(app, ["eval", "--resume", str(run_dir), "-q", "--no-store", *options])


def test_options_read_back_what_a_run_recorded(tmp_path):
    data = _data(tmp_path)
    _old_run_dir(tmp_path / "run", data)
    resumed = _resume(tmp_path / "run")
    assert resumed.exit_code == 0, resumed.output
    result = EvaluationResult.load(tmp_path / "run")
    # read from the recorded data with the recorded column map ("answer" is the response)
    assert result.scores("rouge_l") == [1.0, 0.0]
    # and recorded again as it was, the judge's temperature among it, JSON both ways
    recorded = {**RECORDED, "data": str(data)}
    assert result.config["invocation"] == recorded
    assert result.config["invocation"]["judge"]["temperature"] == 0.5
    assert json.loads(json.dumps(result.config["invocation"])) == recorded


def test_given_options_win_over_recorded_ones_and_repeats_take_the_larger(tmp_path, monkeypatch):
    data = _data(tmp_path)
    judge = tmp_path / "j.toml"
    judge.write_text('[judge]\nmodel = "x"\n', encoding="utf-8")
    options = ["-m", "rouge_l", "--judge-model", "other", "--judge-config", str(judge)]
    monkeypatch.setitem(RECORDED, "repeats", 3)  # recorded 3, given 2: the larger, 3
    _old_run_dir(tmp_path / "three", data)
    larger = _resume(tmp_path / "three", *options, "--repeats", "2")
    assert larger.exit_code == 2 and "repeats=1, now 3" in larger.output, larger.output
    monkeypatch.setitem(RECORDED, "repeats", 1)
    _old_run_dir(tmp_path / "run", data)
    merged = _resume(tmp_path / "run", *options, "--repeats", "1")
    assert merged.exit_code == 0, merged.output
    invocation = EvaluationResult.load(tmp_path / "run").config["invocation"]
    assert invocation["metrics"] == "rouge_l" and invocation["data"] == str(data)
    assert invocation["skip_invalid"] and invocation["language"] == "en"
    assert invocation["judge"] == {
        "model": "other",
        "base_url": "http://127.0.0.1:9/v1",
        "provider": None,
        "config": str(judge),
        "logprobs": False,
        "temperature": 0.5,
    }


def test_a_run_directory_recorded_by_earlier_versions_resumes_with_its_options(tmp_path):
    data = tmp_path / "data.jsonl"
    rows = [
        {"id": "a", "answer": "x", "reference": "x"},
        {"id": "b", "answer": "y", "reference": "z"},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run_dir = tmp_path / "run"
    _old_run_dir(run_dir, data)

    resumed = runner.invoke(app, ["eval", "--resume", str(run_dir), "-q", "--no-store"])

    assert resumed.exit_code == 0, resumed.output
    result = EvaluationResult.load(run_dir)
    # The recorded metrics and column map (the rows say "answer") were used again.
    assert [s.sample_id for s in result] == ["a", "b"]
    assert result.scores("exact_match") == [0.25, 0.0] and result.scores("rouge_l") == [1.0, 0.0]
    assert result.config["invocation"] == {**RECORDED, "data": str(data)}


def test_resume_of_a_directory_not_started_by_eval_says_how_to_resume_it(tmp_path):
    from ragmeter import evaluate

    evaluate([{"id": "a", "response": "x", "reference": "x"}], ["exact_match"], run_dir=tmp_path)
    refused = runner.invoke(app, ["eval", "--resume", str(tmp_path), "-q", "--no-store"])
    assert refused.exit_code == 2 and "resume=True" in refused.output
    missing = runner.invoke(app, ["eval", "--resume", str(tmp_path / "none"), "--no-store"])
    assert missing.exit_code == 2 and "nothing to resume" in missing.output


def _faithfulness(body: dict[str, Any]) -> dict[str, Any]:
    if body["response_format"]["json_schema"]["name"].startswith("ResponseAnalysis"):
        return {"claims": ["x is x."]}
    return {"support": [{"claim": 1, "passages": [1], "reason": "stated"}]}


def test_a_base_url_is_recorded_without_credentials_and_must_be_given_again_to_resume(
    tmp_path, monkeypatch
):
    data = tmp_path / "data.jsonl"
    row = {"id": "a", "response": "x is x.", "retrieved_contexts": ["x is x."]}
    data.write_text(json.dumps(row) + "\n", "utf-8")
    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", "k")

    def run(run_dir: Path, base_url: str) -> dict[str, Any]:
        args = ["eval", str(data), "-m", "faithfulness", "-o", str(run_dir), "-q", "--no-store"]
        done = runner.invoke(app, [*args, "--judge-model", "m", "--judge-base-url", base_url])
        assert done.exit_code == 0, done.output
        return dict(EvaluationResult.load(run_dir).config["invocation"]["judge"])

    with FakeOpenAIServer(responder=_faithfulness) as server:
        root = server.base_url.removeprefix("http://")
        url = f"http://judge:s3cretpw@{root}?api-key=s3cretkey"
        record = run(tmp_path / "run", url)
        assert "s3cret" not in json.dumps(record)
        assert record["base_url"] == f"http://{root}?api-key=***"
        assert record["base_url_redacted"] is True
        refused = _resume(tmp_path / "run")  # the recorded URL stays redacted: asked again
        assert refused.exit_code == 2 and "--judge-base-url" in refused.output, refused.output
        given = _resume(tmp_path / "run", "--judge-base-url", url)  # given: the whole URL
        assert given.exit_code == 0, given.output
        assert "base_url_redacted" not in run(tmp_path / "plain", server.base_url)


def test_eval_outside_a_terminal_prints_whole_progress_lines(tmp_path):
    data = tmp_path / "data.jsonl"
    rows = [{"id": str(i), "response": "x y", "reference": "x"} for i in range(8)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    args = ["eval", str(data), "-m", "exact_match,rouge_l", "-o", str(tmp_path / "run")]
    result = runner.invoke(app, [*args, "--no-store"], env={"COLUMNS": "40", "CI": None})
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    # A JSONL file is read and scored in one pass: how many samples it holds is not known.
    assert lines[0] == "retrieval & text metrics: started"
    assert lines[-1].startswith("retrieval & text metrics: 8 done")
    assert "…" not in result.stderr and "\r" not in result.stderr and "\x1b" not in result.stderr


def test_quiet_keeps_the_summary_diagnosis_results_path_and_exit_line(tmp_path):
    # -q drops the progress display and the per-tag breakdowns (one line says where they
    # are); the summary table, where the results are and the exit line stay.
    data = tmp_path / "data.jsonl"
    rows = [
        {"id": str(i), "response": "x y", "reference": "x" if i % 2 else "x y",
         "metadata": {"level": "hard" if i % 2 else "easy"}}
        for i in range(8)
    ]  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    args = ["eval", str(data), "-m", "exact_match", "--tags", "level", "--no-store"]
    env = {"COLUMNS": "200", "CI": None}
    loud = runner.invoke(app, [*args, "-o", str(tmp_path / "loud")], env=env)
    quiet = runner.invoke(app, [*args, "-o", str(tmp_path / "quiet"), "-q"], env=env)
    assert loud.exit_code == quiet.exit_code == 0, (loud.output, quiet.output)
    for result, run in ((loud, "loud"), (quiet, "quiet")):
        assert "8 samples" in result.stdout and "exact_match" in result.stdout  # the summary
        assert f"per-sample results: {tmp_path / run / 'results.jsonl'}" in result.stdout
        assert result.stdout.rstrip().splitlines()[-1].startswith("exit 0")
    assert "4 samples" in loud.stdout and "metrics: 8 done" in loud.stderr  # the level table
    assert "4 samples" not in quiet.stdout and "done" not in quiet.stderr
    assert f"breakdowns by level: ragmeter show {tmp_path / 'quiet'}" in quiet.stdout
