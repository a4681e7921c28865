"""Production questions whose embeddings are built by hand: four topics of unequal size,
near-duplicates and repeated texts, so clusters and duplicates are known in advance.

Question ``t{topic} q{variant}`` has the vector ``e_topic + offset * e_axis`` (normalised),
with its own ``axis`` per question: two questions of one topic have a cosine of
``1 / sqrt((1 + a^2)(1 + b^2))`` for offsets a and b (at most 0.77 here, below the 0.95
threshold), two of different topics 0. Variant q2 has the smallest offset (0.5) in every
topic, so it lies nearest its topic's centre.
"""

from __future__ import annotations

import math
from typing import Any

from ragmeter.testing import ScriptedEmbeddings

DIMENSION = 32
OFFSETS = [0.9, 0.8, 0.5, 0.7, 0.6, 0.95, 0.85, 0.75]
SIZES = {0: 8, 1: 4, 2: 4, 3: 4}  # questions per topic: 20 in all


def question(topic: int, variant: int) -> str:
    return f"t{topic} q{variant}"


def _base_vectors() -> dict[str, list[float]]:
    vectors: dict[str, list[float]] = {}
    axis = 4
    for topic, size in SIZES.items():
        for variant in range(size):
            vector = [0.0] * DIMENSION
            vector[topic] = 1.0
            vector[axis] = OFFSETS[variant]
            axis += 1
            vectors[question(topic, variant)] = vector
    return vectors


VECTORS = _base_vectors()
#: A reworded t0 q0: its vector is t0 q0's, nudged by 0.05 on an unused axis, so its cosine
#: with t0 q0 is 1/sqrt(1 + 0.05^2 / (1 + 0.9^2)) = 0.9993, with any other question below 0.95.
NEAR_DUPLICATE = "t0 q0, please"
VECTORS[NEAR_DUPLICATE] = [*VECTORS[question(0, 0)][:-1], 0.05]
#: The same text as t1 q1 once normalised (case, punctuation, spacing).
SAME_TEXT = "T1  Q1?"
VECTORS[SAME_TEXT] = [0.0] * (DIMENSION - 1) + [1.0]  # unlike anything: only the text matches


def cosine(a: str, b: str) -> float:
    va, vb = VECTORS[a], VECTORS[b]
    dot = sum(x * y for x, y in zip(va, vb))
    return dot / math.sqrt(sum(x * x for x in va) * sum(y * y for y in vb))


def embeddings() -> ScriptedEmbeddings:
    return ScriptedEmbeddings(VECTORS, dimension=DIMENSION)


def records(*, extra: bool = False) -> list[dict[str, Any]]:
    """The 20 questions as production samples (ids ``s-t{topic}-q{variant}``), and with
    ``extra`` the near-duplicate and the same-text repeat after them."""
    rows = [
        {
            "id": f"s-t{topic}-q{variant}",
            "user_input": question(topic, variant),
            "response": f"answer {topic}.{variant}",
            "retrieved_contexts": [f"context {topic}.{variant}"],
            "retrieved_context_ids": [f"doc-{topic}-{variant}"],
            "metadata": {"trace_id": f"trace-{topic}-{variant}", "user": "u1"},
        }
        for topic, size in SIZES.items()
        for variant in range(size)
    ]
    if extra:
        rows.append({"id": "dup-near", "user_input": NEAR_DUPLICATE, "response": "again"})
        rows.append({"id": "dup-text", "user_input": SAME_TEXT, "response": "again"})
    return rows


def topic_of(text: str) -> int:
    return int(text.split()[0].lstrip("tT").rstrip(","))
