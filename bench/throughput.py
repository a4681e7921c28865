"""Throughput and peak memory: ragmeter vs ragas 0.4.3 on a fake OpenAI server (issue 5).

**Throughput.** Both sides score the same seeded synthetic dataset (``make_dataset`` of
``judge_calls_vs_ragas.py``: N=200 samples, k=5 contexts of 60-100 words) with the standard
suite (faithfulness, answer_relevancy, context_precision, context_recall), each against its own
:class:`~ragmeter.testing.FakeOpenAIServer` started in this process (200 ms per request, chat and
embeddings alike; the responders of ``judge_calls_vs_ragas.py`` answer every prompt with valid
structured output, so every score is real). Each run is a fresh subprocess (ragmeter with this
interpreter, ragas in its own virtualenv); the sides alternate, ``--repeats`` times each.

* ragmeter: ``ragmeter.evaluate(data, SUITE, judge=judge, embeddings=embeddings)`` with
  ``OpenAIJudge(JudgeConfig(..., max_concurrency=16), cache=NullCache())`` and
  ``OpenAIEmbeddings(EmbeddingsConfig(..., max_concurrency=16), cache=NullCache())``, and the
  runner's default ``concurrency`` (samples in flight; the judge's limit caps requests at 16).
* ragas 0.4.3 (side ``ragas``): legacy ``ragas.evaluate()`` with an async client,
  ``llm_factory("fake-judge", client=openai.AsyncOpenAI(...))`` (instructor, JSON mode),
  ``RunConfig(max_workers=16)``, metrics ``Faithfulness``, ``AnswerRelevancy``,
  ``ContextPrecision`` (with reference) and ``ContextRecall``, embeddings
  ``LangchainEmbeddingsWrapper(langchain_openai.OpenAIEmbeddings(...))``: every score is real,
  but the legacy ``AnswerRelevancy`` calls ``embed_query``/``embed_documents`` synchronously
  inside the event loop, so each of its 2 embedding requests per sample stalls every job.
* side ``ragas_modern_emb``: the same with ragas's own async embeddings,
  ``embedding_factory("openai", client=openai.AsyncOpenAI(...))``. The legacy
  ``AnswerRelevancy`` cannot use them (``AttributeError``: no ``embed_query``), so its scores
  are all NaN and no embedding request is made (its question-generation chat call still is).
  Shown for reference: its call count and wall time match the issue's measurement of ragas
  "with an async client" (1,800 calls, 26.6 s, 85% of its floor).

Wall time is taken around ``evaluate()`` in the worker; call counts and the in-flight profile
come from the server's request log (``received_at``). Floor = chat calls x latency / 16.

**Memory.** ``ragmeter.evaluate(dataset, ["faithfulness", "context_recall", "precision@3",
"mrr"], judge=ScriptedJudge(...), embeddings=ScriptedEmbeddings(...), run_dir=tmp)`` on
N = 1,000 and 10,000 synthetic samples (3 contexts each), each N in two fresh subprocesses: one
for RSS (``getrusage().ru_maxrss`` and ``/proc/self/status``, the high-water mark reset through
``/proc/self/clear_refs`` once the dataset is loaded), one under ``tracemalloc`` (the dataset's
own size, and the peak during ``evaluate()`` above what is held once the dataset is loaded).

    .venv/bin/python bench/throughput.py --write             # ~10 min on 2 cores
    .venv/bin/python bench/throughput.py --n 40 --repeats 1 --memory-ns 200,1000  # smoke run
    .venv/bin/python bench/throughput.py --no-memory --sides ragmeter   # ragmeter only
    .venv/bin/python bench/throughput.py --render-only --write   # the md from the saved json
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:  # run as `python bench/throughput.py` from anywhere
    sys.path.insert(0, str(BENCH))

from judge_calls_vs_ragas import (  # noqa: E402
    CACHE,
    DEFAULT_RAGAS_VENV,
    _git,
    _ragas_versions,
    bow_embedding,
    make_dataset,
    ragas_reply,
    ragas_timed_evaluate,
    ragmeter_reply,
    sentences,
    supports,
)

#: ragmeter; ragas with langchain-openai embeddings (every score real); ragas with its own
#: async OpenAIEmbeddings (answer_relevancy fails on them: see the notes).
SIDES = ("ragmeter", "ragas", "ragas_modern_emb")
SUITE = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")
MEMORY_METRICS = ("faithfulness", "context_recall", "precision@3", "mrr")
CONCURRENCY = 16
CHAT = "/chat/completions"
EMBED = "/embeddings"
DEFAULT_JSON = CACHE / "throughput_results.json"
DEFAULT_MEMORY_JSON = CACHE / "throughput_memory.json"
DEFAULT_MD = BENCH / "RESULTS_throughput.md"
WALL_TARGET = 1.15  # ragmeter wall <= 1.15 x floor
SPEEDUP_TARGET = 3.0  # ragas wall / ragmeter wall >= 3


# -- workers (subprocesses) -------------------------------------------------------------------


def _worker_ragmeter(spec: dict[str, Any]) -> dict[str, Any]:
    import ragmeter
    from ragmeter.embed import EmbeddingsConfig, OpenAIEmbeddings
    from ragmeter.judge import JudgeConfig, NullCache, OpenAIJudge

    rows = json.loads(Path(spec["dataset"]).read_text())[: spec["n"]]
    data = [{k: v for k, v in r.items() if k != "name"} for r in rows]
    judge = OpenAIJudge(
        JudgeConfig(
            model="fake-judge",
            base_url=spec["base_url"],
            api_key="x",
            max_concurrency=CONCURRENCY,
        ),
        cache=NullCache(),
    )
    embeddings = OpenAIEmbeddings(
        EmbeddingsConfig(
            model="fake-embed",
            base_url=spec["base_url"],
            api_key="x",
            max_concurrency=CONCURRENCY,
        ),
        cache=NullCache(),
    )
    cpu = _cpu_s()
    start = time.monotonic()
    result = ragmeter.evaluate(data, list(SUITE), judge=judge, embeddings=embeddings)
    end = time.monotonic()
    scores = {
        name: {"mean": agg.mean, "n_ok": agg.n_ok, "n_failed": agg.n_failed}
        for name, agg in result.aggregates.items()
    }
    return {
        "start": start,
        "end": end,
        "wall_s": end - start,
        "cpu_s": _cpu_s() - cpu,
        "scores": scores,
        "warnings": {},
    }


def _cpu_s() -> float:
    """User + system CPU seconds of this process so far (all its threads)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _worker_ragas(spec: dict[str, Any]) -> dict[str, Any]:
    import logging
    import re
    import warnings

    warnings.filterwarnings("ignore")
    import openai
    from ragas.llms import llm_factory
    from ragas.metrics._answer_relevance import AnswerRelevancy
    from ragas.metrics._context_precision import ContextPrecision
    from ragas.metrics._context_recall import ContextRecall
    from ragas.metrics._faithfulness import Faithfulness

    warned: Counter[str] = Counter()

    class _Count(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warned[re.sub(r"Job\[\d+\]", "Job[i]", record.getMessage())[:120]] += 1

    logging.getLogger("ragas").addHandler(_Count(logging.WARNING))
    llm = llm_factory(
        "fake-judge", client=openai.AsyncOpenAI(base_url=spec["base_url"], api_key="x")
    )
    if spec["side"] == "ragas_modern_emb":
        from ragas.embeddings import embedding_factory

        embeddings: Any = embedding_factory(
            "openai",
            model="fake-embed",
            client=openai.AsyncOpenAI(base_url=spec["base_url"], api_key="x"),
        )
    else:
        from langchain_openai import OpenAIEmbeddings
        from ragas.embeddings import LangchainEmbeddingsWrapper

        embeddings = LangchainEmbeddingsWrapper(
            OpenAIEmbeddings(
                model="fake-embed",
                base_url=spec["base_url"],
                api_key="x",
                check_embedding_ctx_length=False,  # no tiktoken download
            )
        )
    metrics = [Faithfulness(), AnswerRelevancy(), ContextPrecision(), ContextRecall()]
    rows = json.loads(Path(spec["dataset"]).read_text())[: spec["n"]]
    cpu = _cpu_s()
    start, end, scores = ragas_timed_evaluate(rows, metrics, llm, embeddings)
    return {
        "start": start,
        "end": end,
        "wall_s": end - start,
        "cpu_s": _cpu_s() - cpu,
        "scores": scores,
        "warnings": dict(warned),
    }


def _status_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_hwm() -> bool:
    """Reset the process's RSS high-water mark (VmHWM); False where the kernel refuses."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def memory_rows(n: int, k: int = 3, seed: int = 11) -> list[dict[str, Any]]:
    """``make_dataset`` rows with context ids, for the retrieval metrics: a context is relevant
    when it holds a reference sentence word for word (else an unretrieved id is relevant)."""
    rows = make_dataset(n, k, seed)
    for row in rows:
        ids = [f"{row['name']}-{j}" for j in range(1, k + 1)]
        ref = sentences(row["reference"])
        relevant = [
            i for i, c in zip(ids, row["retrieved_contexts"]) if any(supports(c, s) for s in ref)
        ]
        row["id"] = row.pop("name")
        row["retrieved_context_ids"] = ids
        row["reference_context_ids"] = relevant or [f"{row['id']}-0"]
    return rows


def _scripted_responder() -> Any:
    """``ScriptedJudge`` responder: ``ragmeter_reply`` on the request the judge would send."""
    schemas: dict[type, dict[str, Any]] = {}

    def answer(messages: Any, schema: Any) -> dict[str, Any]:
        if schema not in schemas:
            schemas[schema] = schema.model_json_schema()
        body = {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "response_format": {"type": "json_schema", "json_schema": {"schema": schemas[schema]}},
        }
        return ragmeter_reply(body)

    return answer


def _worker_memory(spec: dict[str, Any]) -> dict[str, Any]:
    import resource
    import tracemalloc
    from collections import deque

    import ragmeter
    from ragmeter.dataset import Dataset
    from ragmeter.judge import NullCache
    from ragmeter.testing import ScriptedEmbeddings, ScriptedJudge

    trace = spec["trace"]
    gc.collect()
    out: dict[str, Any] = {"n": spec["n"], "trace": trace}
    out["rss_imported_kb"] = _status_kb("VmRSS")
    if trace:
        tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0] if trace else 0
    rows = memory_rows(spec["n"])
    dataset = Dataset.from_records(rows)
    del rows
    gc.collect()
    loaded = tracemalloc.get_traced_memory()[0] if trace else 0
    out["dataset_traced_bytes"] = loaded - base if trace else None
    out["rss_loaded_kb"] = _status_kb("VmRSS")
    out["maxrss_loaded_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    judge = ScriptedJudge(_scripted_responder(), cache=NullCache())
    embeddings = ScriptedEmbeddings(cache=NullCache())
    # The test doubles keep every call they answer (for assertions); a bounded deque keeps
    # that test-only log from growing with N here.
    judge.calls = deque(maxlen=1)  # type: ignore[assignment]
    embeddings.calls = deque(maxlen=1)  # type: ignore[assignment]
    out["hwm_reset"] = _reset_hwm()
    if trace:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        out["phases"] = _trace_phases(before)
    start = time.perf_counter()
    result = ragmeter.evaluate(
        dataset, list(MEMORY_METRICS), judge=judge, embeddings=embeddings, run_dir=spec["run_dir"]
    )
    out["wall_s"] = time.perf_counter() - start
    if trace:
        out["phases"].append(["end", *_phase_mark(before)])
        current, peak = tracemalloc.get_traced_memory()
        peak = max([peak - before, *(p for _, _, p in out["phases"])]) + before
        out["evaluate_traced_peak_bytes"] = peak - before
        out["evaluate_traced_retained_bytes"] = current - before
        tracemalloc.stop()
    out["hwm_during_kb"] = _status_kb("VmHWM") if out["hwm_reset"] else None
    out["maxrss_end_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out["scores"] = {
        name: {"mean": agg.mean, "n_ok": agg.n_ok, "n_failed": agg.n_failed}
        for name, agg in result.aggregates.items()
    }
    db = Path(spec["run_dir"]) / "run.db"
    out["run_db_bytes"] = db.stat().st_size if db.exists() else None
    return out


def _phase_mark(base: int) -> tuple[int, int]:
    """(current, peak since the last mark) above ``base``; restarts the peak."""
    import tracemalloc

    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    return current - base, peak - base


#: Synchronous steps of ``evaluate()`` wrapped to mark phases in the tracemalloc run (where
#: they still exist: internal names, looked up best-effort): module or class, attribute.
PHASES = (
    ("ragmeter.runner._evaluate", "_open_store"),
    ("ragmeter.runner._evaluate", "_score_plain"),
    ("ragmeter.runner._evaluate", "_config"),
    ("ragmeter.results._result", "EvaluationResult.to_jsonl"),
    ("ragmeter.results._result", "EvaluationResult.summary"),
)


def _trace_phases(base: int) -> list[list[Any]]:
    """Wrap :data:`PHASES` so that each call records [label, current, peak since the previous
    mark] before and after it; returns the (growing) list of marks."""
    import functools
    import importlib

    marks: list[list[Any]] = [["start", *_phase_mark(base)]]
    for module_name, path in PHASES:
        try:
            owner: Any = importlib.import_module(module_name)
            *parents, attr = path.split(".")
            for parent in parents:
                owner = getattr(owner, parent)
            original = getattr(owner, attr)
        except (ImportError, AttributeError):
            continue

        def wrapped(*a: Any, _f: Any = original, _name: str = attr, **k: Any) -> Any:
            marks.append([f"before {_name}", *_phase_mark(base)])
            try:
                return _f(*a, **k)
            finally:
                marks.append([f"after {_name}", *_phase_mark(base)])

        setattr(owner, attr, functools.wraps(original)(wrapped))
    return marks


def phase_peaks(marks: list[list[Any]]) -> list[tuple[str, int]]:
    """(phase, peak above the loaded dataset) between consecutive marks."""
    names = {
        "_open_store": "open the run store (samples into run.db)",
        "_score_plain": "retrieval metrics (precision@3, mrr), batches of samples",
        "_config": "run record (`_config`: usage totals of every sample)",
        "to_jsonl": "results.jsonl (`to_jsonl`, batches of 500)",
        "summary": "summary.json (`summary`: aggregates, breakdowns)",
    }
    out = []
    for (prev, *_), (label, _, peak) in itertools.pairwise(marks):
        if label.startswith("after "):
            name = names.get(label[6:], label[6:])
        elif prev == "after _score_plain" and label == "before _config":
            name = "judged metrics (faithfulness, context_recall): the runner's window"
        else:
            name = f"between {prev} and {label}"
        out.append((name, peak))
    return out


def _worker_main(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    work = {
        "ragmeter": _worker_ragmeter,
        "ragas": _worker_ragas,
        "ragas_modern_emb": _worker_ragas,
        "memory": _worker_memory,
    }
    Path(spec["out"]).write_text(json.dumps(work[spec["side"]](spec)))


# -- the parent: servers, request logs, analysis ------------------------------------------------


def in_flight_profile(
    times: list[float], latency: float, start: float, end: float, limit: int = CONCURRENCY
) -> dict[str, Any]:
    """Requests in flight over ``[start, end]``, each counted from arrival for ``latency`` s.

    ``wall = floor + head + gaps + tail``: ``head`` before the first request arrives, ``tail``
    after the last one's latency ends, ``gaps`` the capacity left unused in between (seconds at
    fewer than ``limit`` in flight, weighted by the share of the limit unused), and floor =
    requests x latency / limit.
    """
    if not times:
        return {}
    events = sorted([(t, 1) for t in times] + [(t + latency, -1) for t in times])
    level, last, busy = 0, events[0][0], Counter[int]()
    top = 0
    for t, delta in events:
        busy[min(level, limit)] += t - last
        level += delta
        top = max(top, level)
        last = t
    first, done = min(times), max(times) + latency
    span = done - first
    gaps = sum(seconds * (limit - level) / limit for level, seconds in busy.items())
    return {
        "head_s": first - start,
        "tail_s": end - done,
        "gaps_s": gaps,
        "span_s": span,
        "max_in_flight": top,
        "mean_in_flight": len(times) * latency / span if span > 0 else None,
        "share_at_limit": busy[limit] / span if span > 0 else None,
        "ramp_s": _time_to_reach(events, limit) - first if top >= limit else None,
    }


def _time_to_reach(events: list[tuple[float, int]], limit: int) -> float:
    level = 0
    for t, delta in events:
        level += delta
        if level >= limit:
            return t
    return events[-1][0]


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "RAGAS_DO_NOT_TRACK": "true",
        "HF_HUB_OFFLINE": "1",
        "OPENAI_API_KEY": "x",
        "PYTHONWARNINGS": "ignore",
    }


def _subprocess(python: str, spec: dict[str, Any], tmp: Path, tag: str) -> dict[str, Any]:
    spec_path = tmp / f"spec_{tag}.json"
    spec["out"] = str(tmp / f"out_{tag}.json")
    spec_path.write_text(json.dumps(spec))
    log = tmp / f"log_{tag}.txt"
    with log.open("w") as stream:
        done = subprocess.run(
            [python, str(Path(__file__).resolve()), "--worker", str(spec_path)],
            env=_env(),
            stdout=stream,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        sys.exit(f"worker {tag} failed:\n{log.read_text()[-4000:]}")
    return json.loads(Path(spec["out"]).read_text())


def slot_turnaround(times: list[float], limit: int = CONCURRENCY) -> float | None:
    """Median of ``t[i + limit] - t[i]`` over the middle 80% of the arrivals: while the limit
    is what holds requests back, the time one slot takes from a request's arrival to the next
    request's arrival in it (latency + per-request overhead on both sides)."""
    times = sorted(times)
    lo, hi = len(times) // 10, len(times) - len(times) // 10 - limit
    diffs = [times[i + limit] - times[i] for i in range(lo, hi)]
    return statistics.median(diffs) if diffs else None


