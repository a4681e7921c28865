"""Retrieval metrics benchmark: ragmeter vs ranx vs pytrec_eval.

A seeded synthetic run (default 100,000 queries x 100 retrieved documents, float scores with
some ties, string doc ids) and graded qrels are generated once and pickled. Every measurement
then runs in its own fresh Python subprocess, which loads the pickle (not timed) and measures:

* import   - importing the library (reported, not part of the total);
* warm-up  - a first build + compute on the first ``--warmup-queries`` queries. For ranx this
  is numba's JIT: with an empty numba cache it compiles; with a populated on-disk cache
  (``cache=True``, what a user sees from the second process on) it only loads;
* build    - turning the shared Python dicts into the library's input objects (ranx
  ``Qrels``/``Run``, pytrec_eval ``RelevanceEvaluator``; ragmeter takes the dicts as they are);
* compute  - computing the metric set, per query, for every query.

Total = build + compute (warm). Peak memory is the resident set (RSS): once the data is loaded
the child resets the kernel's high-water mark (``/proc/self/clear_refs``), takes the current
RSS as the baseline, and reports the high-water mark minus that baseline, i.e. the extra memory
the library needed on top of the input dicts. Where the reset is not possible it falls back on
``getrusage(RUSAGE_SELF).ru_maxrss`` minus the baseline (an underestimate when loading the data
peaked higher than the library does); the method used is printed.

The per-query scores of the three libraries are compared metric by metric.

    python bench/retrieval_bench.py                    # full size, prints only
    python bench/retrieval_bench.py --write            # ... and writes RESULTS.md, results.json
    python bench/retrieval_bench.py --render-only      # RESULTS.md again from results.json
    python bench/retrieval_bench.py --queries 2000 --repeats 1   # quick smoke run
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import pickle
import platform
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
RAW = HERE / "results.json"

# (ragmeter name, ranx name, pytrec_eval measure, pytrec_eval result key)
METRICS: list[tuple[str, str, str, str]] = [
    ("precision@10", "precision@10", "P.10", "P_10"),
    ("recall@100", "recall@100", "recall.100", "recall_100"),
    ("map", "map", "map", "map"),
    ("mrr", "mrr", "recip_rank", "recip_rank"),
    ("ndcg@10", "ndcg@10", "ndcg_cut.10", "ndcg_cut_10"),
    ("r_precision", "r-precision", "Rprec", "Rprec"),
    ("hit@10", "hit_rate@10", "success.10", "success_10"),
]
NAMES = [m[0] for m in METRICS]
TOLERANCE = 1e-9

# What each measured configuration runs: (library, numba threads, numba cache).
CONFIGS: dict[str, dict[str, Any]] = {
    "ragmeter": {"lib": "ragmeter"},
    "ranx": {"lib": "ranx", "threads": None, "cache": "empty"},
    "ranx-1thread": {"lib": "ranx", "threads": 1, "cache": "populated"},
    "pytrec_eval": {"lib": "pytrec_eval"},
}


# --------------------------------------------------------------------------- data


def generate(
    n_queries: int, depth: int, seed: int, corpus_size: int = 1_000_000, tie_rate: float = 0.005
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    """A synthetic run ``{qid: {doc: score}}`` and qrels ``{qid: {doc: grade}}``.

    Each query retrieves ``depth`` distinct documents of a ``corpus_size`` corpus with uniform
    random scores; a ``tie_rate`` share of them copy the next higher score (ties). Each query
    has 1-8 judged documents with grades 0-3 (so some queries have no relevant document); about
    60% of them are retrieved, mostly near the top, the rest are not retrieved at all. The
    documents are inserted in random order, not rank order, so no library gets pre-sorted input.
    """
    rng = np.random.default_rng(seed)
    width = len(str(corpus_size - 1))
    pool = [f"doc{i:0{width}d}" for i in range(corpus_size)]

    docs = rng.integers(0, corpus_size, size=(n_queries, depth))
    while True:  # distinct documents within a query
        ordered = np.sort(docs, axis=1)
        dup = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if not len(dup):
            break
        docs[dup] = rng.integers(0, corpus_size, size=(len(dup), depth))

    scores = -np.sort(-rng.random((n_queries, depth)), axis=1)  # column j = rank j
    tie = rng.random((n_queries, depth - 1)) < tie_rate
    scores[:, 1:][tie] = scores[:, :-1][tie]

    n_judged = rng.integers(1, 9, size=n_queries)
    n_retrieved = rng.binomial(n_judged, 0.6)
    positions = np.minimum(rng.geometric(0.08, size=(n_queries, 8)) - 1, depth - 1)
    others = rng.integers(0, corpus_size, size=(n_queries, 8))
    grades = rng.choice(4, p=[0.3, 0.3, 0.25, 0.15], size=(n_queries, 8))
    order = rng.permuted(np.tile(np.arange(depth), (n_queries, 1)), axis=1)

    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    qwidth = len(str(n_queries - 1))
    for i in range(n_queries):
        qid = f"q{i:0{qwidth}d}"
        row_docs = docs[i].tolist()
        row_scores = scores[i].tolist()
        run[qid] = {pool[row_docs[j]]: row_scores[j] for j in order[i].tolist()}
        judged: dict[str, int] = {}
        g = grades[i].tolist()
        for p in dict.fromkeys(positions[i, : n_retrieved[i]].tolist()):
            judged[pool[row_docs[p]]] = g[len(judged)]
        retrieved = set(row_docs)
        for d in others[i, : n_judged[i] - n_retrieved[i]].tolist():
            if d not in retrieved:
                judged[pool[d]] = g[len(judged)]
        if not judged:
            judged[pool[row_docs[positions[i, 0]]]] = g[0]
        qrels[qid] = judged
    return run, qrels


def trec_order(scores: dict[str, float]) -> list[str]:
    """trec_eval's ranking: descending score, ties broken by descending doc id."""
    return sorted(scores, key=lambda d: (scores[d], d), reverse=True)


