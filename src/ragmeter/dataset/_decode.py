"""Text files read line by line from their bytes, so that one bad line is one bad row.

A file is UTF-8 unless it starts with a byte-order mark (UTF-8, UTF-16 or UTF-32) or, like
JSON text without one (RFC 4627), its first bytes show the NUL pattern of UTF-16 / UTF-32.
Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (as Python's universal newlines); a line
whose bytes do not decode is reported with its number and byte offset, not as a codec error
for the whole file.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
#: Just after each CR not followed by LF (such a CR ends a line, as in text mode).
_AFTER_LONE_CR = re.compile(r"(?<=\r)(?!\n)")
_AFTER_LONE_CR_BYTES = re.compile(rb"(?<=\r)(?!\n)")


def detect_encoding(head: bytes) -> tuple[str, int]:
    """The encoding of a file starting with ``head`` and the length of its byte-order mark.

    >>> detect_encoding(b"\\xef\\xbb\\xbf{}"), detect_encoding(b'{\\x00"\\x00')
    (('utf-8', 3), ('utf-16-le', 0))
    """
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding, len(bom)
    if len(head) >= 4 and head[0] and not any(head[1:4]):
        return "utf-32-le", 0
    if len(head) >= 4 and not any(head[:3]) and head[3]:
        return "utf-32-be", 0
    if len(head) >= 2 and head[0] and not head[1]:
        return "utf-16-le", 0
    if len(head) >= 2 and not head[0] and head[1]:
        return "utf-16-be", 0
    return "utf-8", 0


def encoding_name(encoding: str) -> str:
    return encoding.upper().replace("-LE", "").replace("-BE", "")


def resave_fix(path: Path | str, encoding: str) -> str:
    """How to re-save ``path`` as UTF-8 (a file read as UTF-8 is most often Latin-1 /
    Windows-1252)."""
    name = Path(path).name
    if encoding != "utf-8":
        return f"re-save the file as UTF-8, e.g. iconv -f {encoding} -t utf-8 {name} > utf8-{name}"
    return (
        f"re-save the file as UTF-8, e.g. iconv -f latin1 -t utf-8 {name} > utf8-{name} "
        "(with the file's real encoding, e.g. cp1252 or gbk)"
    )


class Line(NamedTuple):  # a tuple: millions are made, one per line
    """One line of a text file: ``text`` keeps its line ending; ``None`` when undecodable."""

    number: int  # 1-based
    offset: int  # byte offset of the line's first byte
    text: str | None
    bad_offset: int | None = None  # byte offset of the first undecodable byte
    bad_byte: int | None = None
    lossy: str | None = None  # an undecodable line's text with U+FFFD for its bad bytes


def _split_units(data: bytes, unit: int, newline: bytes) -> Iterator[tuple[int, bytes]]:
    """``data`` cut after each ``newline`` that starts at a multiple of ``unit``."""
    start = search = 0
    while True:
        found = data.find(newline, search)
        while found != -1 and found % unit:
            found = data.find(newline, found + 1)
        if found == -1:
            if start < len(data):
                yield start, data[start:]
            return
        end = found + len(newline)
        yield start, data[start:end]
        start = search = end


def _raw_lines(handle: BinaryIO, encoding: str, skip: int) -> Iterator[tuple[int, bytes]]:
    """(byte offset, bytes) of each ``\\n``-terminated piece of the file."""
    handle.seek(skip)
    if encoding == "utf-8":
        offset = skip
        for raw in handle:
            yield offset, raw
            offset += len(raw)
        return
    unit = 4 if "32" in encoding else 2
    for start, raw in _split_units(handle.read(), unit, "\n".encode(encoding)):
        yield skip + start, raw


def _one(number: int, offset: int, raw: bytes, encoding: str) -> Line:
    try:
        return Line(number, offset, raw.decode(encoding))
    except UnicodeDecodeError as error:
        lossy = raw.decode(encoding, errors="replace")
        return Line(number, offset, None, offset + error.start, raw[error.start], lossy)


def _decoded(number: int, offset: int, raw: bytes, encoding: str) -> list[Line]:
    """The lines in ``raw``: more than one where lone CRs end lines."""
    if encoding == "utf-8":  # a CR byte is a CR in UTF-8: cut first, so one bad line is one
        lines: list[Line] = []
        for index, piece in enumerate(p for p in _AFTER_LONE_CR_BYTES.split(raw) if p):
            lines.append(_one(number + index, offset, piece, encoding))
            offset += len(piece)
        return lines
    line = _one(number, offset, raw, encoding)
    if line.text is None or "\r" not in line.text[:-2]:
        return [line]
    cut = []
    for index, text in enumerate(t for t in _AFTER_LONE_CR.split(line.text) if t):
        cut.append(Line(number + index, offset, text))
        offset += len(text.encode(encoding))
    return cut


def read_lines(path: Path) -> tuple[str, Iterator[Line]]:
    """The file's encoding and an iterator over its lines (opened when iterated)."""
    with path.open("rb") as handle:
        encoding, skip = detect_encoding(handle.read(4))

    def lines() -> Iterator[Line]:
        number = 1
        with path.open("rb") as handle:
            for offset, raw in _raw_lines(handle, encoding, skip):
                if b"\r" not in raw[:-2]:  # the usual line, made without a list
                    yield _one(number, offset, raw, encoding)
                    number += 1
                    continue
                cut = _decoded(number, offset, raw, encoding)
                yield from cut
                number = cut[-1].number + 1

    return encoding, lines()
