import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from ragmeter import EvaluationResult, __version__
from ragmeter.cli import app
from ragmeter.metrics import SPECS

EXAMPLES = Path(__file__).parents[2] / "examples"
runner = CliRunner()


def test_help_and_version():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "eval" in result.output and "metrics" in result.output
    assert __version__ in runner.invoke(app, ["--version"]).output


def test_metrics_lists_every_metric_with_direction():
    result = runner.invoke(app, ["metrics"], env={"COLUMNS": "250"})
    assert result.exit_code == 0
    for spec in SPECS:
        assert spec.name in result.output
    assert "retrieved_context_ids" in result.output and "↑" in result.output


def test_eval_demo_prints_table_and_writes_results_that_load_back(tmp_path):
    run_dir = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "eval",
            str(EXAMPLES / "retrieval.jsonl"),
            "--metrics",
            "precision@5,ndcg@10,mrr",
            "-o",
            str(run_dir),
        ],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    for name in ("precision@5", "ndcg@10", "mrr"):
        assert name in result.output
    loaded = EvaluationResult.load(run_dir)
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(loaded) == len(lines) == 12
    first = json.loads(lines[0])
    assert set(first["metrics"]) == {"precision@5", "ndcg@10", "mrr"}
    mean = loaded.aggregates["mrr"].mean
    assert f"{mean:.4f}" in result.output