def in_flight_bins(times: list[float], latency: float, start: float, end: float, width: float):
    """Mean requests in flight per ``width``-second bin from ``start`` to ``end``."""
    n_bins = max(1, int((end - start) / width + 0.999))
    busy = [0.0] * n_bins
    for t in times:
        a, b = t - start, t - start + latency
        for i in range(max(0, int(a / width)), min(n_bins, int(b / width) + 1)):
            lo, hi = i * width, (i + 1) * width
            busy[i] += max(0.0, min(b, hi) - max(a, lo))
    return [round(x / width, 1) for x in busy]


def run_once(
    side: str, repeat: int, data_path: Path, args: argparse.Namespace, tmp: Path
) -> dict[str, Any]:
    from ragmeter.testing import FakeOpenAIServer

    latency = args.latency_ms / 1000
    responder = ragmeter_reply if side == "ragmeter" else ragas_reply
    load_before = os.getloadavg()
    answered: dict[int, tuple[float, float]] = {}  # id(request body) -> responder start, end

    def timed(body: dict[str, Any]) -> dict[str, Any]:
        began = time.monotonic()
        reply = responder(body)
        answered[id(body)] = (began, time.monotonic())
        return reply

    server = FakeOpenAIServer(latency_s=latency, responder=timed, embedder=bow_embedding)
    with server as srv:
        spec = {"side": side, "base_url": srv.base_url, "dataset": str(data_path), "n": args.n}
        python = sys.executable if side == "ragmeter" else args.ragas_python
        server_cpu = time.process_time()  # this process does nothing else: the server's CPU
        ran = _subprocess(python, spec, tmp, f"{side}_{repeat}")
        server_cpu = time.process_time() - server_cpu
        requests = srv.requests
        server_max = srv.max_in_flight
    window = [r for r in requests if ran["start"] - 0.05 <= r.received_at <= ran["end"] + 0.05]
    chat = [r.received_at for r in window if r.path.endswith(CHAT)]
    embed = [r.received_at for r in window if r.path.endswith(EMBED)]
    # Server side of each chat request: the latency as slept (arrival to the responder), and
    # the responder's own time (it runs in this process, under the GIL).
    slept, responding = [], []
    for r in window:
        if r.path.endswith(CHAT) and id(r.body) in answered:
            began, ended = answered[id(r.body)]
            slept.append(began - r.received_at)
            responding.append(ended - began)
    run = {
        "side": side,
        "repeat": repeat,
        "n": args.n,
        "wall_s": ran["wall_s"],
        "client_cpu_s": ran["cpu_s"],
        "server_cpu_s": server_cpu,
        "chat_calls": len(chat),
        "embedding_calls": len(embed),
        "floor_s": len(chat) * latency / CONCURRENCY,
        "floor_embed_s": len(embed) * latency / CONCURRENCY,
        "floor_all_32_s": (len(chat) + len(embed)) * latency / (2 * CONCURRENCY),
        "floor_all_16_s": (len(chat) + len(embed)) * latency / CONCURRENCY,
        "chat_profile": in_flight_profile(chat, latency, ran["start"], ran["end"]),
        "embed_profile": in_flight_profile(embed, latency, ran["start"], ran["end"]),
        "slot_turnaround_s": slot_turnaround(chat),
        "server_slept_median_s": statistics.median(slept) if slept else None,
        "responder_median_s": statistics.median(responding) if responding else None,
        "chat_in_flight_bins": in_flight_bins(chat, latency, ran["start"], ran["end"], 0.5),
        "embed_in_flight_bins": in_flight_bins(embed, latency, ran["start"], ran["end"], 0.5),
        "server_max_in_flight": server_max,
        "scores": ran["scores"],
        "warnings": ran["warnings"],
        "load_before": list(load_before),
        "load_after": list(os.getloadavg()),
    }
    run["wall_over_floor"] = run["wall_s"] / run["floor_s"] if run["floor_s"] else None
    print(
        f"  {side:16s} #{repeat + 1}: wall {run['wall_s']:.2f} s, {len(chat)} chat + "
        f"{len(embed)} embedding calls, floor {run['floor_s']:.2f} s "
        f"(x{run['wall_over_floor'] or 0:.2f}), load {load_before[0]:.2f}",
        flush=True,
    )
    return run


