"""`ragmeter eval --tags`: the breakdowns printed, recorded with the run, kept on --resume."""

import json
from pathlib import Path

from typer.testing import CliRunner

from ragmeter import EvaluationResult
from ragmeter.cli import app
from ragmeter.results import RunDatabase

runner = CliRunner()
ENV = {"COLUMNS": "220"}

# exact_match: 1 on rows 0, 1, 3 (response == reference), 0 on 2, 4, 5.
ROWS = [
    {
        "id": f"q{i}",
        "response": "yes",
        "reference": "yes" if i in (0, 1, 3) else "no",
        "persona": "expert" if i < 3 else "novice",
        "faithfulness": "0.5" if i % 2 else "1.0",  # a RAGAS score column, as CSV text
    }
    for i in range(6)
]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def eval_args(tmp_path, *extra):
    data = write_jsonl(tmp_path / "d.jsonl", ROWS)
    return [
        "eval",
        str(data),
        "-m",
        "exact_match",
        "-o",
        str(tmp_path / "run"),
        "--no-store",
        *extra,
    ]


def recorded_tags(run_dir: Path) -> tuple[str, ...]:
    """The tags ``ragmeter eval`` recorded in the run directory (what ``--resume`` reads)."""
    database = RunDatabase.in_dir(run_dir)
    try:
        record = database.get_record()
        assert record is not None
        return tuple(record["tags"])
    finally:
        database.close()


def test_without_tags_a_score_column_is_no_breakdown(tmp_path):
    done = runner.invoke(app, eval_args(tmp_path), env=ENV)
    assert done.exit_code == 0, done.output
    assert "by persona" in done.output and "by faithfulness" not in done.output


def test_named_tags_are_printed_recorded_and_kept_on_resume(tmp_path):
    done = runner.invoke(app, eval_args(tmp_path, "--tags", "faithfulness"), env=ENV)
    assert done.exit_code == 0, done.output
    assert "by faithfulness" in done.output and "by persona" not in done.output
    run_dir = tmp_path / "run"
    assert recorded_tags(run_dir) == ("faithfulness",)
    result = EvaluationResult.load(run_dir)
    assert result.config["tags"] == ["faithfulness"]
    # faithfulness 1.0: q0, q2, q4 -> 1, 0, 0; 0.5: q1, q3, q5 -> 1, 1, 0
    means = {g.value: g.aggregates["exact_match"].mean for g in result.breakdowns()["faithfulness"]}
    assert means == {"1.0": 1 / 3, "0.5": 2 / 3}
    # --resume without --tags keeps the recorded ones; with --tags, they replace them.
    resumed = runner.invoke(app, ["eval", "--resume", str(run_dir), "--no-store"], env=ENV)
    assert resumed.exit_code == 0, resumed.output
    assert "by faithfulness" in resumed.output
    args = ["eval", "--resume", str(run_dir), "--no-store", "--tags", "persona"]
    again = runner.invoke(app, args, env=ENV)
    assert again.exit_code == 0, again.output
    assert "by persona" in again.output and "by faithfulness" not in again.output
    assert recorded_tags(run_dir) == ("persona",)


def test_an_unknown_tag_is_a_usage_error_that_lists_the_fields(tmp_path):
    done = runner.invoke(app, eval_args(tmp_path, "--tags", "topic"), env=ENV)
    assert done.exit_code == 2
    assert "no sample carries tag(s) ['topic']" in done.output
    assert "['faithfulness', 'persona']" in done.output
    # Found once the streamed file was read: the new run's store is removed, so the
    # corrected command can run in the same place.
    assert not (tmp_path / "run" / "run.db").exists()
    fixed = runner.invoke(app, eval_args(tmp_path, "--tags", "persona"), env=ENV)
    assert fixed.exit_code == 0, fixed.output
