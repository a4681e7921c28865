"""Scoring a whole TREC-style run against qrels in one vectorised pass."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat

import numpy as np
from numpy.typing import NDArray

from ragmeter.metrics.retrieval._base import RankingMetric
from ragmeter.metrics.retrieval._judgments import (
    Judgments,
    _grades_of,
    build_judgments,
    count_relevant,
    rank_by_score,
)
from ragmeter.metrics.retrieval._specs import ranking_metric

# Judged documents whose rank is counted in one block (a block x depth float32 comparison).
_BLOCK = 1 << 15


@dataclass
class RunScores:
    """Per-query scores of a run: ``scores[metric][i]`` belongs to ``query_ids[i]``."""

    query_ids: list[str]
    scores: dict[str, NDArray[np.float64]]

    def mean(self) -> dict[str, float]:
        return {
            name: float(values.mean()) if len(values) else float("nan")
            for name, values in self.scores.items()
        }


def _relevance_from_scores(
    run_scores: Sequence[Mapping[str, float]], qrels: Sequence[Mapping[str, float]]
) -> NDArray[np.float64]:
    """The relevance matrix of ``rank_by_score`` + ``build_judgments``, without sorting.

    Only the judged documents are placed: a retrieved judged document's rank is the number
    of documents of its query with a greater float32 score, plus those with an equal score
    and a greater id (trec_eval's tie-break). Everything else is 0, as an unjudged document's
    grade.
    """
    n = len(run_scores)
    lengths = np.fromiter(map(len, run_scores), dtype=np.intp, count=n)
    depth = int(lengths.max()) if n else 0
    relevance = np.zeros((n, depth))
    if depth == 0:
        return relevance

    # Every score, rounded to float32 as trec_eval stores it, in a NaN-padded matrix.
    flat = np.fromiter(
        chain.from_iterable(scores.values() for scores in run_scores),
        dtype=np.float64,
        count=int(lengths.sum()),
    )
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf, as trec_eval
        flat32 = flat.astype(np.float32)
    del flat
    if (lengths == depth).all():
        scores = flat32.reshape(n, depth)
    else:
        scores = np.full((n, depth), np.nan, dtype=np.float32)
        scores[np.arange(depth) < lengths[:, np.newaxis]] = flat32

    # A query with a NaN score has no total order: rank it exactly as rank_by_score does.
    unordered = np.zeros(n, dtype=bool)
    nan_at = np.flatnonzero(np.isnan(flat32))
    if len(nan_at):
        unordered[np.searchsorted(np.cumsum(lengths), nan_at, side="right")] = True
        for i in np.flatnonzero(unordered).tolist():
            ranked = rank_by_score(run_scores[i])
            relevance[i, : len(ranked)] = _grades_of(qrels[i], ranked)
    del flat32

    # The judged documents to place: a nonzero grade (-0.0 too, for the same bytes as
    # build_judgments) in a query ranked here. Their score in the run is NaN if not retrieved.
    n_judged = np.fromiter(map(len, qrels), dtype=np.intp, count=n)
    grades = np.fromiter(
        chain.from_iterable(judged.values() for judged in qrels),
        dtype=np.float64,
        count=int(n_judged.sum()),
    )
    owner = np.repeat(np.arange(n), n_judged)
    wanted = ((grades != 0) | np.signbit(grades)) & ~unordered[owner]
    wanted_flags = wanted.tolist()
    docs = list(compress(chain.from_iterable(qrels), wanted_flags))
    runs = compress(chain.from_iterable(map(repeat, run_scores, n_judged.tolist())), wanted_flags)
    # dict.get is much faster than a lambda; other mappings need the method of their own.
    get: Callable[[Mapping[str, float], str, float], float] = (
        dict.get  # type: ignore[assignment]  # only called on plain dicts (checked here)
        if all(type(scores) is dict for scores in run_scores)
        else lambda scores, doc, default: scores.get(doc, default)
    )
    found = np.fromiter(map(get, runs, docs, repeat(math.nan)), dtype=np.float64, count=len(docs))
    retrieved = np.flatnonzero(~np.isnan(found))
    placed = np.flatnonzero(wanted)[retrieved]
    row_of = owner[placed]
    with np.errstate(over="ignore"):
        score_of = found[retrieved].astype(np.float32)

    rank_of = np.empty(len(placed), dtype=np.intp)
    tied: list[int] = []
    for start in range(0, len(placed), _BLOCK):
        block = scores[row_of[start : start + _BLOCK]]
        own = score_of[start : start + _BLOCK, np.newaxis]
        rank_of[start : start + _BLOCK] = (block > own).sum(axis=1)
        # Equal scores (the document itself aside) are ordered by descending doc id.
        ties = (block == own).sum(axis=1) > 1
        tied.extend((np.flatnonzero(ties) + start).tolist())
    for j in tied:
        i, doc = int(row_of[j]), docs[retrieved[j]]
        own_score = float(score_of[j])
        rank_of[j] += sum(
            1
            for other, score in zip(run_scores[i], scores[i, : lengths[i]].tolist(), strict=True)
            if score == own_score and other > doc
        )
    relevance[row_of, rank_of] = grades[placed]
    return relevance


def judgments_from_scores(
    run_scores: Sequence[Mapping[str, float]],
    qrels: Sequence[Mapping[str, float]],
    *,
    relevance_level: float = 1.0,
) -> Judgments:
    """Judgments of scored documents (``{doc: score}`` per query), ranked as trec_eval ranks.

    The same result as ``build_judgments([rank_by_score(s) for s in run_scores], qrels)``,
    byte for byte, but without sorting each query's documents: only the judged documents
    are looked up and placed at their rank. Ranks follow trec_eval: descending score compared
    in float32 (trec_eval's precision), ties broken by descending doc id.

    Here ``"a"`` scores more than ``"b"`` only below float32 precision, so they tie and the
    greater id, ``"b"``, ranks first: the order is c, b, a. ``"x"`` and ``"y"`` are relevant
    but not retrieved; they count in ``n_relevant``:

    >>> run = [{"a": 0.5 + 1e-9, "b": 0.5, "c": 0.9}, {}]
    >>> j = judgments_from_scores(run, [{"a": 2, "b": 1, "x": 1}, {"y": 1}])
    >>> j.relevance, j.n_relevant
    (array([[0., 1., 2.],
           [0., 0., 0.]]), array([3, 1]))
    """
    if len(run_scores) != len(qrels):
        raise ValueError(f"{len(run_scores)} runs but {len(qrels)} qrels")
    relevance = _relevance_from_scores(run_scores, qrels)
    return Judgments(relevance, count_relevant(qrels, relevance_level), qrels, relevance_level)


def evaluate_run(
    run: Mapping[str, Mapping[str, float] | Sequence[str]],
    qrels: Mapping[str, Mapping[str, float]],
    metrics: Sequence[RankingMetric | str],
) -> RunScores:
    """Score a run (query -> {doc: score} or a ranked list of docs) against qrels.

    As trec_eval: the queries scored are those in both the run and the qrels, documents are
    ranked by descending score (compared in float32, trec_eval's precision) with ties broken
    by descending id, and a query with no relevant document scores 0 (the per-sample metrics
    say "not applicable" instead).

    >>> scores = evaluate_run({"q1": ["A", "B", "C"]}, {"q1": {"C": 1}}, ["mrr", "precision@3"])
    >>> scores.scores["mrr"], scores.scores["precision@3"].round(4)
    (array([0.33333333]), array([0.3333]))
    """
    resolved = [ranking_metric(m) if isinstance(m, str) else m for m in metrics]
    for metric in resolved:
        if not isinstance(metric, RankingMetric):
            raise ValueError(f"{metric.name!r} is not a ranking metric")
    query_ids = [q for q in run if q in qrels]
    entries = [run[q] for q in query_ids]
    judged = [qrels[q] for q in query_ids]
    if all(isinstance(entry, Mapping) for entry in entries):
        relevance = _relevance_from_scores(entries, judged)  # type: ignore[arg-type]
    else:
        rankings = [
            rank_by_score(entry) if isinstance(entry, Mapping) else list(entry) for entry in entries
        ]
        relevance = build_judgments(rankings, judged).relevance
    # The matrix does not depend on the relevance level; only the count of relevant docs does.
    judgments = {
        level: Judgments(relevance, count_relevant(judged, level), judged, level)
        for level in {m.relevance_level for m in resolved}
    }
    return RunScores(query_ids, {m.name: m.compute(judgments[m.relevance_level]) for m in resolved})
