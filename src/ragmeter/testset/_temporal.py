"""Dates, versions, periods and conditions in English and Chinese text, for temporal and
conditional questions: the phrases a question can be about, and the anchors (a year, a
version number, "a condition") by which a question refers to its chunk's.
"""

from __future__ import annotations

import re
import unicodedata

_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_YEAR = r"(?<!\d)(?:19|20)\d{2}(?!\d)"
_PHRASES = [
    # Chinese dates first (an English year would take the digits of "2022 年 5 月起")
    re.compile(
        rf"{_YEAR}\s*年(?:\s*\d{{1,2}}\s*月)?(?:\s*\d{{1,2}}\s*日)?"
        r"(?:之后|以后|之前|以前|起|前|后)?"
    ),
    # English: "after March 2021", "in 2022", "version 3.1", "if the order is unpaid"
    re.compile(
        rf"\b(?:(?:after|before|since|until|from|during|in|by|as of|prior to)\s+)?"
        rf"(?:(?:{_MONTHS})\s+)?{_YEAR}",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:version|release|v)\s?\d+(?:\.\d+)*\b", re.IGNORECASE),
    re.compile(r"\b(?:if|unless|provided that|only when)\b[^.,;?!]{3,60}", re.IGNORECASE),
    # Chinese: "2022 年 5 月之后", "版本 3 之前", "如果订单未付款"
    re.compile(
        r"(?:版本|[vV])\s*\d+(?:\.\d+)*(?:\s*版)?(?:\s*(?:之后|以后|之前|以前|起))?"
        r"|\d+(?:\.\d+)*\s*版(?:本)?(?:之后|以后|之前|以前|起)?"
    ),
    re.compile(r"(?:如果|假如|若|除非|只要)[^，。；？！,.;?!]{2,30}"),
]
_VERSION = re.compile(
    r"(?:\bversion|\brelease|\bv|版本|[vV])\s*(\d+(?:\.\d+)*)|(\d+(?:\.\d+)*)\s*版", re.IGNORECASE
)
_CONDITION = re.compile(
    r"\b(?:if|unless|provided that|only when)\b|如果|假如|若|除非|只要", re.IGNORECASE
)


def _clean(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def temporal_phrases(text: str) -> list[str]:
    """The date, version, period and condition phrases of ``text``, in order.

    >>> temporal_phrases("Prices rose after March 2021. Version 3.1 adds sync.")
    ['after March 2021', 'Version 3.1']
    >>> temporal_phrases("自 2022 年 5 月起，版本 3 之后如果订单未付款则取消。")
    ['2022 年 5 月起', '版本 3 之后', '如果订单未付款则取消']
    """
    text = _clean(text)
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for pattern in _PHRASES:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < b and a < end for a, b in taken):
                continue
            taken.append((start, end))
            found.append((start, match.group(0).strip()))
    return [phrase for _, phrase in sorted(found)]


def temporal_anchors(text: str) -> set[str]:
    """What a question can share with its chunk: years, version numbers (``v3``) and
    ``condition`` when the text states one.

    >>> sorted(temporal_anchors("What changed in version 3 after 2022, if any?"))
    ['2022', 'condition', 'v3']
    >>> sorted(temporal_anchors("版本 3 之后 2022 年的价格"))
    ['2022', 'v3']
    """
    text = _clean(text)
    anchors = set(re.findall(_YEAR, text))
    anchors |= {"v" + (a or b) for a, b in _VERSION.findall(text)}
    if _CONDITION.search(text):
        anchors.add("condition")
    return anchors


def temporal_problem(question: str, passages: list[str]) -> str | None:
    """Why ``question`` is no temporal question about ``passages``, or ``None`` when it
    names a year, version or condition that they state too.

    >>> temporal_problem("What did Vega Labs open in 2023?", ["Opened in Bergen in 2023."])
    >>> temporal_problem("What did Vega Labs open?", ["Opened in Bergen in 2023."])
    "the question names no date, version or condition: 'What did Vega Labs open?'"
    """
    asked = temporal_anchors(question)
    if not asked:
        return f"the question names no date, version or condition: {question!r}"
    stated = set().union(*(temporal_anchors(p) for p in passages)) if passages else set()
    if not asked & stated:
        return (
            f"the question's {sorted(asked)} are not the passages' {sorted(stated)}: {question!r}"
        )
    return None
