"""The markdown summary, writing reports to files, and runs read back from disk."""

from __future__ import annotations

import pytest

from ragmeter import EvaluationResult, MetricResult, Status, evaluate
from ragmeter.report import render_html, render_markdown, write_report
from ragmeter.testing import ScriptedJudge
from tests.report.conftest import CASES, METRICS, answer, built, ranking


def test_metric_table(llm_result):
    text = render_markdown(llm_result)
    lines = text.splitlines()
    assert lines[0] == "## ragmeter report"
    assert "4 samples" in lines[2] and llm_result.config["dataset"]["fingerprint"] in lines[2]
    assert "| metric | better | mean | 95% CI | median | coverage | n/a | failed |" in lines
    rows = {line.split(" | ")[0]: line.split(" | ") for line in lines if line.startswith("| `")}
    # the CI (index 3) is checked against the statistics in test_views.py
    faithfulness = rows["| `faithfulness`"]
    assert faithfulness[:3] + faithfulness[4:] == [
        "| `faithfulness`", "↑", "0.6250", "0.7500", "4/4", "0", "0 |",
    ]  # fmt: skip
    precision = rows["| `precision@2`"]
    assert precision[2:3] + precision[4:] == ["0.5000", "0.5000", "4/4", "0", "0 |"]
    calls = llm_result.config["usage"]["calls"]
    assert f"Usage: {calls} judge calls, 0 cached," in text
    assert "cost not counted (no price set)." in text
    assert "<" not in text  # no raw HTML in a CI log


def test_a_metric_without_scores_shows_a_dash():
    records = [{"id": i, "retrieved_context_ids": ["x"], "reference_context_ids": []} for i in "ab"]
    text = render_markdown(evaluate(records, ["mrr"]))
    assert "| `mrr` | ↑ | — | n/a: 0 scored, needs 2 | — | 0/2 | 2 | 0 |" in text


def test_deltas_against_a_baseline():
    before = evaluate(ranking([1, None]), ["mrr"])
    after = evaluate(ranking([1, 2]), ["mrr"])
    text = render_markdown(after, compare=before)
    assert "### Change from baseline" in text
    assert "| `mrr` | ↑ | 0.5000 | 0.7500 | +0.2500 no significant change | 1 / 0 |" in text
    assert "Both runs have the same 2 samples" in text
    # The verdict of the statistics: one sample of two moved, too few to tell.
    assert "- mrr +0.25 (95% CI" in text and "not significant with 2 samples" in text
    worse = render_markdown(before, compare=after)
    assert "| `mrr` | ↑ | 0.7500 | 0.5000 | -0.2500 no significant change | 0 / 1 |" in worse


def test_a_significant_change_is_better_or_worse():
    before = evaluate(ranking([2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3]), ["mrr"])
    after = evaluate(ranking([1] * 12), ["mrr"])  # every sample rose: p < 0.001
    text = render_markdown(after, compare=before)
    assert "| `mrr` | ↑ | 0.4167 | 1.0000 | +0.5833 better | 12 / 0 |" in text
    assert "significant with 12 samples, better." in text
    worse = render_markdown(before, compare=after)
    assert "| `mrr` | ↑ | 1.0000 | 0.4167 | -0.5833 worse | 0 / 12 |" in worse


def test_findings_as_bullets_with_figures(llm_result, findings):
    text = render_markdown(llm_result, findings=findings)
    assert "### Findings" in text
    assert (
        "- **检索漏掉相关上下文 \\<b\\>retrieval misses\\</b\\>** (high, retrieval): "
        "1/4 samples (25%); context_recall 0.00 over the 1 sample flagged (run mean 0.67 over 4)"
    ) in text
    assert "  - try:\n    - Increase top-k\n    - Try a hybrid retriever" in text
    assert "  - samples: `en-capital`, `not-in-run`" in text


def test_write_report_in_both_formats(tmp_path, llm_result, findings):
    html = write_report(llm_result, tmp_path / "out" / "report.html", findings=findings)
    assert html == tmp_path / "out" / "report.html"
    assert html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert "岚屿" in html.read_text(encoding="utf-8")
    md = write_report(llm_result, tmp_path / "summary.md", format="markdown", compare=llm_result)
    assert md.read_text(encoding="utf-8").startswith("## ragmeter report")
    # every delta against itself is 0
    assert "0.0000 no significant change |" in md.read_text(encoding="utf-8")


def test_write_report_rejects_an_unknown_format(tmp_path, llm_result):
    with pytest.raises(ValueError, match="'html' or 'markdown'"):
        write_report(llm_result, tmp_path / "x.pdf", format="pdf")  # type: ignore[arg-type]
    assert not (tmp_path / "x.pdf").exists()


def test_a_run_read_back_from_disk_renders_the_same(tmp_path, llm_result):
    evaluate([c["record"] for c in CASES], METRICS, judge=ScriptedJudge(answer), run_dir=tmp_path)
    loaded = EvaluationResult.load(tmp_path)
    assert (
        render_markdown(loaded).split("\n", 3)[3] == render_markdown(llm_result).split("\n", 3)[3]
    )  # the same after the line of facts (time, fingerprint)
    text = render_markdown(loaded)
    assert "| `faithfulness` | ↑ | 0.6250 | " in text and " | 0.7500 | 4/4 | 0 | 0 |" in text
    assert "en-capital" in render_html(loaded)


def test_the_change_from_a_baseline_judged_by_another_model_starts_with_a_banner():
    from tests.stats._build import DEEPSEEK, DEEPSEEK_LABEL, GPT, GPT_LABEL, judged_config, run

    faith = [0.5, 0.6, 0.7, 0.8, 0.6]
    before = run({"faithfulness": faith}, config=judged_config(GPT))
    after = run({"faithfulness": [v + 0.1 for v in faith]}, config=judged_config(DEEPSEEK))
    text = render_markdown(after, compare=before)
    change = text.split("### Change from baseline\n\n", 1)[1]
    assert change.startswith("> **Not comparable: the judge changed.**")
    assert f"> - faithfulness: judge differs: {GPT_LABEL} vs {DEEPSEEK_LABEL}\n" in change
    assert f"- faithfulness: not comparable: judge changed ({GPT_LABEL} vs" in change
    allowed = render_markdown(after, compare=before, allow_judge_change=True)
    assert "> **Compared across a changed judge** (--allow-judge-change)" in allowed
    assert "- faithfulness +0.1" in allowed
    same = run({"faithfulness": [v + 0.1 for v in faith]}, config=judged_config(GPT))
    assert "> " not in render_markdown(same, compare=before)


def test_results_never_started_are_counted_apart_from_failures():
    not_started = MetricResult(None, Status.NOT_STARTED, reason="not started: max_cost")
    text = render_markdown(built({"mrr": [MetricResult.ok(0.5), not_started]}))
    assert (
        "| metric | better | mean | 95% CI | median | coverage | n/a | failed | not started |"
        in text
    )
    assert "| 1/2 | 0 | 0 | 1 |" in text
    assert "Not started: the run stopped before computing it" in text
