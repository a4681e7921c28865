"""String similarity between contexts, via rapidfuzz (all scores in [0, 1])."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Indel, Jaro, JaroWinkler, Levenshtein

from ragmeter.metrics._base import BatchMetric, Requirements
from ragmeter.metrics._details import Details, PassageMatch

SimilarityMeasure = Literal["levenshtein", "indel", "jaro", "jaro_winkler", "partial"]


def _partial(a: str, b: str, *, score_cutoff: float | None = None) -> float:
    return fuzz.partial_ratio(a, b, score_cutoff=score_cutoff) / 100.0


SCORERS: dict[SimilarityMeasure, Callable[..., float]] = {
    "levenshtein": Levenshtein.normalized_similarity,
    "indel": Indel.normalized_similarity,
    "jaro": Jaro.normalized_similarity,
    "jaro_winkler": JaroWinkler.normalized_similarity,
    "partial": _partial,
}


def check_measure(measure: str) -> SimilarityMeasure:
    if measure not in SCORERS:
        raise ValueError(f"unknown similarity measure {measure!r}; use one of {', '.join(SCORERS)}")
    return measure


def similarity_matrix(
    left: Sequence[str], right: Sequence[str], measure: SimilarityMeasure = "levenshtein"
) -> NDArray[np.float64]:
    """Similarity of every string in ``left`` to every string in ``right``.

    >>> similarity_matrix(["abcd"], ["abcd", "abzz"]).round(2)
    array([[1. , 0.5]])
    """
    if not left or not right:
        return np.zeros((len(left), len(right)))
    return process.cdist(left, right, scorer=SCORERS[measure], dtype=np.float64, workers=1)


class StringSimilarityMetric(BatchMetric):
    """A metric that matches the retrieved and the reference contexts by string similarity
    (no LLM): a text matches when its best similarity to any of the others reaches
    ``threshold`` (:meth:`match`)."""

    requires: Requirements = (("retrieved_contexts",), ("reference_contexts",))

    def __init__(self, threshold: float = 0.5, measure: SimilarityMeasure = "levenshtein") -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {threshold}")
        self.threshold = threshold
        self.measure = check_measure(measure)

    def params(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "measure": self.measure}

    def match(self, texts: Sequence[str], others: Sequence[str]) -> tuple[list[int], Details]:
        """Per text, 1 when it matches one of ``others`` (0 when there are none), and the
        matches with their best similarities as details."""
        best = [0.0] * len(texts)
        if others:
            best = similarity_matrix(texts, others, self.measure).max(axis=1).tolist()
        verdicts = [int(x >= self.threshold) for x in best]
        matches = tuple(PassageMatch(bool(v), round(x, 4)) for v, x in zip(verdicts, best))
        return verdicts, Details(matches=matches)
