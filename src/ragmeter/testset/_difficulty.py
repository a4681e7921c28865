"""Difficulty tiers of generated questions: easy, medium or hard, from three factors.

Each factor scores 0, 1 or 2 points; the tier comes from the sum (0 to 6):

* **hops**, the number of source chunks: 1 chunk 0 points, 2 chunks 1, 3 or more 2;
* **distractor margin**, the largest cosine between the question's embedding and a chunk
  that is *not* a source chunk, minus the largest with a source chunk: how close a
  retriever's temptation comes to the right chunk. Below -0.03 0 points (the source chunk is
  clearly closer), -0.03 to 0 1, 0 or more 2 (a distractor is as close as the source or
  closer). A margin, not the distractor's cosine alone: the embedded model's cosines all lie
  between about 0.8 and 0.9 (bench/RESULTS_adversarial.md: every question's closest other
  chunk at 0.81 to 0.86, so a cut on the cosine put no question in ``easy``), while its
  margins spread from -0.054 to +0.033 over the same questions; the cuts come from those 12
  questions and are a first guess for other embedding models;
* **paraphrase distance**, 1 minus the share of the question's character n-grams found in
  its source chunks (n = 2 for Chinese, 3 otherwise, on the text without spaces or
  punctuation, so a question that copies the passage's words is easy to match): below 0.4
  0 points, 0.4 to 0.7 1, 0.7 or more 2.

0 or 1 point is ``easy``, 2 or 3 ``medium``, 4 or more ``hard``.

Worked example: a question written from two chunks (hops 1 point) whose closest source chunk
has cosine 0.86 with it and closest other chunk 0.84 (margin -0.02, 1 point), and of whose 20
character trigrams 8 are in the chunks (distance 1 - 8/20 = 0.6, 1 point): 1 + 1 + 1 = 3
points, ``medium``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ragmeter._text import normalize

Tier = Literal["easy", "medium", "hard"]
#: Lower bounds of 1 and 2 points for the distractor margin and the paraphrase distance.
MARGIN_STEPS = (-0.03, 0.0)
DISTANCE_STEPS = (0.4, 0.7)
#: Most points that are still ``easy``, and still ``medium``.
EASY_MAX, MEDIUM_MAX = 1, 3

_NOT_WORDS = re.compile(r"[\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Difficulty:
    """The three factors, their points and the tier."""

    hops: int
    distractor_margin: float
    paraphrase_distance: float

    @property
    def points(self) -> int:
        return (
            min(self.hops - 1, 2)
            + _steps(self.distractor_margin, MARGIN_STEPS)
            + _steps(self.paraphrase_distance, DISTANCE_STEPS)
        )

    @property
    def tier(self) -> Tier:
        """The tier of :attr:`points`.

        >>> Difficulty(2, -0.02, 0.6).tier, Difficulty(1, -0.05, 0.2).tier
        ('medium', 'easy')
        >>> Difficulty(3, 0.01, 0.9).tier
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
