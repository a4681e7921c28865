"""Reading what was appended to a growing JSONL file, or to a folder of them, since last time.

Only whole lines are read: a last line without its newline is being written, so it is left
for the next poll (in a folder, every file but the last in name order is finished, so its
last line is read as it is). Each file's position is a byte offset with the file's inode: a
file that got shorter than the offset, or is another file under the same name (rotated), is
read again from its start, and a note says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragmeter.dataset import Problem, parse_json_line

#: The most bytes read from one file in one poll: a huge backlog is read over several polls.
MAX_READ_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class Line:
    """One complete line: its file, its 1-based number, and the record or what is wrong."""

    source: str
    number: int
    record: dict[str, Any] | None
    problem: Problem | None = None


@dataclass
class Cursor:
    """Where reading a file stopped: the byte offset, the lines read, the file's inode, and
    how many times it was found rotated (``generation``: line numbers start again)."""

    offset: int = 0
    line: int = 0
    inode: int | None = None
    generation: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Cursor:
        return cls(
            int(data.get("offset", 0)),
            int(data.get("line", 0)),
            data.get("inode"),
            int(data.get("generation", 0)),
        )


def source_files(source: Path) -> list[Path]:
    """The files to read: ``source`` itself, or a folder's ``*.jsonl`` files in name order."""
    if source.is_dir():
        return sorted(p for p in source.iterdir() if p.suffix == ".jsonl" and p.is_file())
    if source.is_file():
        return [source]
    raise FileNotFoundError(f"no file or folder {str(source)!r} to monitor")


def read_new(
    path: Path, cursor: Cursor, *, finished: bool = False, notes: list[str] | None = None
) -> Iterator[Line]:
    """The complete lines of ``path`` after ``cursor``, which is moved past each one as it
    is yielded (save it only after handling them). ``finished``: the file will not grow, so
    a last line without a newline is read too."""
    stat = path.stat()
    if cursor.inode is not None and (stat.st_ino != cursor.inode or stat.st_size < cursor.offset):
        how = "replaced (rotated)" if stat.st_ino != cursor.inode else "truncated"
        if notes is not None:
            notes.append(
                f"{path} was {how}: read from its start again (line {cursor.line} at byte "
                f"{cursor.offset} was the last one read before)"
            )
        cursor.offset, cursor.line, cursor.generation = 0, 0, cursor.generation + 1
    cursor.inode = stat.st_ino
    if stat.st_size <= cursor.offset:
        return
    with path.open("rb") as handle:
        handle.seek(cursor.offset)
        data = handle.read(MAX_READ_BYTES)
    end = data.rfind(b"\n") + 1
    if finished and len(data) < MAX_READ_BYTES:
        end = len(data)
    start = 0
    while start < end:
        cut = data.find(b"\n", start, end)
        stop = end if cut < 0 else cut + 1
        raw = data[start:stop]
        at_start = cursor.offset == 0
        cursor.offset += len(raw)
        cursor.line += 1
        start = stop
        line = _parse(str(path), cursor.line, raw, at_start)
        if line is not None:
            yield line


def _parse(source: str, number: int, raw: bytes, at_start: bool) -> Line | None:
    """One line as a record, or a problem naming the line and the fix; blank lines: None."""
    if at_start and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]

    def bad(message: str, fix: str) -> Line:
        return Line(source, number, None, Problem(number, None, message, fix, source))

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return bad(f"not UTF-8 ({error.reason} at byte {error.start})", "write the file as UTF-8")
    if not text.strip():
        return None
    value, message, fix = parse_json_line(text.rstrip("\r\n"))
    if message is not None:
        return bad(message, fix or "")
    if not isinstance(value, dict):
        return bad(
            f"expected an object, got {type(value).__name__}",
            "give each sample as an object of fields",
        )
    return Line(source, number, value)