def run_throughput(args: argparse.Namespace) -> dict[str, Any]:
    sides = [s for s in args.sides.split(",") if s]
    unknown = set(sides) - set(SIDES)
    if unknown:
        sys.exit(f"unknown sides {sorted(unknown)}: choose from {', '.join(SIDES)}")
    if any(s.startswith("ragas") for s in sides) and not Path(args.ragas_python).exists():
        sys.exit(f"no ragas python at {args.ragas_python}: run judge_calls_vs_ragas.py first")
    runs = []
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="ragmeter-throughput-") as name:
        tmp = Path(name)
        data_path = tmp / "data.json"
        data_path.write_text(json.dumps(make_dataset(args.n, args.k, args.seed)))
        for repeat in range(args.repeats):
            for side in sides if repeat % 2 == 0 else sides[::-1]:
                runs.append(run_once(side, repeat, data_path, args, tmp))
    ragas = any(s.startswith("ragas") for s in sides)
    return {
        "meta": {
            **_meta(args),
            "sides": sides,
            "n": args.n,
            "k": args.k,
            "repeats": args.repeats,
            "latency_ms": args.latency_ms,
            "ragas_versions": _ragas_versions(args.ragas_python) if ragas else {},
            "load_before": load_before,
            "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        },
        "runs": runs,
    }


def run_memory(args: argparse.Namespace) -> dict[str, Any]:
    runs = []
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="ragmeter-memory-") as name:
        tmp = Path(name)
        for n in [int(x) for x in args.memory_ns.split(",") if x]:
            for trace in (False, True):
                tag = f"memory_{n}_{'trace' if trace else 'rss'}"
                spec = {"side": "memory", "n": n, "trace": trace, "run_dir": str(tmp / tag)}
                began = time.perf_counter()
                out = _subprocess(sys.executable, spec, tmp, tag)
                out["load_before"] = list(os.getloadavg())
                runs.append(out)
                print(
                    f"  memory N={n:,} {'tracemalloc' if trace else 'rss'}: evaluate "
                    f"{out['wall_s']:.1f} s ({time.perf_counter() - began:.0f} s in all)",
                    flush=True,
                )
    return {
        "meta": {
            **_meta(args),
            "load_before": load_before,
            "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        },
        "runs": runs,
    }


def _meta(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "command": "python bench/throughput.py " + " ".join(sys.argv[1:]),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.system()} {platform.machine()}",
        "nproc": os.cpu_count(),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no", "src")),
        "python": platform.python_version(),
    }


