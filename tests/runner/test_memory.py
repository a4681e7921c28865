"""The runner's memory stays flat as the dataset grows: results stream to the run store."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

MEASURE = """
import sys, tempfile, tracemalloc
sys.path.insert(0, {root!r})
from ragmeter import Dataset, evaluate
from ragmeter.judge import NullCache
from tests.metrics.llm import scripts
from tests.runner._fakes import samples

data = Dataset.from_records(samples({n}))
judge = scripts.judge(cache=NullCache(), record_calls=False)
tracemalloc.start()
held = tracemalloc.get_traced_memory()[0]
with tempfile.TemporaryDirectory() as run_dir:
    result = evaluate(
        data, ["faithfulness", "context_recall", "rouge_l"], judge=judge,
        run_dir=run_dir, batch_size=250,
    )
    ok = [a.n_ok for a in result.aggregates.values()]
peak = tracemalloc.get_traced_memory()[1] - held
print(json.dumps({{"peak": peak, "ok": ok}}))
"""


def runner_peak(n: int) -> dict:
    code = "import json\n" + MEASURE.format(root=str(ROOT), n=n)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_peak_memory_of_the_runner_is_flat_from_500_to_2500_samples():
    # 5 times the samples (10 batches of the store against 2): memory that grew with the
    # dataset would be far past the bound. 5k took a minute under tracemalloc.
    small, large = runner_peak(500), runner_peak(2_500)
    assert small["ok"] == [500] * 3 and large["ok"] == [2_500] * 3
    # What the runner allocates beyond the input dataset: a bounded window of samples in
    # flight and batches of the store, whatever the dataset size.
    assert large["peak"] < 1.25 * small["peak"] + 2**20, (small, large)
