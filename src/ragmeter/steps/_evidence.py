"""Evidence for one verdict: the few sentences of a long passage that bear on a claim.

A small judge loses a claim in a long passage: on the WikiEval dev split the embedded judge
gave claims stated almost word for word in the first two sentences of a 3,543-character
context P(yes) 0.42 and 0.36 when asked about the whole context. Asked about the sentences
that share the most (rare) words with the claim, it reads what matters, and each verdict
costs a few hundred tokens instead of thousands (bench/RESULTS_meta_eval.md).

Sentences are ranked by the inverse-document-frequency weight of the words they share with
the query (the claim, or the question and answer), counted over the passage's own sentences;
Chinese is matched on character bigrams. The best sentences that share anything with the
query are kept, in passage order, until ``max_chars``; a passage that already fits is
returned unchanged.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise

from ragmeter._text import contains_cjk, normalize, split_sentences, tokenize

#: Passages up to this many characters are read whole.
EVIDENCE_CHARS = 480
#: Between kept sentences that were not adjacent in the passage.
GAP = " … "
_LINES = re.compile(r"\n+")
#: English words too common to say anything about which sentence a claim comes from.
_COMMON_WORDS = (
    "a an and are as at be been by for from has have in is it its of on or that the this to"
    " was were which who will with"
)
_STOPWORDS = frozenset(_COMMON_WORDS.split())


def _units(text: str) -> list[str]:
    return [s for line in _LINES.split(text) for s in split_sentences(line)]


def _terms(text: str) -> set[str]:
    tokens = [t for t in tokenize(text) if t not in _STOPWORDS]
    if not contains_cjk(text):
        return set(tokens)
    # Chinese characters alone match almost any sentence: use bigrams of adjacent characters.
    single = [t for t in tokens if len(t) == 1]
    return {t for t in tokens if len(t) > 1} | {a + b for a, b in pairwise(single)}


def select_evidence(query: str, passage: str, max_chars: int = EVIDENCE_CHARS) -> str:
    """The sentences of ``passage`` that bear most on ``query``, at most ``max_chars``
    characters (at least one sentence), in passage order; ``passage`` itself when it fits.

    >>> text = ("Venice is in Italy. The festival runs from 30 August to 9 September 2023. "
    ...         "Comandante opens it. Tickets sold out. " * 10)
    >>> select_evidence("The festival runs from 30 August", text, max_chars=80)
    'The festival runs from 30 August to 9 September 2023.'
    """
    if len(passage) <= max_chars:
        return passage
    units = _units(passage)
    if not units:
        return passage[:max_chars]
    unit_terms = [_terms(u) for u in units]
    frequency = Counter(t for terms in unit_terms for t in terms)
    wanted = _terms(query)

    def weight(i: int) -> float:
        return sum(math.log(1 + len(units) / frequency[t]) for t in wanted & unit_terms[i])

    weights = [weight(i) for i in range(len(units))]
    ranked = sorted(range(len(units)), key=lambda i: (-weights[i], i))
    kept: list[int] = []
    used = 0
    for i in ranked:
        if kept and (weights[i] <= 0 or used + len(units[i]) > max_chars):
            continue
        kept.append(i)
        used += len(units[i]) + 1
        if used >= max_chars:
            break
    return _join(units, sorted(kept))


def _join(units: Sequence[str], kept: Sequence[int]) -> str:
    parts: list[str] = []
    for position, i in enumerate(kept):
        if position:
            parts.append(" " if i == kept[position - 1] + 1 else GAP)
        parts.append(units[i])
    return "".join(parts)


def evidence_query(*texts: str) -> str:
    """What evidence is looked for: the claim (or question and answer) normalised."""
    return normalize(" ".join(t for t in texts if t))
