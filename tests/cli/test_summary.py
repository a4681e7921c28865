"""What `ragmeter show` prints says which samples each number covers: a breakdown mean with
its scored/total, a diagnosis figure over the samples flagged next to the run's own mean, and
results a run never started apart from failures."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from ragmeter import MetricResult, Sample, evaluate
from ragmeter.cli import app
from tests._prepared import Prepared

runner = CliRunner()
ENV = {"COLUMNS": "220"}


def show(run_dir: Path) -> str:
    shown = runner.invoke(app, ["show", str(run_dir)], env=ENV)
    assert shown.exit_code == 0, shown.output
    return shown.output


def test_a_breakdown_mean_says_how_many_of_its_samples_it_covers(tmp_path):
    # hard: s0 scores 0.5 and s1 does not apply, so its mean is over 1 of its 2 samples.
    levels = ["hard", "hard", "easy", "easy"]
    rows = [
        {"id": f"s{i}", "user_input": "q", "metadata": {"level": v}} for i, v in enumerate(levels)
    ]
    scores = {"s0": 0.5, "s1": None, "s2": 1.0, "s3": 0.0}
    evaluate(rows, [Prepared("quality", scores)], tags=["level"], run_dir=tmp_path / "run")
    output = show(tmp_path / "run")
    table = output[output.index("by level") :]
    assert "hard" in table and "easy" in table and "2 samples" in table
    row = next(line for line in table.splitlines() if "quality" in line)
    assert "0.50 n=2/2" in row and "0.50 n=1/2" in row  # easy, then hard (by value)
    assert "n=2\n" not in table  # the header names the group's size, not an n= of its own


def test_a_diagnosis_figure_names_its_samples_and_the_runs_mean(tmp_path):
    # The rule reads s1-s4 (s0 has no faithfulness) and flags s1 and s4; the run's recall is
    # 0.48 over all 5 samples, not the 0.575 of the four the rule read.
    ids = [f"s{i}" for i in range(5)]
    recall = dict(zip(ids, [0.1, 0.2, 0.9, 0.9, 0.3], strict=True))
    faithfulness = dict(zip(ids, [None, 0.2, 0.9, 1.0, 0.1], strict=True))
    evaluate(
        [{"id": i, "user_input": "What is the warranty?"} for i in ids],
        [Prepared("context_recall", recall), Prepared("faithfulness", faithfulness)],
        run_dir=tmp_path / "run",
    )
    output = show(tmp_path / "run")
    assert "context_recall 0.25 over the 2 samples flagged (run mean 0.48 over 5)" in output
    assert "faithfulness 0.15 over the 2 samples flagged (run mean 0.55 over 4)" in output
    assert "(run)" not in output and "(matching)" not in output
    assert "0.575" not in output and "0.57 " not in output


class Reasoned(Prepared):
    """A score with a reason: stored as a row of its own (not in a block of plain scores)."""

    def score(self, sample: Sample) -> MetricResult:
        return MetricResult.ok(self.scores[str(sample.id)] or 0.0, reason="given")


def test_results_never_started_have_a_column_of_their_own(tmp_path):
    rows = [{"id": f"s{i}", "user_input": "q"} for i in range(3)]
    evaluate(rows, [Reasoned("quality", {f"s{i}": 0.5 for i in range(3)})], run_dir=tmp_path / "r")
    with sqlite3.connect(tmp_path / "r" / "run.db") as db:  # as a stopped run leaves it
        db.execute("DELETE FROM results WHERE idx = 2")
    db.close()
    output = show(tmp_path / "r")
    header = next(line for line in output.splitlines() if "metric" in line and "failed" in line)
    assert "not started" in header
    row = next(line for line in output.splitlines() if "quality" in line)
    cells = [cell.strip() for cell in row.strip("│ ").split("│")]
    assert cells[3:7] == ["2/3", "0", "0", "1"]  # scored, n/a, failed, not started
    assert "not started: 1 results the run stopped before" in output


def test_a_complete_run_has_no_not_started_column(tmp_path):
    rows = [{"id": "s0", "user_input": "q"}]
    evaluate(rows, [Prepared("quality", {"s0": 0.5})], run_dir=tmp_path / "r")
    assert "not started" not in show(tmp_path / "r")
