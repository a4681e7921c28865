"""`ragmeter show`, `ragmeter report` and the diagnosis in the CLI summary."""

import json

from typer.testing import CliRunner

from ragmeter.cli import app

runner = CliRunner()
ENV = {"COLUMNS": "220"}


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


ROWS = [
    {
        "id": f"q{i}",
        "user_input": "保修多久？" if i % 2 else "How long is the warranty?",
        "retrieved_context_ids": ["x", "y", "z"],
        "reference_context_ids": ["w"] if i < 3 else ["x"],
        "response": "one year",
        "reference": "one year" if i % 2 else "two years",
        "metadata": {"language": "zh" if i % 2 else "en"},
    }
    for i in range(6)
]


def run_eval(tmp_path, *extra):
    data = write_jsonl(tmp_path / "d.jsonl", ROWS)
    args = ["eval", str(data), "-m", "recall@3,mrr,exact_match", "-o", str(tmp_path / "run")]
    return runner.invoke(app, [*args, *extra], env=ENV)


def test_eval_prints_breakdowns_and_the_diagnosis(tmp_path):
    result = run_eval(tmp_path)
    assert result.exit_code == 0, result.output
    assert "by language" in result.output
    # Recall@3 is 0 on half the samples: retrieval misses, with the samples that show it.
    assert "Retrieval misses" in result.output and "q0" in result.output


def test_show_prints_the_summary_again(tmp_path):
    assert run_eval(tmp_path, "-q").exit_code == 0
    shown = runner.invoke(app, ["show", str(tmp_path / "run")], env=ENV)
    assert shown.exit_code == 0, shown.output
    assert "recall@3" in shown.output and "0.5000" in shown.output
    assert "Retrieval misses" in shown.output
    missing = runner.invoke(app, ["show", str(tmp_path / "nope")], env=ENV)
    assert missing.exit_code == 2 and "not a ragmeter run directory" in missing.output


def test_report_writes_html_and_markdown_and_compares(tmp_path):
    assert run_eval(tmp_path, "-q", "--report", str(tmp_path / "eval.html")).exit_code == 0
    assert "<svg" in (tmp_path / "eval.html").read_text("utf-8")
    html = tmp_path / "r.html"
    done = runner.invoke(app, ["report", str(tmp_path / "run"), "-o", str(html)], env=ENV)
    assert done.exit_code == 0, done.output
    page = html.read_text("utf-8")
    assert "recall@3" in page and "保修多久" in page
    md = tmp_path / "r.md"
    args = ["report", str(tmp_path / "run"), "--format", "markdown", "-o", str(md)]
    assert runner.invoke(app, [*args, "--compare", str(tmp_path / "run")]).exit_code == 0
    text = md.read_text("utf-8")
    assert "| `recall@3` |" in text and "Change from baseline" in text
    bad = runner.invoke(app, ["report", str(tmp_path / "run"), "--format", "pdf"], env=ENV)
    assert bad.exit_code == 2


def test_resume_of_a_finished_run_computes_nothing_and_prints_the_same(tmp_path):
    first = run_eval(tmp_path, "-q")
    again = runner.invoke(app, ["eval", "--resume", str(tmp_path / "run"), "-q"], env=ENV)
    assert again.exit_code == 0, again.output
    assert again.output.splitlines()[:8] == first.output.splitlines()[:8]
    reused = run_eval(tmp_path, "-q")
    assert reused.exit_code == 2 and "--resume" in reused.output


def test_compare_prints_a_verdict_per_metric(tmp_path):
    assert run_eval(tmp_path, "-q").exit_code == 0
    better = [dict(r, reference_context_ids=["x"]) for r in ROWS]
    data = write_jsonl(tmp_path / "better.jsonl", better)
    args = ["eval", str(data), "-m", "recall@3,mrr,exact_match", "-o", str(tmp_path / "b"), "-q"]
    assert runner.invoke(app, args, env=ENV).exit_code == 0
    shown = runner.invoke(app, ["compare", str(tmp_path / "run"), str(tmp_path / "b")], env=ENV)
    assert shown.exit_code == 0, shown.output
    assert "recall@3 +0.50 (95% CI" in shown.output and "with 6 samples" in shown.output
    assert "exact_match +0.00" in shown.output
    wrong = runner.invoke(app, ["compare", str(tmp_path / "run"), str(tmp_path / "b"), "-m", "x"])
    assert wrong.exit_code == 2


def test_show_reports_judge_noise_for_a_run_with_repeats(tmp_path):
    from ragmeter import evaluate
    from tests.runner._fakes import samples
    from tests.runner.test_repeats import noisy_judge

    evaluate(samples(6), ["faithfulness"], judge=noisy_judge(), repeats=2, run_dir=tmp_path / "r")
    shown = runner.invoke(app, ["show", str(tmp_path / "r")], env=ENV)
    assert shown.exit_code == 0, shown.output
    assert "judge noise" in shown.output and "faithfulness: the judge's scores" in shown.output