def has_ties(scores: dict[str, float]) -> bool:
    return len(set(scores.values())) < len(scores)


def has_float32_ties(scores: dict[str, float]) -> bool:
    """Ties once the scores are rounded to single precision, as trec_eval stores them."""
    return len(set(np.float32(list(scores.values())).tolist())) < len(scores)


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# --------------------------------------------------------------------------- child side


def _status_kib(field: str) -> int:
    match = re.search(rf"^{field}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.M)
    if match is None:
        raise OSError(f"no {field} in /proc/self/status")
    return int(match.group(1))


class PeakMemory:
    """Peak RSS above a baseline, via a reset of the kernel's high-water mark when possible."""

    def __init__(self) -> None:
        self.method = "VmHWM after /proc/self/clear_refs reset, minus baseline VmRSS"
        try:
            self.reset()
            self.baseline = _status_kib("VmRSS")
        except OSError:
            self.method = "ru_maxrss minus baseline ru_maxrss (no high-water reset possible)"
            self.can_reset = False
            self.baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        else:
            self.can_reset = True

    def reset(self) -> None:
        Path("/proc/self/clear_refs").write_text("5")

    def rebase(self) -> None:
        """Start counting again from the current RSS (after a warm-up)."""
        if self.can_reset:
            gc.collect()
            self.reset()
            self.baseline = _status_kib("VmRSS")

    def peak_mib(self) -> float:
        if self.can_reset:
            return (_status_kib("VmHWM") - self.baseline) / 1024
        return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - self.baseline) / 1024


def _subset(d: dict[str, Any], qids: list[str]) -> dict[str, Any]:
    return {q: d[q] for q in qids}


