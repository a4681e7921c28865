"""Nearest neighbours by cosine similarity for the knowledge graph's similarity edges.

Up to ``EXACT_LIMIT`` vectors every pair is scored (blocked matrix products: exact, and fast
at that size). Above it, scoring every pair would grow with the square of the corpus, so the
search goes through an inverted file, as vector databases do: the vectors are clustered into
lists of about ``LIST_SIZE`` (two rounds of k-means from a seeded sample), and each vector is
scored only against the members of its ``PROBES`` nearest lists. The work per vector is then
constant but for the distance to the list centres, which is ``LIST_SIZE`` times smaller than
an all-pairs search. Recall against the exact search is measured in bench/testset_bench.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Largest corpus searched exactly.
EXACT_LIMIT = 4096
#: Rows scored at once in the exact search.
BLOCK = 1024
#: Vectors per list of the inverted file, and lists searched per vector.
LIST_SIZE = 64
PROBES = 8


@dataclass(frozen=True)
class Neighbours:
    """Pairs ``(first[m], second[m])`` with ``first < second`` and their cosine ``score[m]``."""

    first: np.ndarray
    second: np.ndarray
    score: np.ndarray


def nearest_pairs(
    vectors: np.ndarray,
    *,
    threshold: float,
    k: int,
    groups: np.ndarray | None = None,
    positions: np.ndarray | None = None,
    seed: int = 0,
) -> Neighbours:
    """Each vector's ``k`` most similar others with cosine >= ``threshold``, as undirected
    pairs. Rows must be L2-normalised. Two vectors of the same ``groups`` value whose
    ``positions`` differ by at most 1 (neighbouring chunks of a document) are never paired.

    >>> v = np.array([[1, 0], [0.96, 0.28], [0, 1.0]], dtype=np.float32)
    >>> pairs = nearest_pairs(v, threshold=0.9, k=2)
    >>> pairs.first.tolist(), pairs.second.tolist(), pairs.score.round(2).tolist()
    ([0], [1], [0.96])
    """
    n = len(vectors)
    if n < 2 or k < 1:
        empty = np.zeros(0, dtype=np.int64)
        return Neighbours(empty, empty, np.zeros(0, dtype=np.float32))
    vectors = np.asarray(vectors, dtype=np.float32)
    if n <= EXACT_LIMIT:
        first, second, score = _exact_candidates(vectors, k + 3)
    else:
        first, second, score = _inverted_file_candidates(vectors, k + 3, seed)
    keep = score >= threshold
    if groups is not None and positions is not None:
        keep &= ~(
            (groups[first] == groups[second]) & (np.abs(positions[first] - positions[second]) <= 1)
        )
    first, second, score = first[keep], second[keep], score[keep]
    return _top_k(first, second, score, k)


Candidates = tuple[np.ndarray, np.ndarray, np.ndarray]


def _exact_candidates(vectors: np.ndarray, k: int) -> Candidates:
    """Each row's ``k`` best other rows (all pairs scored, block by block)."""
    n = len(vectors)
    firsts, seconds, scores = [], [], []
    for start in range(0, n, BLOCK):
        block = vectors[start : start + BLOCK] @ vectors.T
        rows = np.arange(block.shape[0])
        block[rows, start + rows] = -np.inf
        best = _best_columns(block, min(k, n - 1))
        firsts.append(np.repeat(start + rows, best.shape[1]))
        seconds.append(best.ravel())
        scores.append(np.take_along_axis(block, best, axis=1).ravel())
    return _undirected(np.concatenate(firsts), np.concatenate(seconds), np.concatenate(scores))


def _best_columns(scores: np.ndarray, k: int) -> np.ndarray:
    """The column indices of each row's ``k`` highest scores (unordered)."""
    k = min(k, scores.shape[1])
    if k == scores.shape[1]:
        return np.broadcast_to(np.arange(k), scores.shape)
    return np.argpartition(-scores, k - 1, axis=1)[:, :k]


def _inverted_file_candidates(vectors: np.ndarray, k: int, seed: int) -> Candidates:
    """Each vector's ``k`` best among the members of its ``PROBES`` nearest lists."""
    n = len(vectors)
    n_lists = max(2, n // LIST_SIZE)
    rng = np.random.default_rng(seed)
    centres = vectors[rng.choice(n, n_lists, replace=False)]
    for _ in range(2):  # k-means, two rounds: good enough lists, bounded cost
        home = np.concatenate(
            [np.argmax(vectors[s : s + BLOCK] @ centres.T, axis=1) for s in range(0, n, BLOCK)]
        )
        sums = np.zeros_like(centres)
        np.add.at(sums, home, vectors)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        centres = np.where(norms > 0, sums / np.maximum(norms, 1e-12), centres)
    home = np.concatenate(
        [np.argmax(vectors[s : s + BLOCK] @ centres.T, axis=1) for s in range(0, n, BLOCK)]
    )
    probes = np.concatenate(
        [_best_columns(vectors[s : s + BLOCK] @ centres.T, PROBES) for s in range(0, n, BLOCK)]
    )
    members = np.argsort(home, kind="stable")
    member_bounds = np.searchsorted(home[members], np.arange(n_lists + 1))
    probing = np.argsort(probes.ravel(), kind="stable")
    probe_lists = probes.ravel()[probing]
    probe_bounds = np.searchsorted(probe_lists, np.arange(n_lists + 1))
    firsts, seconds, found = [], [], []
    for list_id in range(n_lists):
        inside = members[member_bounds[list_id] : member_bounds[list_id + 1]]
        askers = probing[probe_bounds[list_id] : probe_bounds[list_id + 1]] // PROBES
        if len(inside) == 0 or len(askers) == 0:
            continue
        scores = vectors[askers] @ vectors[inside].T
        scores[askers[:, None] == inside[None, :]] = -np.inf
        best = _best_columns(scores, k)
        firsts.append(np.repeat(askers, best.shape[1]))
        seconds.append(inside[best].ravel())
        found.append(np.take_along_axis(scores, best, axis=1).ravel())
    first, second, score = np.concatenate(firsts), np.concatenate(seconds), np.concatenate(found)
    distinct = first != second
    return _undirected(first[distinct], second[distinct], score[distinct])


def _undirected(first: np.ndarray, second: np.ndarray, score: np.ndarray) -> Candidates:
    """Pairs as (smaller, larger), each once, with their scores."""
    low, high = np.minimum(first, second), np.maximum(first, second)
    span = int(high.max(initial=0)) + 1
    keys, where = np.unique(low.astype(np.int64) * span + high, return_index=True)
    return keys // span, keys % span, score[where]


def _top_k(first: np.ndarray, second: np.ndarray, score: np.ndarray, k: int) -> Neighbours:
    """Keep a pair when it is among the ``k`` best of either of its two vectors."""
    node = np.concatenate([first, second])
    pair = np.concatenate([np.arange(len(first)), np.arange(len(first))])
    ranked = np.lexsort((-np.concatenate([score, score]), node))
    node, pair = node[ranked], pair[ranked]
    starts = np.flatnonzero(np.r_[True, node[1:] != node[:-1]])
    rank = np.arange(len(node)) - np.repeat(starts, np.diff(np.r_[starts, len(node)]))
    chosen = np.unique(pair[rank < k])
    order = np.lexsort((second[chosen], first[chosen]))
    chosen = chosen[order]
    return Neighbours(first[chosen], second[chosen], score[chosen])
