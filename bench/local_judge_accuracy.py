"""How well the embedded offline judge (LocalJudge) answers yes/no verdicts on labelled data.

Reads the human-labelled dev data in ``../shared/data`` (relative to the project root; never
copied into the repo) and builds verdict tasks, each a fixed-seed, label-balanced sample of
``--n`` items:

* ``zh`` - RGB zh_refine (``rgb_zh/dev.jsonl``): "can the question be answered from this
  passage?"; a positive passage is yes, a negative passage is no. Prompt in Chinese.
* ``en`` - WikiEval faithfulness (``wikieval/ff.csv``): "is every claim in the answer supported
  by the context?"; label 1 (grounded answer) is yes, label 0 (ungrounded) is no. English.
* ``en-swap`` (optional, clear-cut) - the same WikiEval contexts, each with its own grounded
  (label-1) answer (yes) or the grounded answer to another question (no). English.

Methods, all on the same items: ``logits`` (P(Yes) from the next-token distribution - the
LocalJudge default), ``grammar`` (greedy Yes/No under a grammar), ``logits-jsonprompt``
(``logits``, but the prompt itself also asks for a JSON verdict, as metric prompts written for
API judges do) and ``json`` (grammar-constrained ``{"verdict": 0|1}`` generation).

Reported: accuracy (threshold P(Yes) >= 0.5) with a bootstrap 95% CI, ROC AUC of the score
(P(Yes); 0/1 verdicts for grammar/json), the share answered yes, mean seconds per verdict, and
for ``en`` the WikiEval paper's pairwise agreement (label-1 row scored above the label-0 row of
the same question; ties count half). Timing: items that share a context run back to back, so
the model reuses the context's KV cache as it does when a metric checks several statements
against one context; "cold" is the mean over verdicts that paid for their whole prompt (the
first method on the first item of each context), "all" the mean over every verdict.

Usage: python bench/local_judge_accuracy.py [--n 40] [--seed 0] [--tasks en zh]
       [--methods logits grammar] [--data DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
METHODS = ("logits", "grammar", "logits-jsonprompt", "json")
TASKS = ("en", "zh", "en-swap")

_JSON_EN = 'Answer in JSON: {"verdict": 1} for yes, {"verdict": 0} for no.'
_JSON_ZH = '请用 JSON 回答：是则 {"verdict": 1}，否则 {"verdict": 0}。'


class JsonVerdict(BaseModel):
    """Same shape as BinaryVerdict, but a different class: LocalJudge generates it as JSON."""

    verdict: Literal[0, 1]


@dataclass(frozen=True)
class Item:
    lang: str
    context: str  # items with the same context run back to back (KV-cache reuse)
    pair: str  # WikiEval pairwise protocol: the question
    prompt: str
    label: int


def rgb_zh_items(data: Path, n: int, seed: int) -> list[Item]:
    rows = [json.loads(line) for line in (data / "rgb_zh" / "dev.jsonl").open(encoding="utf-8")]
    pools: dict[int, list[Item]] = {0: [], 1: []}
    for row in rows:
        for label, key in ((1, "positive"), (0, "negative")):
            for passage in row[key]:
                prompt = (
                    f"段落：{passage.strip()}\n\n问题：{row['query']}\n\n"
                    "根据上面的段落，能回答这个问题吗？"
                )
                pools[label].append(Item("zh", passage, str(row["id"]), prompt, label))
    return _balanced(pools, n, seed)


def _wikieval_rows(data: Path) -> list[dict[str, str]]:
    with (data / "wikieval" / "ff.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _support_prompt(context: str, question: str, answer: str) -> str:
    context = context.replace("\\n", "\n").strip()
    return (
        f"Context:\n{context}\n\nQuestion: {question.strip()}\n\nAnswer: {answer.strip()}\n\n"
        "Is every claim in the answer supported by the context?"
    )


def wikieval_items(data: Path, n: int, seed: int) -> list[Item]:
    pools: dict[int, list[Item]] = {0: [], 1: []}
    for row in _wikieval_rows(data):
        label = int(row["label"])
        prompt = _support_prompt(row["context"], row["question"], row["answer"])
        pools[label].append(Item("en", row["context"], row["question"], prompt, label))
    return _balanced(pools, n, seed)


def wikieval_swap_items(data: Path, n: int, seed: int) -> list[Item]:
    """Each context with its own grounded answer (yes) and another question's (no)."""
    grounded = [row for row in _wikieval_rows(data) if row["label"] == "1"]
    order = random.Random(seed).sample(grounded, len(grounded))
    pools: dict[int, list[Item]] = {0: [], 1: []}
    for index, row in enumerate(order):
        other = order[(index + 1) % len(order)]
        for label, answer in ((1, row["answer"]), (0, other["answer"])):
            prompt = _support_prompt(row["context"], row["question"], answer)
            pools[label].append(Item("en", row["context"], row["question"], prompt, label))
    return _balanced(pools, n, seed)


def _balanced(pools: dict[int, list[Item]], n: int, seed: int) -> list[Item]:
    """A label-balanced sample, items sharing a context kept together (groups shuffled)."""
    rng = random.Random(seed)
    half = n // 2
    chosen = rng.sample(pools[1], min(half, len(pools[1])))
    chosen += rng.sample(pools[0], min(n - len(chosen), len(pools[0])))
    rng.shuffle(chosen)
    first_seen = {item.context: index for index, item in reversed(list(enumerate(chosen)))}
    return sorted(chosen, key=lambda item: first_seen[item.context])


