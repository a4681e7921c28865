"""A large retrieval-only run through the CLI against the kernels' own time (issue 22, part 3).

``n`` queries, each with ``k`` retrieved ids (seeded; 1-3 relevant ids, some retrieved), as a
JSONL file; 4 metrics: precision@5, ndcg@10, mrr, map.

* kernels: :func:`ragmeter.metrics.retrieval.evaluate_run` on the same queries, in this
  process (best of 3, after a warm-up on 1,000 queries): the vectorised computation alone;
* CLI: ``ragmeter eval DATA -m ... --no-store -q -o RUN_DIR`` in a subprocess, 3 times
  (median wall time reported, each run listed; ``RUSAGE_CHILDREN``'s ``ru_maxrss`` is the
  largest peak RSS of any of them): wall time from start to exit, everything included
  (imports, reading and checking, scoring, the run's files). As
  on an installed machine, the modules' bytecode is cached: a first run on 1,000 queries
  writes it (``PYTHONDONTWRITEBYTECODE`` is dropped from the children's environment; with
  it, every run compiles ragmeter and its dependencies again, about 0.5 s here);
* check: ``results.jsonl`` holds ``n`` lines with the 4 metrics each;
* stages (:func:`time_stages`): what every run must do per row, each timed alone on the same
  file in this process, 1,024 lines at a time, with garbage collection as in the run: parsing
  the lines, validating them into samples, their records, the dataset fingerprint, storing
  them in a run database; writing ``results.jsonl`` from the CLI's run; the interpreter with
  the modules a run imports (fastest of 3). With the kernels they are the floor of this design.

    .venv/bin/python bench/_scale_retrieval.py --n 100000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

METRICS = ["precision@5", "ndcg@10", "mrr", "map"]


def write_data(path: Path, n: int, k: int, seed: int = 3) -> None:
    """The JSONL file of ``n`` queries."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for q in range(n):
            qid = f"q{q}"
            retrieved = [f"d{rng.randrange(5000)}" for _ in range(k)]
            retrieved = list(dict.fromkeys(retrieved))
            relevant = list(dict.fromkeys(rng.sample(retrieved, rng.randint(0, 2))))
            relevant += [f"x{rng.randrange(5000)}" for _ in range(1 + rng.randint(0, 1))]
            relevant = list(dict.fromkeys(relevant))
            row = {
                "id": qid,
                "user_input": f"question {q}",
                "retrieved_context_ids": retrieved,
                "reference_context_ids": relevant,
            }
            out.write(json.dumps(row) + "\n")


def read_data(path: Path) -> tuple[dict, dict]:
    """The queries of the JSONL file as (run, qrels), for the kernels."""
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            retrieved = row["retrieved_context_ids"]
            run[row["id"]] = {d: float(len(retrieved) - r) for r, d in enumerate(retrieved)}
            qrels[row["id"]] = dict.fromkeys(row["reference_context_ids"], 1)
    return run, qrels


def time_kernels(run: dict, qrels: dict) -> float:
    from ragmeter.metrics.retrieval import evaluate_run

    first = list(run)[:1000]
    evaluate_run({q: run[q] for q in first}, {q: qrels[q] for q in first}, METRICS)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        evaluate_run(run, qrels, METRICS)
        best = min(best, time.perf_counter() - start)
    return best


#: Modules an ``eval`` of retrieval metrics imports (for the interpreter's own share).
RUN_IMPORTS = (
    "ragmeter.cli._app, ragmeter.cli._eval, ragmeter.runner, ragmeter.metrics.retrieval, "
    "ragmeter.results, ragmeter.diagnosis, ragmeter.stats"
)


