"""`ragmeter show`, `ragmeter report` and the diagnosis in the CLI summary."""

import json
import re

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
    # Without --format, an output ending in .md is markdown, anything else HTML.
    by_name = tmp_path / "by-name.md"
    made = runner.invoke(app, ["report", str(tmp_path / "run"), "-o", str(by_name)], env=ENV)
    assert made.exit_code == 0, made.output
    written = by_name.read_text("utf-8")
    assert "| `recall@3` |" in written and not written.lstrip().startswith("<")
    forced = tmp_path / "forced.md"
    args = ["report", str(tmp_path / "run"), "--format", "html", "-o", str(forced)]
    assert runner.invoke(app, args, env=ENV).exit_code == 0
    assert forced.read_text("utf-8").lstrip().startswith("<")


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


# -- runs judged by different judges ---------------------------------------------------------
WIDE = {"COLUMNS": "400"}


def judged_runs(tmp_path, before, after):
    """Two run directories, faithfulness judged by ``before`` then ``after`` (None: no judge
    records, as in an old run); the candidate is 0.1 better on faithfulness and mrr."""
    from ragmeter import evaluate
    from tests._prepared import Prepared
    from tests.stats._build import rejudge

    ids = [f"s{i}" for i in range(30)]
    rows = [{"id": i, "user_input": f"question {i}"} for i in ids]
    for name, judge, shift in (("base", before, 0.0), ("cand", after, 0.1)):
        metrics = [
            Prepared("faithfulness", {i: 0.5 + 0.01 * (k % 7) + shift for k, i in enumerate(ids)}),
            Prepared("mrr", {i: 0.2 + 0.02 * (k % 5) + shift for k, i in enumerate(ids)}),
        ]
        evaluate(rows, metrics, run_dir=tmp_path / name).store.close()
        rejudge(tmp_path / name, judge)
    return str(tmp_path / "base"), str(tmp_path / "cand")


def test_compare_across_judges_gives_no_verdict_and_names_both_judges(tmp_path):
    from tests.stats._build import DEEPSEEK, DEEPSEEK_LABEL, GPT, GPT_LABEL

    base, cand = judged_runs(tmp_path, GPT, DEEPSEEK)
    shown = runner.invoke(app, ["compare", base, cand], env=WIDE)
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0] == (
        f"not comparable: faithfulness: judge differs: {GPT_LABEL} vs {DEEPSEEK_LABEL}"
    )
    assert f"faithfulness: not comparable: judge changed ({GPT_LABEL} vs {DEEPSEEK_LABEL})" in (
        shown.output
    )
    assert "● faithfulness: not comparable" in shown.output  # no word: no verdict
    assert "● better: mrr +0.1" in shown.output  # no judge: compared as ever
    allowed = runner.invoke(app, ["compare", base, cand, "--allow-judge-change"], env=WIDE)
    assert allowed.exit_code == 0, allowed.output
    assert allowed.output.splitlines()[0] == (
        f"warning: faithfulness: judge differs: {GPT_LABEL} vs {DEEPSEEK_LABEL}"
    )
    assert "● better: faithfulness +0.1" in allowed.output
    assert "not comparable" not in allowed.output


def test_compare_with_the_same_judge_or_an_old_run(tmp_path):
    from tests.stats._build import GPT

    base, cand = judged_runs(tmp_path / "same", GPT, GPT)
    same = runner.invoke(app, ["compare", base, cand], env=WIDE)
    assert same.exit_code == 0, same.output
    assert same.output.startswith("● better: faithfulness +0.1")
    assert "judge" not in same.output and "warning" not in same.output
    base, cand = judged_runs(tmp_path / "old", None, GPT)
    old = runner.invoke(app, ["compare", base, cand], env=WIDE)
    assert old.exit_code == 0, old.output
    assert old.output.startswith(
        "warning: faithfulness: judge unknown: the baseline run did not record it (the other "
        "run: gpt-4o-mini @ api.openai.com)"
    )
    assert "● better: faithfulness +0.1" in old.output