def bootstrap_ci(hits: Sequence[float], seed: int, rounds: int = 2000) -> tuple[float, float]:
    rng = random.Random(seed)
    k = len(hits)
    means = sorted(sum(rng.choices(hits, k=k)) / k for _ in range(rounds))
    return means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    positives = [s for s, y in zip(scores, labels) if y]
    negatives = [s for s, y in zip(scores, labels) if not y]
    if not positives or not negatives:
        return float("nan")
    wins = sum(1.0 if p > q else 0.5 if p == q else 0.0 for p in positives for q in negatives)
    return wins / (len(positives) * len(negatives))


def pairwise_agreement(items: Sequence[Item], scores: Sequence[float]) -> tuple[float, int]:
    """Share of questions whose label-1 row scores above its label-0 row (ties count half)."""
    by_pair: dict[str, dict[int, float]] = {}
    for item, score in zip(items, scores):
        by_pair.setdefault(item.pair, {})[item.label] = score
    pairs = [g for g in by_pair.values() if 0 in g and 1 in g]
    if not pairs:
        return float("nan"), 0
    wins = sum(1.0 if g[1] > g[0] else 0.5 if g[1] == g[0] else 0.0 for g in pairs)
    return wins / len(pairs), len(pairs)


@dataclass
class Measured:
    scores: list[float]
    seconds: list[float]
    cold_seconds: list[float]


async def run_methods(methods: Sequence[str], items: Sequence[Item]) -> dict[str, Measured]:
    """Every method on every item; the KV cache is cleared when the context changes."""
    from ragmeter.judge import BinaryVerdict, LocalJudge, Message, NullCache

    judges = {
        method: LocalJudge(
            verdict_method="grammar" if method == "grammar" else "logits", cache=NullCache()
        )
        for method in methods
    }
    llm = judges[methods[0]].llama  # load (and assemble the model) before timing
    out = {method: Measured([], [], []) for method in methods}
    previous_context = None
    for item in items:
        for method in methods:
            prompt = item.prompt
            if method in ("logits-jsonprompt", "json"):
                prompt = f"{prompt}\n{_JSON_ZH if item.lang == 'zh' else _JSON_EN}"
            schema = JsonVerdict if method == "json" else BinaryVerdict
            cold = item.context != previous_context
            if cold:
                llm.reset()
                previous_context = item.context
            started = time.perf_counter()
            judgment = await judges[method].generate(
                [Message("user", prompt)], schema, prompt_version="bench-v1"
            )
            elapsed = time.perf_counter() - started
            measured = out[method]
            measured.seconds.append(elapsed)
            if cold:
                measured.cold_seconds.append(elapsed)
            if judgment.probabilities:
                measured.scores.append(judgment.probabilities[0])
            else:
                measured.scores.append(float(judgment.output.verdict))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="items per task (default 40)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tasks", nargs="+", default=["en", "zh"], choices=TASKS)
    parser.add_argument("--methods", nargs="+", default=["logits", "grammar"], choices=METHODS)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)

    if not args.data.is_dir():
        print(
            f"SKIP: the dev data folder {args.data} is absent (it lives in ../shared/data next "
            "to the project root; a fresh clone has none). Nothing measured."
        )
        return 0
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        print("SKIP: llama-cpp-python is not installed: pip install 'ragmeter[local]'")
        return 0

    builders = {"en": wikieval_items, "zh": rgb_zh_items, "en-swap": wikieval_swap_items}
    started = time.time()
    print(f"# LocalJudge on dev data: n={args.n}/task, seed={args.seed}")
    print(f"# {platform.platform()}, python {platform.python_version()}")
    print(
        f"{'task':8} {'method':18} {'acc':>6} {'95% CI':>15} {'AUC':>6} {'yes':>5} "
        f"{'s/verdict cold':>14} {'all':>6}  pairwise"
    )
    results = []
    for task in args.tasks:
        items = builders[task](args.data, args.n, args.seed)
        labels = [item.label for item in items]
        measured = asyncio.run(run_methods(args.methods, items))
        for method in args.methods:
            m = measured[method]
            hits = [float((s >= 0.5) == bool(y)) for s, y in zip(m.scores, labels)]
            accuracy = sum(hits) / len(hits)
            low, high = bootstrap_ci(hits, args.seed)
            auc = roc_auc(m.scores, labels)
            pairwise, n_pairs = pairwise_agreement(items, m.scores) if task == "en" else (0, 0)
            cold = statistics.mean(m.cold_seconds) if m.cold_seconds else float("nan")
            row = {
                "task": task,
                "method": method,
                "n": len(items),
                "accuracy": round(accuracy, 3),
                "ci95": [round(low, 3), round(high, 3)],
                "auc": round(auc, 3),
                "yes_rate": round(sum(s >= 0.5 for s in m.scores) / len(m.scores), 3),
                "seconds_cold": round(cold, 3),
                "cold_verdicts": len(m.cold_seconds),
                "seconds_all": round(statistics.mean(m.seconds), 3),
                "pairwise": round(pairwise, 3) if n_pairs else None,
                "pairs": n_pairs,
            }
            results.append(row)
            pair_text = f"{pairwise:.3f} ({n_pairs} pairs)" if n_pairs else "-"
            print(
                f"{task:8} {method:18} {accuracy:6.3f} [{low:.3f}, {high:.3f}] {auc:6.3f} "
                f"{row['yes_rate']:5.2f} {cold:9.2f} ({len(m.cold_seconds):2d}) "
                f"{row['seconds_all']:6.2f}  {pair_text}",
                flush=True,
            )
    print(f"# total {time.time() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
