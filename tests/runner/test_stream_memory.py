"""A JSONL file is evaluated in constant memory: read, checked and stored a chunk at a time,
then scored from the run's store, so a 20k-row file peaks where a 2k-row file does."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

MEASURE = """
import json, sys, tempfile, tracemalloc
from pathlib import Path
sys.path.insert(0, {root!r})
from ragmeter import evaluate, load_dataset

n = {n}
with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "data.jsonl"
    with path.open("w") as out:
        for i in range(n):
            row = {{"id": f"q{{i}}", "retrieved_context_ids": [f"d{{i % 7}}", "x", "y"]}}
            if i % 500 != 499:  # one row in 500 lacks its reference: skipped
                row["reference_context_ids"] = [f"d{{i % 5}}"]
            out.write(json.dumps(row) + "\\n")
    tracemalloc.start()
    result = evaluate(path, ["mrr"], skip_invalid=True, batch_size=500, progress=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    mrr = result.scores("mrr")
    measured = {{
        "peak": peak,
        "n": len(mrr),
        "mrr_sum": sum(mrr),
        "skipped": [r.row for r in result.skipped],
    }}
    if {compare}:  # the same file loaded whole (the path a Dataset takes) gives the same run
        whole = evaluate(
            load_dataset(path, skip_invalid=True), ["mrr"], skip_invalid=True, progress=False
        )
        def summary(r):
            return (
                r.scores("mrr"),
                [s.sample_id for s in r],
                [s.row for s in r],
                [(x.row, x.sample_id, [str(p) for p in x.problems]) for x in r.skipped],
                r.config["dataset"]["fingerprint"],
            )
        measured["same_as_loaded_whole"] = summary(result) == summary(whole)
print(json.dumps(measured))
"""


def measure(n: int, *, compare: bool = False) -> dict:
    code = MEASURE.format(root=str(ROOT), n=n, compare=compare)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def expected_mrr_sum(n: int) -> float:
    """By hand: row i (unless skipped) finds d(i % 5) at rank 1 when i % 7 == i % 5, else not
    at all (the other two retrieved ids are x and y)."""
    return sum(1.0 for i in range(n) if i % 500 != 499 and i % 7 == i % 5)


@pytest.mark.slow
def test_peak_memory_of_a_streamed_file_is_flat_from_2k_to_20k_rows():
    small, large = measure(2_000, compare=True), measure(20_000)
    assert small["same_as_loaded_whole"] is True
    for n, measured in ((2_000, small), (20_000, large)):
        assert measured["n"] == n - n // 500
        assert measured["skipped"] == list(range(500, n + 1, 500))
        assert measured["mrr_sum"] == pytest.approx(expected_mrr_sum(n))
    # What the run allocates is a chunk of lines, a batch of samples and pages of the store,
    # whatever the length of the file.
    assert large["peak"] < 1.25 * small["peak"] + 2**20, (small["peak"], large["peak"])
