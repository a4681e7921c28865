"""How often the abstention metric's "should abstain" decision is right with the embedded judge.

Reads RGB zh (``../shared/data/rgb_zh/dev.jsonl``, relative to the project root; never copied
into the repo). Each of the first ``--n`` questions becomes two samples without a reference,
so that "should abstain" is decided from the contexts' relevance to the question (the
``usefulness_question`` judgment, one likelihood verdict per passage):

* only negative passages (``--passages`` of them): the contexts hold no answer, it should
  abstain;
* only positive passages: it should answer.

Printed: the share decided right for each kind, with the number of samples, and the time.
Caveat: the embedded judge's calibration of the ``useful`` verdict was fitted on this dev
data (positive vs negative passages), so the figure is in-sample for that calibration.

Measured (--n 5 --passages 2, 10 samples, 2 shared CPU cores, 179 s): only negative passages
1/5 right (20%), only positive passages 5/5 right (100%). RGB's negative passages are on the
question's topic without its answer, and the judge rates most of them relevant: without a
reference, "should abstain" from relevance misses most unanswerable cases; a reference (its
statements checked against the contexts) or ``metadata.answerable`` decides better. Five
questions only: indicative, not a measurement to quote.

Usage: python bench/abstention.py [--n 20] [--passages 2] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ragmeter import evaluate
from ragmeter.judge import default_judge
from ragmeter.metrics.llm import Abstention

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"


def samples(data: Path, n: int, passages: int) -> list[dict[str, object]]:
    rows = [json.loads(line) for line in (data / "rgb_zh" / "dev.jsonl").open(encoding="utf-8")]
    out: list[dict[str, object]] = []
    for row in rows[:n]:
        for kind in ("negative", "positive"):
            contexts = [p for p in row[kind] if p.strip()][:passages]
            if contexts:
                out.append(
                    {
                        "id": f"{row['id']}-{kind}",
                        "user_input": row["query"],
                        "response": "、".join(row["answer"]) if kind == "positive" else "不知道。",
                        "retrieved_contexts": contexts,
                        "metadata": {"kind": kind},
                    }
                )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20, help="questions (two samples each)")
    parser.add_argument("--passages", type=int, default=2, help="passages per sample")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    data = samples(args.data, args.n, args.passages)
    judge = default_judge()
    started = time.perf_counter()
    result = evaluate(data, [Abstention(expected="contexts")], judge=judge)
    seconds = time.perf_counter() - started
    right = {"negative": [0, 0], "positive": [0, 0]}
    for sample in result.samples:
        kind = str((sample.sample.metadata or {})["kind"])
        found = sample.scores["abstention"].details.abstention
        if found is None:
            continue
        right[kind][1] += 1
        right[kind][0] += int(found.should_abstain == (kind == "negative"))
    print(f"judge: {judge.describe()['model']}, {len(data)} samples, {seconds:.0f} s")
    for kind, expected in (("negative", "should abstain"), ("positive", "should answer")):
        hits, total = right[kind]
        share = hits / total if total else float("nan")
        print(f"only {kind} passages ({expected}): {hits}/{total} right ({share:.0%})")


if __name__ == "__main__":
    main()
