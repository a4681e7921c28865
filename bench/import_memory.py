"""Peak memory of ``ragmeter import`` on a ~50 MB export, as a multiple of the file's size.

Writes a Langfuse observations export (JSON lines: one trace, a retriever and a generation
per trace; about 50 MB with the default ``--traces``) and an OTLP/JSON file of the same
traces, then runs ``ragmeter import`` on each in a fresh process and reports its peak RSS
(``ru_maxrss`` of the child) and that less the RSS of a process that only imports ragmeter's
CLI. Run from the repository root::

    PYTHONPATH=src python bench/import_memory.py [--traces 40000] [--format langfuse]

Results: the commit message that added it, and docs/reliability.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import resource, sys
from ragmeter.cli import app
try:
    app(sys.argv[1:], standalone_mode=False)
finally:
    print("maxrss_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def write_langfuse(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            trace = {
                "id": f"t{i}",
                "timestamp": "2026-03-02T09:00:00Z",
                "name": "rag",
                "input": {"question": f"What does clause {i} of the contract say? " * 3},
                "output": {"answer": f"Clause {i} says the supplier delivers on time. " * 6},
                "sessionId": f"s{i % 500}",
                "userId": f"u{i % 50}",
                "tags": ["prod", "v2"],
            }
            docs = [
                {
                    "page_content": f"Chunk {i}-{k}: " + "lorem ipsum dolor sit amet " * 12,
                    "metadata": {"id": f"d{i}-{k}", "score": 0.9 - k / 10},
                }
                for k in range(4)
            ]
            retriever = {
                "id": f"r{i}",
                "traceId": f"t{i}",
                "type": "RETRIEVER",
                "name": "retrieve",
                "startTime": "2026-03-02T09:00:00.100Z",
                "endTime": "2026-03-02T09:00:00.300Z",
                "input": {"query": "q"},
                "output": docs,
            }
            generation = {
                "id": f"g{i}",
                "traceId": f"t{i}",
                "type": "GENERATION",
                "name": "llm",
                "startTime": "2026-03-02T09:00:00.300Z",
                "endTime": "2026-03-02T09:00:01Z",
                "model": "gpt-4o-mini",
                "usageDetails": {"input": 900, "output": 120},
            }
            for record in (trace, retriever, generation):
                handle.write(json.dumps(record) + "\n")


def peak_kib(args: list[str]) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, timeout=1800
    )
    line = [x for x in done.stderr.splitlines() if x.startswith("maxrss_kib")]
    if done.returncode != 0 or not line:
        raise SystemExit(f"import failed ({done.returncode}): {done.stderr[-2000:]}")
    return int(line[-1].split()[1]), done.stdout.splitlines()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--traces", type=int, default=40_000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        export = Path(folder) / "observations.jsonl"
        write_langfuse(export, options.traces)
        size_mib = export.stat().st_size / 2**20
        base, _ = peak_kib(["--help"])
        peak, summary = peak_kib(["import", "langfuse", str(export), "-o", f"{folder}/o.jsonl"])
        rss = peak / 1024
        over = (peak - base) / 1024
        print(f"export: {size_mib:.1f} MiB ({summary})")
        print(
            f"peak RSS {rss:.0f} MiB; less the CLI alone ({base / 1024:.0f} MiB): {over:.0f} MiB"
            f" = {over / size_mib:.1f}x the file"
        )
        print(
            f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)"
        )


if __name__ == "__main__":
    main()
