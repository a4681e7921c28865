"""Ranking metrics as pure, vectorised functions over a relevance matrix.

Every function takes ``relevance``: an array of shape ``(n_queries, depth)`` whose row ``i``
holds the graded relevance of query ``i``'s retrieved documents in rank order, padded with
zeros past the end of a shorter list. A document counts as relevant when its grade is at
least ``relevance_level`` (1 by default, as in trec_eval). Results match trec_eval, including
its conventions: a query with no relevant documents scores 0, ``@k`` precision divides by
``k`` even when fewer documents were retrieved, and AP divides by every relevant document.

This module is the one place where Average Precision is computed.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

Gain = Literal["linear", "exponential"]


def _matrix(relevance: ArrayLike) -> NDArray[np.float64]:
    matrix = np.asarray(relevance, dtype=np.float64)
    if matrix.ndim == 1:
        matrix = matrix[np.newaxis, :]
    if matrix.ndim != 2:
        raise ValueError(f"relevance must be 1-D or 2-D, got shape {matrix.shape}")
    return matrix


def _cutoff(k: int | None) -> int | None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1):
        raise ValueError(f"k must be a positive integer or None, got {k!r}")
    return None if k is None else int(k)


def _hits(relevance: ArrayLike, k: int | None, relevance_level: float) -> NDArray[np.bool_]:
    return _matrix(relevance)[:, : _cutoff(k)] >= relevance_level


def _safe_divide(numerator: NDArray[np.float64], denominator: ArrayLike) -> NDArray[np.float64]:
    denominator = np.broadcast_to(np.asarray(denominator, dtype=np.float64), numerator.shape)
    out = np.zeros_like(numerator)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def precision_at_k(
    relevance: ArrayLike, k: int, *, relevance_level: float = 1
) -> NDArray[np.float64]:
    """Share of the top ``k`` retrieved documents that are relevant.

    Worked example (docs/metrics.md, precision@K): 4 relevant documents, top 5 relevant at
    ranks 1, 3 and 4.

    >>> precision_at_k([1, 0, 1, 1, 0], k=5)
    array([0.6])
    """
    cutoff = _cutoff(k)
    if cutoff is None:
        raise ValueError("precision_at_k needs a cutoff k")
    shares: NDArray[np.float64] = _hits(relevance, cutoff, relevance_level).sum(axis=1) / cutoff
    return shares


def recall_at_k(
    relevance: ArrayLike, n_relevant: ArrayLike, k: int | None = None, *, relevance_level: float = 1
) -> NDArray[np.float64]:
    """Share of all relevant documents found in the top ``k``.

    >>> recall_at_k([1, 0, 1, 1, 0], n_relevant=4, k=5)
    array([0.75])
    """
    found = _hits(relevance, k, relevance_level).sum(axis=1).astype(np.float64)
    return _safe_divide(found, n_relevant)


def f1_at_k(
    relevance: ArrayLike, n_relevant: ArrayLike, k: int, *, relevance_level: float = 1
) -> NDArray[np.float64]:
    """Harmonic mean of :func:`precision_at_k` and :func:`recall_at_k`.

    >>> f1_at_k([1, 0, 1, 1, 0], n_relevant=4, k=5).round(4)
    array([0.6667])
    """
    precision = precision_at_k(relevance, k, relevance_level=relevance_level)
    recall = recall_at_k(relevance, n_relevant, k, relevance_level=relevance_level)
    return _safe_divide(2 * precision * recall, precision + recall)


def hit_at_k(
    relevance: ArrayLike, k: int | None = None, *, relevance_level: float = 1
) -> NDArray[np.float64]:
    """1 when at least one relevant document is in the top ``k``, else 0 (trec_eval ``success``).

    >>> hit_at_k([[0, 0, 1], [0, 0, 0]], k=3)
    array([1., 0.])
    """
    return np.asarray(_hits(relevance, k, relevance_level).any(axis=1), dtype=np.float64)


def reciprocal_rank(
    relevance: ArrayLike, k: int | None = None, *, relevance_level: float = 1
) -> NDArray[np.float64]:
    """1 / rank of the first relevant document in the top ``k``, 0 when there is none.

    The mean over queries is MRR. Worked example (docs/metrics.md, mrr): first relevant at
    ranks 2, 1 and 4.

    >>> rr = reciprocal_rank([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1]])
    >>> rr, round(float(rr.mean()), 3)
    (array([0.5 , 1.  , 0.25]), 0.583)
    """
    hits = _hits(relevance, k, relevance_level)
    if hits.shape[1] == 0:
        return np.zeros(hits.shape[0])
    first = hits.argmax(axis=1)
    return np.where(hits.any(axis=1), 1.0 / (first + 1.0), 0.0)


def average_precision(
    relevance: ArrayLike,
    n_relevant: ArrayLike | None = None,
    k: int | None = None,
    *,
    relevance_level: float = 1,
) -> NDArray[np.float64]:
    """Mean of the precision at each rank (up to ``k``) where a relevant document appears.

    The sum is divided by ``n_relevant``, the number of relevant documents that exist (as
    trec_eval's ``map`` and ``map_cut``). Without ``n_relevant`` it is divided by the number of
    relevant documents in the ranked list itself: that is RAGAS's context precision, where
    only the retrieved contexts are judged. The mean over queries is MAP.

    Worked examples (docs/metrics.md, map and id_context_precision): 3 relevant in the top 6
    at ranks 1, 3, 6; MAP of 0.722 and 0.5; context precision of useful
    chunks at ranks {1, 3}, {1, 2} and {4, 5} of 5.

    >>> ap = average_precision([[1, 0, 1, 0, 0, 1], [0, 1, 0, 0, 0, 0]], n_relevant=[3, 1])
    >>> ap.round(3), round(float(ap.mean()), 3)
    (array([0.722, 0.5  ]), 0.611)
    >>> average_precision([[1, 0, 1, 0, 0], [1, 1, 0, 0, 0], [0, 0, 0, 1, 1]]).round(3)
    array([0.833, 1.   , 0.325])
    """
    hits = _hits(relevance, k, relevance_level)
    ranks = np.arange(1, hits.shape[1] + 1, dtype=np.float64)
    precision_at_hits = np.where(hits, np.cumsum(hits, axis=1) / ranks, 0.0)
    total = precision_at_hits.sum(axis=1)
    denominator = hits.sum(axis=1) if n_relevant is None else n_relevant
    return _safe_divide(total, denominator)


def _gains(grades: NDArray[np.float64], gain: Gain) -> NDArray[np.float64]:
    if gain == "linear":
        return np.where(grades > 0, grades, 0.0)
    if gain == "exponential":
        return np.where(grades > 0, np.exp2(grades) - 1.0, 0.0)
    raise ValueError(f"gain must be 'linear' or 'exponential', got {gain!r}")


def dcg_at_k(
    relevance: ArrayLike, k: int | None = None, *, gain: Gain = "linear"
) -> NDArray[np.float64]:
    """Discounted cumulative gain: sum of gain / log2(rank + 1) over the top ``k``.

    Worked example (docs/metrics.md, ndcg): terms 7 + 0 + 1.5 + 0.4307 + 1.1606; the exact
    sum is 10.0913 (10.092 when each term is rounded to three places first).

    >>> dcg_at_k([3, 0, 2, 1, 2], k=5, gain="exponential").round(4)
    array([10.0913])
    """
    grades = _matrix(relevance)[:, : _cutoff(k)]
    discounts = 1.0 / np.log2(np.arange(2, grades.shape[1] + 2, dtype=np.float64))
    return _gains(grades, gain) @ discounts


def ndcg_at_k(
    relevance: ArrayLike, ideal: ArrayLike, k: int | None = None, *, gain: Gain = "linear"
) -> NDArray[np.float64]:
    """DCG of the ranking over DCG of the ideal ranking, both cut at ``k``.

    ``ideal`` holds, per query, the grades of every judged document (any order, zero
    padded); the ideal ranking sorts them. ``gain`` is ``"linear"`` (the grade itself, as
    trec_eval) or ``"exponential"`` (2^grade - 1). Worked example (docs/metrics.md, ndcg),
    exponential gain:

    >>> ndcg_at_k([3, 0, 2, 1, 2], ideal=[3, 0, 2, 1, 2], k=5, gain="exponential").round(3)
    array([0.932])
    """
    ideal_sorted = -np.sort(-_matrix(ideal), axis=1)
    return _safe_divide(dcg_at_k(relevance, k, gain=gain), dcg_at_k(ideal_sorted, k, gain=gain))


def r_precision(
    relevance: ArrayLike, n_relevant: ArrayLike, *, relevance_level: float = 1
) -> NDArray[np.float64]:
    """Precision at rank R, where R is the number of relevant documents (trec_eval ``Rprec``).

    >>> r_precision([[1, 0, 1, 1, 0]], n_relevant=[4])
    array([0.75])
    """
    hits = _hits(relevance, None, relevance_level)
    n_relevant = np.asarray(n_relevant, dtype=np.intp).reshape(-1)
    if hits.shape[1] == 0:
        return np.zeros(hits.shape[0])
    found = np.cumsum(hits, axis=1)
    at_r = np.minimum(np.maximum(n_relevant, 1), hits.shape[1]) - 1
    counted = found[np.arange(hits.shape[0]), at_r].astype(np.float64)
    return _safe_divide(counted, n_relevant)
