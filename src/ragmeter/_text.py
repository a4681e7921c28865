"""Normalising and tokenising answer text, so that Chinese scores as sensibly as English."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any, Literal

Tokenizer = Literal["auto", "char", "jieba", "whitespace"]

# Han, kana and hangul: scripts written without spaces between words.
_CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK = re.compile(f"[{_CJK_RANGES}]")
_TOKEN = re.compile(f"[{_CJK_RANGES}]|[^\\W_{_CJK_RANGES}]+")
_SPACE = re.compile(r"\s+")


def contains_cjk(text: str) -> bool:
    """Whether ``text`` has any Chinese, Japanese or Korean character.

    >>> contains_cjk("RAG 是什么"), contains_cjk("what is RAG")
    (True, False)
    """
    return _CJK.search(text) is not None


def normalize(text: str) -> str:
    """NFKC (full-width to half-width), case folded, whitespace collapsed.

    >>> normalize("  Ｐａｒｉｓ\\n IS ")
    'paris is'
    """
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@lru_cache(maxsize=1)
def _jieba() -> Any:  # the jieba module, which ships no type information
    try:
        import jieba
    except ImportError:
        raise ImportError("tokenizer='jieba' needs jieba: pip install 'ragmeter[zh]'") from None
    jieba.setLogLevel(60)
    return jieba


def tokenize(text: str, tokenizer: Tokenizer = "auto") -> list[str]:
    """Split normalised text into tokens; punctuation is dropped.

    ``auto`` and ``char``: each CJK character is a token, other scripts split into words.
    ``jieba``: Chinese word segmentation. ``whitespace``: split on spaces only.

    >>> tokenize("RAG 是检索增强生成, right?")
    ['rag', '是', '检', '索', '增', '强', '生', '成', 'right']
    """
    text = normalize(text)
    if tokenizer in ("auto", "char"):
        return _TOKEN.findall(text)
    if tokenizer == "whitespace":
        return text.split()
    if tokenizer == "jieba":
        return [piece.strip() for piece in _jieba().lcut(text) if _TOKEN.search(piece)]
    raise ValueError(f"unknown tokenizer {tokenizer!r}; use auto, char, jieba or whitespace")


# ---- sentences ------------------------------------------------------------------------------

_CJK_SPLIT = "\u3400-\u9fff\uf900-\ufaff"
_CLOSERS = "\"'”’」』）)》〉】]"
_TERMINATORS = re.compile(rf"[。！？；…!?.]+[{re.escape(_CLOSERS)}]*")
_CJK_TERMINATOR = re.compile("[。！？；…]")
_AFTER_ASCII_END = re.compile(rf"\s|[{_CJK_SPLIT}]")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_ABBREVIATIONS = {
    "e.g", "i.e", "etc", "vs", "cf", "al", "mr", "mrs", "ms", "dr", "prof", "st", "no", "fig",
    "inc", "ltd", "jr", "sr", "approx", "dept", "eq", "vol", "a.m", "p.m",
}  # fmt: skip


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, Chinese and English, stripped of surrounding whitespace.

    >>> split_sentences('他说：“好的。”然后走了……真的吗?是的。 Dr. Li left. Really?! Yes')
    ['他说：“好的。”', '然后走了……', '真的吗?', '是的。', 'Dr. Li left.', 'Really?!', 'Yes']
    """
    return [text[s:e] for s, e in sentence_spans(text, 0, len(text))]


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _is_abbreviation(text: str, run_start: int, floor: int) -> bool:
    match = _WORD_BEFORE.search(text, max(floor, run_start - 24), run_start)
    if match is None:
        return False
    word = match.group(1)
    parts = word.split(".")
    # initials and acronyms: J. Smith, U.S. law
    return word.lower() in _ABBREVIATIONS or all(len(p) == 1 and p.isupper() for p in parts)


def sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    ends: list[int] = []
    for match in _TERMINATORS.finditer(text, start, end):
        run = match.group()
        if not _CJK_TERMINATOR.search(run):
            # ASCII . ! ? end a sentence only before a space, a line break, CJK or the end
            after = match.end()
            if after < end and not _AFTER_ASCII_END.match(text, after):
                continue
            if run.rstrip(_CLOSERS) == "." and _is_abbreviation(text, match.start(), start):
                continue
        ends.append(match.end())
    spans = (trim_span(text, s, e) for s, e in zip([start, *ends], [*ends, end]))
    return [(s, e) for s, e in spans if s < e]


# ---- numbers and codes ----------------------------------------------------------------------