def test_report_compare_shows_the_judge_change_in_a_banner(tmp_path):
    from tests.stats._build import DEEPSEEK, DEEPSEEK_LABEL, GPT, GPT_LABEL

    base, cand = judged_runs(tmp_path, GPT, DEEPSEEK)
    line = f"faithfulness: judge differs: {GPT_LABEL} vs {DEEPSEEK_LABEL}"
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    done = runner.invoke(app, ["report", cand, "--compare", base, "-o", str(html)], env=WIDE)
    assert done.exit_code == 0, done.output
    assert line in done.output
    page = html.read_text("utf-8")
    assert 'id="comparability"' in page and "Not comparable: the judge changed." in page
    assert line in page and "faithfulness: not comparable: judge changed" in page
    args = ["report", cand, "--compare", base, "--format", "markdown", "-o", str(md)]
    assert runner.invoke(app, args, env=WIDE).exit_code == 0
    text = md.read_text("utf-8")
    assert "> **Not comparable: the judge changed.**" in text and f"> - {line}" in text
    allowed = runner.invoke(app, [*args, "--allow-judge-change"], env=WIDE)
    assert allowed.exit_code == 0 and "warning:" in allowed.output
    text = md.read_text("utf-8")
    assert "Compared across a changed judge" in text and "Not comparable" not in text
    assert "- faithfulness +0.1" in text
    base, cand = judged_runs(tmp_path / "same", GPT, GPT)
    same = runner.invoke(app, ["report", cand, "--compare", base, "-o", str(html)], env=WIDE)
    assert same.exit_code == 0 and "judge" not in same.output
    assert 'id="comparability"' not in html.read_text("utf-8")


# -- a run named by its folder, its store id (or a prefix) or its name -------------------------


def _strict_json(text: str):
    def refuse(constant: str):
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def _recorded_id(output: str) -> str:
    match = re.search(r"recorded as run ([0-9a-f]{8})", output)
    assert match, output
    return match.group(1)


def _eval_named(tmp_path, folder: str, name: str, rows=ROWS):
    data = write_jsonl(tmp_path / f"{folder}.jsonl", rows)
    args = ["eval", str(data), "-m", "recall@3,mrr", "-q", "-o", str(tmp_path / folder)]
    done = runner.invoke(app, [*args, "--name", name], env=ENV)
    assert done.exit_code == 0, done.output
    return _recorded_id(done.output)


def test_show_report_gate_and_compare_take_the_printed_store_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = _eval_named(tmp_path, "a", "first")
    second = _eval_named(tmp_path, "b", "second")
    shown = runner.invoke(app, ["show", first], env=ENV)
    assert shown.exit_code == 0, shown.output
    assert f"run {first} (first)" in shown.output and "recall@3" in shown.output
    reported = runner.invoke(app, ["report", first, "--compare", second], env=ENV)
    assert reported.exit_code == 0, reported.output
    assert (tmp_path / f"report-{first}.html").exists()
    assert f"report-{first}.html" in reported.output
    gate = tmp_path / "gate.toml"
    gate.write_text(
        '[[thresholds]]\nmetric = "mrr"\nmin = 0.1\n\n'
        '[[regressions]]\nmetric = "mrr"\nmax_drop = 0.5\n',
        encoding="utf-8",
    )
    gated = runner.invoke(app, ["gate", first, "--gate", str(gate), "--baseline", second], env=ENV)
    assert gated.exit_code == 0, gated.output
    assert "gate passed" in gated.output
    compared = runner.invoke(app, ["compare", first, second], env=ENV)
    assert compared.exit_code == 0, compared.output
    assert "recall@3" in compared.output


def test_a_name_means_its_latest_run_and_a_folder_still_works(tmp_path):
    _eval_named(tmp_path, "old", "nightly", ROWS[:4])
    _eval_named(tmp_path, "new", "nightly")
    by_name = runner.invoke(app, ["show", "nightly", "--json"], env=ENV)
    assert by_name.exit_code == 0, by_name.output
    assert _strict_json(by_name.stdout)["n_samples"] == len(ROWS)
    by_folder = runner.invoke(app, ["show", str(tmp_path / "old"), "--json"], env=ENV)
    assert by_folder.exit_code == 0, by_folder.output
    document = _strict_json(by_folder.stdout)
    assert document["n_samples"] == 4 and document["run"] == str(tmp_path / "old")


