"""The Ray backend's figures for bench/scale.py (issue 22).

* ``run_workers``: the standard suite on N samples against a fake OpenAI-compatible server
  (``latency_ms`` per request, judge and embeddings limits of 32 each), in this process
  (``local``) and on a local Ray cluster (``ray start --head`` on 127.0.0.1, this machine's
  CPUs) with 1 and 2 workers. Wall time includes starting the workers; the steady rate is
  judge requests per second between the 10th and the 90th percentile of their arrivals.
* ``run_limiter``: the cluster-wide limiter against a rate-limited endpoint, with 8 and 64
  simulated workers (each its own limiter handle and worker name, as a Ray worker has; each
  keeps 8 requests waiting): the :class:`LimitService` actor admits them under
  ``requests_per_minute`` and ``max_concurrency``; the achieved rate and the most requests in
  flight are measured, and the actor's capacity (admissions per second with no limit).
"""

from __future__ import annotations

import asyncio
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

from ragmeter import evaluate
from ragmeter._services import LimitSettings, NullCache
from ragmeter.embed import EmbeddingsConfig, OpenAIEmbeddings
from ragmeter.judge import JudgeConfig, OpenAIJudge
from ragmeter.runner import RayBackend
from ragmeter.runner._ray import LimitService, _RemoteLimiter, connect
from ragmeter.testing import FakeOpenAIServer, local_ray_cluster

SUITE = ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]
LIMIT = 32


BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from judge_calls_vs_ragas import bow_embedding, make_dataset, ragmeter_reply  # noqa: E402


def _services(server: FakeOpenAIServer) -> tuple[OpenAIJudge, OpenAIEmbeddings]:
    judge = OpenAIJudge(
        JudgeConfig(
            base_url=server.base_url, model="fake", api_key="sk-bench", max_concurrency=LIMIT
        ),
        cache=NullCache(),
    )
    embeddings = OpenAIEmbeddings(
        EmbeddingsConfig(
            base_url=server.base_url, model="fake-embed", api_key="sk-bench", max_concurrency=LIMIT
        ),
        cache=NullCache(),
    )
    return judge, embeddings


def _steady_rate(times: list[float]) -> float | None:
    if len(times) < 20:
        return None
    times = sorted(times)
    a, b = times[len(times) // 10], times[len(times) * 9 // 10]
    return (len(times) * 8 // 10) / (b - a) if b > a else None


def run_workers(n: int, latency_ms: float, workers: tuple[int, ...] = (1, 2)) -> dict[str, Any]:
    data = make_dataset(n, 5)
    rows: list[dict[str, Any]] = []
    with (
        local_ray_cluster(num_cpus=os.cpu_count() or 2) as address,
        FakeOpenAIServer(
            responder=ragmeter_reply, embedder=bow_embedding, latency_s=latency_ms / 1000
        ) as server,
    ):
        for label, backend in [
            ("local", "local"),
            *((f"ray x{w}", RayBackend(address, workers=w)) for w in workers),
        ]:
            server.reset_stats()
            judge, embeddings = _services(server)
            cpu = time.process_time()
            start = time.perf_counter()
            result = evaluate(
                data, SUITE, judge=judge, embeddings=embeddings, backend=backend, concurrency=128
            )
            wall = time.perf_counter() - start
            cpu = time.process_time() - cpu
            chat = [r.received_at for r in server.requests if r.path.endswith("/chat/completions")]
            failed = sum(r.status.value != "ok" for one in result for r in one.scores.values())
            rows.append(
                {
                    "backend": label,
                    "wall_s": round(wall, 2),
                    "chat_requests": len(chat),
                    "requests": len(server.requests),
                    "requests_per_s": round(len(server.requests) / wall, 1),
                    "steady_chat_per_s": _steady_rate(chat),
                    "driver_cpu_s": round(cpu, 2),
                    "max_in_flight": server.max_in_flight,
                    "failed": failed,
                }
            )
    return {
        "n": n,
        "k": 5,
        "latency_ms": latency_ms,
        "limit": LIMIT,
        "cpus": os.cpu_count(),
        "rows": rows,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


async def _simulate(
    service: Any, clients: int, settings: LimitSettings, latency_s: float, seconds: float
) -> dict[str, Any]:
    grants: list[float] = []
    in_flight = 0
    most = 0
    stop = time.monotonic() + seconds

    async def request(limiter: _RemoteLimiter) -> None:
        nonlocal in_flight, most
        async with limiter.slot():
            in_flight += 1
            most = max(most, in_flight)
            grants.append(time.monotonic())
            await asyncio.sleep(latency_s)
            in_flight -= 1

    async def worker(index: int) -> None:
        limiter = _RemoteLimiter(service, "endpoint", settings, f"sim-{index}")
        while time.monotonic() < stop:
            await asyncio.gather(*(request(limiter) for _ in range(8)))

    began = time.monotonic()
    await asyncio.gather(*(worker(i) for i in range(clients)))
    span = time.monotonic() - began
    return {
        "clients": clients,
        "rpm": settings.requests_per_minute,
        "max_concurrency": settings.max_concurrency,
        "latency_ms": latency_s * 1000,
        "granted": len(grants),
        "seconds": round(span, 2),
        "rate_per_s": round(len(grants) / span, 1),
        "limit_per_s": (settings.requests_per_minute or 0) / 60 or None,
        "max_in_flight": most,
    }


def run_limiter(seconds: float = 10.0) -> dict[str, Any]:
    out: dict[str, Any] = {"simulated": [], "capacity": []}
    with local_ray_cluster(num_cpus=os.cpu_count() or 2) as address:
        ray = connect(address)
        service = ray.remote(LimitService).options(num_cpus=0).remote()
        limited = LimitSettings(max_concurrency=16, requests_per_minute=6000)
        for clients in (8, 64):
            out["simulated"].append(
                asyncio.run(_simulate(service, clients, limited, 0.05, seconds))
            )
        unlimited = LimitSettings(max_concurrency=10_000)
        for clients in (8, 64):
            out["capacity"].append(asyncio.run(_simulate(service, clients, unlimited, 0.0, 5.0)))
        ray.shutdown()
    return out


if __name__ == "__main__":
    import json

    print(json.dumps({"workers": run_workers(200, 20.0), "limiter": run_limiter(5.0)}, indent=1))