def child(args: argparse.Namespace) -> None:
    lib = args.child
    out: dict[str, Any] = {"lib": lib, "pid": os.getpid()}

    t0 = time.perf_counter()
    if lib == "ragmeter":
        from ragmeter.metrics.retrieval import evaluate_run

        names = NAMES

        def build(run: dict, qrels: dict) -> Any:
            return run, qrels

        def compute(built: Any) -> Any:
            return evaluate_run(built[0], built[1], names)

    elif lib == "ranx":
        from ranx import Qrels, Run, evaluate

        names = [m[1] for m in METRICS]

        def build(run: dict, qrels: dict) -> Any:
            return Qrels(qrels), Run(run)

        import numba

        out["threads"] = numba.get_num_threads()

        def compute(built: Any) -> Any:
            return evaluate(built[0], built[1], names, return_mean=False, save_results_in_run=False)

    elif lib == "pytrec_eval":
        import pytrec_eval

        measures = {m[2] for m in METRICS}

        def build(run: dict, qrels: dict) -> Any:
            return pytrec_eval.RelevanceEvaluator(qrels, measures), run

        def compute(built: Any) -> Any:
            return built[0].evaluate(built[1])

    else:
        raise SystemExit(f"unknown library {lib!r}")
    out["import_s"] = time.perf_counter() - t0

    with open(args.data, "rb") as f:
        run, qrels = pickle.load(f)
    gc.collect()
    memory = PeakMemory()
    out["memory_method"] = memory.method
    out["data_rss_mib"] = memory.baseline / 1024

    # Warm-up on a prefix of the queries (>= 10: ranx drops to 1 thread below that, for good).
    warm_qids = list(run)[: max(10, args.warmup_queries)]
    t0 = time.perf_counter()
    compute(build(_subset(run, warm_qids), _subset(qrels, warm_qids)))
    out["warmup_s"] = time.perf_counter() - t0
    out["warmup_peak_mib"] = memory.peak_mib()
    memory.rebase()

    c0, t0 = _cpu_s(), time.perf_counter()
    built = build(run, qrels)
    t1 = time.perf_counter()
    out["build_peak_mib"] = memory.peak_mib()
    result = compute(built)
    t2, c2 = time.perf_counter(), _cpu_s()
    out["cpu_s"] = c2 - c0
    out["peak_mib"] = memory.peak_mib()
    out["build_s"] = t1 - t0 if lib != "ragmeter" else 0.0
    out["compute_s"] = t2 - t1
    out["total_s"] = out["build_s"] + out["compute_s"]

    if args.scores:
        qids = sorted(q for q in run if q in qrels)
        per_query: dict[str, np.ndarray] = {}
        if lib == "ragmeter":
            index = {q: i for i, q in enumerate(result.query_ids)}
            take = np.array([index[q] for q in qids])
            per_query = {name: np.asarray(result.scores[name])[take] for name in NAMES}
        elif lib == "ranx":
            index = {q: i for i, q in enumerate(built[1].keys())}
            take = np.array([index[q] for q in qids])
            per_query = {m[0]: np.asarray(result[m[1]])[take] for m in METRICS}
        else:
            per_query = {m[0]: np.array([result[q][m[3]] for q in qids]) for m in METRICS}
        np.savez(args.scores, qids=np.array(qids), **per_query)

    Path(args.result).write_text(json.dumps(out))


def breakdown_child(args: argparse.Namespace) -> None:
    """Where ragmeter's time goes: evaluate_run's steps, timed one by one (one process)."""
    out: dict[str, Any] = {}
    with open(args.data, "rb") as f:
        run, qrels = pickle.load(f)
    gc.collect()
    try:
        from collections.abc import Mapping

        from ragmeter.metrics._registry import get_metric
        from ragmeter.metrics.retrieval import build_judgments, rank_by_score

        steps: list[tuple[str, float]] = []
        t = time.perf_counter()
        metrics = [get_metric(name) for name in NAMES]
        query_ids = [q for q in run if q in qrels]
        steps.append(("resolve metrics, match query ids", time.perf_counter() - t))
        t = time.perf_counter()
        rankings = [
            rank_by_score(r) if isinstance(r := run[q], Mapping) else list(r) for q in query_ids
        ]
        steps.append(("rank_by_score (sort each query's docs)", time.perf_counter() - t))
        t = time.perf_counter()
        judgments = build_judgments(rankings, [qrels[q] for q in query_ids])
        steps.append(("build_judgments (grade lookup -> matrix)", time.perf_counter() - t))
        t = time.perf_counter()
        judgments.ideal  # noqa: B018 - cached property, built on first use (NDCG)
        steps.append(("Judgments.ideal (padded qrel grades, NDCG)", time.perf_counter() - t))
        for metric in metrics:
            t = time.perf_counter()
            metric.compute(judgments)
            steps.append((f"compute {metric.name}", time.perf_counter() - t))
        out["steps"] = steps
    except Exception as exc:  # noqa: BLE001 - ragmeter internals may change; report, not crash
        out["error"] = f"{type(exc).__name__}: {exc}"
    Path(args.result).write_text(json.dumps(out))


# --------------------------------------------------------------------------- parent side


def run_child(
    config: str, data: Path, workdir: Path, env_extra: dict[str, str], scores: Path | None, args
) -> dict[str, Any]:
    spec = CONFIGS[config]
    result = workdir / f"{config}-{time.monotonic_ns()}.json"
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        spec["lib"],
        "--data",
        str(data),
        "--result",
        str(result),
        "--warmup-queries",
        str(args.warmup_queries),
    ]
    if scores is not None:
        cmd += ["--scores", str(scores)]
    env = {**os.environ, **env_extra}
    load_before = os.getloadavg()[0]
    subprocess.run(cmd, env=env, check=True)
    return {
        **json.loads(result.read_text()),
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }


