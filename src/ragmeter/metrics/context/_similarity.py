"""String similarity between contexts, via rapidfuzz (all scores in [0, 1])."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Indel, Jaro, JaroWinkler, Levenshtein

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
