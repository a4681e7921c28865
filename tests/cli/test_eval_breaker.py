"""A run against an endpoint that cannot answer stops within a bounded time (issue 37): an
exhausted quota (429, Retry-After: 3600) or an endpoint that answers nothing in time stops
starting samples, keeps what was answered, exits 3 with one line naming the endpoint's state
and ``--resume``; the resumed run, once the endpoint answers, equals an uninterrupted one."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from ragmeter import EvaluationResult, evaluate
from ragmeter.cli import ExitCode, app
from ragmeter.judge import JudgeConfig, NullCache, OpenAIJudge
from ragmeter.testing import FakeOpenAIServer, Fault
from tests.runner._fakes import samples, server_responder

SUITE = ["faithfulness", "context_recall", "rouge_l"]
KEY = "sk-breaker-key"
runner = CliRunner()


def write_data(path: Path, n: int) -> tuple[Path, list[dict[str, Any]]]:
    rows = samples(n)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path, rows


def scores_of(result: EvaluationResult) -> dict[str, list[float | None]]:
    return {name: result.scores(name) for name in SUITE}


def last_line(output: str) -> str:
    return output.strip().splitlines()[-1]


def eval_args(data: Path, run: Path, server: FakeOpenAIServer | None) -> list[str]:
    """``eval`` of ``data`` into ``run``, with the judge ``server`` (None: none named)."""
    args = ["eval", str(data), "-m", ",".join(SUITE), "-o", str(run), "-q", "--no-cache"]
    if server is not None:
        args += ["--judge-model", "m", "--judge-base-url", server.base_url]
    return args


def stopped_within(seconds: float, args: list[str]) -> str:
    """Run ``args``: it exits 3 within ``seconds``; its last line."""
    started = time.monotonic()
    stopped = runner.invoke(app, args, env={"COLUMNS": "300"})
    assert stopped.exit_code == ExitCode.RESULTS_FAILED, stopped.output
    assert time.monotonic() - started < seconds
    return last_line(stopped.output)


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", KEY)
    return KEY


def uninterrupted(rows: list[dict[str, Any]]) -> dict[str, list[float | None]]:
    with FakeOpenAIServer(responder=server_responder) as server:
        config = JudgeConfig(model="m", base_url=server.base_url, api_key=SecretStr("k"))
        return scores_of(evaluate(rows, SUITE, judge=OpenAIJudge(config, cache=NullCache())))


def resume_once_it_answers(server: FakeOpenAIServer, run: Path, rows: list[dict[str, Any]]) -> None:
    """The endpoint answers again: ``--resume`` completes the run, with the results of an
    uninterrupted one."""
    server.clear_faults()
    resumed = runner.invoke(app, ["eval", "--resume", str(run), "-q", "--no-cache"])
    assert resumed.exit_code == ExitCode.OK, resumed.output
    assert scores_of(EvaluationResult.load(run)) == uninterrupted(rows)


@pytest.mark.parametrize("asked", ["3600", "inf"])
def test_an_exhausted_quota_stops_the_run_at_once_and_resume_completes_it(tmp_path, key, asked):
    data, rows = write_data(tmp_path / "data.jsonl", 40)
    run = tmp_path / "run"
    with FakeOpenAIServer(responder=server_responder, api_key=key) as server:
        server.fault_rate(Fault.rate_limit(retry_after_header=asked), 1.0)
        # default settings: before, 5 retries x 60 s per call
        line = stopped_within(30, eval_args(data, run, server))
        wait = "3600 s" if asked == "3600" else "an unbounded time"
        assert line.startswith(f"exit 3: the run stopped: rate limited: {server.base_url} ")
        assert f"asks to wait {wait}; " in line
        assert line.endswith(f"once the endpoint answers, run ragmeter eval --resume {run}")
        # No call after the first answers was sent: no retry, no new sample.
        assert len(server.requests) <= 16  # the judge's max_concurrency, in flight at once
        kept = EvaluationResult.load(run).scores("rouge_l")  # a metric without a judge
        assert len(kept) == 40 and None not in kept

        resume_once_it_answers(server, run, rows)


def test_an_endpoint_that_trickles_its_answers_stops_the_run(tmp_path, key):
    data, rows = write_data(tmp_path / "data.jsonl", 40)
    run = tmp_path / "run"
    judge = tmp_path / "judge.toml"
    # Defaults but a short timeout_s (60 s by default), so the test does not wait minutes.
    judge.write_text(
        '[judge]\nmodel = "m"\nbase_url = "BASE"\ntimeout_s = 0.5\n'
        'api_key_env = "RAGMETER_JUDGE_API_KEY"\n',
        encoding="utf-8",
    )
    with FakeOpenAIServer(responder=server_responder, api_key=key) as server:
        judge.write_text(judge.read_text().replace("BASE", server.base_url), encoding="utf-8")
        server.fault_rate(Fault.trickle(delay_s=5.0), 1.0)
        line = stopped_within(15, [*eval_args(data, run, None), "--judge-config", str(judge)])
        assert f"the run stopped: no answer from {server.base_url} for " in line
        assert " across 1" in line  # 10 or more calls (16 in flight at once)
        assert line.endswith(f"run ragmeter eval --resume {run}")

        resume_once_it_answers(server, run, rows)


def test_a_resumed_run_is_recorded_under_its_name_tags_and_params(tmp_path, key):
    data, _ = write_data(tmp_path / "data.jsonl", 4)
    run = tmp_path / "run"
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    with FakeOpenAIServer(responder=server_responder, api_key=key) as server:
        first = runner.invoke(
            app,
            [*eval_args(data, run, server), "--store", store, "--name", "nightly",
             "--tag", "prod", "--param", "k=5"],
        )  # fmt: skip
        assert first.exit_code == ExitCode.OK, first.output
        resumed = runner.invoke(
            app, ["eval", "--resume", str(run), "-q", "--no-cache", "--store", store]
        )
        assert resumed.exit_code == ExitCode.OK, resumed.output
    listed = runner.invoke(app, ["runs", "list", "--store", store, "--json"])
    assert listed.exit_code == 0, listed.output
    runs = json.loads(listed.output)["runs"]
    assert [r["name"] for r in runs] == ["nightly", "nightly"]
    assert all(r["tags"] == ["prod"] and r["params"] == {"k": 5} for r in runs), runs