def test_an_ambiguous_prefix_lists_the_candidates(tmp_path, monkeypatch):
    from ragmeter.store import Store

    run_id = _eval_named(tmp_path, "a", "alpha")
    store = Store()
    result = store.load(run_id)
    # two more runs whose ids share a prefix with the first
    ids = iter([run_id + "0" * 24 + "ffff", run_id + "0" * 24 + "eeee"])
    monkeypatch.setattr(
        "ragmeter.store._store.uuid.uuid4", lambda: type("U", (), {"hex": next(ids)})()
    )
    store.record(result, name="beta")
    store.record(result, name="gamma")
    ambiguous = runner.invoke(app, ["show", run_id], env=ENV)
    assert ambiguous.exit_code == 2
    assert "several run ids" in ambiguous.output
    assert "(beta)" in ambiguous.output and "(gamma)" in ambiguous.output


def test_a_run_that_is_nowhere_says_what_was_tried(tmp_path, monkeypatch):
    from ragmeter.store import store_exists

    assert store_exists("sqlite:///" + str(tmp_path / "none.db")) is False
    monkeypatch.setenv("RAGMETER_STORE_URL", f"sqlite:///{tmp_path / 'none.db'}")
    missing = runner.invoke(app, ["report", "e6d355c5"], env=ENV)
    assert missing.exit_code == 2
    text = " ".join(missing.output.split())
    assert "not a ragmeter run directory" in text and "run id, id prefix" in text
    assert "run name" in text and "none.db" in text and "runs list" in text
    assert not (tmp_path / "none.db").exists()  # looking did not create a store


def test_report_without_output_writes_into_the_run_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_eval(tmp_path, "-q").exit_code == 0
    done = runner.invoke(app, ["report", str(tmp_path / "run")], env=ENV)
    assert done.exit_code == 0, done.output
    assert (tmp_path / "run" / "report.html").exists()
    assert not (tmp_path / "report.html").exists()
    assert str(tmp_path / "run" / "report.html") in done.output.replace("\n", "")
    md = runner.invoke(app, ["report", str(tmp_path / "run"), "--format", "markdown"], env=ENV)
    assert md.exit_code == 0 and (tmp_path / "run" / "report.md").exists()


def test_show_and_compare_print_strict_json_only(tmp_path):
    first = _eval_named(tmp_path, "a", "first")
    second = _eval_named(tmp_path, "b", "second", ROWS[::-1])
    shown = runner.invoke(app, ["show", first, "--json"], env=ENV)
    assert shown.exit_code == 0, shown.output
    document = _strict_json(shown.stdout)
    assert set(document["aggregates"]) == {"recall@3", "mrr"}
    assert document["store_run_id"].startswith(first)
    compared = runner.invoke(app, ["compare", first, second, "--json"], env=ENV)
    assert compared.exit_code == 0, compared.output
    document = _strict_json(compared.stdout)
    assert [c["metric"] for c in document["comparisons"]] == ["recall@3", "mrr"]
    assert document["comparability"]["comparable"] is True


def test_compare_calls_a_change_better_or_worse_only_when_it_is_significant(tmp_path):
    """Issue 35: mrr +0.07 with p = 1.00 read "better"; it is no significant change."""
    from ragmeter import evaluate
    from tests._prepared import Prepared

    ids = [f"s{i}" for i in range(30)]
    rows = [{"id": i, "user_input": f"question {i}"} for i in ids]
    mrr = [0.2 + 0.02 * (k % 5) for k in range(30)]
    one_moved = [v + (1.0 if k == 0 else 0.0) for k, v in enumerate(mrr)]
    all_rose = [v + 0.1 + 0.01 * (k % 3) for k, v in enumerate(mrr)]
    runs = {"base": {"mrr": mrr, "recall": mrr}, "cand": {"mrr": one_moved, "recall": all_rose}}
    for name, columns in runs.items():
        metrics = [Prepared(m, dict(zip(ids, values))) for m, values in columns.items()]
        evaluate(rows, metrics, run_dir=tmp_path / name).store.close()
    shown = runner.invoke(
        app, ["compare", str(tmp_path / "base"), str(tmp_path / "cand")], env=WIDE
    )
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0].startswith("● no significant change: mrr +0.03 (95% CI")
    assert "p = 1.00): not significant with 30 samples" in lines[0]
    assert lines[1].startswith("● better: recall +0.110 (95% CI")
    assert lines[1].endswith("significant with 30 samples, better.")
    worse = runner.invoke(
        app, ["compare", str(tmp_path / "cand"), str(tmp_path / "base")], env=WIDE
    )
    assert worse.output.splitlines()[1].startswith("● worse: recall -0.110")
    assert worse.output.splitlines()[0].startswith("● no significant change: mrr -0.03")
