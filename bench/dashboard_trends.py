"""The dashboard's first ``/trends`` on a large store: 10 runs x 50,000 samples (SQLite).

    PYTHONPATH=src .venv/bin/python bench/dashboard_trends.py [--runs 10] [--samples 50000]
        [--from-samples] [--timeout 600]

Builds the store in a temporary folder: one run of synthetic samples scored by ``mrr`` and
``rouge_l`` (no judge) recorded through :meth:`ragmeter.store.Store.record`, then copied in
SQL (``INSERT ... SELECT``, each copy's ``rouge_l`` scores shifted so every run differs)
with the means and intervals the store keeps with a run (:func:`ragmeter.store.run_estimates`,
what ``record`` computes). Then, in a fresh process, it times the first ``GET /trends`` of a
new dashboard app and reads that process's peak RSS (``ru_maxrss``) before and after.

``--from-samples`` first clears the kept estimates: the dashboard then computes every
interval from the runs' samples, as it did before the store kept them (ragmeter 93c152a
and earlier); ``--timeout`` bounds that measurement.
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

METRICS = ["mrr", "rouge_l"]
WORDS = [
    "paris",
    "london",
    "tokyo",
    "capital",
    "river",
    "bridge",
    "museum",
    "tower",
    "city",
    "north",
    "south",
]


def build(path: Path, runs: int, samples: int) -> float:
    """The store at ``path``; the seconds it took."""
    import sqlalchemy as sa

    from ragmeter import evaluate
    from ragmeter.store import Store, run_estimates

    started = time.perf_counter()
    rng = random.Random(0)
    docs = ["d1", "d2", "d3", "d4", "d5"]
    rows = [
        {
            "id": f"s{i}",
            "user_input": f"question {i}?",
            "response": " ".join(rng.choices(WORDS, k=8)),
            "reference": " ".join(rng.choices(WORDS, k=8)),
            "retrieved_context_ids": rng.sample(docs, 3),
            "reference_context_ids": [rng.choice(docs)],
        }
        for i in range(samples)
    ]
    store = Store(f"sqlite:///{path}")
    first = store.record(evaluate(rows, METRICS, progress=False), name="nightly")
    with store.engine.begin() as db:
        for k in range(1, runs):
            run_id = f"{k:032x}"
            db.execute(
                sa.text(
                    "INSERT INTO runs SELECT :id, name, datetime(created_at, :later), status, "
                    "dataset_hash, dataset_path, n_samples, metrics, aggregates, config, params, "
                    "tags, notes, ragmeter_version, git_commit, git_dirty, run_dir, NULL "
                    "FROM runs WHERE id = :first"
                ),
                {"id": run_id, "later": f"+{k} days", "first": first.id},
            )
            for table in ("run_samples", "run_results"):
                columns = [c["name"] for c in sa.inspect(db).get_columns(table)][1:]
                listed = ", ".join(columns)
                db.execute(
                    sa.text(
                        f"INSERT INTO {table} (run_id, {listed}) "
                        f"SELECT :id, {listed} FROM {table} WHERE run_id = :first"
                    ),
                    {"id": run_id, "first": first.id},
                )
            db.execute(
                sa.text(
                    "UPDATE run_results SET score = min(1.0, score + :shift) "
                    "WHERE run_id = :id AND metric = 'rouge_l'"
                ),
                {"shift": 0.01 * k, "id": run_id},
            )
            scores = {
                metric: [
                    row[0]
                    for row in db.execute(
                        sa.text(
                            "SELECT CASE WHEN status = 'ok' THEN score END FROM run_results "
                            "WHERE run_id = :id AND metric = :metric ORDER BY position"
                        ),
                        {"id": run_id, "metric": metric},
                    )
                ]
                for metric in METRICS
            }
            estimates = run_estimates(scores)
            aggregates = json.loads(
                db.execute(
                    sa.text("SELECT aggregates FROM runs WHERE id = :id"), {"id": run_id}
                ).scalar_one()
            )
            for metric in METRICS:
                aggregates[metric]["mean"] = estimates[metric]["mean"]
            db.execute(
                sa.text("UPDATE runs SET estimates = :e, aggregates = :a WHERE id = :id"),
                {"e": json.dumps(estimates), "a": json.dumps(aggregates), "id": run_id},
            )
    store.engine.dispose()
    return time.perf_counter() - started


def measure(path: Path) -> dict[str, float]:
    """In this (fresh) process: the first ``GET /trends`` of a new app on the store."""
    from fastapi.testclient import TestClient

    from ragmeter.dashboard import create_app
    from ragmeter.store import Store

    store = Store(f"sqlite:///{path}")
    client = TestClient(create_app(store, port=8321), base_url="http://127.0.0.1:8321")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    response = client.get("/trends")
    seconds = time.perf_counter() - started
    assert response.status_code == 200, response.text[:500]
    points = client.get("/api/trends").json()
    return {
        "first_trends_s": round(seconds, 3),
        "peak_rss_mb_before": round(before, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "points": sum(len(m["points"]) for m in points["metrics"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--samples", type=int, default=50_000)
    parser.add_argument("--from-samples", action="store_true")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        print(json.dumps(measure(args.measure)))
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "runs.db"
        built = build(path, args.runs, args.samples)
        if args.from_samples:
            import sqlite3

            with sqlite3.connect(path) as db:
                db.execute("UPDATE runs SET estimates = NULL")
        size = path.stat().st_size / 2**20
        print(f"store: {args.runs} runs x {args.samples} samples, {size:.0f} MiB, built in "
              f"{built:.1f} s", flush=True)  # fmt: skip
        try:
            done = subprocess.run(
                [sys.executable, __file__, "--measure", str(path)],
                capture_output=True,
                text=True,
                timeout=args.timeout,
                env=os.environ,
            )
        except subprocess.TimeoutExpired:
            print(json.dumps({"first_trends_s": f"> {args.timeout:g} (stopped)"}))
            return
        if done.returncode:
            sys.exit(done.stderr[-3000:])
        print(done.stdout.strip())


if __name__ == "__main__":
    main()
