"""A JSONL file read a chunk at a time, so a file of any length is checked in constant memory.

:func:`stream_jsonl` yields the file's samples as :class:`Dataset` chunks, each validated as
:func:`load_dataset` with ``skip_invalid=True`` validates the whole file: the same problems
with the same messages, file line numbers as row numbers, and an id repeated anywhere in the
file is a duplicate (ids seen so far are kept in a private temporary SQLite file, not in
memory). :class:`DatasetFingerprint` computes ``Dataset.fingerprint()`` over the chunks.

Only JSONL streams (:func:`is_streamed`): a JSON array, CSV (quoted cells span lines) and
Parquet are loaded whole by :func:`load_dataset`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from ragmeter.dataset._dataset import Dataset
from ragmeter.dataset._io import _check_is_file, read_jsonl_chunks, unreadable
from ragmeter.dataset._problems import Problem
from ragmeter.dataset._sample import Sample
from ragmeter.dataset._values import utf8_text

#: The text a sample's record is hashed as (one encoder, not one per call).
_canonical_json = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
#: Lines read, validated and handed on at a time.
STREAM_CHUNK_SIZE = 1024


def is_streamed(source: Any, format: str | None = None) -> bool:
    """Whether ``evaluate()`` reads ``source`` a chunk at a time: a path to a JSONL file
    (``.jsonl`` / ``.ndjson``, or any path with ``format="jsonl"``).

    >>> is_streamed("runs.jsonl"), is_streamed("runs.csv"), is_streamed("data.txt", "jsonl")
    (True, False, True)
    """
    if not isinstance(source, str | os.PathLike):
        return False
    if format is not None:
        return format == "jsonl"
    return Path(source).suffix.lower() in (".jsonl", ".ndjson")


def stream_jsonl(
    path: str | os.PathLike[str],
    *,
    column_map: Mapping[str, str] | None = None,
    chunk_size: int | None = None,
) -> Iterator[Dataset]:
    """The samples of a JSONL file as datasets of up to ``chunk_size`` lines each (default
    :data:`STREAM_CHUNK_SIZE`), in order.

    Each chunk is what ``load_dataset(path, skip_invalid=True)`` holds for its lines: its
    valid samples with their line numbers as rows, and its bad lines in ``invalid`` (a
    duplicate id names the line where the id was first seen, in whichever chunk).
    ``unknown_columns`` holds the columns of the lines read so far. A file without samples is
    one empty chunk. A missing file or a path that is no file is refused here, before reading.
    """
    size = STREAM_CHUNK_SIZE if chunk_size is None else chunk_size
    if size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {size}")
    file = Path(path)
    _check_is_file(file)
    return _stream(file, column_map, size)


def _stream(path: Path, column_map: Mapping[str, str] | None, size: int) -> Iterator[Dataset]:
    source = utf8_text(path)
    unknown: dict[str, str] = {}
    empty = True
    with _SeenIds() as seen:
        for records, rows, problems in _chunks(path, size):
            seen.prefetch(_given_ids(records))
            chunk = Dataset.from_records(
                records,
                rows=rows,
                pre_problems=problems,
                column_map=column_map,
                source=source,
                skip_invalid=True,
                first_rows=seen,
            )
            seen.flush()
            for column, tag in chunk.unknown_columns.items():
                unknown.setdefault(column, tag)  # first seen first, as in a whole-file load
            chunk.unknown_columns = dict(unknown)
            empty = False
            yield chunk
    if empty:
        yield Dataset([], source=source)


def _given_ids(records: Iterable[Any]) -> Iterator[str]:
    """The ids the records give under ragmeter's own name, as their samples' ids will be."""
    for record in records:
        if isinstance(record, dict):
            given = record.get("id")
            if isinstance(given, str):
                yield given
            elif isinstance(given, int) and not isinstance(given, bool):
                yield str(given)


def _chunks(path: Path, size: int) -> Iterator[tuple[list[Any], list[int], list[Problem]]]:
    """(records, their line numbers, problems of lines that do not read) for each ``size``
    lines with content, read as ``load_dataset`` reads a JSONL file."""
    try:
        yield from read_jsonl_chunks(path, size)
    except (OSError, MemoryError) as error:
        raise unreadable(path, error) from None


def _blob(key: str) -> bytes:
    """An id as SQLite stores it: its UTF-8 bytes, a lone surrogate (an id refused later, but
    looked up first) kept as it is, so any text is a key."""
    return key.encode("utf-8", "surrogatepass")


def _text(stored: bytes) -> str:
    return stored.decode("utf-8", "surrogatepass")


class _SeenIds(MutableMapping[str, int]):
    """Sample id -> the row it was first seen in, for the whole file: kept in a private
    temporary SQLite file (SQLite deletes it on close), as a million ids held in a set
    would grow with the file. Ids of the chunk being validated wait in memory for
    :meth:`flush`."""

    def __init__(self) -> None:
        self._db = sqlite3.connect("")  # "": a private temporary file, not ":memory:"
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE seen (id BLOB PRIMARY KEY, row INTEGER) WITHOUT ROWID")
        self._new: dict[str, int] = {}
        #: Rows of ids looked up at once by :meth:`prefetch` (None: not in the file).
        self._looked_up: dict[str, int | None] = {}

    def __enter__(self) -> _SeenIds:
        return self

    def __exit__(self, *_: object) -> None:
        self._db.close()

    def __getitem__(self, key: str) -> int:
        if key in self._new:
            return self._new[key]
        if key in self._looked_up:
            row = self._looked_up[key]
        else:
            found = self._db.execute("SELECT row FROM seen WHERE id = ?", (_blob(key),)).fetchone()
            row = None if found is None else int(found[0])
        if row is None:
            raise KeyError(key)
        return row

    def __contains__(self, key: object) -> bool:
        if key in self._new:
            return True
        if key in self._looked_up:
            return self._looked_up[key] is not None
        ask = "SELECT 1 FROM seen WHERE id = ?"
        return isinstance(key, str) and self._db.execute(ask, (_blob(key),)).fetchone() is not None

    def prefetch(self, keys: Iterable[str]) -> None:
        """Look ``keys`` up in the file at once (a chunk's ids, before they are checked one
        by one), until :meth:`flush`."""
        wanted = list(dict.fromkeys(keys))
        for start in range(0, len(wanted), 500):  # under SQLite's limit on parameters
            part = wanted[start : start + 500]
            self._looked_up.update(dict.fromkeys(part))
            rows = self._db.execute(
                f"SELECT id, row FROM seen WHERE id IN ({','.join('?' * len(part))})",
                [_blob(key) for key in part],
            ).fetchall()
            self._looked_up.update((_text(key), int(row)) for key, row in rows)

    def __setitem__(self, key: str, row: int) -> None:
        self._new[key] = row

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self._new.pop(key, None)
        self._looked_up.pop(key, None)
        self._db.execute("DELETE FROM seen WHERE id = ?", (_blob(key),))

    def __iter__(self) -> Iterator[str]:
        for (stored,) in self._db.execute("SELECT id FROM seen"):
            if (key := _text(stored)) not in self._new:
                yield key
        yield from list(self._new)

    def __len__(self) -> int:
        stored = int(self._db.execute("SELECT COUNT(*) FROM seen").fetchone()[0])
        ask = "SELECT 1 FROM seen WHERE id = ?"
        return stored + sum(
            self._db.execute(ask, (_blob(key),)).fetchone() is None for key in self._new
        )

    def flush(self) -> None:
        """Move the ids waiting in memory to the file."""
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO seen VALUES (?, ?)",
                ((_blob(key), row) for key, row in self._new.items()),
            )
        self._new.clear()
        self._looked_up.clear()


class DatasetFingerprint:
    """``Dataset.fingerprint()`` computed a part at a time: feed the samples in order.

    >>> data = Dataset.from_records([{"question": "q1"}, {"question": "q2"}])
    >>> fingerprint = DatasetFingerprint()
    >>> fingerprint.update(data[:1])
    >>> fingerprint.update(data[1:])
    >>> fingerprint.hexdigest() == data.fingerprint()
    True
    """

    def __init__(self) -> None:
        self._digest = hashlib.sha256()

    def update(self, samples: Iterable[Sample]) -> None:
        for sample in samples:
            self.add_record(sample.to_record())

    def add_record(self, record: Mapping[str, Any]) -> None:
        """One sample given as its ``to_record()`` (for a caller that needs that dict too)."""
        # The bytes Dataset.fingerprint() hashes: the tests check that both agree.
        self._digest.update(_canonical_json(record).encode())
        self._digest.update(b"\n")

    def hexdigest(self) -> str:
        return self._digest.hexdigest()[:16]
