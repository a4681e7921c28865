"""Difficulty tiers of generated questions: easy, medium or hard, from three factors.

Each factor scores 0, 1 or 2 points; the tier comes from the sum (0 to 6):

* **hops**, the number of source chunks: 1 chunk 0 points, 2 chunks 1, 3 or more 2;
* **distractor similarity**, the largest cosine between the question's embedding and a chunk
  that is *not* a source chunk (a retriever is tempted by it): below 0.5 0 points, 0.5 to
  0.7 1, 0.7 or more 2;
* **paraphrase distance**, 1 minus the share of the question's character n-grams found in
  its source chunks (n = 2 for Chinese, 3 otherwise, on the text without spaces or
  punctuation, so a question that copies the passage's words is easy to match): below 0.4
  0 points, 0.4 to 0.7 1, 0.7 or more 2.

0 or 1 point is ``easy``, 2 or 3 ``medium``, 4 or more ``hard``.

Worked example: a question written from two chunks (hops 1 point) whose closest other chunk
has cosine 0.62 with it (1 point), and of whose 20 character trigrams 8 are in the chunks
(distance 1 - 8/20 = 0.6, 1 point): 1 + 1 + 1 = 3 points, ``medium``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ragmeter._text import normalize

Tier = Literal["easy", "medium", "hard"]
TIERS: tuple[Tier, ...] = ("easy", "medium", "hard")
#: Lower bounds of 1 and 2 points for the distractor similarity and the paraphrase distance.
SIMILARITY_STEPS = (0.5, 0.7)
DISTANCE_STEPS = (0.4, 0.7)
#: Most points that are still ``easy``, and still ``medium``.
EASY_MAX, MEDIUM_MAX = 1, 3

_NOT_WORDS = re.compile(r"[\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Difficulty:
    """The three factors, their points and the tier."""

    hops: int
    distractor_similarity: float
    paraphrase_distance: float

    @property
    def points(self) -> int:
        return (
            min(self.hops - 1, 2)
            + _steps(self.distractor_similarity, SIMILARITY_STEPS)
            + _steps(self.paraphrase_distance, DISTANCE_STEPS)
        )

    @property
    def tier(self) -> Tier:
        """The tier of :attr:`points`.

        >>> Difficulty(2, 0.62, 0.6).tier, Difficulty(1, 0.3, 0.2).tier
        ('medium', 'easy')
        >>> Difficulty(3, 0.8, 0.9).tier
        'hard'
        """
        points = self.points
        return "easy" if points <= EASY_MAX else "medium" if points <= MEDIUM_MAX else "hard"


def _steps(value: float, steps: tuple[float, float]) -> int:
    return sum(1 for step in steps if value >= step)


def ngrams(text: str, n: int) -> set[str]:
    """Character ``n``-grams of ``text`` without spaces or punctuation.

    >>> sorted(ngrams("退货 时限", 2))
    ['时限', '货时', '退货']
    """
    letters = _NOT_WORDS.sub("", normalize(text))
    if len(letters) < n:
        return {letters} if letters else set()
    return {letters[i : i + n] for i in range(len(letters) - n + 1)}


def paraphrase_distance(question: str, sources: Sequence[str], *, language: str) -> float:
    """1 minus the share of the question's character n-grams that occur in ``sources``.

    "abcd" has trigrams abc and bcd; a source "xxabcx" holds abc only: 1 - 1/2 = 0.5.

    >>> paraphrase_distance("abcd", ["xxabcx"], language="en")
    0.5
    """
    n = 2 if language == "zh" else 3
    grams = ngrams(question, n)
    if not grams:
        return 0.0
    found = set().union(*(ngrams(source, n) for source in sources)) if sources else set()
    return 1 - len(grams & found) / len(grams)
