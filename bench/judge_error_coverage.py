"""Does the judge-error confidence interval cover the human mean? (issue 39, part 6)

Reads the embedded judge's raw verdicts on RGB zh dev (``bench/meta_eval.py`` writes them to
``~/.cache/ragmeter/meta_eval_raw.json``; this script runs no model) and, over many random
splits of the 60 queries into a labelled part (``n_lab`` queries) and a run part (the rest):

- the run's per-query score is the share of its 4 passages the judge says yes to (positive
  passages should get yes, negative ones no; people's share is 2 of 4);
- ``ragmeter.stats.estimate_with_judge_error`` makes the CI with judge error from the run
  part's scores and the labelled part: ``ppi`` from per-query (judge share, human share)
  pairs, ``rogan-gladen`` from the labelled part's per-passage (verdict, label) pairs;
- each CI covers or misses the run part's human mean; so does the sampling-only CI.

Verdicts at two 0.5 thresholds: the judge's P(yes) as run (uncalibrated) and with the
calibration ragmeter ships (fitted on this same dev split, so close to unbiased here). Two
scenarios: ``random`` (labelled and run queries alike) and ``shifted`` (the run part keeps
only one of each query's two negative passages: its human share is 2/3, the labelled part's
1/2, as when labels gathered on one run serve a later one with other retrieval).

Usage::

    python bench/judge_error_coverage.py --write            # 1,000 splits
    python bench/judge_error_coverage.py --folds 100        # a quick look
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
from meta_eval import RAW, ROOT, recorded_verdicts

from ragmeter.stats import estimate_with_judge_error

RESULTS = ROOT / "bench" / "RESULTS_judge_error.md"
TASKS = {  # raw key -> (shipped calibration key, whether the P(yes) came from gain - 1)
    "rgb": ("useful", True),
    "rgb_support": ("supported", True),
    "rgb_answers": ("yes:answers", False),
}
N_LAB = (10, 20, 40)
METHODS = ("ppi", "rogan-gladen")
SCENARIOS = ("random", "shifted")


def logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(p, 1e-12, 1 - 1e-12)
    return np.log(q / (1 - q))


def verdicts(report: dict[str, Any], task: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per threshold: (judge verdicts, human labels), each queries x 4 passages (0/1)."""
    queries = [q for q in report["raw"][task]["queries"] if not q["error"] and None not in q["p"]]
    p = np.asarray([q["p"] for q in queries], dtype=float)
    labels = np.asarray([q["labels"] for q in queries], dtype=float)
    key, from_gain = TASKS[task]
    calibration = report["judge"].get("calibration", {}).get(key)
    out = {"as run": ((p >= 0.5).astype(float), labels)}
    if calibration:
        uncalibrated = report["raw"].get("to_gain") == "uncalibrated"
        gain = logit(p) + (1.0 if from_gain and uncalibrated else 0.0)
        z = calibration["slope"] * gain + calibration["intercept"]
        out["shipped calibration"] = ((z >= 0).astype(float), labels)
    return out