def time_stages(path: Path, run_dir: Path, env: dict[str, str]) -> dict[str, float]:
    """Seconds of each stage a run must do per row (see the module's docstring)."""
    import itertools

    from ragmeter._services import fewer_collections
    from ragmeter.dataset import DatasetFingerprint, Sample
    from ragmeter.results import EvaluationResult, RunDatabase

    times = dict.fromkeys(["parse", "validate", "record", "fingerprint", "store"], 0.0)
    store = RunDatabase(None)
    fingerprint = DatasetFingerprint()
    start = 0
    clock = time.perf_counter
    with fewer_collections(), path.open(encoding="utf-8") as handle:
        while lines := list(itertools.islice(handle, 1024)):
            t0 = clock()
            rows = [json.loads(line) for line in lines]
            t1 = clock()
            samples = [Sample.model_validate(row) for row in rows]
            t2 = clock()
            records = [sample.to_record() for sample in samples]
            t3 = clock()
            for record in records:
                fingerprint.add_record(record)
            t4 = clock()
            store.put_samples(
                (start + i, start + i + 1, record["id"], record) for i, record in enumerate(records)
            )
            t5 = clock()
            for stage, took in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
                times[stage] += took
            start += len(lines)
    store.close()
    result = EvaluationResult.load(run_dir)
    with tempfile.TemporaryDirectory() as folder:
        t0 = clock()
        result.to_jsonl(Path(folder) / "results.jsonl")
        times["results_jsonl"] = clock() - t0
    assert result.store is not None
    result.store.close()
    imports = []
    for _ in range(3):
        t0 = clock()
        subprocess.run([sys.executable, "-c", f"import {RUN_IMPORTS}"], env=env, check=True)
        imports.append(clock() - t0)
    times["interpreter_and_imports"] = min(imports)
    return {stage: round(took, 3) for stage, took in times.items()}


def run_retrieval(n: int = 100_000, k: int = 20, repeats: int = 3) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ragmeter-scale-") as folder:
        data = Path(folder) / "data.jsonl"
        write_data(data, n, k)
        # The CLI first: a child forked from a process holding the kernels' data would
        # count that data in its peak RSS until it execs.

        def command(source: Path, out: Path) -> list[str]:
            return [
                sys.executable, "-m", "ragmeter", "eval", str(source), "-m", ",".join(METRICS),
                "--no-store", "-q", "-o", str(out),
            ]  # fmt: skip

        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        warm = Path(folder) / "warm.jsonl"
        write_data(warm, 1000, k)
        subprocess.run(
            command(warm, Path(folder) / "warm"), env=env, capture_output=True, check=True
        )
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        walls: list[float] = []
        for attempt in range(repeats):
            run_dir = Path(folder) / f"run{attempt}"
            start = time.perf_counter()
            done = subprocess.run(
                command(data, run_dir), env=env, capture_output=True, text=True, check=False
            )
            walls.append(round(time.perf_counter() - start, 2))
            if done.returncode != 0:
                raise SystemExit(f"ragmeter eval failed ({done.returncode}): {done.stderr[-3000:]}")
        child = resource.getrusage(resource.RUSAGE_CHILDREN)
        # ru_maxrss of the children is the largest of any: the warm-up's is far smaller.
        assert child.ru_maxrss >= before.ru_maxrss
        wall = sorted(walls)[len(walls) // 2]
        kernels_s = time_kernels(*read_data(data))
        stages = time_stages(data, run_dir, env)
        lines = 0
        complete = True
        with (run_dir / "results.jsonl").open(encoding="utf-8") as results:
            for line in results:
                lines += 1
                metrics = json.loads(line).get("metrics", {})
                complete &= all(name in metrics for name in METRICS)
        return {
            "n": n,
            "k": k,
            "metrics": METRICS,
            "kernels_s": round(kernels_s, 3),
            "cli_wall_s": round(wall, 2),
            "cli_wall_runs_s": walls,
            "cli_cpu_s": round(
                (child.ru_utime + child.ru_stime - before.ru_utime - before.ru_stime) / repeats,
                2,
            ),
            "ratio": round(wall / kernels_s, 2),
            "peak_rss_mb": round(child.ru_maxrss / 1024, 1),
            "results_lines": lines,
            "complete": complete and lines == n,
            "stages_s": stages,
        }


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--k", type=int, default=20)
    args = parser.parse_args()
    print(json.dumps(run_retrieval(args.n, args.k), indent=1))
