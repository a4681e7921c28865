"""The Ray backend on a real local Ray cluster (``ray start --head`` on 127.0.0.1, 2 CPUs),
started for this module and stopped after (tests/_ray_cluster.py).

Each test checks one guarantee of docs/scale.md against the local backend: identical results,
limits that hold across workers, a killed worker that loses nothing, a killed driver whose
resumed run repeats no recorded call, and a judge per node.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from ragmeter import evaluate
from ragmeter.embed import EmbeddingsConfig, OpenAIEmbeddings
from ragmeter.judge import JudgeConfig, NullCache, OpenAIJudge, SQLiteCache
from ragmeter.metrics import Status
from ragmeter.runner import RayBackend, RayBackendError
from ragmeter.testing import FakeOpenAIServer
from tests._ray_cluster import ROOT, join_node, local_cluster
from tests.metrics.llm import scripts
from tests.runner._fakes import samples, server_responder

pytestmark = pytest.mark.slow

SUITE = ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]
NODE_URL = "RAGMETER_TEST_NODE_JUDGE_URL"


@pytest.fixture(scope="module")
def head_server() -> Iterator[FakeOpenAIServer]:
    """The judge of the head node, for the per-node endpoint test (its URL is in the head's
    environment, as a node's own vLLM would be)."""
    with FakeOpenAIServer(responder=server_responder) as server:
        yield server


@pytest.fixture(scope="module")
def cluster(head_server: FakeOpenAIServer) -> Iterator[str]:
    with local_cluster(num_cpus=2, env={NODE_URL: head_server.base_url}) as address:
        yield address


def _judge(server: FakeOpenAIServer, limit: int = 4, cache: Any = None) -> OpenAIJudge:
    config = JudgeConfig(
        base_url=server.base_url,
        model="fake-model",
        api_key=SecretStr("sk-test"),
        max_concurrency=limit,
    )
    return OpenAIJudge(config, cache=cache if cache is not None else NullCache())


def _embeddings(server: FakeOpenAIServer, limit: int = 4, cache: Any = None) -> OpenAIEmbeddings:
    config = EmbeddingsConfig(
        base_url=server.base_url,
        model="fake-embed",
        api_key=SecretStr("sk-test"),
        max_concurrency=limit,
    )
    return OpenAIEmbeddings(config, cache=cache if cache is not None else NullCache())


def _scores(result: Any) -> dict[str, list[float | None]]:
    return {name: result.scores(name) for name in result.aggregates}


def _statuses(result: Any) -> list[Status]:
    return [r.status for one in result for r in one.scores.values()]


def test_same_results_as_the_local_backend_with_the_scripted_judge(
    cluster: str, tmp_path: Path
) -> None:
    data = samples(10)
    metrics = ["faithfulness", "context_precision", "context_recall"]
    local = evaluate(data, metrics, judge=scripts.judge())
    remote = evaluate(
        data, metrics, judge=scripts.judge(), backend=RayBackend(cluster, 2), run_dir=tmp_path
    )
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert saved["config"]["backend"]["kind"] == "ray"
    assert _scores(remote) == _scores(local)
    assert set(_statuses(remote)) == {Status.OK}
    assert remote.config["backend"]["kind"] == "ray"
    assert remote.config["backend"]["workers"] == 2
    # The usage came back with the outcomes: 3 judge calls per sample (no cache here).
    assert remote.config["usage"]["calls"] == local.config["usage"]["calls"] == 30


def test_limits_hold_across_workers(cluster: str) -> None:
    # Judge: at most 2 requests in flight, embeddings 1: 3 at the server, whatever the
    # number of workers (2 workers with limits of their own would reach 6).
    with FakeOpenAIServer(responder=server_responder, latency_s=0.05) as server:
        local = evaluate(samples(6), SUITE, judge=_judge(server, 2), embeddings=_embeddings(server))
        server.reset_stats()
        remote = evaluate(
            samples(16),
            SUITE,
            judge=_judge(server, 2),
            embeddings=_embeddings(server, 1),
            backend=RayBackend(cluster, workers=2),
        )
        assert 2 <= server.max_in_flight <= 3
    assert set(_statuses(remote)) == {Status.OK}
    assert _scores(remote)["faithfulness"][:6] == _scores(local)["faithfulness"]
    # The standard suite: 4 judge calls and 1 embedding request per sample.
    assert remote.config["usage"]["calls"] == 16 * 4
    assert remote.config["embedding_usage"]["calls"] == 16


def _worker_pids() -> list[int]:
    found = subprocess.run(
        ["pgrep", "-f", "ray::Worker"], capture_output=True, text=True, check=False
    ).stdout.split()
    return [int(pid) for pid in found]


def test_a_killed_worker_loses_nothing(cluster: str) -> None:
    data = samples(24)
    with FakeOpenAIServer(responder=server_responder, latency_s=0.1) as server:
        reference = evaluate(data[:4], SUITE, judge=_judge(server), embeddings=_embeddings(server))
        server.reset_stats()
        outcome: dict[str, Any] = {}

        def run() -> None:
            outcome["result"] = evaluate(
                data,
                SUITE,
                judge=_judge(server),
                embeddings=_embeddings(server),
                backend=RayBackend(cluster, workers=2),
            )

        runner = threading.Thread(target=run)
        runner.start()
        deadline = time.monotonic() + 120
        while len(server.requests) < 12 and time.monotonic() < deadline:
            time.sleep(0.05)
        pids = _worker_pids()
        assert pids, "no Ray worker process found"
        os.kill(pids[0], signal.SIGKILL)
        runner.join(timeout=300)
        assert not runner.is_alive()
    result = outcome["result"]
    assert set(_statuses(result)) == {Status.OK}
    assert len(_statuses(result)) == 24 * len(SUITE)
    assert result.config["backend"]["workers_lost"] >= 1
    for name in SUITE:
        assert result.scores(name)[:4] == reference.scores(name)


DRIVER = textwrap.dedent(
    """
    import sys
    from ragmeter import evaluate
    from ragmeter.judge import SQLiteCache
    from ragmeter.runner import RayBackend
    from tests.runner.test_ray import SUITE, _embeddings, _judge
    from tests.runner._fakes import samples

    class Server:
        base_url = sys.argv[1]

    evaluate(samples(30), SUITE, judge=_judge(Server, cache=SQLiteCache(sys.argv[3])),
             embeddings=_embeddings(Server, cache=SQLiteCache(sys.argv[3] + ".vectors")),
             run_dir=sys.argv[2],
             backend=RayBackend(sys.argv[4], workers=2))
    """
)


def _chat_requests(server: FakeOpenAIServer) -> int:
    return sum(r.path.endswith("/chat/completions") for r in server.requests)


def _cached(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        return int(connection.execute("SELECT count(*) FROM judge_cache").fetchone()[0])


def test_a_run_resumed_after_its_driver_was_killed_repeats_no_recorded_call(
    cluster: str, tmp_path: Path
) -> None:
    run_dir, cache_file = tmp_path / "run", tmp_path / "cache.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with FakeOpenAIServer(responder=server_responder, latency_s=0.1) as server:
        driver = subprocess.Popen(
            [sys.executable, "-c", DRIVER, server.base_url, str(run_dir), str(cache_file), cluster],
            env=env,
            cwd=ROOT,
        )
        deadline = time.monotonic() + 120
        while len(server.requests) < 40 and time.monotonic() < deadline:
            assert driver.poll() is None, "the driver ended before it was killed"
            time.sleep(0.05)
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
        time.sleep(1.0)  # requests the killed workers had sent are answered meanwhile
        before = _cached(cache_file)
        sent_before = _chat_requests(server)
        assert before > 0
        result = evaluate(
            samples(30),
            SUITE,
            judge=_judge(server, cache=SQLiteCache(cache_file)),
            embeddings=_embeddings(server, cache=SQLiteCache(f"{cache_file}.vectors")),
            run_dir=run_dir,
            resume=True,
            backend=RayBackend(cluster, workers=2),
        )
        resumed_requests = _chat_requests(server) - sent_before
    after = _cached(cache_file)
    assert set(_statuses(result)) == {Status.OK}
    assert len(_statuses(result)) == 30 * len(SUITE)
    # Every judge request of the resumed run made a new cache entry: none asked again for an
    # answer the killed run had recorded; in all, 30 samples x 4 judge calls = 120 answers.
    assert resumed_requests == after - before
    assert after == 30 * 4


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="backend must be 'local', 'ray'"):
        evaluate(samples(1), ["faithfulness"], judge=scripts.judge(), backend="spark")


def test_a_judge_that_cannot_be_sent_to_workers_says_so(cluster: str) -> None:
    judge = scripts.judge()
    judge.unpicklable = threading.Lock()  # type: ignore[attr-defined]
    with pytest.raises(RayBackendError, match="cannot be sent to Ray workers"):
        evaluate(samples(1), ["faithfulness"], judge=judge, backend=RayBackend(cluster, 1))


def test_the_cli_runs_on_the_cluster(cluster: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ragmeter.cli import app

    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in samples(4)), encoding="utf-8")
    with FakeOpenAIServer(responder=server_responder) as server:
        args = [
            "eval", str(data), "-m", "faithfulness,context_recall",
            "--judge-model", "fake-model", "--judge-base-url", server.base_url,
            "--no-cache", "--no-store", "-q", "-o", str(tmp_path / "run"),
            "--backend", "ray", "--ray-address", cluster, "--ray-workers", "1",
        ]  # fmt: skip
        outcome = CliRunner().invoke(
            app, args, env={"COLUMNS": "200", "RAGMETER_JUDGE_API_KEY": "sk-test"}
        )
        assert outcome.exit_code == 0, outcome.output
        # The same judge calls as a run of the same data in this process.
        ray_calls = len(server.requests)
        server.reset_stats()
        local = evaluate(
            samples(4), ["faithfulness", "context_recall"], judge=_judge(server), language=None
        )
        assert ray_calls == local.config["usage"]["calls"]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["config"]["backend"]["kind"] == "ray"
    assert summary["config"]["invocation"] is not None


