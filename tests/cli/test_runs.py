"""``ragmeter eval`` records runs; ``ragmeter runs`` lists, shows, compares and annotates them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.store import Store

runner = CliRunner()


def write(path: Path, hits: int, n: int = 12) -> Path:
    """``n`` retrieval samples; the first ``hits`` retrieve their relevant chunk first."""
    rows = [
        {
            "id": f"q{i}",
            "user_input": f"question {i}?",
            "retrieved_context_ids": [f"d{i}", "x"] if i < hits else ["x", "y"],
            "reference_context_ids": [f"d{i}"],
            "metadata": {"kind": "multi" if i % 2 else "single"},
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def invoke(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "240"})


@pytest.fixture
def two_runs(tmp_path: Path, store_url: str):
    before = write(tmp_path / "before.jsonl", hits=4)
    after = write(tmp_path / "after.jsonl", hits=11)
    common = ["-m", "recall@1,mrr", "-q", "--store", store_url]
    params = ["--param", "top_k=5", "--param", "retriever=bm25", "--tag", "nightly"]
    first = invoke("eval", str(before), "-o", str(tmp_path / "r1"), "--name", "bm25", *params,
                   *common)  # fmt: skip
    assert first.exit_code == 0, first.output
    second = invoke("eval", str(after), "-o", str(tmp_path / "r2"), "--name", "hybrid",
                    "--param", "top_k=8", "--param", "retriever=hybrid", *common)  # fmt: skip
    assert second.exit_code == 0, second.output
    assert "recorded as run" in second.output
    return store_url


def test_eval_records_the_run_with_its_params_and_list_shows_them(two_runs: str):
    store = Store(two_runs)
    hybrid, bm25 = store.list()
    assert (bm25.name, bm25.params, bm25.tags) == (
        "bm25",
        {"top_k": 5, "retriever": "bm25"},
        ["nightly"],
    )
    assert hybrid.params == {"top_k": 8, "retriever": "hybrid"}
    assert bm25.mean("recall@1") == pytest.approx(4 / 12)
    assert hybrid.run_dir is not None and Path(hybrid.run_dir).name == "r2"
    listed = invoke("runs", "list", "--store", two_runs)
    assert listed.exit_code == 0, listed.output
    assert listed.output.index("hybrid") < listed.output.index("bm25")
    assert "0.333" in listed.output and "0.917" in listed.output
    assert "retriever=bm25, top_k=5" in listed.output
    tagged = invoke("runs", "list", "--tag", "nightly", "--store", two_runs)
    assert "bm25" in tagged.output and "hybrid" not in tagged.output


def test_show_prints_the_record_and_the_results(two_runs: str):
    shown = invoke("runs", "show", "bm25", "--store", two_runs)
    assert shown.exit_code == 0, shown.output
    assert "params: retriever=bm25, top_k=5" in shown.output
    assert "recall@1" in shown.output and "by kind" in shown.output
    missing = invoke("runs", "show", "nope", "--store", two_runs)
    assert missing.exit_code == 2 and "ragmeter runs list" in missing.output


def test_compare_shows_parameter_changes_verdicts_tag_deltas_and_changed_samples(two_runs: str):
    compared = invoke("runs", "compare", "bm25", "hybrid", "--store", two_runs)
    assert compared.exit_code == 0, compared.output
    text = compared.output
    assert "param retriever: bm25 → hybrid" in text and "param top_k: 5 → 8" in text
    assert "recall@1 +0.58" in text and "significant" in text and "better" in text
    assert "by kind" in text and "0.33 → 0.83 (+0.50) p=" in text  # single: 2/6 → 5/6
    assert "samples that changed most" in text and "q4" in text
    top = invoke("runs", "compare", "bm25", "hybrid", "-m", "recall@1", "--top", "10",
                 "--store", two_runs)  # fmt: skip
    assert top.exit_code == 0, top.output
    table = top.output.split("samples that changed most", 1)[1]
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in table.splitlines()]
    changed = [row for row in rows if row and row[0] == "recall@1"]
    assert sorted(row[1] for row in changed) == sorted(f"q{i}" for i in range(4, 11))
    assert all(row[2:4] == ["0.000", "1.000"] for row in changed)


def test_no_store_records_nothing_and_annotate_adds_tags(tmp_path: Path, store_url: str):
    data = write(tmp_path / "d.jsonl", hits=3)
    result = invoke("eval", str(data), "-m", "mrr", "-q", "-o", str(tmp_path / "r"),
                    "--store", store_url, "--no-store")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert Store(store_url).list() == []
    invoke("eval", str(data), "-m", "mrr", "-q", "-o", str(tmp_path / "s"), "--store", store_url)
    (only,) = Store(store_url).list()
    annotated = invoke("runs", "annotate", only.id[:8], "--tag", "baseline", "--notes", "v1",
                       "--store", store_url)  # fmt: skip
    assert annotated.exit_code == 0, annotated.output
    assert Store(store_url).get(only.id).tags == ["baseline"]
    assert Store(store_url).get(only.id).notes == "v1"


def test_a_bad_param_is_a_usage_error(tmp_path: Path, store_url: str):
    data = write(tmp_path / "d.jsonl", hits=3)
    result = invoke("eval", str(data), "-m", "mrr", "-q", "-o", str(tmp_path / "r"),
                    "--store", store_url, "--param", "top_k")  # fmt: skip
    assert result.exit_code == 2
    assert "KEY=VALUE" in result.output


def test_compare_across_judges_gives_no_verdict_unless_allowed(tmp_path: Path):
    from tests.stats._build import DEEPSEEK, DEEPSEEK_LABEL, GPT, GPT_LABEL, judged_config, run

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    store = Store(url)
    faith = [0.5 + 0.01 * (i % 7) for i in range(30)]
    mrr = [0.2 + 0.02 * (i % 5) for i in range(30)]
    better = {"faithfulness": [v + 0.1 for v in faith], "mrr": [v + 0.1 for v in mrr]}
    store.record(run({"faithfulness": faith, "mrr": mrr}, config=judged_config(GPT)), name="gpt")
    store.record(run(better, config=judged_config(DEEPSEEK)), name="deepseek")
    store.record(run(better, config=judged_config(GPT)), name="gpt-again")
    line = f"faithfulness: judge differs: {GPT_LABEL} vs {DEEPSEEK_LABEL}"
    refused = invoke("runs", "compare", "gpt", "deepseek", "--store", url, "--top", "0")
    assert refused.exit_code == 0, refused.output
    assert f"not comparable: {line}" in refused.output
    assert f"faithfulness: not comparable: judge changed ({GPT_LABEL} vs" in refused.output
    assert "● better: mrr +0.1" in refused.output
    assert "● faithfulness: not comparable" in refused.output  # no word: no verdict
    allowed = invoke(
        "runs", "compare", "gpt", "deepseek", "--store", url, "--allow-judge-change", "--top", "0"
    )
    assert allowed.exit_code == 0, allowed.output
    assert f"warning: {line}" in allowed.output and "● better: faithfulness +0.1" in allowed.output
    same = invoke("runs", "compare", "gpt", "gpt-again", "--store", url, "--top", "0")
    assert same.exit_code == 0, same.output
    assert "judge" not in same.output and "● better: faithfulness +0.1" in same.output


def _strict_json(text: str):
    def refuse(constant: str):
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_list_and_show_print_strict_json_only(two_runs: str):
    listed = invoke("runs", "list", "--json", "--store", two_runs)
    assert listed.exit_code == 0, listed.output
    runs = _strict_json(listed.stdout)["runs"]
    assert [r["name"] for r in runs] == ["hybrid", "bm25"]
    assert runs[1]["params"] == {"top_k": 5, "retriever": "bm25"}
    assert runs[1]["aggregates"]["recall@1"]["mean"] == pytest.approx(4 / 12)
    shown = invoke("runs", "show", "bm25", "--json", "--store", two_runs)
    assert shown.exit_code == 0, shown.output
    document = _strict_json(shown.stdout)
    assert document["run"]["tags"] == ["nightly"]
    assert document["summary"]["n_samples"] == 12


def test_list_at_80_columns_keeps_ids_whole(two_runs: str):
    listed = runner.invoke(app, ["runs", "list", "--store", two_runs], env={"COLUMNS": "80"})
    assert listed.exit_code == 0, listed.output
    ids = [info.id[:8] for info in Store(two_runs).list()]
    rows = [line for line in listed.output.splitlines() if "│" in line]
    cells = [row.split("│")[1].strip() for row in rows]
    for run_id in ids:
        assert run_id in cells
    assert not any("…" in cell for cell in cells)
    assert "hybrid" in listed.output and "0.917" in listed.output
    wide = runner.invoke(app, ["runs", "list", "--wide", "--store", two_runs],
                         env={"COLUMNS": "80"})  # fmt: skip
    assert wide.exit_code == 0, wide.output
    assert wide.output.count("┳") == listed.output.count("┳") + 3  # params, tags, git


def test_export_writes_a_run_directory_the_other_commands_read(two_runs: str, tmp_path: Path):
    out = tmp_path / "exported"
    exported = invoke("runs", "export", "bm25", str(out), "--store", two_runs)
    assert exported.exit_code == 0, exported.output
    assert (out / "results.jsonl").exists() and (out / "summary.json").exists()
    shown = invoke("show", str(out), "--json")
    assert shown.exit_code == 0, shown.output
    assert _strict_json(shown.stdout)["aggregates"]["recall@1"]["mean"] == pytest.approx(4 / 12)
    reported = invoke("report", str(out))
    assert reported.exit_code == 0 and (out / "report.html").exists()
    again = invoke("runs", "export", "hybrid", str(out), "--store", two_runs)
    assert again.exit_code == 2 and "already holds a run" in again.output


def test_list_shows_a_few_headline_metrics_and_says_how_to_see_the_others(tmp_path: Path):
    # Seven metrics over two runs: the table keeps the newest run's first four, its caption
    # says how to choose others; --metrics chooses, --json keeps every metric.
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    data = write(tmp_path / "data.jsonl", hits=6)
    for metrics in ("recall@1,recall@3,mrr", "precision@1,precision@3,ndcg@3,hit@3,mrr"):
        made = invoke("eval", str(data), "-m", metrics, "-q", "--store", url,
                      "-o", str(tmp_path / metrics.replace(",", "_")))  # fmt: skip
        assert made.exit_code == 0, made.output
    listed = invoke("runs", "list", "--store", url)
    assert listed.exit_code == 0, listed.output
    header = next(line for line in listed.output.splitlines() if "┃" in line)
    headers = [cell.strip() for cell in header.split("┃")[1:-1]]
    assert headers[4:8] == ["precision@1", "precision@3", "ndcg@3", "hit@3"]
    assert "4 of 7 metrics" in listed.output and "--metrics" in listed.output
    chosen = invoke("runs", "list", "--metrics", "recall@3, mrr", "--store", url)
    assert chosen.exit_code == 0, chosen.output
    header = next(line for line in chosen.output.splitlines() if "┃" in line)
    assert [cell.strip() for cell in header.split("┃")[1:-1]][4:7] == ["recall@3", "mrr", "params"]
    every = invoke("runs", "list", "--metrics", "all", "--store", url)
    assert every.exit_code == 0 and "of 7 metrics" not in every.output
    assert all(name in every.output for name in ("recall@1", "hit@3", "mrr"))
    unknown = invoke("runs", "list", "--metrics", "recal@3", "--store", url)
    assert unknown.exit_code == 2 and "recal@3" in unknown.output
    documented = _strict_json(invoke("runs", "list", "--json", "--store", url).stdout)
    assert len(documented["runs"][0]["aggregates"]) == 5
    assert len(documented["runs"][1]["aggregates"]) == 3
