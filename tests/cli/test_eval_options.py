"""`ragmeter eval`'s options: what a run records, and `--resume` of a run directory."""

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter import EvaluationResult, load_dataset
from ragmeter.cli import app
from ragmeter.cli._eval import EvalOptions  # private: the options --resume reads back
from ragmeter.cli._judging import JudgeOptions  # private: the judge options' record

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


def test_options_read_back_what_a_run_recorded():
    recorded = {**RECORDED, "data": "data.jsonl"}
    options = EvalOptions.from_record(recorded)
    assert options.data == Path("data.jsonl") and options.column_map == ("answer=response",)
    assert options.judge.temperature == 0.5
    assert options.to_record() == recorded
    assert json.loads(json.dumps(options.to_record())) == recorded


def test_given_options_win_over_recorded_ones_and_repeats_take_the_larger():
    recorded = EvalOptions.from_record({**RECORDED, "data": "data.jsonl", "repeats": 3})
    given = EvalOptions(
        metrics="mrr", repeats=2, judge=JudgeOptions(model="other", config=Path("j.toml"))
    )
    merged = given.or_recorded(recorded)
    assert merged.metrics == "mrr" and merged.data == Path("data.jsonl")
    assert merged.skip_invalid and merged.language == "en" and merged.repeats == 3
    assert merged.judge == JudgeOptions(
        "other", "http://127.0.0.1:9/v1", None, Path("j.toml"), False, 0.5
    )
    assert EvalOptions().or_recorded(recorded) == recorded


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


def test_a_base_url_is_recorded_without_credentials_and_must_be_given_again_to_resume():
    url = "http://judge:s3cretpw@127.0.0.1:9/v1?api-key=s3cretkey"
    record = JudgeOptions(model="m", base_url=url).to_record()
    assert "s3cret" not in json.dumps(record)
    assert record["base_url"] == "http://127.0.0.1:9/v1?api-key=***"
    assert record["base_url_redacted"] is True
    recorded = JudgeOptions.from_record(record)
    with pytest.raises(ValueError, match="--judge-base-url"):
        recorded.build()
    assert JudgeOptions().or_recorded(recorded).base_url_redacted
    given = JudgeOptions(base_url=url).or_recorded(recorded)
    assert given.base_url == url and not given.base_url_redacted
    assert "base_url_redacted" not in JudgeOptions(base_url="http://h/v1").to_record()


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