def ranx_env(config: str, workdir: Path, repeat: int) -> dict[str, str]:
    spec = CONFIGS[config]
    env: dict[str, str] = {}
    if spec.get("threads"):
        env["NUMBA_NUM_THREADS"] = str(spec["threads"])
    # "ranx" runs first in each repeat, on an empty cache (it compiles and fills it);
    # "ranx-1thread" then finds that cache populated (it only loads).
    cache = workdir / f"numba-cache-{repeat}"
    if spec.get("cache") == "empty" and cache.exists() and any(cache.iterdir()):
        raise RuntimeError(f"numba cache {cache} is not empty")
    cache.mkdir(exist_ok=True)
    env["NUMBA_CACHE_DIR"] = str(cache)
    return env


def median(values: list[float]) -> float:
    return statistics.median(values)


def compare(scores: dict[str, dict[str, np.ndarray]]) -> list[dict[str, Any]]:
    rows = []
    libs = list(scores)
    for name in NAMES:
        means = {lib: float(scores[lib][name].mean()) for lib in libs}
        for i, a in enumerate(libs):
            for b in libs[i + 1 :]:
                diff = np.abs(scores[a][name] - scores[b][name])
                rows.append(
                    {
                        "metric": name,
                        "pair": f"{a} vs {b}",
                        "mean_a": means[a],
                        "mean_b": means[b],
                        "mean_diff": abs(means[a] - means[b]),
                        "max_query_diff": float(diff.max()) if len(diff) else 0.0,
                        "n_differ": int((diff > TOLERANCE).sum()),
                        "agree": bool(
                            abs(means[a] - means[b]) <= TOLERANCE
                            and (not len(diff) or diff.max() <= TOLERANCE)
                        ),
                    }
                )
    return rows


def diagnose(
    run: dict[str, dict[str, float]],
    qrels: dict[str, dict[str, int]],
    qids: list[str],
    per_lib: dict[str, dict[str, np.ndarray]],
    disagreements: list[dict[str, Any]],
    workdir: Path,
    args: argparse.Namespace,
) -> list[str]:
    """Explain disagreements by re-scoring modified copies of the run (not timed)."""
    if not disagreements:
        return []
    notes: list[str] = []
    tied = np.array([has_ties(run[q]) for q in qids])
    tied32 = np.array([has_float32_ties(run[q]) for q in qids])
    for pair in sorted({r["pair"] for r in disagreements}):
        a, b = pair.split(" vs ")
        differ = np.zeros(len(qids), dtype=bool)
        for name in NAMES:
            differ |= np.abs(per_lib[a][name] - per_lib[b][name]) > TOLERANCE
        only32 = tied32 & ~tied
        notes.append(
            f"{pair}: {int(differ.sum())} of {len(qids):,} queries differ on some metric; of "
            f"those, {int((differ & tied).sum())} have exactly tied scores, "
            f"{int((differ & only32).sum())} have scores that tie only once rounded to float32, "
            f"{int((differ & ~tied32).sum())} neither (the run has {int(tied.sum()):,} queries "
            f"with exact ties and {int(only32.sum()):,} more with float32-only ties)."
        )

    def rescore(name: str, new_run: dict[str, dict[str, float]], libs: list[str]) -> dict:
        path = workdir / f"data-{name}.pkl"
        with open(path, "wb") as f:
            pickle.dump((new_run, qrels), f, protocol=pickle.HIGHEST_PROTOCOL)
        scores = {}
        for lib in libs:
            config = "ranx-1thread" if lib == "ranx" else lib
            env = ranx_env(config, workdir, 0) if lib == "ranx" else {}
            out = workdir / f"scores-{name}-{lib}.npz"
            run_child(config, path, workdir, env, out, args)
            scores[lib] = load_scores(out)[1]
        path.unlink()
        return scores

    # 1. Tie-free copy: scores replaced by 1/rank in trec_eval's order (float64 comparison,
    #    descending doc id on ties), far apart even in float32. Grades unchanged.
    tiefree = rescore(
        "tiefree",
        {q: {d: 1.0 / (r + 1) for r, d in enumerate(trec_order(docs))} for q, docs in run.items()},
        list(per_lib),
    )
    bad = [r for r in compare(tiefree) if not r["agree"]]
    if bad:
        notes.append(
            "On a tie-free copy of the run (scores replaced by 1/rank in ragmeter's order) these "
            "still disagree: "
            + "; ".join(f"{r['metric']} {r['pair']} ({r['n_differ']} queries)" for r in bad)
            + "."
        )
    else:
        notes.append(
            "On a tie-free copy of the run (scores replaced by 1/rank in ragmeter's order, grades "
            f"unchanged) all three libraries agree on every metric to {TOLERANCE:g} per query: "
            "every disagreement is in the order of documents whose scores tie (exactly, or "
            "once rounded to float32)."
        )
    if any("ranx" in r["pair"] for r in disagreements):
        notes.append(
            "ranx does not break ties by doc id: `Run` sorts each query with numba's "
            "`np.argsort` of the negated scores (`sort_dict_by_value` in "
            "ranx/data_structures/common.py), which is not stable and never looks at doc ids, "
            "so tied documents come out in an arbitrary order. trec_eval and ragmeter put tied "
            "documents in descending doc id order."
        )

    # 2. trec_eval keeps scores in single precision: score ragmeter on float32-rounded scores.
    if any(r["pair"] == "ragmeter vs pytrec_eval" for r in disagreements):
        rounded = rescore(
            "float32",
            {
                q: dict(zip(docs, np.float32(list(docs.values())).tolist(), strict=True))
                for q, docs in run.items()
            },
            ["ragmeter"],
        )["ragmeter"]
        bad32 = [
            r
            for r in compare({"ragmeter": rounded, "pytrec_eval": per_lib["pytrec_eval"]})
            if not r["agree"]
        ]
        notes.append(
            "ragmeter scoring the run with every score rounded to float32 "
            + (
                "agrees with pytrec_eval on every metric and query. "
                if not bad32
                else f"still differs from pytrec_eval on {', '.join(r['metric'] for r in bad32)}. "
            )
            + "trec_eval stores a run's scores as C `float` (`TEXT_RESULTS.sim` in trec_eval's "
            "trec_format.h), so two scores that differ only beyond single precision are a tie "
            "for it, broken by descending doc id; ragmeter compares the float64 values."
        )
    return notes