def test_bad_file_exits_2_and_lists_every_problem(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"id": "a", "retrieved_context_ids": ["x"], "reference_context_ids": ["x"]}\n'
        "{broken\n"
        '{"id": "c", "retrieved_context_ids": "x", "reference_context_ids": ["x"]}\n',
        encoding="utf-8",
    )
    result = runner.invoke(app, ["eval", str(path), "-m", "mrr", "-o", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert "row 2" in result.output and "row 3" in result.output
    assert not (tmp_path / "r").exists()


def test_a_column_missing_in_every_row_is_a_few_lines_not_one_per_row(tmp_path):
    path = tmp_path / "big.jsonl"
    rows = [{"id": f"q{i}", "user_input": "q?", "retrieved_contexts": ["c"]} for i in range(1000)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    options = ["-m", "faithfulness", "-o", str(tmp_path / "r")]
    result = runner.invoke(app, ["eval", str(path), *options])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) <= 4, result.output
    assert "field 'response': missing, and metric 'faithfulness' needs it, in 1000/1000 rows" in (
        result.output
    )
    assert "(first rows 1, 2, 3, 4, 5; ids 'q0', 'q1', 'q2', 'q3', 'q4')" in result.output
    assert "Fix: add response" in result.output
    skipped = runner.invoke(app, ["eval", str(path), *options, "--skip-invalid"])
    assert skipped.exit_code == 2  # no valid row
    assert "in 1000 rows (first rows 1, 2, 3, 4, 5;" in skipped.output
    assert len(skipped.output.strip().splitlines()) <= 4, skipped.output


def test_skip_invalid_evaluates_the_rest(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"id": "a", "retrieved_context_ids": ["x"], "reference_context_ids": ["x"]}\n{broken\n',
        encoding="utf-8",
    )
    result = runner.invoke(
        app, ["eval", str(path), "-m", "mrr", "--skip-invalid", "-o", str(tmp_path / "r")]
    )
    assert result.exit_code == 0, result.output
    assert "skipped 1 invalid row" in result.output
    assert len(EvaluationResult.load(tmp_path / "r")) == 1


def test_unknown_metric_exits_2(tmp_path):
    result = runner.invoke(app, ["eval", str(EXAMPLES / "retrieval.jsonl"), "-m", "ndgc@10"])
    assert result.exit_code == 2
    assert "unknown metric 'ndgc@10'" in result.output


def test_column_map_option(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text('q_id,hits,gold\nq1,"[""a"", ""b""]","[""b""]"\n', encoding="utf-8")
    result = runner.invoke(
        app,
        [
            "eval",
            str(path),
            "-m",
            "mrr",
            "-o",
            str(tmp_path / "r"),
            "--column-map",
            "q_id=id",
            "--column-map",
            "hits=retrieved_context_ids",
            "--column-map",
            "gold=reference_context_ids",
        ],
    )
    assert result.exit_code == 0, result.output
    assert EvaluationResult.load(tmp_path / "r").scores("mrr") == [0.5]


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "ragmeter"
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=True)
    assert __version__ in out.stdout


def test_skip_invalid_with_no_valid_row_exits_2(tmp_path):
    path = tmp_path / "all-bad.jsonl"
    path.write_text("{broken\n", encoding="utf-8")
    result = runner.invoke(app, ["eval", str(path), "-m", "mrr", "--skip-invalid"])
    assert result.exit_code == 2
    assert "no valid row" in result.output and "row 1" in result.output


def test_metrics_shows_optional_cutoffs_and_aliases():
    output = runner.invoke(app, ["metrics"], env={"COLUMNS": "250"}).output
    assert "mrr[@K]" in output and "ndcg_exp[@K]" in output
    assert "rougeL" in output


def test_judge_check_reports_the_endpoint_and_the_fallback(monkeypatch):
    from ragmeter.testing import FakeOpenAIServer
    from tests.cli.test_judge_check import right

    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", "sk-cli-secret-key")
    with FakeOpenAIServer(
        responder=right,
        supports_json_schema=False,
        api_key="sk-cli-secret-key",
    ) as server:
        result = runner.invoke(
            app,
            ["judge", "check", "--judge-model", "tiny", "--judge-base-url", server.base_url],
            env={"COLUMNS": "200"},
        )
    assert result.exit_code == 0, result.output
    assert "structured output used │ json_object" in result.output
    assert "PASS: the judge answered 5 of 5 checks right (json_object" in result.output
    assert "sk-cli-secret-key" not in result.output


def test_judge_check_with_a_wrong_key_exits_2_without_showing_it(monkeypatch):
    from ragmeter.testing import FakeOpenAIServer

    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", "sk-wrong-key-123456")
    with FakeOpenAIServer(api_key="sk-right-key") as server:
        result = runner.invoke(
            app, ["judge", "check", "--judge-model", "tiny", "--judge-base-url", server.base_url]
        )
    assert result.exit_code == 2
    assert "RAGMETER_JUDGE_API_KEY" in result.output
    assert "sk-wrong-key-123456" not in result.output


def test_a_base_url_that_cannot_work_stops_at_once_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_JUDGE_MODEL", "judge-model")
    monkeypatch.setenv("RAGMETER_JUDGE_BASE_URL", "api.example.com/v1")  # no scheme
    for args in (
        ["judge", "check"],
        ["eval", "examples/demo.jsonl", "-m", "faithfulness", "--no-store", "-o", str(tmp_path)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "base_url must be the endpoint's http(s) API root" in result.output
        assert "Traceback" not in result.output and "attempts" not in result.output


def test_eval_with_a_judged_metric_on_an_endpoint(tmp_path, monkeypatch):
    from ragmeter.testing import FakeOpenAIServer

    def responder(body):
        name = body["response_format"]["json_schema"]["name"]
        if name.startswith("ResponseAnalysis"):
            return {"claims": ["Paris is the capital of France.", "Paris has 40 million people."]}
        return {
            "support": [
                {"claim": 1, "passages": [1], "reason": "stated"},
                {"claim": 2, "passages": [], "reason": "not stated"},
            ]
        }

    data = tmp_path / "one.jsonl"
    data.write_text(
        json.dumps(
            {
                "id": "q1",
                "user_input": "What is the capital of France?",
                "response": "Paris. It has 40 million people.",
                "retrieved_contexts": ["Paris is the capital of France."],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", "sk-eval-secret")
    with FakeOpenAIServer(responder=responder, api_key="sk-eval-secret") as server:
        result = runner.invoke(
            app,
            [
                "eval",
                str(data),
                "-m",
                "faithfulness",
                "-o",
                str(tmp_path / "run"),
                "--judge-model",
                "m",
                "--judge-base-url",
                server.base_url,
                "--cache",
                str(tmp_path / "cache.db"),
            ],
            env={"COLUMNS": "200"},
        )
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 2
    loaded = EvaluationResult.load(tmp_path / "run")
    assert loaded.scores("faithfulness") == [0.5]
    claims = loaded.samples[0].scores["faithfulness"].details["claims"]
    assert claims[1]["reason"] == "not stated"
    record = (tmp_path / "run" / "summary.json").read_text(encoding="utf-8")
    assert "sk-eval-secret" not in record and "api_key_set" in record
    for stored in (tmp_path / "cache.db", tmp_path / "run" / "run.db"):
        assert "sk-eval-secret" not in stored.read_bytes().decode("utf-8", "replace")


def test_eval_with_a_rejected_key_saves_what_it_has_and_exits_2(tmp_path, monkeypatch):
    from ragmeter.testing import FakeOpenAIServer

    data = tmp_path / "two.jsonl"
    rows = [
        {"id": f"q{i}", "response": "Paris.", "reference": "Paris", "retrieved_contexts": ["c"]}
        for i in range(2)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", "sk-wrong")
    with FakeOpenAIServer(api_key="sk-right") as server:
        result = runner.invoke(
            app,
            [
                "eval",
                str(data),
                "-m",
                "faithfulness,rouge_l",
                "-o",
                str(tmp_path / "run"),
                "--judge-model",
                "m",
                "--judge-base-url",
                server.base_url,
                "--no-cache",
            ],
        )
    assert result.exit_code == 2
    assert "refused its configuration" in result.output and "sk-wrong" not in result.output
    saved = EvaluationResult.load(tmp_path / "run")
    assert saved.scores("rouge_l") == [1.0, 1.0]
