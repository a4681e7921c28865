"""Client CPU per judge request (issue 22, part 2): is the runner ever the bottleneck?

The standard suite (faithfulness, answer_relevancy, context_precision, context_recall) on
``make_dataset(n, k=5)`` of ``judge_calls_vs_ragas.py``, scored by ``ragmeter.evaluate()``
with ``OpenAIJudge`` + ``OpenAIEmbeddings`` (``NullCache``, ``max_concurrency=16``, the
runner's default concurrency) against a :class:`~ragmeter.testing.FakeOpenAIServer` that runs
in a **separate process** (the responders of ``judge_calls_vs_ragas.py``), so this process's
CPU time (``getrusage(RUSAGE_SELF)``: user + system, all threads) is the client's alone, as
in ``throughput.py``'s "client CPU" column.

One-time cost is reported apart: a warm-up ``evaluate()`` of ``warmup`` samples (after the
imports) runs first; ``one_time_s`` is the CPU of imports + warm-up minus what its requests
would cost at the measured per-request rate. Then the measured run of ``n`` samples.

    .venv/bin/python bench/_scale_cpu.py                 # n=200, latency 0, warm-up 5
    .venv/bin/python bench/_scale_cpu.py --n 50 --latency-ms 20
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

SUITE = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")
CONCURRENCY = 16
K = 5


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _serve(latency_s: float, conn: Any) -> None:
    """The fake server's process: answers until told ``"stop"``; ``"count"`` -> (chat, embed)
    requests received since the last count."""
    from judge_calls_vs_ragas import bow_embedding, ragmeter_reply

    from ragmeter.testing import FakeOpenAIServer

    with FakeOpenAIServer(
        latency_s=latency_s, responder=ragmeter_reply, embedder=bow_embedding
    ) as srv:
        conn.send(srv.base_url)
        while True:
            command = conn.recv()
            if command == "stop":
                break
            paths = [r.path for r in srv.requests]
            srv.reset_stats()
            conn.send(
                (
                    sum(p.endswith("/chat/completions") for p in paths),
                    sum(p.endswith("/embeddings") for p in paths),
                )
            )


def _evaluate(rows: list[dict[str, Any]], base_url: str) -> Any:
    import ragmeter
    from ragmeter.embed import EmbeddingsConfig, OpenAIEmbeddings
    from ragmeter.judge import JudgeConfig, NullCache, OpenAIJudge

    judge = OpenAIJudge(
        JudgeConfig(
            model="fake-judge", base_url=base_url, api_key="x", max_concurrency=CONCURRENCY
        ),
        cache=NullCache(),
    )
    embeddings = OpenAIEmbeddings(
        EmbeddingsConfig(
            model="fake-embed", base_url=base_url, api_key="x", max_concurrency=CONCURRENCY
        ),
        cache=NullCache(),
    )
    return ragmeter.evaluate(rows, list(SUITE), judge=judge, embeddings=embeddings)


def run_cpu(n: int = 200, latency_ms: float = 0.0, warmup: int = 5) -> dict[str, Any]:
    """Client CPU per judge request for ``n`` samples at ``latency_ms`` per request (see the
    module docstring). Keys: ``client_cpu_s``, ``chat_requests``, ``embed_requests``,
    ``requests``, ``cpu_ms_per_request``, ``cpu_ms_per_chat_request``, ``wall_s``,
    ``requests_per_s``, ``one_time_s`` (imports + first evaluate, less its requests' share),
    ``warmup_cpu_s``, ``peak_rss_mb``, ``scores`` (mean per metric), ``n_failed``."""
    from judge_calls_vs_ragas import make_dataset

    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    server = ctx.Process(target=_serve, args=(latency_ms / 1000, child), daemon=True)
    server.start()
    try:
        base_url = parent.recv()
        rows = make_dataset(n + warmup, K)
        data = [{k: v for k, v in r.items() if k != "name"} for r in rows]
        parent.send("count")
        parent.recv()  # start from zero

        cpu0 = _cpu_s()
        import ragmeter  # noqa: F401  (one-time: imports)

        if warmup:
            _evaluate(data[n:], base_url)
        warm_cpu = _cpu_s() - cpu0
        parent.send("count")
        warm_chat, warm_embed = parent.recv()

        cpu = _cpu_s()
        start = time.perf_counter()
        result = _evaluate(data[:n], base_url)
        wall = time.perf_counter() - start
        cpu = _cpu_s() - cpu
        parent.send("count")
        chat, embed = parent.recv()
        parent.send("stop")
    finally:
        server.join(timeout=10)
        if server.is_alive():
            server.terminate()
    requests = chat + embed
    per_request = cpu / requests if requests else float("nan")
    return {
        "n": n,
        "k": K,
        "latency_ms": latency_ms,
        "client_cpu_s": round(cpu, 3),
        "chat_requests": chat,
        "embed_requests": embed,
        "requests": requests,
        "cpu_ms_per_request": round(1000 * per_request, 3),
        "cpu_ms_per_chat_request": round(1000 * cpu / chat, 3) if chat else None,
        "wall_s": round(wall, 3),
        "requests_per_s": round(requests / wall, 1) if wall else None,
        "warmup_samples": warmup,
        "warmup_cpu_s": round(warm_cpu, 3),
        "one_time_s": round(warm_cpu - (warm_chat + warm_embed) * per_request, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "scores": {name: agg.mean for name, agg in result.aggregates.items()},
        "n_failed": sum(agg.n_failed for agg in result.aggregates.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps(run_cpu(args.n, args.latency_ms, args.warmup), indent=2))


if __name__ == "__main__":
    main()
