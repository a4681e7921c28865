"""Shared machinery of the ranking metrics: batch scoring over one judgments matrix."""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ragmeter.dataset import Sample
from ragmeter.metrics._base import (
    BatchContext,
    BatchMetric,
    MetricResult,
    Requirements,
    ScoreColumn,
    missing_fields_result,
)
from ragmeter.metrics.retrieval._judgments import Judgments as Judgments  # for the metrics
from ragmeter.metrics.retrieval._judgments import build_judgments

#: One score per query (what :meth:`RankingMetric.compute` returns).
Scores = NDArray[np.float64]

NO_RELEVANT = (
    "no relevant context exists for this sample "
    "(no reference_context_ids and no relevance grade >= the relevance level)"
)


GRADE_FIX = "use finite grades >= 0 (0 = not relevant)"


def grade_problem(relevance: Mapping[str, float] | None) -> str | None:
    """What makes a sample's relevance grades unusable (NaN, infinite, negative), or None.

    >>> grade_problem({"d1": 2, "d2": -1})
    "relevance grade of 'd2' is -1, below 0: use finite grades >= 0 (0 = not relevant)"
    """
    for doc, grade in (relevance or {}).items():
        if math.isnan(grade):
            return f"relevance grade of {doc!r} is NaN: {GRADE_FIX}"
        if math.isinf(grade):
            return f"relevance grade of {doc!r} is {grade}: {GRADE_FIX}"
        if grade < 0:
            return f"relevance grade of {doc!r} is {grade:g}, below 0: {GRADE_FIX}"
    return None


def cutoff_name(base: str, k: int | None) -> str:
    """A ranking metric's name: ``base``, with ``@k`` for a cutoff.

    >>> cutoff_name("ndcg", 10), cutoff_name("mrr", None)
    ('ndcg@10', 'mrr')
    """
    return base if k is None else f"{base}@{k}"


class RankingMetric(BatchMetric):
    """A metric of the ranked ``retrieved_context_ids`` against the relevant ids.

    Relevance comes from ``relevance`` (graded) when given, else from ``reference_context_ids``
    (binary). A sample with nothing relevant is not applicable rather than scored 0 (trec_eval
    scores it 0), so it cannot silently drag an average down; :attr:`defined_without_relevant`
    metrics (precision) still score it.
    """

    requires: Requirements = (
        ("retrieved_context_ids",),
        ("reference_context_ids", "relevance"),
    )
    defined_without_relevant: ClassVar[bool] = False
    base_name: ClassVar[str]

    def __init__(self, k: int | None = None, *, relevance_level: float = 1.0) -> None:
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise ValueError(f"k must be a positive integer, got {k!r}")
        self.k = k
        self.relevance_level = relevance_level
        self.name = cutoff_name(self.base_name, k)

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"k": self.k}
        if self.relevance_level != 1.0:
            params["relevance_level"] = self.relevance_level
        return params

    @abstractmethod
    def compute(self, judgments: Judgments) -> Scores:
        """One score per query from the shared judgments."""

    def score(self, sample: Sample) -> MetricResult:
        return self.score_batch([sample])[0]

    def sample_problem(self, sample: Sample) -> str | None:
        """Why this metric cannot score ``sample`` although it has the fields (its grades are
        unusable), or None. Such a sample fails with the reason; the others are unaffected.
        Asked only of samples with graded ``relevance``."""
        return grade_problem(sample.relevance) if sample.relevance else None

    def score_batch(
        self, samples: Sequence[Sample], context: BatchContext | None = None
    ) -> list[MetricResult]:
        return self.score_column(samples, context).results()

    def score_column(
        self, samples: Sequence[Sample], context: BatchContext | None = None
    ) -> ScoreColumn:
        context = context or BatchContext()
        judgments = context.memo(
            ("ranking-judgments", self.relevance_level),
            lambda: build_judgments(
                [s.retrieved_context_ids or [] for s in samples],
                [s.qrels() for s in samples],
                relevance_level=self.relevance_level,
            ),
        )
        # Each query is a row of its own: a sample's bad grades (NaN, overflow) leave the
        # others' scores as they are, and are reported per sample below.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            scores = np.array(self.compute(judgments), dtype=np.float64)
        # What the samples lack, and which are graded: the same for every ranking metric
        # with these needs.
        lacking, graded = context.memo(
            ("ranking-missing", self.requires),
            lambda: (
                {i: m for i, s in enumerate(samples) if (m := self.missing_fields(s))},
                [i for i, s in enumerate(samples) if s.relevance],
            ),
        )
        others: dict[int, MetricResult] = {}
        for i in graded:
            if i not in lacking and (problem := self.sample_problem(samples[i])) is not None:
                others[i] = MetricResult.failed(problem)
        for i in np.flatnonzero(~np.isfinite(scores)).tolist():
            others.setdefault(
                i,
                MetricResult.failed(
                    f"{self.name} is {scores[i]} for this sample: its relevance grades are "
                    "too large to add up; use smaller grades"
                ),
            )
        if not self.defined_without_relevant:
            for i in np.flatnonzero(judgments.n_relevant == 0).tolist():
                others.setdefault(i, MetricResult.not_applicable(NO_RELEVANT))
        for i, missing in lacking.items():
            others[i] = missing_fields_result(missing)  # before any other reason
        if others:
            scores[list(others)] = np.nan
        return ScoreColumn(scores, others)


class CutoffMetric(RankingMetric):
    """A ranking metric that needs its cutoff K (precision@K, recall@K, ...)."""

    k: int

    def __init__(self, k: int, *, relevance_level: float = 1.0) -> None:
        super().__init__(k, relevance_level=relevance_level)