def one_fold(
    judge: np.ndarray, human: np.ndarray, n_lab: int, shifted: bool, rng: np.random.Generator
) -> dict[str, tuple[bool, float] | None]:
    """Covered or not (and the CI's width) per method, and for the sampling-only CI."""
    order = rng.permutation(len(judge))
    lab, run = order[:n_lab], order[n_lab:]
    run_judge, run_human = judge[run], human[run]
    if shifted:  # drop one of each run query's two negative passages, chosen at random
        keep = np.ones_like(run_human, dtype=bool)
        for i, row in enumerate(run_human):
            negatives = np.flatnonzero(row == 0)
            keep[i, rng.choice(negatives)] = False
        width = int(keep[0].sum())
        run_judge = run_judge[keep].reshape(len(run), width)
        run_human = run_human[keep].reshape(len(run), width)
    truth = float(run_human.mean())
    scores = run_judge.mean(axis=1)
    options = {"n_resamples": 1000, "seed": int(rng.integers(2**31))}
    labelled = {
        "ppi": list(zip(judge[lab].mean(axis=1), human[lab].mean(axis=1))),
        "rogan-gladen": list(zip(judge[lab].ravel(), human[lab].ravel())),
    }
    out: dict[str, tuple[bool, float] | None] = {}
    for method in METHODS:
        est = estimate_with_judge_error(scores, labelled[method], method=method, **options)
        ci = est.judge_error_ci
        out[method] = None if ci is None else (truth in ci, ci.high - ci.low)
        if est.sampling_ci is not None:
            out["sampling"] = (truth in est.sampling_ci, est.sampling_ci.high - est.sampling_ci.low)
    return out


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion."""
    if not n:
        return (math.nan, math.nan)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def run_all(report: dict[str, Any], folds: int, seed: int) -> list[dict[str, Any]]:
    rows = []
    for task in TASKS:
        if task not in report["raw"]:
            continue
        for threshold, (judge, human) in verdicts(report, task).items():
            for scenario in SCENARIOS:
                for n_lab in N_LAB:
                    rng = np.random.default_rng([seed, n_lab, len(rows)])
                    tally: dict[str, list[tuple[bool, float]]] = {}
                    missing: dict[str, int] = {}
                    for _ in range(folds):
                        fold = one_fold(judge, human, n_lab, scenario == "shifted", rng)
                        for name, outcome in fold.items():
                            if outcome is None:
                                missing[name] = missing.get(name, 0) + 1
                            else:
                                tally.setdefault(name, []).append(outcome)
                    row: dict[str, Any] = {
                        "task": task,
                        "threshold": threshold,
                        "scenario": scenario,
                        "n_lab": n_lab,
                        "judge_yes": float(judge.mean()),
                        "sensitivity": float(judge[human == 1].mean()),
                        "specificity": float(1 - judge[human == 0].mean()),
                    }
                    for name in ("sampling", *METHODS):
                        got = tally.get(name, [])
                        hits = sum(c for c, _ in got)
                        row[name] = {
                            "folds": len(got),
                            "not_computed": missing.get(name, 0),
                            "coverage": hits / len(got) if got else None,
                            "ci95": wilson(hits, len(got)),
                            "mean_width": float(np.mean([w for _, w in got])) if got else None,
                        }
                    rows.append(row)
                    print(
                        f"{task} {threshold} {scenario} n_lab={n_lab}: "
                        + ", ".join(
                            f"{m} {row[m]['coverage']:.3f}"
                            for m in ("sampling", *METHODS)
                            if row[m]["coverage"] is not None
                        ),
                        flush=True,
                    )
    return rows


def _cell(figures: dict[str, Any]) -> str:
    if figures["coverage"] is None:
        return f"not computed ({figures['not_computed']})"
    low, high = figures["ci95"]
    text = f"{figures['coverage']:.3f} [{low:.3f}, {high:.3f}] w {figures['mean_width']:.2f}"
    if figures["not_computed"]:
        text += f" ({figures['not_computed']} n/c)"
    return text


def render(meta: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    lines = [
        "# Judge-error confidence intervals: coverage on RGB zh dev (issue 39)",
        "",
        f"Command: `{meta['command']}`  ",
        f"Date: {meta['date']}, commit {meta['commit']}  ",
        f"Machine: {meta['machine']}  ",
        f"Verdicts: the embedded judge ({meta['judge']}) as `bench/meta_eval.py` recorded them "
        f"on {meta['raw_date']} (no model run here); {meta['folds']} random splits per row, "
        f"{meta['seconds']:.0f} s in all.",
        "",
        "Each split puts `n_lab` of the 60 queries in a labelled part and the rest in a run "
        "part. A run's score per query is the share of its passages the judge says yes to; "
        "the target is the run part's human share. `ppi` is fed per-query (judge share, human "
        "share) pairs, `rogan-gladen` the labelled queries' per-passage (verdict, label) "
        "pairs. Cells: coverage of the 95% CI [Wilson 95% CI of that coverage], `w` its mean "
        "width. `shifted`: the run part keeps one of each query's two negative passages "
        "(human share 2/3), the labelled part all four (1/2).",
        "",
        "| task | threshold | scenario | n_lab | judge yes / sens / spec | sampling only | "
        "ppi | rogan-gladen |",
        "|---|---|---|---:|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['task']} | {r['threshold']} | {r['scenario']} | {r['n_lab']} | "
            f"{r['judge_yes']:.2f} / {r['sensitivity']:.2f} / {r['specificity']:.2f} | "
            f"{_cell(r['sampling'])} | {_cell(r['ppi'])} | {_cell(r['rogan-gladen'])} |"
        )
    lines += [
        "",
        *meta["reading"],
        "",
        "`ppi` is the default of `ragmeter.stats.estimate_with_judge_error`: it is the one "
        "whose coverage holds on random splits, where the labelled items are drawn like the "
        "run's. `rogan-gladen` is kept for labels that come from another run than the one "
        "scored: in the `shifted` rows the judge's bias on the labelled part is not its bias "
        "on the run, which PPI's correction assumes, while its error rates (what Rogan-Gladen "
        "uses) carry over. A Rogan-Gladen estimate is not computed (`n/c`) when the labels "
        "show a judge no better than chance (sensitivity + specificity - 1 <= 0.05): "
        "rgb_answers as run says yes to 15% of the passages that answer the query. The "
        "sampling-only interval covers the human mean only where the judge happens to be "
        "unbiased (the shipped calibration was fitted on this dev split).",
        "",
    ]
    return "\n".join(lines)


def reading(rows: list[dict[str, Any]]) -> list[str]:
    """The target, checked: worst coverage of each CI over the random-split rows."""
    out = ["## Against the target (covers the human mean in >= 90% of folds)", ""]
    for scenario in SCENARIOS:
        for name in ("sampling", *METHODS):
            got = [
                (r[name]["coverage"], r)
                for r in rows
                if r["scenario"] == scenario and r[name]["coverage"] is not None
            ]
            if not got:
                continue
            worst, row = min(got, key=lambda x: x[0])
            passing = sum(c >= 0.9 for c, _ in got)
            out.append(
                f"- {scenario}, {name}: >= 0.90 in {passing} of {len(got)} rows; lowest "
                f"{worst:.3f} ({row['task']}, {row['threshold']}, n_lab {row['n_lab']})"
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--raw", type=Path, default=RAW)
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.name}")
    args = parser.parse_args()
    report = recorded_verdicts(args.raw, "rgb,rgb-support,rgb-answers")
    if report is None:
        return
    started = time.monotonic()
    rows = run_all(report, args.folds, args.seed)
    git = ["git", "rev-parse", "--short", "HEAD"]
    load = Path("/proc/loadavg").read_text().split()[0]
    meta = {
        "command": f"python bench/judge_error_coverage.py --folds {args.folds}"
        + (" --write" if args.write else ""),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": subprocess.run(git, capture_output=True, text=True, cwd=ROOT).stdout.strip(),
        "machine": f"{os.cpu_count()} CPUs, {platform.platform()}, load {load}",
        "judge": report["judge"].get("model"),
        "raw_date": report.get("date"),
        "folds": args.folds,
        "seconds": time.monotonic() - started,
        "reading": reading(rows),
    }
    text = render(meta, rows)
    print(text)
    if args.write:
        RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
