"""Kill a run at any moment and resume it: nothing lost, no paid judge call repeated."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

import pytest

from ragmeter import EvaluationResult, Metric, MetricResult, Sample, Status, evaluate
from ragmeter.judge import JudgeConfig, NullCache, OpenAIJudge, SQLiteCache
from ragmeter.runner._progress import QuietProgress
from ragmeter.testing import FakeOpenAIServer
from tests.runner._fakes import marker_of, samples, server_responder

SUITE = ["faithfulness", "context_recall", "context_precision", "rouge_l"]


class Interrupted(Exception):
    pass


class StopAfter(QuietProgress):
    """Stops the run (like Ctrl-C) once ``n`` judged samples are recorded."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.phase = ""

    def start(self, phase: str, total: int) -> None:
        self.phase = phase

    def advance(self, n=1, *, usage=None, failed=0):
        if self.phase == "judged metrics":
            self.n -= n
            if self.n <= 0:
                raise Interrupted


def endpoint_judge(server, cache):
    return OpenAIJudge(
        JudgeConfig(model="m", base_url=server.base_url, api_key="k", max_concurrency=4),
        cache=cache,
    )


def scores_of(result):
    return {name: result.scores(name) for name in SUITE}


def test_an_interrupted_run_resumes_without_repeating_a_paid_call(tmp_path):
    data = samples(8)
    with FakeOpenAIServer(responder=server_responder) as server:
        baseline = evaluate(data, SUITE, judge=endpoint_judge(server, NullCache()))
        baseline_calls = len(server.requests)
    assert baseline_calls == 8 * 3

    run_dir = tmp_path / "run"
    cache = SQLiteCache(tmp_path / "cache.db")
    with FakeOpenAIServer(responder=server_responder) as server:
        with pytest.raises(Interrupted):
            evaluate(
                data,
                SUITE,
                judge=endpoint_judge(server, cache),
                run_dir=run_dir,
                concurrency=1,
                progress=StopAfter(3),
            )
        first_calls = len(server.requests)
        stopped = EvaluationResult.load(run_dir)
        assert stopped.scores("faithfulness")[:3] == baseline.scores("faithfulness")[:3]
        assert stopped.aggregates["faithfulness"].n_failed == 5  # not computed yet, not hidden
        assert stopped.scores("rouge_l") == baseline.scores("rouge_l")  # cheap metrics ran first

        resumed = evaluate(
            data, SUITE, judge=endpoint_judge(server, cache), run_dir=run_dir, resume=True
        )
        assert len(server.requests) == baseline_calls  # both sessions together
    assert first_calls == 3 * 3
    assert scores_of(resumed) == scores_of(baseline)
    assert resumed.usage["calls"] == baseline_calls
    assert [s.sample_id for s in resumed] == [f"case-{i}" for i in range(8)]


def _scored_markers(run_db: Path) -> set[str]:
    with sqlite3.connect(run_db) as db:
        rows = db.execute(
            "SELECT s.sample FROM samples s JOIN results r ON r.idx = s.idx "
            "WHERE r.metric = 'faithfulness' AND r.status = 'ok'"
        ).fetchall()
    return {json.loads(text)["user_input"][-12:] for (text,) in rows}


def _eval_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "ragmeter", "eval", *args, "-q"]


def test_kill_9_in_the_middle_then_resume(tmp_path):
    data = tmp_path / "data.jsonl"
    rows = samples(40)
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    with FakeOpenAIServer(responder=server_responder) as server:
        baseline = evaluate(rows, SUITE, judge=endpoint_judge(server, NullCache()))
    run_dir = tmp_path / "run"
    env = {**os.environ, "RAGMETER_JUDGE_API_KEY": "k"}
    with FakeOpenAIServer(responder=server_responder, latency_s=0.05) as server:
        options = ["--judge-model", "m", "--judge-base-url", server.base_url]
        options += ["--cache", str(tmp_path / "cache.db"), "--concurrency", "4"]
        process = subprocess.Popen(
            _eval_command(str(data), "-m", ",".join(SUITE), "-o", str(run_dir), *options),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        done: set[str] = set()
        while time.monotonic() < deadline and len(done) < 10 and process.poll() is None:
            time.sleep(0.05)
            if (run_dir / "run.db").exists():
                try:
                    done = _scored_markers(run_dir / "run.db")
                except sqlite3.OperationalError:
                    continue  # the tables are being created
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        assert 10 <= len(done) < 40, process.stderr.read().decode()
        done = _scored_markers(run_dir / "run.db")  # what the killed run had recorded
        before_resume = len(server.requests)

        resumed = subprocess.run(
            _eval_command("--resume", str(run_dir), "--cache", str(tmp_path / "cache.db")),
            env=env,
            capture_output=True,
            timeout=120,
        )
        assert resumed.returncode == 0, resumed.stderr.decode()
        second = server.requests[before_resume:]
    # The resumed session asked nothing about a sample the killed one had finished.
    assert not {marker_of(r.body) for r in second} & done
    # Only calls in flight at the kill (never answered) are asked again: 4 samples in
    # flight, at most 2 calls each at a time.
    assert len(server.requests) <= 40 * 3 + 4 * 2
    result = EvaluationResult.load(run_dir)
    assert scores_of(result) == scores_of(baseline)
    assert all(a.n_ok == 40 for a in result.aggregates.values())


class FlakyOnce(Metric):
    """Fails on its first run over a sample, succeeds after (a transient outage)."""

    name = "flaky"
    seen: ClassVar[set[str]] = set()

    def score(self, sample: Sample) -> MetricResult:
        if sample.id not in self.seen:
            self.seen.add(sample.id)
            raise ConnectionError("endpoint down")
        return MetricResult.ok(1.0)


def test_resume_retries_failed_results_and_keeps_the_rest(tmp_path):
    rows = [
        {"id": "a", "response": "x", "reference": "x"},
        {"id": "b", "response": "y", "reference": "z"},
    ]
    first = evaluate(rows, [FlakyOnce(), "exact_match"], run_dir=tmp_path / "run")
    assert [s.scores["flaky"].status for s in first] == [Status.FAILED, Status.FAILED]
    again = evaluate(rows, [FlakyOnce(), "exact_match"], run_dir=tmp_path / "run", resume=True)
    assert again.scores("flaky") == [1.0, 1.0]
    assert again.scores("exact_match") == [1.0, 0.0]


def test_resume_refuses_other_data_and_a_used_directory_without_resume(tmp_path):
    rows = [{"id": "a", "response": "x", "reference": "x"}]
    evaluate(rows, ["exact_match"], run_dir=tmp_path / "run")
    with pytest.raises(FileExistsError, match="resume"):
        evaluate(rows, ["exact_match"], run_dir=tmp_path / "run")
    with pytest.raises(ValueError, match="dataset differs"):
        evaluate(
            [{"id": "a", "response": "z", "reference": "x"}],
            ["exact_match"],
            run_dir=tmp_path / "run",
            resume=True,
        )
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        evaluate(rows, ["exact_match"], run_dir=tmp_path / "empty", resume=True)


def test_resume_adds_a_new_metric_without_recomputing_the_others(tmp_path):
    rows = [{"id": "a", "response": "x", "reference": "x"}]
    evaluate(rows, ["exact_match"], run_dir=tmp_path / "run")
    result = evaluate(rows, ["exact_match", "rouge_l"], run_dir=tmp_path / "run", resume=True)
    assert result.scores("rouge_l") == [1.0] and result.scores("exact_match") == [1.0]
