"""How many prompt tokens the embedded judge really evaluates on the demo (issue 14).

The embedded judge (llama.cpp) answers one call at a time and keeps the KV cache of the
prompt it evaluated last: a call that starts like the previous one (same template: the same
instruction and few-shot examples) evaluates only the rest. So the order in which the steps'
calls reach it costs time. This runs the demo's judged metrics on the first N samples of
examples/demo.jsonl with the default embedded judge, no cache, and counts for every call the
prompt tokens and those actually evaluated (prompt minus the prefix reused).

    .venv/bin/python bench/local_prefix_reuse.py --n 12      # about 6 minutes on 2 cores

Prints one JSON line: wall seconds, calls, prompt tokens, tokens evaluated, and the means.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import ragmeter
import ragmeter.judge._local as local
from ragmeter.dataset import load_dataset
from ragmeter.judge import NullCache, default_judge

METRICS = ["faithfulness", "answer_relevancy", "context_precision", "context_recall",
           "answer_correctness"]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=12, help="first N samples of the demo")
    args = parser.parse_args()
    counts: list[tuple[int, int]] = []
    prefill = local._prefill

    def counting_prefill(llm: Any, tokens: Sequence[int]) -> None:
        cached = np.asarray(llm.input_ids[: llm.n_tokens])
        limit = min(len(cached), len(tokens) - 1)
        mismatch = np.nonzero(cached[:limit] != np.asarray(tokens[:limit]))[0]
        common = int(mismatch[0]) if len(mismatch) else limit
        counts.append((len(tokens), len(tokens) - common))
        prefill(llm, tokens)

    local._prefill = counting_prefill  # measuring only: the same computation, counted
    data = load_dataset("examples/demo.jsonl")[: args.n]
    started = time.perf_counter()
    result = ragmeter.evaluate(
        data, METRICS, judge=default_judge(cache=NullCache()), progress=False
    )
    print(
        json.dumps(
            {
                "samples": args.n,
                "wall_s": round(time.perf_counter() - started, 1),
                "calls": len(counts),
                "prompt_tokens": sum(n for n, _ in counts),
                "evaluated_tokens": sum(e for _, e in counts),
                "means": {k: a.mean for k, a in result.aggregates.items()},
            }
        )
    )


if __name__ == "__main__":
    main()
