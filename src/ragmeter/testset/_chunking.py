"""Structure-aware chunking: sections by heading, then paragraphs and list items, then sentences.

Chunks never cross a heading, so each has one exact heading path. Inside a section, whole
paragraphs are packed while they fit; a paragraph that would not fit is packed sentence by
sentence; only a sentence longer than the chunk size is cut, at line breaks, then at commas,
then by tokens. Every chunk's text is ``document.text[start:end]``; headings are not repeated
in it but recorded in ``heading_path``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ragmeter._services import estimate_tokens
from ragmeter._text import sentence_spans, trim_span
from ragmeter.testset._documents import _ATX_HEADING, _FENCE, Document

Tokenizer = Callable[[str], int]


@dataclass(frozen=True)
class Chunk:
    """A piece of a document: ``text == document.text[start:end]``, ``tokens`` as counted by
    the tokenizer used, ``heading_path`` the headings it sits under, outermost first."""

    id: str
    document_id: str
    text: str
    index: int
    start: int
    end: int
    heading_path: tuple[str, ...] = ()
    tokens: int = 0


def chunk_documents(
    documents: Iterable[Document],
    *,
    size: int = 400,
    overlap: int = 50,
    tokenizer: Tokenizer = estimate_tokens,
) -> list[Chunk]:
    """Split documents into chunks of at most ``size`` tokens, overlapping by whole sentences.

    Each chunk after the first in a section starts with the last sentences of the previous
    one, as many as fit in ``overlap`` tokens (never the whole previous chunk). Chinese
    sentences end at 。！？；… (closing quotes kept with them), English ones at . ! ? before a
    space or line break (common abbreviations and initials excepted). ``tokenizer`` counts the
    tokens of a string; the default estimate counts a CJK character as one token and other
    text as about four characters a token. Chunk ids are ``f"{document_id}#{index}"``, indexes
    counting from 0 in each document, so they are stable as long as the text is.

    >>> doc = Document(
    ...     id="faq.md",
    ...     text="# 退货\\n\\n## 退款\\n\\n退款七天内到账。请保留收据！如有疑问，请联系客服。\\n",
    ... )
    >>> for chunk in chunk_documents([doc], size=20, overlap=8):
    ...     print(chunk.id, chunk.heading_path, chunk.tokens, chunk.text)
    faq.md#0 ('退货', '退款') 13 退款七天内到账。请保留收据！
    faq.md#1 ('退货', '退款') 15 请保留收据！如有疑问，请联系客服。

    Pass ``tokenizer=`` (e.g. ``lambda s: len(encoding.encode(s))`` with tiktoken) to size
    chunks by your embedding model's own tokens.
    """
    if size < 1:
        raise ValueError(f"size must be at least 1 token, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"overlap must be between 0 and size - 1 ({size - 1}), got {overlap}")
    return [chunk for doc in documents for chunk in _chunk_document(doc, size, overlap, tokenizer)]


# ---- splitting ------------------------------------------------------------------------------

_CJK = "\u3400-\u9fff\uf900-\ufaff"
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,3}[.)、]|[a-zA-Z][.)])[ \t]+")
# Where a sentence longer than the chunk size may be cut, in order of preference.
_SOFT_CUTS = (re.compile(r"\n"), re.compile(r"[,，、;；:：]"))
_ATOM = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+\s*|\s+")


@dataclass(frozen=True)
class _Section:
    path: tuple[str, ...]
    start: int
    end: int


def _sections(text: str) -> list[_Section]:
    sections: list[_Section] = []
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    body_start = pos = 0
    in_fence = False
    for line in text.splitlines(keepends=True):
        line_start, pos = pos, pos + len(line)
        bare = line.rstrip("\r\n")
        if _FENCE.match(bare):
            in_fence = not in_fence
        elif not in_fence and (match := _ATX_HEADING.match(bare)):
            sections.append(_Section(path, body_start, line_start))
            level = len(match.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, match.group(2).strip()))
            path = tuple(title for _, title in stack)
            body_start = pos
    sections.append(_Section(path, body_start, len(text)))
    return sections


def _blocks(text: str, start: int, end: int) -> list[tuple[int, int, bool]]:
    """Paragraphs, list items and fenced code blocks: (start, end, is_code), trimmed."""
    blocks: list[tuple[int, int, bool]] = []
    current: list[int] | None = None  # [start, end, is_code]
    in_fence = False

    def close() -> None:
        nonlocal current
        if current is not None:
            s, e = trim_span(text, current[0], current[1])
            if s < e:
                blocks.append((s, e, bool(current[2])))
        current = None

    pos = start
    while pos < end:
        newline = text.find("\n", pos, end)
        line_end = end if newline == -1 else newline + 1
        line = text[pos:line_end]
        if in_fence:
            assert current is not None
            current[1] = line_end
            if _FENCE.match(line):
                in_fence = False
                close()
        elif _FENCE.match(line):
            close()
            current, in_fence = [pos, line_end, 1], True
        elif not line.strip():
            close()
        elif _LIST_ITEM.match(line) or current is None:
            close()
            current = [pos, line_end, 0]
        else:
            current[1] = line_end
        pos = line_end
    close()
    return blocks


def _cut_after(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    piece_start = start
    for match in pattern.finditer(text, start, end):
        spans.append(trim_span(text, piece_start, match.end()))
        piece_start = match.end()
    spans.append(trim_span(text, piece_start, end))
    return [(s, e) for s, e in spans if s < e]


def _split_long(
    text: str, start: int, end: int, size: int, count: Tokenizer, level: int = 0
) -> list[tuple[int, int]]:
    """Cut a span longer than ``size`` tokens at the softest places that make it fit."""
    if count(text[start:end]) <= size:
        return [(start, end)]
    if level == len(_SOFT_CUTS):
        return _hard_split(text, start, end, size, count)
    pieces = _cut_after(text, start, end, _SOFT_CUTS[level])
    if len(pieces) == 1:
        return _split_long(text, start, end, size, count, level + 1)
    out: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for s, e in pieces:
        if current is not None and count(text[current[0] : e]) <= size:
            current = (current[0], e)
            continue
        if current is not None:
            out.append(current)
            current = None
        if count(text[s:e]) <= size:
            current = (s, e)
        else:
            out += _split_long(text, s, e, size, count, level + 1)
    if current is not None:
        out.append(current)
    return out


def _furthest(positions: Sequence[int], lo: int, fits: Callable[[int], bool]) -> int:
    """The largest index ``i >= lo`` with ``fits(positions[i])``, given ``fits(positions[lo])``
    and that fitting is monotone; galloping keeps it logarithmic in the answer, not the span."""
    step, good = 1, lo
    while good + step < len(positions) and fits(positions[good + step]):
        good += step
        step *= 2
    bad = min(good + step, len(positions))
    while bad - good > 1:
        middle = (good + bad) // 2
        if fits(positions[middle]):
            good = middle
        else:
            bad = middle
    return good


def _hard_split(
    text: str, start: int, end: int, size: int, count: Tokenizer
) -> list[tuple[int, int]]:
    """Cut by tokens, between words (or CJK characters) where possible, else between
    characters; a piece always takes at least one character, so a lone character counted
    above ``size`` is the only way a piece can exceed it."""
    out: list[tuple[int, int]] = []
    cuts = [match.end() for match in _ATOM.finditer(text, start, end)]
    pos, i = start, 0
    while pos < end:
        while i < len(cuts) and cuts[i] <= pos:
            i += 1
        piece_start = pos

        def fits(cut: int, piece_start: int = piece_start) -> bool:
            return count(text[piece_start:cut].rstrip()) <= size

        if fits(cuts[i]):
            cut = cuts[_furthest(cuts, i, fits)]
        else:
            chars = range(pos + 1, cuts[i] + 1)
            cut = chars[_furthest(chars, 0, fits)] if fits(chars[0]) else chars[0]
        s, e = trim_span(text, pos, cut)
        if s < e:
            out.append((s, e))
        pos = cut
    return out


# ---- packing --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    block: int
    tokens: int  # of the unit's text
    joined: int  # of the text from the previous unit's end to this unit's end


def _units(text: str, section: _Section, size: int, count: Tokenizer) -> list[_Unit]:
    spans: list[tuple[int, int, int]] = []
    for block, (s, e, is_code) in enumerate(_blocks(text, section.start, section.end)):
        sentences = [(s, e)] if is_code else sentence_spans(text, s, e)
        for ss, se in sentences:
            spans += [(ps, pe, block) for ps, pe in _split_long(text, ss, se, size, count)]
    units: list[_Unit] = []
    previous_end: int | None = None
    for s, e, block in spans:
        tokens = count(text[s:e])
        joined = tokens if previous_end is None else count(text[previous_end:e])
        units.append(_Unit(s, e, block, tokens, joined))
        previous_end = e
    return units


def _chunk_document(document: Document, size: int, overlap: int, count: Tokenizer) -> list[Chunk]:
    text = document.text
    chunks: list[Chunk] = []
    for section in _sections(text):
        units = _units(text, section, size, count)
        for first, last in _pack(text, units, size, overlap, count):
            start, end = units[first].start, units[last].end
            index = len(chunks)
            chunks.append(
                Chunk(
                    id=f"{document.id}#{index}",
                    document_id=document.id,
                    text=text[start:end],
                    index=index,
                    start=start,
                    end=end,
                    heading_path=section.path,
                    tokens=count(text[start:end]),
                )
            )
    return chunks


def _pack(
    text: str, units: list[_Unit], size: int, overlap: int, count: Tokenizer
) -> list[tuple[int, int]]:
    """Group consecutive units into chunks: (first, last) unit indexes, inclusive."""
    # The default estimate is subadditive (its count of a concatenation is at most the sum of
    # its counts of the parts), so summing per-unit counts bounds a chunk's count without
    # re-counting its text for every unit added. Any other tokenizer counts the whole span.
    prefix = [0, *itertools.accumulate(unit.joined for unit in units)]

    def fits(first: int, last: int) -> bool:
        if count is estimate_tokens:
            return units[first].tokens + prefix[last + 1] - prefix[first + 1] <= size
        return count(text[units[first].start : units[last].end]) <= size

    block_end = {unit.block: i for i, unit in enumerate(units)}

    packed: list[tuple[int, int]] = []
    first: int | None = None
    last = 0
    carried: int | None = None  # first overlap unit for the next chunk
    i = 0
    while i < len(units):
        j = i
        starts_block = i == 0 or units[i - 1].block != units[i].block
        if starts_block and fits(i, block_end[units[i].block]):
            j = block_end[units[i].block]  # a paragraph that fits in a chunk stays whole
        if first is None:
            first = i if carried is None else carried
            while first < i and not fits(first, j):
                first += 1
            last, i = j, j + 1
        elif fits(first, j):
            last, i = j, j + 1
        else:
            packed.append((first, last))
            carried = _overlap_start(text, units, first, last, overlap, count)
            first = None
    if first is not None:
        packed.append((first, last))
    return packed


def _overlap_start(
    text: str, units: list[_Unit], first: int, last: int, overlap: int, count: Tokenizer
) -> int | None:
    start = None
    k = last
    while k > first and count(text[units[k].start : units[last].end]) <= overlap:
        start = k
        k -= 1
    return start
