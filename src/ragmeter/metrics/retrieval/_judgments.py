"""Turning ranked id lists and relevance judgments into the arrays the ranking functions take."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, compress, repeat

import numpy as np
from numpy.typing import NDArray


def _grades_of(qrels: Mapping[str, float], ranked: Sequence[str]) -> list[float]:
    grades = list(map(qrels.get, ranked, repeat(0.0)))
    # A document retrieved twice counts once: its later copies are not relevant. Only the
    # (few) judged documents with a nonzero grade can be affected, so only they are checked
    # for repeats, not the whole list (a ranking made from a {doc: score} dict has none).
    graded = list(compress(ranked, grades))
    if len(graded) > 1 and len(set(graded)) != len(graded):
        seen: set[str] = set()
        for position, doc in enumerate(ranked):
            if doc in seen:
                grades[position] = 0.0
            seen.add(doc)
    return grades


def count_relevant(
    qrels: Sequence[Mapping[str, float]], relevance_level: float = 1.0
) -> NDArray[np.int64]:
    """Per query, how many judged documents have a grade of at least ``relevance_level``.

    >>> count_relevant([{"a": 2, "b": 0, "c": 1}, {}, {"x": 3}], relevance_level=2)
    array([1, 0, 1])
    """
    n = len(qrels)
    lengths = np.fromiter(map(len, qrels), dtype=np.intp, count=n)
    grades = np.fromiter(
        chain.from_iterable(q.values() for q in qrels), dtype=np.float64, count=int(lengths.sum())
    )
    owner = np.repeat(np.arange(n), lengths)
    return np.bincount(owner[grades >= relevance_level], minlength=n).astype(np.int64)


def _padded(sized: Sequence[Sized], rows: Iterable[Iterable[float]]) -> NDArray[np.float64]:
    """``rows``, each as long as its entry of ``sized``, in a zero-padded matrix."""
    lengths = np.fromiter(map(len, sized), dtype=np.intp, count=len(sized))
    width = int(lengths.max()) if len(sized) else 0
    flat = np.fromiter(chain.from_iterable(rows), dtype=np.float64, count=int(lengths.sum()))
    matrix = np.zeros((len(sized), width))
    matrix[np.arange(width) < lengths[:, np.newaxis]] = flat
    return matrix


@dataclass
class Judgments:
    """Graded relevance of each query's ranked documents, plus what the qrels say.

    Built once per batch and shared by every ranking metric.
    """

    relevance: NDArray[np.float64]
    n_relevant: NDArray[np.int64]
    qrel_grades: Sequence[Mapping[str, float]] = field(repr=False)
    relevance_level: float = 1.0

    @cached_property
    def ideal(self) -> NDArray[np.float64]:
        """Each query's judged grades, zero padded (only NDCG needs this)."""
        return _padded(self.qrel_grades, (q.values() for q in self.qrel_grades))


def build_judgments(
    rankings: Sequence[Sequence[str]],
    qrels: Sequence[Mapping[str, float]],
    *,
    relevance_level: float = 1.0,
) -> Judgments:
    """Look up each ranked document's grade in its query's qrels (missing = 0).

    >>> j = build_judgments([["a", "b", "c"], ["x"]], [{"a": 2, "c": 1}, {"y": 1}])
    >>> j.relevance, j.n_relevant
    (array([[2., 0., 1.],
           [0., 0., 0.]]), array([2, 1]))
    """
    if len(rankings) != len(qrels):
        raise ValueError(f"{len(rankings)} rankings but {len(qrels)} qrels")
    relevance = _padded(rankings, map(_grades_of, qrels, rankings))
    return Judgments(relevance, count_relevant(qrels, relevance_level), qrels, relevance_level)


def rank_by_score(scores: Mapping[str, float]) -> list[str]:
    """Document ids by descending score, ties broken by descending id, exactly as trec_eval.

    trec_eval keeps scores as 32-bit floats (``float sim`` in its ``trec_format.h``), so the
    scores are compared once rounded to single precision: two scores that differ only below
    float32 precision are a tie, broken by descending doc id.

    >>> rank_by_score({"a": 1.0, "b": 2.0, "c": 1.0})
    ['b', 'c', 'a']
    >>> rank_by_score({"a": 0.5 + 1e-9, "b": 0.5})  # the same float32: a tie
    ['b', 'a']
    """
    rounded = array("f", scores.values())
    return [doc for _, doc in sorted(zip(rounded, scores), reverse=True)]
