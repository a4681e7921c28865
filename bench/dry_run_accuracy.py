"""How well ``ragmeter eval --dry-run`` predicts a real run's judge calls (issue 19).

Runs the demo (examples/demo.jsonl, the Makefile's demo metrics) with the embedded offline
judge three times over one fresh judge cache: the prediction (``ragmeter.runner.estimate``,
what ``--dry-run`` prints), the real run (``evaluate``), and the prediction again, which
should find every answer in the cache (0 calls). Compares calls, prompt and completion tokens
per step (prompt template) and in total, and the predicted time with the real one.

    .venv/bin/python bench/dry_run_accuracy.py            # about 4 minutes on 2 cores
    .venv/bin/python bench/dry_run_accuracy.py --n 4      # the first 4 samples only

The bar (issue 19): predicted calls within 10% of the real run's. Tokens are estimated
without a tokenizer (``estimate_tokens``), so they are indicative only. Run it on an idle
machine: the time is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from ragmeter.dataset import load_dataset
from ragmeter.judge import SQLiteCache, Usage
from ragmeter.runner import evaluate
from ragmeter.runner._estimate import estimate

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo.jsonl"
METRICS = (
    "faithfulness,answer_relevancy,context_precision,context_recall,answer_correctness,"
    "precision@3,recall@3,mrr,ndcg@3"
)


def _share(predicted: float, real: float) -> str:
    if not real:
        return "n/a" if predicted else "0%"
    return f"{(predicted - real) / real:+.1%}"


def _row(step: str, predicted: Usage, real: Usage) -> dict[str, Any]:
    return {
        "step": step,
        "calls": [predicted.calls, real.calls, _share(predicted.calls, real.calls)],
        "prompt_tokens": [
            predicted.prompt_tokens,
            real.prompt_tokens,
            _share(predicted.prompt_tokens, real.prompt_tokens),
        ],
        "completion_tokens": [
            predicted.completion_tokens,
            real.completion_tokens,
            _share(predicted.completion_tokens, real.completion_tokens),
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="the first N demo samples only")
    args = parser.parse_args()
    from ragmeter.judge import LocalJudge

    data = load_dataset(DEMO)
    if args.n is not None:
        from ragmeter.dataset import head

        data = head(data, args.n)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        cache = SQLiteCache(Path(folder) / "cache.db")
        judge = LocalJudge(cache=cache)
        started = time.perf_counter()
        predicted = estimate(data, METRICS, judge=judge)
        dry_s = time.perf_counter() - started
        started = time.perf_counter()
        result = evaluate(data, METRICS, judge=judge, progress=False)
        wall_s = time.perf_counter() - started
        again = estimate(data, METRICS, judge=judge)
        cache.close()
    load_after = os.getloadavg()
    real_total = Usage(**{k: v for k, v in result.config["usage"].items() if k != "currency"})
    steps = sorted(set(predicted.by_step) | set(judge.ledger.by_scope))
    rows = [
        _row(step, predicted.by_step.get(step, Usage()), judge.ledger.by_scope.get(step, Usage()))
        for step in steps
    ]
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "samples": len(data),
        "judge": judge.describe()["model"],
        "n_threads": judge.n_threads,
        "steps": rows,
        "total": _row("total", predicted.total, real_total),
        "dry_run_s": round(dry_s, 2),
        "predicted_judge_s": None if predicted.seconds is None else round(predicted.seconds, 1),
        "real_judge_latency_s": round(real_total.latency_s, 1),
        "real_wall_s": round(wall_s, 1),
        "again_after_the_run": {
            "calls": again.total.calls,
            "cached_calls": again.total.cached_calls,
        },
        "within_10_percent": abs(predicted.total.calls - real_total.calls)
        <= 0.1 * real_total.calls,
    }
    print(json.dumps(report, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