# Last: it adds a node to the cluster and takes it away again.
def test_each_worker_sends_its_judge_requests_to_its_own_nodes_endpoint(
    cluster: str, head_server: FakeOpenAIServer
) -> None:
    with (
        FakeOpenAIServer(responder=server_responder) as node_server,
        FakeOpenAIServer(responder=server_responder) as elsewhere,
    ):
        node = join_node(cluster, num_cpus=1, env={NODE_URL: node_server.base_url})
        try:
            import ray

            if not ray.is_initialized():  # (the test may run alone: nothing connected yet)
                ray.init(address=cluster, include_dashboard=False, log_to_driver=False)
            deadline = time.monotonic() + 60
            while len(ray.nodes()) < 2 or not all(n["Alive"] for n in ray.nodes()):
                assert time.monotonic() < deadline, "the second node did not join"
                time.sleep(0.2)
            head_server.reset_stats()
            result = evaluate(
                samples(12),
                ["faithfulness", "context_recall"],
                judge=_judge(elsewhere, limit=1),  # its base URL is replaced on each node
                backend=RayBackend(cluster, workers=3, local_endpoint=f"${NODE_URL}"),
            )
        finally:
            node.stop(grace_s=15)
            deadline = time.monotonic() + 90  # the next run must not place a worker there
            while sum(n["Alive"] for n in ray.nodes()) > 1:
                assert time.monotonic() < deadline, "the second node was not marked dead"
                time.sleep(0.5)
        # Each node's endpoint had its own limit of 1 request in flight.
        assert head_server.max_in_flight <= 1 and node_server.max_in_flight <= 1
        served = [len(head_server.requests), len(node_server.requests)]
        assert elsewhere.requests == []
    assert set(_statuses(result)) == {Status.OK}
    # Every judge call went to one of the two nodes' endpoints, and both nodes had work.
    assert sum(served) == result.config["usage"]["calls"] and min(served) > 0
    assert result.config["backend"]["local_endpoint"] == f"${NODE_URL}"


def test_an_endpoint_that_cannot_answer_stops_every_worker(cluster: str) -> None:
    """Issue 37: the breaker is the cluster's: one worker meeting a 429 that asks to wait an
    hour stops the other workers' calls too, and the driver starts no new sample."""
    from ragmeter.testing import Fault

    with FakeOpenAIServer(responder=server_responder) as server:
        server.fault_rate(Fault.rate_limit(retry_after_header="3600"), 1.0)
        config = JudgeConfig(
            base_url=server.base_url,
            model="fake-model",
            api_key=SecretStr("sk-test"),
            max_retries=2,
            max_retry_wait_s=0.5,
        )
        result = evaluate(
            samples(40),
            ["faithfulness"],
            judge=OpenAIJudge(config, cache=NullCache()),
            concurrency=2,
            backend=RayBackend(cluster, workers=2),
        )
        received = len(server.requests)
        where = server.base_url
    assert result.config["endpoint_down"].startswith(f"rate limited: {where}")
    assert "asks to wait 3600 s" in result.config["endpoint_down"]
    assert received <= 2  # one call per worker at most: none retried, no new sample
    assert sum(a.n_not_started for a in result.aggregates.values()) >= 36