# -- report -------------------------------------------------------------------------------------


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _opt(value: float | None, digits: int, scale: float = 1.0) -> str:
    return "n/a" if value is None else f"{value * scale:.{digits}f}"


def _fmt_mb(value: float | None) -> str:
    return "n/a" if value is None else f"{value / 2**20:,.1f}"


def summarise(report: dict[str, Any]) -> dict[str, Any]:
    runs = report["runs"]
    out: dict[str, Any] = {}
    for side in SIDES:
        rs = [r for r in runs if r["side"] == side]
        if rs:
            out[side] = {
                "wall_s": _median(rs, "wall_s"),
                "walls": [r["wall_s"] for r in rs],
                "floor_s": _median(rs, "floor_s"),
                "chat_calls": _median(rs, "chat_calls"),
                "embedding_calls": _median(rs, "embedding_calls"),
                "ratio": _median(rs, "wall_over_floor"),
                "failed": sum(sc["n_failed"] for r in rs for sc in r["scores"].values()),
                "median_run": sorted(rs, key=lambda r: r["wall_s"])[len(rs) // 2],
            }
    for side in SIDES[1:]:
        if "ragmeter" in out and side in out:
            out[side]["speedup"] = out[side]["wall_s"] / out["ragmeter"]["wall_s"]
    return out


def render(throughput: dict[str, Any] | None, memory: dict[str, Any] | None) -> str:
    lines: list[str] = []
    add = lines.append
    add("# Throughput and peak memory: ragmeter vs ragas 0.4.3 (issue 5)")
    add("")
    add(
        "Produced by `bench/throughput.py` (method in its docstring). Fake OpenAI-compatible "
        "servers (`ragmeter.testing.FakeOpenAIServer`), one per run, answer every chat and "
        "embeddings request after a fixed latency; each run is a fresh subprocess; wall time is "
        "taken around `evaluate()`."
    )
    add("")
    add("```sh")
    add(".venv/bin/python bench/throughput.py --write   # measure, save json, write this file")
    add(".venv/bin/python bench/throughput.py --render-only --write   # this file from the json")
    add("```")
    add("")
    if throughput:
        lines.extend(_render_throughput(throughput))
    if memory:
        lines.extend(_render_memory(memory))
    return "\n".join(lines).rstrip() + "\n"


LABELS = {
    "ragmeter": "ragmeter",
    "ragas": "ragas 0.4.3",
    "ragas_modern_emb": "ragas 0.4.3, ragas's async embeddings (answer_relevancy fails)",
}


def _render_throughput(report: dict[str, Any]) -> list[str]:
    meta, runs = report["meta"], report["runs"]
    s = summarise(report)
    lines: list[str] = []
    add = lines.append
    add("## Throughput: the standard suite, N={n}, k={k}".format(**meta))
    add("")
    add(f"- Date: {meta['date']}; command: `{meta['command']}`")
    add(
        f"- Machine: {meta['machine']}, nproc {meta['nproc']}; load average before "
        f"{meta['load_before']}, after {meta['load_after']} (1/5/15 min; 1-min load before each "
        "run in the per-run table)"
    )
    add(
        f"- ragmeter: commit `{meta['commit']}`{' (src/ modified)' if meta['dirty'] else ''}, "
        f"Python {meta['python']}; `OpenAIJudge` (json_schema) and `OpenAIEmbeddings`, "
        "`max_concurrency=16` each, `NullCache`, `evaluate()`'s default `concurrency` (64 "
        "samples in flight)"
    )
    versions = ", ".join(f"{k} {v}" for k, v in meta.get("ragas_versions", {}).items())
    add(
        f"- ragas: {versions or 'n/a'}; legacy `ragas.evaluate()` with "
        "`llm_factory('fake-judge', client=openai.AsyncOpenAI(...))` (instructor, JSON mode) and "
        "`RunConfig(max_workers=16)`; embeddings: `ragas` = "
        "`LangchainEmbeddingsWrapper(langchain_openai.OpenAIEmbeddings(...))`, "
        "`ragas_modern_emb` = `embedding_factory('openai', client=openai.AsyncOpenAI(...))`"
    )
    add(
        f"- Latency {meta['latency_ms']:.0f} ms on every request; {meta['repeats']} runs per "
        "side, sides alternating; medians in the summary"
    )
    add("")
    add(
        "| side | wall s, median (all runs) | chat calls | embedding calls | floor s | "
        "wall / floor | failed/NaN scores | ragas wall / ragmeter wall |"
    )
    add("|---|---|---|---|---|---|---|---|")
    for side in SIDES:
        if side in s:
            x = s[side]
            walls = ", ".join(f"{w:.2f}" for w in x["walls"])
            speedup = f"{x['speedup']:.2f}x" if "speedup" in x else ""
            add(
                f"| {LABELS[side]} | {x['wall_s']:.2f} ({walls}) | {x['chat_calls']:,.0f} | "
                f"{x['embedding_calls']:,.0f} | {x['floor_s']:.2f} | {x['ratio']:.2f} | "
                f"{x['failed']} | {speedup} |"
            )
    add("")
    add(
        "Floor = chat calls x latency / 16, the least time the chat calls can take under a "
        "limit of 16 requests in flight. Embedding calls have their own limiter (16) and overlap "
        "with chat calls; the per-run table also gives the floor counting every request "
        "(chat + embeddings) x latency / 32 and / 16."
    )
    add("")
    add("### Targets")
    add("")
    if "ragmeter" in s:
        r = s["ragmeter"]
        ok = r["ratio"] <= WALL_TARGET
        add(
            f"- ragmeter wall <= {WALL_TARGET} x floor: **{'met' if ok else 'MISSED'}** "
            f"(median {r['wall_s']:.2f} s = {r['ratio']:.2f} x {r['floor_s']:.2f} s; runs: "
            + ", ".join(f"{x['wall_over_floor']:.2f}" for x in runs if x["side"] == "ragmeter")
            + ")"
        )
    if "ragas" in s and "speedup" in s["ragas"]:
        x = s["ragas"]
        ok = x["speedup"] >= SPEEDUP_TARGET
        add(
            f"- at least {SPEEDUP_TARGET:.0f}x faster than ragas 0.4.3 in the same run: "
            f"**{'met' if ok else 'MISSED'}** ({x['speedup']:.3f}x, medians "
            f"{x['wall_s']:.2f} s / {s['ragmeter']['wall_s']:.2f} s)"
        )
    if "ragas_modern_emb" in s and "speedup" in s["ragas_modern_emb"]:
        x = s["ragas_modern_emb"]
        ok = x["speedup"] >= SPEEDUP_TARGET
        add(
            f"- the same against ragas with its own async embeddings, the faster ragas set-up "
            f"(answer_relevancy fails there, so ragas does less work): "
            f"**{'met' if ok else 'MISSED'}** ({x['speedup']:.3f}x, medians "
            f"{x['wall_s']:.2f} s / {s['ragmeter']['wall_s']:.2f} s)"
        )
    add("")
    add("### Every run")
    add("")
    add(
        "From the server's request log (chat requests; a request counts as in flight from its "
        "arrival for the latency): head = start of `evaluate()` to the first request; gaps = "
        "capacity left unused between the first request and the last one's answer (seconds "
        "below 16 in flight x the unused share); tail = last answer to the end of "
        "`evaluate()`; wall = floor + head + gaps + tail. Slot turnaround = median of "
        "t[i+16] - t[i] over the arrivals (middle 80%): latency plus per-request overhead while "
        "the limit holds requests back; slept = median time from a chat request's arrival to "
        "its responder call (the server's latency sleep), responder = median time the "
        "responder took. CPU: the worker process (client) and the parent (the fake server's "
        "threads) during the run."
    )
    add("")
    add(
        "| side | run | load | wall s | chat | emb. | floor s | wall / floor | head s | gaps s "
        "| tail s | at 16 | slot turnaround s | slept s | responder ms | client CPU s | "
        "server CPU s | floor all/32 s | floor all/16 s |"
    )
    add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for x in runs:
        p = x["chat_profile"]
        turn = x.get("slot_turnaround_s")
        add(
            f"| {x['side']} | {x['repeat'] + 1} | {x['load_before'][0]:.2f} | "
            f"{x['wall_s']:.2f} | {x['chat_calls']} | {x['embedding_calls']} | "
            f"{x['floor_s']:.2f} | {x['wall_over_floor']:.2f} | {p.get('head_s', 0):.2f} | "
            f"{p.get('gaps_s', 0):.2f} | {p.get('tail_s', 0):.2f} | "
            f"{100 * (p.get('share_at_limit') or 0):.0f}% | "
            f"{'n/a' if turn is None else f'{turn:.3f}'} | "
            f"{_opt(x.get('server_slept_median_s'), 3)} | "
            f"{_opt(x.get('responder_median_s'), 1, 1000)} | {x['client_cpu_s']:.1f} | "
            f"{x['server_cpu_s']:.1f} | {x['floor_all_32_s']:.2f} | {x['floor_all_16_s']:.2f} |"
        )
    add("")
    if "ragmeter" in s:
        m = s["ragmeter"]["median_run"]
        add(
            f"ragmeter's median run (#{m['repeat'] + 1}), mean requests in flight per 0.5 s from "
            "the start of `evaluate()`:"
        )
        add("")
        add("- chat: " + " ".join(f"{v:g}" for v in m["chat_in_flight_bins"]))
        add("- embeddings: " + " ".join(f"{v:g}" for v in m["embed_in_flight_bins"]))
        add("")
    notes = throughput_notes(report, s)
    if notes:
        add("### Notes")
        add("")
        for note in notes:
            add(note)
            add("")
    add("### Scores (first run of each side)")
    add("")
    add("| side | metric | mean | ok | failed/NaN |")
    add("|---|---|---|---|---|")
    for x in runs:
        if x["repeat"] != 0:
            continue
        for metric, sc in x["scores"].items():
            mean = "n/a" if sc["mean"] is None else f"{sc['mean']:.3f}"
            add(f"| {x['side']} | {metric} | {mean} | {sc['n_ok']} | {sc['n_failed']} |")
    add("")
    for side in SIDES:
        warned: Counter[str] = Counter()
        for x in runs:
            if x["side"] == side:
                warned.update(x.get("warnings", {}))
        if warned:
            add(
                f"Warnings logged by {side} (all runs): "
                + "; ".join(f"{n} x `{m}`" for m, n in warned.most_common())
            )
            add("")
    return lines


def throughput_notes(report: dict[str, Any], s: dict[str, Any]) -> list[str]:
    """Where the time goes, from the measurements."""
    lat = report["meta"]["latency_ms"] / 1000
    notes = []
    if "ragmeter" in s:
        m = s["ragmeter"]["median_run"]
        p = m["chat_profile"]
        bins = m["chat_in_flight_bins"]
        middle = bins[1:-2] or bins
        turn = m.get("slot_turnaround_s")
        notes.append(
            f"ragmeter, median run: {m['wall_s']:.2f} s = floor {m['floor_s']:.2f} s + head "
            f"{p['head_s']:.2f} s (start of `evaluate()` to the first request) + gaps "
            f"{p['gaps_s']:.2f} s + tail {p['tail_s']:.2f} s. The gaps are the ramp-up (first "
            f"0.5 s: {bins[0]:g} requests in flight on average), the run-down (last 0.5 s: "
            f"{bins[-1]:g}) and, in between, {statistics.fmean(middle):.1f} of 16 in flight on "
            f"average: a slot turns over in {turn or 0:.3f} s, "
            f"{1000 * ((turn or lat) - lat):.0f} ms more than the latency (the server "
            f"sleeps {m.get('server_slept_median_s') or 0:.3f} s and answers in "
            f"{1000 * (m.get('responder_median_s') or 0):.1f} ms, so the rest is HTTP and the "
            "client's own work between one answer and the next request on a 2-core machine "
            "shared with the server). The tail is mostly one embedding request: a sample's "
            "answer_relevancy embeds its generated questions only after all of the sample's "
            "judge steps (`run_task`: `gather`, then each metric's `finish`), so the last "
            "samples end with a 0.2 s embedding request after the last chat answer (the last "
            f"embedding answer comes {1000 * m['embed_profile'].get('tail_s', 0):.0f} ms before "
            "`evaluate()` returns)."
        )
    if "ragas" in s:
        r = s["ragas"]["median_run"]
        notes.append(
            f"ragas 0.4.3 with every score real, median run: {r['wall_s']:.1f} s for "
            f"{r['chat_calls']:,} chat calls (floor {r['floor_s']:.1f} s). Its legacy "
            "`AnswerRelevancy` embeds synchronously (`embed_query`, `embed_documents`) inside "
            f"the event loop: {r['embedding_calls']} embedding requests x {lat:.1f} s = "
            f"{r['embedding_calls'] * lat:.0f} s during which no other job runs, which is most of "
            f"its {r['chat_profile']['gaps_s']:.0f} s of gaps (16 chat requests in flight only "
            f"{100 * r['chat_profile']['share_at_limit']:.0f}% of the time). The chat client is "
            "async (instructor over `openai.AsyncOpenAI`); the embeddings are "
            "not: the legacy metric has no async embedding path."
        )
    if "ragas_modern_emb" in s and "ragmeter" in s:
        r = s["ragas_modern_emb"]
        ratio = r["floor_s"] / s["ragmeter"]["floor_s"]
        notes.append(
            f"ragas with its own async embeddings: {r['wall_s']:.1f} s, {r['chat_calls']:,.0f} "
            f"chat calls, {r['ratio']:.2f} x its floor, every answer_relevancy NaN "
            "(`AttributeError: 'OpenAIEmbeddings' object has no attribute 'embed_query'`) and no "
            "embedding request. This matches the issue's measurement of ragas with an async "
            "client (26.6 s, 1,800 calls, 85% of its floor), which was probably taken this way. "
            f"Against it, the speed-up is the ratio of the floors, {ratio:.2f} (ragas makes "
            f"{ratio:.0f}x the chat calls), times ragas's wall / floor over ragmeter's "
            f"({r['ratio']:.2f} / {s['ragmeter']['ratio']:.2f}): {r.get('speedup', 0):.2f}x. "
            "More than 3x needs ragmeter closer to its floor than ragas is to its own."
        )
    notes.append(
        "Caveats. The fake server answers every request after the same latency whatever its "
        "length; ragmeter's calls are fewer but longer (reference_review and verify carry every "
        "context), so against a real endpoint its per-call latency would be somewhat higher. "
        "Wall times were taken on a shared 2-core machine (load in the per-run table); both "
        "clients and the fake server share those cores."
    )
    return notes


def memory_notes(rss: dict[int, Any], traced: dict[int, Any], ns: list[int]) -> list[str]:
    notes = []
    if len(ns) >= 2 and all(n in traced for n in ns):
        lo, hi = ns[0], ns[-1]
        per_sample = (traced[hi]["dataset_traced_bytes"] - traced[lo]["dataset_traced_bytes"]) / (
            hi - lo
        )
        notes.append(
            f"The input: the `Dataset` (validated `Sample` objects) takes about "
            f"{per_sample / 1024:.1f} KiB per sample here (3 contexts of 60-100 words), "
            f"{_fmt_mb(traced[hi]['dataset_traced_bytes'])} MiB at N={hi:,}. The caller holds it, "
            "and `evaluate()` on a file path loads the whole file into one too: the input is "
            "not streamed. It accounts for the growth of the process's peak RSS "
            f"({_fmt_mb(rss[lo]['maxrss_end_kb'] * 1024)} -> "
            f"{_fmt_mb(rss[hi]['maxrss_end_kb'] * 1024)} MiB)."
        )
        notes.append(
            "The runner: what `evaluate()` allocates above the loaded dataset peaks at "
            f"{_fmt_mb(traced[lo]['evaluate_traced_peak_bytes'])} MiB (tracemalloc) at "
            f"N={lo:,} and {_fmt_mb(traced[hi]['evaluate_traced_peak_bytes'])} MiB at N={hi:,}: "
            "judged samples are created as the window of samples in flight moves and their "
            "results go to run.db as they finish; results.jsonl is written in pages of 500 "
            "samples; the retrieval metrics run in batches of up to 4,096 samples (the "
            "runner's default `batch_size`), which is why that phase is larger at the larger N "
            "(1,000 samples in one batch against 4,096). run.db on disk: "
            f"{_fmt_mb(rss[hi].get('run_db_bytes'))} MiB at N={hi:,}."
        )
    if not all(r.get("hwm_reset") for r in rss.values()):
        notes.append(
            "The RSS high-water mark could not be reset here (/proc/self/clear_refs), so the "
            "'RSS peak during evaluate' columns are not available; ru_maxrss is the process's."
        )
    notes.append(
        "The test doubles record every call they answer (`ScriptedJudge.calls`, "
        "`ScriptedEmbeddings.calls`, for assertions in tests); the benchmark swaps those lists "
        "for bounded deques so that they do not grow with N. Both use `NullCache`. "
        "tracemalloc counts Python allocations only (not SQLite's page cache); the RSS columns "
        "come from a separate run without tracemalloc."
    )
    return notes


def _render_memory(report: dict[str, Any]) -> list[str]:
    meta, runs = report["meta"], report["runs"]
    lines: list[str] = []
    add = lines.append
    add("## Peak memory: ScriptedJudge, metrics " + ", ".join(MEMORY_METRICS))
    add("")
    add(f"- Date: {meta['date']}; command: `{meta['command']}`")
    add(
        f"- Machine: {meta['machine']}, nproc {meta['nproc']}; load average before "
        f"{meta['load_before']}, after {meta['load_after']}; ragmeter commit `{meta['commit']}`"
    )
    add("")
    rss = {r["n"]: r for r in runs if not r["trace"]}
    traced = {r["n"]: r for r in runs if r["trace"]}
    ns = sorted(rss)
    add(
        "| N | dataset (tracemalloc) MiB | RSS after import MiB | RSS dataset loaded MiB | "
        "RSS peak during evaluate MiB | evaluate's RSS above loaded MiB | ru_maxrss MiB | "
        "evaluate's tracemalloc peak MiB | retained after MiB | run.db MiB | evaluate s |"
    )
    add("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in ns:
        a, b = rss[n], traced.get(n, {})
        hwm = a.get("hwm_during_kb")
        add(
            f"| {n:,} | {_fmt_mb(b.get('dataset_traced_bytes'))} | "
            f"{_fmt_mb(a['rss_imported_kb'] * 1024)} | {_fmt_mb(a['rss_loaded_kb'] * 1024)} | "
            f"{_fmt_mb(hwm * 1024 if hwm else None)} | "
            f"{_fmt_mb((hwm - a['rss_loaded_kb']) * 1024 if hwm else None)} | "
            f"{_fmt_mb(a['maxrss_end_kb'] * 1024)} | "
            f"{_fmt_mb(b.get('evaluate_traced_peak_bytes'))} | "
            f"{_fmt_mb(b.get('evaluate_traced_retained_bytes'))} | "
            f"{_fmt_mb(a.get('run_db_bytes'))} | {a['wall_s']:.1f} |"
        )
    add("")
    if len(ns) >= 2:
        lo, hi = ns[0], ns[-1]
        pairs = []
        for label, get in (
            ("ru_maxrss", lambda n: rss[n]["maxrss_end_kb"] * 1024),
            (
                "evaluate's RSS above loaded",
                lambda n: (
                    (rss[n]["hwm_during_kb"] - rss[n]["rss_loaded_kb"]) * 1024
                    if rss[n].get("hwm_during_kb")
                    else None
                ),
            ),
            ("evaluate's tracemalloc peak", lambda n: traced[n]["evaluate_traced_peak_bytes"]),
            ("dataset (tracemalloc)", lambda n: traced[n]["dataset_traced_bytes"]),
        ):
            try:
                a, b = get(lo), get(hi)
            except KeyError:
                continue
            if a and b:
                pairs.append(f"{label} x{b / a:.2f}")
        add(f"Ratios N={hi:,} / N={lo:,} ({hi // lo}x the samples): " + ", ".join(pairs) + ".")
        add("")
    if all("phases" in traced.get(n, {}) for n in ns):
        table = {n: phase_peaks(traced[n]["phases"]) for n in ns}
        order = [name for name, _ in table[ns[0]]]
        add(
            "Where `evaluate()`'s tracemalloc peak is reached: the peak of each phase above "
            "the memory held once the dataset was loaded (MiB):"
        )
        add("")
        add("| phase | " + " | ".join(f"N={n:,}" for n in ns) + " |")
        add("|---|" + "---|" * len(ns))
        for i, name in enumerate(order):
            cells = []
            for n in ns:
                rows = table[n]
                cells.append(_fmt_mb(rows[i][1]) if i < len(rows) and rows[i][0] == name else "?")
            if not name.startswith("between") or any(
                c != "?" and float(c.replace(",", "")) >= 1.0 for c in cells
            ):
                add(f"| {name} | " + " | ".join(cells) + " |")
        add("")
    for note in memory_notes(rss, traced, ns):
        add(note)
        add("")
    scores = []
    for n in ns:
        sc = rss[n]["scores"]
        scores.append(
            f"N={n:,}: "
            + ", ".join(f"{m} {v['n_ok']} ok / {v['n_failed']} failed" for m, v in sc.items())
        )
    add("Scores computed: " + "; ".join(scores) + ".")
    add("")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="samples in the throughput runs")
    parser.add_argument("--k", type=int, default=5, help="contexts per sample")
    parser.add_argument("--repeats", type=int, default=3, help="runs per side")
    parser.add_argument("--sides", default=",".join(SIDES), help="of " + ", ".join(SIDES))
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--ragas-python", default=str(DEFAULT_RAGAS_VENV / "bin" / "python"))
    parser.add_argument("--memory-ns", default="1000,10000", help="dataset sizes for memory")
    parser.add_argument("--no-throughput", action="store_true")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--memory-json", type=Path, default=DEFAULT_MEMORY_JSON)
    parser.add_argument("--write", action="store_true", help=f"write {DEFAULT_MD.name}")
    parser.add_argument("--out", type=Path, default=DEFAULT_MD)
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker_main(args.worker)
        return
    if not args.render_only:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        if not args.no_throughput and args.sides:
            print(f"throughput: N={args.n}, k={args.k}, {args.repeats} runs per side", flush=True)
            args.json.write_text(json.dumps(run_throughput(args), indent=1))
        if not args.no_memory and args.memory_ns:
            print(f"memory: N={args.memory_ns}", flush=True)
            args.memory_json.write_text(json.dumps(run_memory(args), indent=1))
    throughput = json.loads(args.json.read_text()) if args.json.exists() else None
    memory = json.loads(args.memory_json.read_text()) if args.memory_json.exists() else None
    text = render(throughput, memory)
    print(text)
    if args.write:
        args.out.write_text(text)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
