"""Kill a run at any moment and resume it: nothing lost, no paid judge call repeated."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import ClassVar

import pytest

from ragmeter import EvaluationResult, Metric, MetricResult, Sample, Status, evaluate
from ragmeter.judge import JudgeConfig, NullCache, OpenAIJudge, SQLiteCache
from ragmeter.runner import QuietProgress
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

    def start(self, phase: str, total: int | None) -> None:
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
        faithfulness = stopped.aggregates["faithfulness"]
        # not computed yet: counted, not hidden, and not failures
        assert (faithfulness.n_not_started, faithfulness.n_failed) == (5, 0)
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


def _in_flight_calls(run_dir: Path) -> int | None:
    """The requests run.db counts for the samples being judged now (the usage the run
    writes as it goes, ``in_flight_usage`` in its meta); ``None`` before it is written."""
    try:
        with sqlite3.connect(f"file:{run_dir / 'run.db'}?mode=ro", uri=True, timeout=1) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'in_flight_usage'").fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else sum(u.get("calls", 0) for u in json.loads(row[0]).values())


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
        sent = len(server.requests)
    # The resumed session asked nothing about a sample the killed one had finished.
    assert not {marker_of(r.body) for r in second} & done
    # Only calls in flight at the kill (never answered) are asked again: 4 samples in
    # flight, at most 2 calls each at a time.
    assert len(server.requests) <= 40 * 3 + 4 * 2
    result = EvaluationResult.load(run_dir)
    assert scores_of(result) == scores_of(baseline)
    assert all(a.n_ok == 40 for a in result.aggregates.values())
    # Every request the endpoint received is counted, including those of the samples the
    # kill interrupted (test_calls_of_samples_a_kill_interrupts_are_counted, exactly). Here the
    # kill falls anywhere: a request counted as sent may not have reached the server, one sent
    # after the last usage write is not counted; at most the calls in flight (4 samples, at
    # most 2 calls each at a time) either way.
    assert abs(result.usage["calls"] - sent) <= 4 * 2


class FlakyOnce(Metric):
    """Fails on its first run over a sample, succeeds after (a transient outage)."""

    name = "flaky"
    seen: ClassVar[set[str]] = set()

    def score(self, sample: Sample) -> MetricResult:
        if sample.id not in self.seen:
            self.seen.add(str(sample.id))
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


def test_failed_results_count_the_calls_they_made(tmp_path):
    """A run whose every answer is cut off fails every judged result, and its usage still
    counts every request sent (a provider bills them)."""
    from ragmeter.testing import Fault

    with FakeOpenAIServer(responder=server_responder) as server:
        server.fault_rate(Fault.truncated(), 1.0)
        judge = OpenAIJudge(
            JudgeConfig(model="m", base_url=server.base_url, api_key="k", max_tokens=8192),
            cache=NullCache(),
        )
        result = evaluate(samples(3), ["faithfulness"], judge=judge, run_dir=tmp_path / "run")
        sent = len(server.requests)
    assert result.aggregates["faithfulness"].n_failed == 3
    assert sent > 0 and result.usage["calls"] == sent
    assert result.usage["prompt_tokens"] > 0
    assert EvaluationResult.load(tmp_path / "run").usage["calls"] == sent


def test_calls_of_samples_a_kill_interrupts_are_counted(tmp_path):
    """Samples still being judged when the run is killed have sent requests (a provider bills
    them): their usage is written as it grows, so the resumed run's total counts every
    request the endpoint received, exactly."""
    import threading

    data = tmp_path / "data.jsonl"
    rows = samples(6)
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    release = threading.Event()
    seen: dict[str | None, int] = {}
    lock = threading.Lock()

    def first_call_only(body):
        """Each sample's first request is answered; later ones hang until released."""
        with lock:
            marker = marker_of(body)
            seen[marker] = seen.get(marker, 0) + 1
            hang = seen[marker] > 1
        if hang:
            release.wait(timeout=60)
        return server_responder(body)

    run_dir = tmp_path / "run"
    env = {**os.environ, "RAGMETER_JUDGE_API_KEY": "k"}
    with FakeOpenAIServer(responder=first_call_only) as server:
        options = ["--judge-model", "m", "--judge-base-url", server.base_url]
        options += ["--cache", str(tmp_path / "cache.db"), "--concurrency", "3"]
        process = subprocess.Popen(
            _eval_command(str(data), "-m", ",".join(SUITE), "-o", str(run_dir), *options),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        # Wait until 3 samples are stuck (each has sent its requests), then for the usage
        # write that follows: run.db's in-flight usage counts every request sent.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.in_flight < 3 and process.poll() is None:
            time.sleep(0.05)
        while time.monotonic() < deadline and process.poll() is None:
            if _in_flight_calls(run_dir) == len(server.requests):
                break
            time.sleep(0.05)
        sent_before_kill = len(server.requests)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        assert server.in_flight >= 3, process.stderr.read().decode()
        with sqlite3.connect(run_dir / "run.db") as db:
            judged = db.execute(
                "SELECT COUNT(*) FROM results WHERE metric = 'faithfulness'"
            ).fetchone()[0]
        assert judged == 0  # no judged sample was finished: all their calls were in flight
        release.set()

        resumed = subprocess.run(
            _eval_command("--resume", str(run_dir), "--cache", str(tmp_path / "cache.db")),
            env=env,
            capture_output=True,
            timeout=120,
        )
        assert resumed.returncode == 0, resumed.stderr.decode()
        sent = len(server.requests)
    assert sent > sent_before_kill > 0
    result = EvaluationResult.load(run_dir)
    assert all(a.n_ok == 6 for a in result.aggregates.values())
    assert result.usage["calls"] == sent


def _request_key(body: dict) -> str:
    """What a judge call asks (its messages): the same key for the same paid call."""
    return json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False)


