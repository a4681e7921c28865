"""Peak memory and wall time of ``evaluate()`` on a million-row JSONL file (streamed).

Writes a JSONL file of N retrieval samples (an id, 10 retrieved document ids, 1 or 2 relevant
ids) to a temporary folder and evaluates it with ``mrr`` and ``recall@10`` into a run
directory there, as ``ragmeter eval data.jsonl -m mrr,recall@10 --run-dir ...`` would. Each
size runs in a fresh subprocess, which reports its peak RSS (``resource.getrusage``), its RSS
after importing ragmeter (the floor), the wall time and the scores' means, checked against the
means computed from how the file was made. Sizes: ``--rows`` (default 100,000 and 1,000,000).

    python bench/streaming_memory.py [--rows 100000,1000000] [--out bench/RESULTS_streaming.md]

Disk: about 1.2 GB per million rows (the file, the run's store and results.jsonl), removed at
the end. Time: a few minutes per million rows on one core.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = 10


def write_file(path: Path, n: int) -> dict[str, float]:
    """``n`` samples; returns the means of mrr and recall@10 they must score (by hand: sample
    i's first relevant id is at rank i % 13 + 1, absent when that is past 10; every third
    sample has a second relevant id, never retrieved)."""
    mrr = recall = 0.0
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            rank = i % 13 + 1
            retrieved = [f"doc-{i}-{k}" for k in range(DOCS)]
            relevant = [f"doc-{i}-{rank - 1}" if rank <= DOCS else f"doc-{i}-missing"]
            if i % 3 == 0:
                relevant.append(f"doc-{i}-other")
            row = {"id": f"q{i}", "retrieved_context_ids": retrieved}
            row["reference_context_ids"] = relevant
            out.write(json.dumps(row) + "\n")
            if rank <= DOCS:
                mrr += 1 / rank
                recall += 1 / len(relevant)
    return {"mrr": mrr / n, "recall@10": recall / n}


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child(path: str, run_dir: str) -> None:
    """Evaluate ``path`` and print what it cost, as one JSON line."""
    sys.path.insert(0, str(ROOT / "src"))
    import ragmeter
    from ragmeter import evaluate

    floor = rss_mib()
    start = time.perf_counter()
    result = evaluate(path, ["mrr", "recall@10"], run_dir=run_dir, progress=False)
    means = {name: a.mean for name, a in result.aggregates.items()}
    wall = time.perf_counter() - start
    print(
        json.dumps(
            {
                "ragmeter": ragmeter.__version__,
                "n": result.aggregates["mrr"].n_total,
                "means": means,
                "wall_s": wall,
                "floor_rss_mib": floor,
                "peak_rss_mib": rss_mib(),
            }
        )
    )


def measure(n: int, folder: Path) -> dict[str, object]:
    path = folder / f"data-{n}.jsonl"
    started = time.perf_counter()
    expected = write_file(path, n)
    written_s = time.perf_counter() - started
    size_mib = path.stat().st_size / 2**20
    run_dir = folder / f"run-{n}"
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path), str(run_dir)],
        capture_output=True,
        text=True,
        check=True,
    )
    measured = json.loads(out.stdout.strip().splitlines()[-1])
    if measured["n"] != n:
        raise SystemExit(f"{n} rows written, {measured['n']} scored")
    for name, mean in expected.items():
        if abs(measured["means"][name] - mean) > 1e-9:
            raise SystemExit(f"{name}: mean {measured['means'][name]}, expected {mean}")
    store_mib = sum(f.stat().st_size for f in run_dir.iterdir()) / 2**20
    path.unlink()
    for file in run_dir.iterdir():
        file.unlink()
    run_dir.rmdir()
    return {**measured, "file_mib": size_mib, "run_dir_mib": store_mib, "write_s": written_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="100000,1000000", help="sizes, comma-separated")
    parser.add_argument("--out", type=Path, help="write the results as Markdown here")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    load = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix="ragmeter-stream-") as folder:
        for n in (int(x) for x in args.rows.split(",")):
            result = measure(n, Path(folder))
            rows.append((n, result))
            print(
                f"{n:>9,} rows: peak RSS {result['peak_rss_mib']:.0f} MiB "
                f"(after imports {result['floor_rss_mib']:.0f} MiB), "
                f"{result['wall_s']:.0f} s, {n / result['wall_s']:,.0f} rows/s",
                flush=True,
            )
    lines = [
        "| rows | file | run dir | peak RSS | RSS after imports | wall | rows/s |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for n, r in rows:
        lines.append(
            f"| {n:,} | {r['file_mib']:.0f} MiB | {r['run_dir_mib']:.0f} MiB | "
            f"{r['peak_rss_mib']:.0f} MiB | {r['floor_rss_mib']:.0f} MiB | {r['wall_s']:.0f} s | "
            f"{n / r['wall_s']:,.0f} |"
        )
    header = (
        f"{dt.date.today().isoformat()}, ragmeter {rows[0][1]['ragmeter']}, Python "
        f"{platform.python_version()}, {os.cpu_count()} cores, load average {load:.2f} at the "
        "start"
    )
    table = "\n".join(lines)
    print(f"\n{header}\n\n{table}")
    if args.out:
        args.out.write_text(f"{header}\n\n{table}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