_THOUSANDS = re.compile(r"(?<=\d)[,，](?=\d{3}(?!\d))")
#: A number as written: digits with an optional decimal part and percent sign, not part of a
#: code such as "IPX4" or a version such as "v2.1".
NUMBER = re.compile(r"(?<![A-Za-z\d.])\d+(?:\.\d+)?(%?)")
#: A model or product code: letters then a digit ("IPX4", "S3", "K75"), on normalised text.
_CODE = re.compile(r"(?<![^\W\d_])[a-z]+\d[a-z\d]*(?![^\W_])", re.ASCII)


def number_text(text: str) -> str:
    """``text`` as numbers are read from it: NFKC (full-width digits become ASCII), without
    thousands separators."""
    return _THOUSANDS.sub("", unicodedata.normalize("NFKC", text))


def parse_number(text: str) -> float | None:
    """The number written in ``text`` (its first), or ``None``.

    >>> parse_number("1,200"), parse_number("１２０"), parse_number("3.5 小时"), parse_number("n/a")
    (1200.0, 120.0, 3.5, None)
    """
    match = NUMBER.search(number_text(text))
    return _values(match)[0] if match else None


def _values(match: re.Match[str]) -> tuple[float, ...]:
    """A written number's value, then its fraction too when it is a percentage."""
    value = float(match.group(0).rstrip("%"))
    return (value, value / 100) if match.group(1) else (value,)


def numbers_in(text: str) -> list[float]:
    """Every number in ``text``; a percentage also as its fraction.

    >>> numbers_in("Sales rose from 1,200 to １５００ units, up 25%.")
    [1200.0, 1500.0, 25.0, 0.25]
    """
    return [value for match in NUMBER.finditer(number_text(text)) for value in _values(match)]


_EN_NUMBERS = {
    **{
        word: value
        for value, word in enumerate(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "  # noqa: SIM905
            "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
        )
    },
    **{"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80},
    **{"ninety": 90, "hundred": 100, "thousand": 1000, "dozen": 12},
}
_EN_WORD = re.compile(r"[a-z]+")
_ZH_DIGITS = dict(zip("零〇一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9)))
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_ZH_NUMBER = re.compile("[零〇一二两三四五六七八九十百千万]+")


def _zh_value(text: str) -> int:
    """A Chinese numeral's value ("三十六" 36, "十五" 15, "两千" 2000)."""
    total, digit = 0, 0
    for char in text:
        if char in _ZH_DIGITS:
            digit = _ZH_DIGITS[char]
        else:
            total += (digit or 1) * _ZH_UNITS[char]
            digit = 0
    return total + digit


def _written_numbers(text: str) -> set[float]:
    """Numbers ``text`` writes in words, English ("three") or Chinese ("三十六")."""
    words = {float(_EN_NUMBERS[w]) for w in _EN_WORD.findall(text) if w in _EN_NUMBERS}
    return words | {float(_zh_value(m)) for m in _ZH_NUMBER.findall(text)}


@lru_cache(maxsize=256)
def _figures_of(passage: str) -> tuple[frozenset[float], frozenset[str]]:
    """The numbers (by value) and codes ``passage`` holds: read once per passage, not once
    per claim checked against it."""
    plain = normalize(passage)
    values = {round(v, 9) for v in (*numbers_in(passage), *_written_numbers(plain))}
    return frozenset(values), frozenset(_CODE.findall(plain))


def figures_missing(claim: str, passage: str) -> list[str]:
    """The numbers and codes of ``claim`` that ``passage`` does not contain, as the claim
    writes them: a claim that states "45 minutes" or "IPX4" where the passage has neither is
    not supported by it, however close the rest of its words. Numbers compare by value
    (``1,200`` = 1200, ``25%`` = 0.25, "3" = "three" = "三"), codes case and width aside.

    >>> figures_missing("A full charge takes 45 minutes; it is rated IPX4.",
    ...                 "Charging takes 2 hours. Rated ipx4, 1,200 mAh.")
    ['45']
    >>> figures_missing("The battery is 1200 mAh, 25% more.", "1,200 mAh, up 0.25")
    []
    >>> figures_missing("保修 1 年，续航 36 小时", "保修期一年，续航三十六小时"), figures_missing(
    ...     "Warranty: 1 year, 3 devices", "a one-year warranty")
    ([], ['3'])
    """
    values, codes = _figures_of(passage)
    missing: list[str] = []
    for match in NUMBER.finditer(number_text(claim)):
        if not any(round(v, 9) in values for v in _values(match)):
            missing.append(match.group(0))
    missing += [code for code in _CODE.findall(normalize(claim)) if code not in codes]
    return list(dict.fromkeys(missing))
