"""``ragmeter eval`` for a cheap first pass: ``--limit``, ``--sample`` (resumed with the same
subset), ``--dry-run`` (nothing called, nothing written) and ``--max-cost`` (exit 3, then
``--resume`` with a higher budget). Against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter import EvaluationResult
from ragmeter.cli import app
from ragmeter.testing import FakeOpenAIServer
from tests.cli.test_exit import faithfulness_reply, last_line, write_samples

runner = CliRunner()
KEY = "sk-budget-key"


def invoke(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", KEY)
    with FakeOpenAIServer(responder=faithfulness_reply, api_key=KEY) as fake:
        yield fake


def judge_file(folder: Path, base_url: str, *, priced: bool = True) -> Path:
    """A judge that costs 1 per thousand prompt tokens and 2 per thousand completion ones."""
    path = folder / "judge.toml"
    price = "[judge.price]\ninput_per_million = 1000\noutput_per_million = 2000\n"
    path.write_text(
        f'[judge]\nmodel = "m"\nbase_url = "{base_url}"\nmax_retries = 0\n'
        f'api_key_env = "RAGMETER_JUDGE_API_KEY"\n{price if priced else ""}',
        encoding="utf-8",
    )
    return path


def chat_calls(server: FakeOpenAIServer) -> int:
    return sum(r.path.endswith("/chat/completions") for r in server.requests)


def eval_args(tmp_path: Path, server: FakeOpenAIServer, n: int = 6, **kwargs) -> list[str]:
    data = write_samples(tmp_path / "data.jsonl", n)
    judge = judge_file(tmp_path, server.base_url, **kwargs)
    return [
        "eval", str(data), "-m", "faithfulness,rouge_l", "--judge-config", str(judge),
        "--cache", str(tmp_path / "cache.db"), "--no-store", "-q",
    ]  # fmt: skip


def total_row(output: str) -> list[str]:
    row = next(line for line in output.splitlines() if "│ total" in line)
    return [cell.strip() for cell in row.strip("│ ").split("│")]


def test_dry_run_predicts_the_calls_and_calls_nothing(tmp_path, server):
    args = eval_args(tmp_path, server)
    dry = invoke(*args, "-o", str(tmp_path / "run"), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert chat_calls(server) == 0 and not (tmp_path / "run").exists()
    # faithfulness: the claims of each answer, then their support: 2 calls a sample
    total = total_row(dry.output)
    assert total[:3] == ["total", "12", "0"], dry.output
    assert "USD" in total[-1]
    assert "6 of 6 to judge" in dry.output

    run = invoke(*args, "-o", str(tmp_path / "run"))
    assert run.exit_code == 0, run.output
    assert chat_calls(server) == 12
    again = invoke("eval", "--resume", str(tmp_path / "run"), "--dry-run",
                   "--cache", str(tmp_path / "cache.db"))  # fmt: skip
    assert again.exit_code == 0, again.output
    assert "0 of 6 to judge" in again.output and chat_calls(server) == 12


def test_dry_run_with_an_unpriced_judge_counts_calls_without_a_cost(tmp_path, server):
    dry = invoke(*eval_args(tmp_path, server, n=2, priced=False), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert total_row(dry.output)[:2] == ["total", "4"]
    assert "cost: unknown" in dry.output and "[judge.price]" in dry.output


def test_max_cost_stops_the_run_then_resume_finishes_it(tmp_path, server):
    args = eval_args(tmp_path, server)
    stopped = invoke(*args, "-o", str(tmp_path / "run"), "--max-cost", "2", "--concurrency", "1")
    assert stopped.exit_code == 3, stopped.output
    line = last_line(stopped.output)
    assert line.startswith("exit 3: --max-cost stopped the run: spent ")
    found = re.search(r"(\d+) of 6 samples judged", line)
    assert found is not None, line
    judged = int(found.group(1))
    assert 1 <= judged < 6 and chat_calls(server) == 2 * judged
    assert f"ragmeter eval --resume {tmp_path / 'run'} --max-cost HIGHER" in line
    assert "failed" not in line  # samples the budget did not reach are not failures
    kept = EvaluationResult.load(tmp_path / "run")
    assert kept.aggregates["faithfulness"].n_ok == judged
    assert kept.config["budget"]["stopped"] is True
    # the samples never started are counted as such, in show as in the run, not as failed
    faithfulness = kept.aggregates["faithfulness"]
    assert (faithfulness.n_failed, faithfulness.n_not_started) == (0, 6 - judged)
    shown = invoke("show", str(tmp_path / "run"))
    assert shown.exit_code == 0, shown.output
    row = next(line for line in shown.output.splitlines() if "│ faithfulness" in line)
    cells = [cell.strip() for cell in row.strip("│ ").split("│")]
    assert cells[3:7] == [f"{judged}/6", "0", "0", str(6 - judged)], shown.output
    assert f"not started: {6 - judged} results" in shown.output

    resumed = invoke("eval", "--resume", str(tmp_path / "run"), "--max-cost", "100", "-q",
                     "--no-store", "--cache", str(tmp_path / "cache.db"))  # fmt: skip
    assert resumed.exit_code == 0, resumed.output
    assert chat_calls(server) == 12  # every sample judged once over both sessions
    assert EvaluationResult.load(tmp_path / "run").aggregates["faithfulness"].n_ok == 6


def test_max_cost_with_an_unpriced_judge_is_a_usage_error_before_the_run(tmp_path, server):
    result = invoke(*eval_args(tmp_path, server, priced=False), "-o", str(tmp_path / "run"),
                    "--max-cost", "1")  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "[judge.price]" in result.output and "input_per_million" in result.output
    assert chat_calls(server) == 0 and not (tmp_path / "run" / "run.db").exists()


def test_max_cost_with_the_embedded_judge_says_it_costs_nothing(tmp_path, monkeypatch):
    for name in ("RAGMETER_JUDGE_MODEL", "RAGMETER_JUDGE_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    data = write_samples(tmp_path / "data.jsonl", 2)
    result = invoke("eval", str(data), "-m", "faithfulness", "--max-cost", "1", "--no-store",
                    "-o", str(tmp_path / "run"))  # fmt: skip
    if "pip install" in result.output:
        pytest.skip("the embedded judge is not installed")
    assert result.exit_code == 2, result.output
    assert "embedded offline judge costs nothing" in result.output


def test_limit_and_a_sample_are_recorded_and_resumed(tmp_path, server):
    args = eval_args(tmp_path, server, n=10)
    first = invoke(*args, "-o", str(tmp_path / "head"), "--limit", "3")
    assert first.exit_code == 0, first.output
    assert [s.sample_id for s in EvaluationResult.load(tmp_path / "head")] == ["q0", "q1", "q2"]

    drawn = invoke(*args, "-o", str(tmp_path / "drawn"), "--sample", "4", "--seed", "5")
    assert drawn.exit_code == 0, drawn.output
    ids = [s.sample_id for s in EvaluationResult.load(tmp_path / "drawn")]
    assert len(ids) == 4 and ids == sorted(ids, key=lambda i: int(i[1:]))
    config = json.loads((tmp_path / "drawn" / "summary.json").read_text())["config"]
    assert config["invocation"]["sample"] == 4 and config["invocation"]["seed"] == 5
    calls = chat_calls(server)
    again = invoke("eval", "--resume", str(tmp_path / "drawn"), "-q", "--no-store",
                   "--cache", str(tmp_path / "cache.db"))  # fmt: skip
    assert again.exit_code == 0, again.output  # the same subset: the same fingerprint
    assert [s.sample_id for s in EvaluationResult.load(tmp_path / "drawn")] == ids
    assert chat_calls(server) == calls


def test_subset_options_that_cannot_work_are_usage_errors(tmp_path, server):
    args = eval_args(tmp_path, server, n=3)
    both = invoke(*args, "--limit", "2", "--sample", "2")
    assert both.exit_code == 2 and "not both" in both.output
    alone = invoke(*args, "--stratify", "kind")
    assert alone.exit_code == 2 and "--stratify needs --sample" in alone.output
    unknown = invoke(*args, "--sample", "2", "--stratify", "kind")
    assert unknown.exit_code == 2 and "no sample has the metadata tag 'kind'" in unknown.output
    zero = invoke(*args, "--limit", "0")
    assert zero.exit_code == 2
    assert chat_calls(server) == 0
