"""``ragmeter align`` on built-in metrics and on metric files."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from tests.align.test_align import Verdict, labelled_rows, write_jsonl

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, [*args, "--quiet"], env={"COLUMNS": "240"})


def exact_match_rows() -> list[dict[str, Any]]:
    """12 answers, 8 equal to their reference; people accept one that is not (q3, a
    paraphrase) and reject one that is (q5)."""
    rows = []
    for i in range(12):
        same = i % 3 != 0
        accepted = same != (i in (3, 5))
        rows.append(
            {
                "id": f"q{i}",
                "user_input": f"question {i}?",
                "response": f"answer {i}",
                "reference": f"answer {i}" if same else f"another answer {i}",
                "label": int(accepted),
                "reason": "a paraphrase" if i == 3 else "checked",
            }
        )
    return rows


def test_align_a_built_in_metric_against_pass_fail_labels(tmp_path: Path):
    data = write_jsonl(tmp_path / "labels.jsonl", exact_match_rows())
    out = tmp_path / "report.json"
    result = invoke("align", "exact_match", str(data), "--kind", "discrete", "--json", str(out))
    assert result.exit_code == 0, result.output
    assert "metric exact_match (discrete, as given) against 12 human labels" in result.output
    assert "12/12 items scored (100%)" in result.output
    assert "accuracy 0.833 (95% CI" in result.output
    assert "q3: human 1, metric 0; human's reason: a paraphrase" in result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["original"]["agreement"]["accuracy"]["value"] == pytest.approx(10 / 12)
    assert [d["id"] for d in report["original"]["disagreements"]] == ["q3", "q5"]
    ci = report["original"]["agreement"]["cohen_kappa"]["ci"]
    kappa = report["original"]["agreement"]["cohen_kappa"]["value"]
    assert ci["low"] <= kappa <= ci["high"]


def test_align_a_score_only_metric_against_the_text_verdicts_people_write(tmp_path: Path):
    # docs/align.md's labelled file: "label": "pass" / "fail", as `ragmeter mine` asks for
    rows = exact_match_rows()
    verdicts = {1: ["pass", "PASS", "yes", "通过"], 0: ["fail", "No", "否", "不通过"]}
    for i, row in enumerate(rows):
        row["label"] = verdicts[row["label"]][i % 4]
    data = write_jsonl(tmp_path / "labelled.jsonl", rows)
    result = invoke("align", "exact_match", str(data))
    assert result.exit_code == 0, result.output
    assert "cannot be compared with text labels" not in result.output
    assert "against 12 human labels" in result.output
    assert "12/12 items scored (100%)" in result.output and "accuracy 0.833" in result.output
    assert "q3: human 通过, metric 0; human's reason: a paraphrase" in result.output
    assert "q5: human No, metric 1; human's reason: checked" in result.output


def test_align_a_numeric_metric_against_graded_labels(tmp_path: Path):
    rows = [
        {
            "id": f"r{i}",
            "response": " ".join(words),
            "reference": "the cat sat on the mat",
            "label": label,
        }
        for i, (words, label) in enumerate(
            [
                (["the", "cat", "sat", "on", "the", "mat"], 1.0),
                (["the", "cat", "sat", "on", "a", "mat"], 0.9),
                (["a", "cat", "sat", "on", "the", "rug"], 0.6),
                (["the", "dog", "sat"], 0.3),
                (["a", "dog", "ran", "off"], 0.0),
                (["cat", "on", "mat"], 0.7),
                (["the", "mat"], 0.2),
                (["the", "cat", "was", "on", "the", "mat"], 0.8),
            ]
        )
    ]
    data = write_jsonl(tmp_path / "graded.jsonl", rows)
    result = invoke("align", "rouge_l", str(data))
    assert result.exit_code == 0, result.output
    assert "rouge_l (numeric, from the labels)" in result.output
    assert "spearman 0." in result.output and "pearson 0." in result.output
    assert "95% CI" in result.output
    assert "the largest gaps" in result.output


def test_unknown_metric_and_improving_a_metric_without_examples_are_usage_errors(tmp_path: Path):
    data = write_jsonl(tmp_path / "labels.jsonl", exact_match_rows())
    result = invoke("align", "no_such_metric", str(data))
    assert result.exit_code == 2 and "unknown metric 'no_such_metric'" in result.output
    result = invoke("align", "exact_match", str(data), "--improve")
    assert result.exit_code == 2
    assert "cannot be improved with examples" in result.output
    result = invoke("align", "exact_match", str(tmp_path / "missing.jsonl"))
    assert result.exit_code == 2 and "no such dataset file" in result.output


def test_a_metric_file_is_loaded_with_the_custom_metrics_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    loaded: list[str] = []

    def load_metric(path: str) -> Verdict:
        loaded.append(str(path))
        return Verdict()

    custom = types.ModuleType("ragmeter.metrics.custom")
    custom.load_metric = load_metric  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ragmeter.metrics.custom", custom)
    metric_file = tmp_path / "verdict.yaml"
    metric_file.write_text("name: verdict\n", encoding="utf-8")
    data = write_jsonl(tmp_path / "labels.jsonl", labelled_rows())
    out = tmp_path / "report.json"
    result = invoke(
        "align", str(metric_file), str(data), "--improve", "--shots", "2", "--json", str(out)
    )
    assert result.exit_code == 0, result.output
    assert loaded == [str(metric_file)]
    assert "measured on the test split only (12 items)" in result.output
    assert "improved: 12/12 items scored" in result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert len(report["split"]["example_ids"]) == 2
    assert set(report["split"]["example_ids"]).isdisjoint(report["improved"]["sample_ids"])


def test_a_metric_file_without_custom_metrics_installed_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setitem(sys.modules, "ragmeter.metrics.custom", None)  # import fails
    metric_file = tmp_path / "judge.toml"
    metric_file.write_text("", encoding="utf-8")
    data = write_jsonl(tmp_path / "labels.jsonl", exact_match_rows())
    result = invoke("align", str(metric_file), str(data))
    assert result.exit_code == 2
    assert "custom metrics (ragmeter.metrics.custom) are not available" in result.output
    result = invoke("align", str(tmp_path / "absent.yaml"), str(data))
    assert result.exit_code == 2 and "no such metric file" in result.output
