"""Meta-evaluation: how well ragmeter's judged metrics agree with people.

Reads the human-labelled dev data in ``../shared/data`` (never copied into the repository)
and, for any judge, reports:

- WikiEval (English, pairwise preferences, 20 questions each): the share of questions where
  the metric scores the human-preferred row higher (ties count half), as in the RAGAS paper,
  for faithfulness (``ff.csv``), answer relevancy (``ar.csv``) and context relevance
  (``cr.csv``, scored with context_relevance over the context's sentences, as in the paper).
- RGB zh_refine (Chinese): context-usefulness accuracy, positive passages should be judged
  useful and negative ones not (the verdicts behind context_precision).

Usage::

    python bench/meta_eval.py                       # the configured judge, else the embedded one
    python bench/meta_eval.py --limit 10 --write    # first 10 questions per set, write results
    RAGMETER_JUDGE_MODEL=gpt-4o-mini OPENAI_API_KEY=... python bench/meta_eval.py

Published agreement with gpt-3.5 as judge (RAGAS paper): faithfulness 0.95, answer relevance
0.78, context relevance 0.70.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ragmeter import evaluate
from ragmeter.embed import default_embeddings
from ragmeter.judge import JudgeConfig, default_judge, make_cache

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "bench" / "RESULTS_meta_eval.md"
PUBLISHED = {"faithfulness": 0.95, "answer_relevancy": 0.78, "context_relevance": 0.70}


def bootstrap_ci(values: list[float], seed: int = 0, n: int = 2000) -> tuple[float, float]:
    if not values:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    data = np.asarray(values, dtype=float)
    means = rng.choice(data, size=(n, len(data)), replace=True).mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def read_pairs(name: str, limit: int | None) -> list[tuple[dict[str, str], dict[str, str]]]:
    with (DATA / "wikieval" / f"{name}.csv").open(encoding="utf-8", errors="replace") as handle:
        rows = list(csv.DictReader(handle))
    by_question: dict[str, dict[str, dict[str, str]]] = {}
    for row in rows:
        by_question.setdefault(row["question"], {})[row["label"]] = row
    pairs = [(v["1"], v["0"]) for v in by_question.values() if "1" in v and "0" in v]
    return pairs[:limit] if limit else pairs


def sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?。！？])\s+", text.strip())
    return [p for p in parts if p.strip()]


def pairwise_agreement(scores: list[tuple[float | None, float | None]]) -> tuple[float, int]:
    """Share of pairs where the preferred row scores higher; ties (and failures) count half."""
    points = []
    for better, worse in scores:
        if better is None or worse is None or better == worse:
            points.append(0.5)
        else:
            points.append(1.0 if better > worse else 0.0)
    return (float(np.mean(points)) if points else float("nan")), len(points)


def run_pairs(metric: str, samples: list[dict], judge, embeddings) -> list[float | None]:
    result = evaluate(samples, [metric], judge=judge, embeddings=embeddings, skip_invalid=True)
    return result.scores(metric)


def wikieval(limit: int | None, judge, embeddings) -> dict[str, dict]:
    out: dict[str, dict] = {}

    tasks = {
        "faithfulness": (
            "ff",
            "faithfulness",
            lambda r: {
                "user_input": r["question"],
                "response": r["answer"],
                "retrieved_contexts": [r["context"]],
            },
        ),
        "answer_relevancy": (
            "ar",
            "answer_relevancy",
            lambda r: {"user_input": r["question"], "response": r["answer"]},
        ),
        "context_relevance": (
            "cr",
            "context_relevance",
            lambda r: {"user_input": r["question"], "retrieved_contexts": sentences(r["context"])},
        ),
    }
    for label, (file, metric, build) in tasks.items():
        pairs = read_pairs(file, limit)
        started = time.monotonic()
        samples = [build(row) for pair in pairs for row in pair]
        scores = run_pairs(metric, samples, judge, embeddings)
        paired = [(scores[2 * i], scores[2 * i + 1]) for i in range(len(pairs))]
        agreement, n = pairwise_agreement(paired)
        points = [0.5 if a is None or b is None or a == b else float(a > b) for a, b in paired]
        out[label] = {
            "metric": metric,
            "agreement": agreement,
            "ci95": bootstrap_ci(points),
            "pairs": n,
            "failed_or_na": sum(s is None for s in scores),
            "seconds": time.monotonic() - started,
        }
        print(f"{label}: {agreement:.3f} over {n} pairs", flush=True)
    return out


def rgb_usefulness(limit: int | None, judge, embeddings, seed: int = 0) -> dict:
    rows = [json.loads(line) for line in (DATA / "rgb_zh" / "dev.jsonl").open(encoding="utf-8")]
    rows = rows[:limit] if limit else rows
    rng = random.Random(seed)
    samples, labels = [], []
    for row in rows:
        passages = [(p, 1) for p in row["positive"][:2]] + [(p, 0) for p in row["negative"][:2]]
        rng.shuffle(passages)
        samples.append(
            {
                "id": str(row["id"]),
                "user_input": row["query"],
                "reference": row["answer"][0] if row["answer"] else "",
                "retrieved_contexts": [p for p, _ in passages],
            }
        )
        labels.append([label for _, label in passages])
    started = time.monotonic()
    result = evaluate(
        samples, ["context_precision"], judge=judge, embeddings=embeddings, language="zh"
    )
    correct, total, tp, fn, tn, fp = 0, 0, 0, 0, 0, 0
    failed = 0
    for sample_result, truth in zip(result.samples, labels):
        outcome = sample_result.scores["context_precision"]
        if outcome.score is None:
            failed += 1
            continue
        verdicts = [c["useful"] for c in outcome.details["contexts"]]
        for verdict, label in zip(verdicts, truth):
            total += 1
            correct += int(verdict == bool(label))
            tp += int(verdict and label)
            fn += int(not verdict and label)
            tn += int(not verdict and not label)
            fp += int(verdict and not label)
    points = [1.0] * correct + [0.0] * (total - correct)
    return {
        "accuracy": correct / total if total else float("nan"),
        "ci95": bootstrap_ci(points),
        "verdicts": total,
        "recall_positive": tp / (tp + fn) if tp + fn else float("nan"),
        "specificity_negative": tn / (tn + fp) if tn + fp else float("nan"),
        "queries_failed": failed,
        "seconds": time.monotonic() - started,
    }


def render(report: dict) -> str:
    lines = [
        "# Meta-evaluation: agreement with human labels",
        "",
        f"- Command: `{report['command']}`",
        f"- Date: {report['date']}; ragmeter commit {report['commit']}",
        f"- Machine: {report['machine']}",
        f"- Judge: `{json.dumps(report['judge'], ensure_ascii=False)}`",
        f"- Embeddings: `{json.dumps(report['embeddings'], ensure_ascii=False)}`",
        "",
        "## WikiEval (English): pairwise agreement with human preferences",
        "",
        "| aspect | ragmeter metric | agreement | 95% CI (bootstrap) | pairs | failed / n.a. rows "
        "| seconds | RAGAS paper (gpt-3.5) |",
        "|---|---|---:|---|---:|---:|---:|---:|",
    ]
    for label, row in report["wikieval"].items():
        low, high = row["ci95"]
        lines.append(
            f"| {label} | {row['metric']} | {row['agreement']:.3f} | {low:.2f} – {high:.2f} "
            f"| {row['pairs']} | {row['failed_or_na']} | {row['seconds']:.0f} "
            f"| {PUBLISHED[label]:.2f} |"
        )
    rgb = report["rgb_zh"]
    low, high = rgb["ci95"]
    lines += [
        "",
        "## RGB zh_refine (Chinese): context-usefulness verdicts",
        "",
        "| accuracy | 95% CI | verdicts | recall on positives | specificity on negatives "
        "| failed queries | seconds |",
        "|---:|---|---:|---:|---:|---:|---:|",
        f"| {rgb['accuracy']:.3f} | {low:.2f} – {high:.2f} | {rgb['verdicts']} "
        f"| {rgb['recall_positive']:.3f} | {rgb['specificity_negative']:.3f} "
        f"| {rgb['queries_failed']} | {rgb['seconds']:.0f} |",
        "",
        "Context relevance is scored with context_relevance over the context's sentences. "
        "Ties and failed rows count half in the pairwise agreement.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="questions per WikiEval set")
    parser.add_argument("--rgb-limit", type=int, default=None, help="RGB queries (default all)")
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.name}")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--no-cache", action="store_true")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"skipped: {DATA} is absent (the labelled dev data is not part of the repository)")
        return
    judge = default_judge(JudgeConfig.from_env(), cache=make_cache(enabled=not args.no_cache))
    embeddings = default_embeddings()
    report = {
        "command": "python bench/meta_eval.py " + " ".join(sys.argv[1:]),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip(),
        "machine": f"{os.cpu_count()} CPUs, {platform.platform()}, load "
        + Path("/proc/loadavg").read_text().split()[0],
        "judge": judge.describe(),
        "embeddings": embeddings.describe(),
    }
    report["wikieval"] = wikieval(args.limit, judge, embeddings)
    report["rgb_zh"] = rgb_usefulness(args.rgb_limit, judge, embeddings)
    text = render(report)
    print(text)
    if args.write:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