def _poll(condition, timeout_s: float = 60.0) -> bool:
    """Whether ``condition()`` came true within ``timeout_s`` (polled every 20 ms)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def _interrupted_run(tmp_path: Path, server, n: int, *more: str) -> subprocess.Popen:
    """``ragmeter eval`` of ``n`` samples against ``server`` (3 samples at a time), once
    3 of its calls are in flight at the endpoint."""
    data = tmp_path / "data.jsonl"
    rows = samples(n)
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    options = ["--judge-model", "m", "--judge-base-url", server.base_url]
    options += ["--cache", str(tmp_path / "cache.db"), "--concurrency", "3", *more]
    process = subprocess.Popen(
        _eval_command(str(data), "-m", ",".join(SUITE), "-o", str(tmp_path / "run"), *options),
        env={**os.environ, "RAGMETER_JUDGE_API_KEY": "k"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert _poll(lambda: server.in_flight >= 3 or process.poll() is not None)
    assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
    return process


def _resume(tmp_path: Path) -> None:
    resumed = subprocess.run(
        _eval_command("--resume", str(tmp_path / "run"), "--cache", str(tmp_path / "cache.db")),
        env={**os.environ, "RAGMETER_JUDGE_API_KEY": "k"},
        capture_output=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr.decode()


@pytest.mark.parametrize("signal_sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupt_lets_the_calls_in_flight_be_answered_and_resume_pays_none_again(
    tmp_path, signal_sent
):
    """Issue 37: the first Ctrl-C (or SIGTERM) waits for the calls in flight, so their
    answers are kept; the resumed run sends no call the endpoint had answered (measured at
    the endpoint) and counts every request it received."""
    answered: list[str] = []
    lock = threading.Lock()

    def answer(body):
        with lock:  # called once the server's latency has passed: the answer goes out
            answered.append(_request_key(body))
        return server_responder(body)

    with FakeOpenAIServer(responder=answer, latency_s=0.5) as server:
        process = _interrupted_run(tmp_path, server, 12)
        process.send_signal(signal_sent)
        assert process.wait(timeout=30) == 130, process.stderr.read().decode()
        assert _poll(lambda: server.in_flight == 0)  # every request sent was answered
        first = len(server.requests)
        with lock:
            paid = set(answered)
        assert 0 < len(paid) == first
        _resume(tmp_path)
        again = {_request_key(r.body) for r in server.requests[first:]}
        sent = len(server.requests)
    assert not again & paid
    result = EvaluationResult.load(tmp_path / "run")
    assert all(a.n_ok == 12 for a in result.aggregates.values())
    assert result.usage["calls"] == sent


def test_a_second_interrupt_stops_at_once_and_the_calls_it_cut_are_counted(tmp_path):
    """The calls cut by the second Ctrl-C (or by the end of --interrupt-wait) were sent
    and are billed: the run counts them (before, calls in flight at Ctrl-C never were)."""
    release = threading.Event()

    def hang(body):
        release.wait(timeout=60)
        return server_responder(body)

    with FakeOpenAIServer(responder=hang) as server:
        process = _interrupted_run(tmp_path, server, 6, "--interrupt-wait", "60")
        process.send_signal(signal.SIGINT)
        with pytest.raises(subprocess.TimeoutExpired):  # it waits for the calls in flight
            process.wait(timeout=1.0)
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130, process.stderr.read().decode()
        assert time.monotonic() - started < 5
        sent_before = len(server.requests)
        release.set()
        _resume(tmp_path)
        sent = len(server.requests)
    assert sent > sent_before >= 3
    result = EvaluationResult.load(tmp_path / "run")
    assert all(a.n_ok == 6 for a in result.aggregates.values())
    assert result.usage["calls"] == sent


def test_a_kill_in_the_runs_first_second_counts_the_calls_it_cut(tmp_path):
    """Issue 37: the usage of the calls in flight reaches run.db within a fraction of a
    second of their being sent, not a second after the judging started (before, a kill in
    the first second left them uncounted: 36 counted, 48 sent)."""
    release = threading.Event()

    def hang(body):
        release.wait(timeout=60)
        return server_responder(body)

    with FakeOpenAIServer(responder=hang) as server:
        process = _interrupted_run(tmp_path, server, 6)
        counted = _poll(lambda: _in_flight_calls(tmp_path / "run") == len(server.requests), 0.5)
        sent_before_kill = len(server.requests)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        assert counted, (_in_flight_calls(tmp_path / "run"), sent_before_kill)
        release.set()
        _resume(tmp_path)
        sent = len(server.requests)
    result = EvaluationResult.load(tmp_path / "run")
    assert all(a.n_ok == 6 for a in result.aggregates.values())
    assert result.usage["calls"] == sent