def load_scores(path: Path) -> tuple[list[str], dict[str, np.ndarray]]:
    with np.load(path) as z:
        return z["qids"].tolist(), {name: z[name] for name in NAMES}


def machine_info() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem_kib = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        memory = f"{mem_kib / 1024**2:.1f} GiB"
    except (OSError, AttributeError):
        memory = "unknown"
    versions = {}
    for dist in ("ragmeter", "ranx", "pytrec-eval-terrier", "numba", "numpy"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return {
        "nproc": str(len(os.sched_getaffinity(0))),
        "cpu": cpu,
        "memory": memory,
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        **{f"version:{k}": v for k, v in versions.items()},
    }


def fmt_s(x: float) -> str:
    return f"{x:.2f}"


def measured_table(summary: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| library | import (s) | warm-up (s) | build (s) | compute (s) | **total (s)** "
        "| total, min (s) | CPU (s) | peak during build (MiB) | peak overall (MiB) "
        "| every run's total (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for config, s in summary.items():
        build = "—" if config == "ragmeter" else fmt_s(s["build_s"])
        build_peak = "—" if config == "ragmeter" else f"{s['build_peak_mib']:.0f}"
        lines.append(
            f"| {s['label']} | {fmt_s(s['import_s'])} | {fmt_s(s['warmup_s'])} | {build} "
            f"| {fmt_s(s['compute_s'])} | **{fmt_s(s['total_s'])}** | {fmt_s(s['min_total_s'])} "
            f"| {fmt_s(s['cpu_s'])} | {build_peak} | {s['peak_mib']:.0f} "
            f"| {', '.join(fmt_s(t) for t in s['totals'])} |"
        )
    return lines


def agreement_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| metric | pair | mean A | mean B | abs. diff of means | max per-query abs. diff "
        "| queries differing (> 1e-9) | agree |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['metric']} | {r['pair']} | {r['mean_a']:.12f} | {r['mean_b']:.12f} "
            f"| {r['mean_diff']:.3g} | {r['max_query_diff']:.3g} | {r['n_differ']} "
            f"| {'yes' if r['agree'] else '**no**'} |"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--warmup-queries", type=int, default=1000)
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.name}")
    parser.add_argument("--no-breakdown", action="store_true", help="skip ragmeter's breakdown")
    parser.add_argument(
        "--render-only",
        action="store_true",
        help=f"rewrite {RESULTS.name} from {RAW.name} (the last --write run) without measuring",
    )
    # Internal: run one measurement in this (fresh) process.
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--breakdown-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    parser.add_argument("--scores", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        child(args)
        return
    if args.breakdown_child:
        breakdown_child(args)
        return
    if args.render_only:
        RESULTS.write_text(render(json.loads(RAW.read_text())) + _other_sections())
        print(f"wrote {RESULTS} from {RAW}")
        return

    command = "python bench/retrieval_bench.py " + shlex.join(
        sys.argv[1:] if argv is None else argv
    )
    started = dt.datetime.now(dt.timezone.utc)
    info = machine_info()
    print(f"machine: {info}", flush=True)

    with tempfile.TemporaryDirectory(prefix="ragmeter-bench-") as tmp:
        workdir = Path(tmp)
        t = time.perf_counter()
        run, qrels = generate(args.queries, args.depth, args.seed)
        gen_s = time.perf_counter() - t
        n_judged = sum(map(len, qrels.values()))
        n_relevant = sum(g >= 1 for q in qrels.values() for g in q.values())
        no_relevant = sum(not any(g >= 1 for g in q.values()) for q in qrels.values())
        retrieved_relevant = sum(
            sum(qrels[q].get(d, 0) >= 1 for d in docs) for q, docs in run.items()
        )
        tied_queries = [q for q, docs in run.items() if has_ties(docs)]
        data_info = {
            "queries": len(run),
            "depth": args.depth,
            "run entries": sum(map(len, run.values())),
            "judged": n_judged,
            "relevant (grade >= 1)": n_relevant,
            "relevant and retrieved": retrieved_relevant,
            "queries without a relevant doc": no_relevant,
            "queries with tied scores": len(tied_queries),
            "generation (s, not counted)": round(gen_s, 1),
        }
        print(f"data: {data_info}", flush=True)
        data = workdir / "data.pkl"
        with open(data, "wb") as f:
            pickle.dump((run, qrels), f, protocol=pickle.HIGHEST_PROTOCOL)

        measurements: dict[str, list[dict[str, Any]]] = {c: [] for c in CONFIGS}
        score_files: dict[str, Path] = {}
        for repeat in range(args.repeats):
            for config in CONFIGS:
                env = ranx_env(config, workdir, repeat) if CONFIGS[config]["lib"] == "ranx" else {}
                lib = CONFIGS[config]["lib"]
                scores = None
                if repeat == 0 and lib not in score_files:
                    scores = score_files[lib] = workdir / f"scores-{lib}.npz"
                m = run_child(config, data, workdir, env, scores, args)
                measurements[config].append(m)
                print(
                    f"repeat {repeat + 1}/{args.repeats} {config:13s} "
                    f"warm-up {m['warmup_s']:7.2f}s build {m['build_s']:7.2f}s "
                    f"compute {m['compute_s']:7.2f}s total {m['total_s']:7.2f}s "
                    f"peak {m['peak_mib']:7.0f} MiB",
                    flush=True,
                )

        threads = measurements["ranx"][0]["threads"]
        labels = {
            "ragmeter": "ragmeter",
            "ranx": f"ranx ({threads} numba threads; warm-up = JIT compile, empty numba cache)",
            "ranx-1thread": "ranx (1 numba thread; warm-up = load from numba's on-disk cache)",
            "pytrec_eval": "pytrec_eval",
        }
        summary: dict[str, dict[str, Any]] = {}
        for config, ms in measurements.items():
            summary[config] = {
                "label": labels[config],
                **{
                    key: median([m[key] for m in ms])
                    for key in (
                        "import_s",
                        "warmup_s",
                        "build_s",
                        "compute_s",
                        "total_s",
                        "cpu_s",
                        "build_peak_mib",
                        "peak_mib",
                    )
                },
                "totals": [m["total_s"] for m in ms],
                "min_total_s": min(m["total_s"] for m in ms),
                "warmup_peak_mib": median([m["warmup_peak_mib"] for m in ms]),
            }
        memory_method = measurements["ragmeter"][0]["memory_method"]
        loads = [
            m[k] for ms in measurements.values() for m in ms for k in ("load_before", "load_after")
        ]
        data_rss = median([m["data_rss_mib"] for ms in measurements.values() for m in ms])

        # Agreement ---------------------------------------------------------------------------
        per_lib = {}
        qid_lists = {}
        for lib, path in score_files.items():
            qid_lists[lib], per_lib[lib] = load_scores(path)
        if len({tuple(q) for q in qid_lists.values()}) != 1:
            raise SystemExit("the libraries scored different query sets")
        qids = qid_lists["ragmeter"]
        rows = compare(per_lib)
        disagreements = [r for r in rows if not r["agree"]]

        diagnosis = diagnose(run, qrels, qids, per_lib, disagreements, workdir, args)

        # ragmeter breakdown ------------------------------------------------------------------
        breakdown: dict[str, Any] = {}
        if not args.no_breakdown:
            result = workdir / "breakdown.json"
            subprocess.run(
                [
                    sys.executable,
                    str(Path(__file__).resolve()),
                    "--breakdown-child",
                    "--data",
                    str(data),
                    "--result",
                    str(result),
                ],
                check=True,
            )
            breakdown = json.loads(result.read_text())

    report = {
        "command": command,
        "started": f"{started:%Y-%m-%d %H:%M} UTC",
        "machine": info,
        "data": data_info,
        "queries": args.queries,
        "depth": args.depth,
        "repeats": args.repeats,
        "warmup_queries": args.warmup_queries,
        "memory_method": memory_method,
        "data_rss_mib": data_rss,
        "load_range": [min(loads), max(loads)],
        "summary": summary,
        "measurements": measurements,
        "agreement": rows,
        "diagnosis": diagnosis,
        "breakdown": breakdown,
    }
    print("\n".join(body(report)))
    if args.write:
        RAW.write_text(json.dumps(report, indent=1) + "\n")
        RESULTS.write_text(render(report) + _other_sections())
        print(f"wrote {RESULTS} and {RAW}")


def body(report: dict[str, Any]) -> list[str]:
    """The measured figures, agreement and breakdown as Markdown lines."""
    summary, breakdown = report["summary"], report["breakdown"]
    lines = [
        f"{report['queries']:,} queries x {report['depth']} retrieved docs; "
        f"{report['repeats']} fresh process(es) per library, median shown (every run's total in "
        "the last column). Metrics: " + ", ".join(NAMES) + ".",
        "",
        *measured_table(summary),
        "",
        f"Peak memory: {report['memory_method']}, in MiB; the input dicts themselves take about "
        f"{report['data_rss_mib']:,.0f} MiB of RSS and are not counted. CPU (s) is user + "
        "system time of the process (all threads) during build + compute.",
        "",
        f"1-minute load average before/after each measured process: "
        f"{report['load_range'][0]:.1f} to {report['load_range'][1]:.1f} on "
        f"{report['machine']['nproc']} CPUs (the benchmark itself accounts for about 1 on one "
        "core, 2 for ranx's two numba threads; more than that means other jobs shared the "
        "machine, and the min column is the less disturbed figure).",
        "",
        "## Agreement",
        "",
        f"Per-query scores, aligned by query id (tolerance {TOLERANCE:g}):",
        "",
        *agreement_table(report["agreement"]),
        "",
    ]
    if report["diagnosis"]:
        lines += ["Diagnosis of the disagreement:", ""]
        lines += [f"- {d}" for d in report["diagnosis"]] + [""]
    else:
        lines += [f"All three libraries agree on every metric to {TOLERANCE:g} per query.", ""]
    if breakdown.get("steps"):
        total = sum(s for _, s in breakdown["steps"])
        lines += [
            "## Where ragmeter's time goes",
            "",
            "`evaluate_run`'s steps replayed and timed one by one (one extra process, one run):",
            "",
            "| step | time (s) | share |",
            "|---|---:|---:|",
        ]
        lines += [
            f"| {name} | {s:.2f} | {100 * s / total:.0f}% |" for name, s in breakdown["steps"]
        ]
        lines += [f"| sum | {total:.2f} | 100% |", ""]
    elif breakdown.get("error"):
        lines += [f"ragmeter breakdown unavailable: {breakdown['error']}", ""]
    return lines


def reading(report: dict[str, Any]) -> str:
    """A factual reading of the figures (every number in it is a measured median or min)."""
    summary, breakdown = report["summary"], report["breakdown"]
    rag, ranx, ranx1, trec = (
        summary[c] for c in ("ragmeter", "ranx", "ranx-1thread", "pytrec_eval")
    )

    def against(other: dict[str, Any], name: str) -> str:
        ratio = rag["total_s"] / other["total_s"]
        if ratio <= 1:
            return f"{1 / ratio:.1f}x faster than {name} ({other['total_s']:.2f} s)"
        return f"{ratio:.1f}x slower than {name} ({other['total_s']:.2f} s)"

    fast = rag["total_s"] <= ranx["total_s"]
    fast_min = rag["min_total_s"] <= ranx["min_total_s"]
    text = (
        f"**ragmeter is {'' if fast else 'not '}at least as fast as ranx** on this data: "
        f"median total {rag['total_s']:.2f} s, {against(ranx, 'warm ranx')}, "
        f"{against(ranx1, 'ranx on one thread')} and {against(trec, 'pytrec_eval')}; "
        f"the fastest runs say {'the same' if fast == fast_min else 'otherwise'} "
        f"({rag['min_total_s']:.2f} s against ranx's {ranx['min_total_s']:.2f} s). "
    )
    if ranx["compute_s"] < rag["compute_s"]:
        text += (
            f"ranx's time goes into building `Qrels` and `Run` ({ranx['build_s']:.2f} s): its "
            f"compute step alone ({ranx['compute_s']:.2f} s) is faster than ragmeter's whole "
            f"call, so a caller who keeps those objects and evaluates them many times pays less "
            f"per evaluation with ranx after the first. "
        )
    else:
        text += (
            f"ranx spends {ranx['build_s']:.2f} s building `Qrels` and `Run` and "
            f"{ranx['compute_s']:.2f} s computing. "
        )
    text += (
        f"ranx's warm figures leave out its JIT: a process on an empty numba cache first spends "
        f"{ranx['warmup_s']:.1f} s compiling (peak {ranx['warmup_peak_mib']:.0f} MiB), and "
        f"{ranx1['warmup_s']:.1f} s loading the compiled code from numba's on-disk cache once "
        f"it is populated; ragmeter's warm-up is {rag['warmup_s']:.2f} s. "
    )
    if breakdown.get("steps"):
        steps = sorted(breakdown["steps"], key=lambda s: -s[1])
        total = sum(s for _, s in steps)
        top = ", ".join(f"{name}: {s:.2f} s ({100 * s / total:.0f}%)" for name, s in steps[:3])
        text += f"ragmeter's time goes mostly to {top}. "
    text += (
        f"Peak memory above the input dicts: ragmeter {rag['peak_mib']:.0f} MiB, ranx "
        f"{ranx['peak_mib']:.0f} MiB, pytrec_eval {trec['peak_mib']:.0f} MiB."
    )
    if report["diagnosis"]:
        text += " The per-query scores do not all agree to 1e-9 (see Agreement); " + (
            "every difference comes from the order of tied documents."
            if any("every disagreement is in the order" in d for d in report["diagnosis"])
            else "not every difference is explained by tie order."
        )
    return text


#: Sections other benchmarks append to RESULTS.md; rewriting the retrieval part keeps them.
OTHER_SECTIONS = ("## Throughput and memory (issue 5)",)


def _other_sections() -> str:
    if not RESULTS.exists():
        return ""
    text = RESULTS.read_text(encoding="utf-8")
    starts = [text.find(heading) for heading in OTHER_SECTIONS if heading in text]
    return "\n" + text[min(starts) :] if starts else ""


def render(report: dict[str, Any]) -> str:
    info = report["machine"]
    versions = ", ".join(f"{k[8:]} {v}" for k, v in info.items() if k.startswith("version:"))
    text = [
        "# Retrieval metrics benchmark: ragmeter vs ranx vs pytrec_eval",
        "",
        "Written by `python bench/retrieval_bench.py --write` (raw figures in `results.json`); "
        "see `bench/README.md` for what is measured. Rerun to refresh; do not edit by hand.",
        "",
        f"- Command: `{report['command']}` (from the repository root, in `.venv`)",
        f"- Date: {report['started']}",
        f"- Machine: {info['nproc']} CPUs (nproc), {info['cpu']}, {info['memory']} RAM, "
        f"{info['os']}",
        f"- Python: {info['python']}; {versions}",
        "- Data: " + ", ".join(f"{k} {v:,}" for k, v in report["data"].items()),
        "",
        "## Reading",
        "",
        reading(report),
        "",
        "## Figures",
        "",
        "Phases: *import* the library (not in the total); *warm-up* = a first build + compute "
        f"on the first {report['warmup_queries']:,} queries in the same process (ranx: numba "
        "JIT; not in the total); *build* = the library's input objects from the shared Python "
        "dicts (ragmeter takes the dicts as they are); *compute* = the metric set, per query, "
        "for every query. **Total = build + compute.** ranx is called as `evaluate(qrels, run, "
        "metrics, return_mean=False, save_results_in_run=False)`, its fastest path to per-query "
        "scores; pytrec_eval as `RelevanceEvaluator(qrels, measures).evaluate(run)`; ragmeter as "
        "`evaluate_run(run, qrels, metrics)`.",
        "",
        *body(report),
    ]
    return "\n".join(text).rstrip() + "\n"


if __name__ == "__main__":
    main()
