"""A run's results on disk as they are computed: one SQLite file in the run directory.

Every finished sample x metric is written as soon as it is known, so a run killed at any
moment loses nothing it already paid for, and ``--resume`` computes only what is missing.
Reading streams from the file, so results of a large run never have to fit in memory.

A result is a row of ``results`` (its status, score and JSON text); the plain ok scores of a
metric without a judge on a batch of consecutive samples are one row of ``score_blocks``
instead (the scores as float64 bytes, NaN where that sample's result is a row of
``results``): a large retrieval run writes and reads a few hundred blocks, not a row per
sample and metric. Where both hold a result, the row is the one read.

A file that cannot be read or written (disk full, read-only media, no permission, a damaged or
foreign file) raises :class:`RunStorageError`, one line naming the file and the cause; what
was written before stays in the file. A run on read-only media opens read-only, so it can
still be shown and reported.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import shutil
import sqlite3
import tempfile
import threading
import weakref
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from ragmeter.judge import Usage
from ragmeter.metrics import MetricResult, ScoreColumn, Status

STORE_FILE = "run.db"
#: The run format this version writes (2 added ``score_blocks``); it reads every format in
#: :data:`READABLE_VERSIONS`, and a format-1 file it writes to becomes format 2.
SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)
#: The meta key of the caller's record; run directories have always stored it under this name.
RECORD_KEY = "invocation"
#: Meta keys of usage not in a sample's record yet: samples being judged, and samples whose
#: session was killed (their calls were sent and count; the samples are judged again).
IN_FLIGHT_KEY = "in_flight_usage"
INTERRUPTED_KEY = "interrupted_usage"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS samples (
    idx INTEGER PRIMARY KEY,
    row INTEGER NOT NULL,
    sample_id TEXT NOT NULL,
    sample TEXT NOT NULL,
    tags TEXT NOT NULL,
    usage TEXT
);
CREATE TABLE IF NOT EXISTS results (
    idx INTEGER NOT NULL,
    metric TEXT NOT NULL,
    status TEXT NOT NULL,
    score REAL,
    result TEXT NOT NULL,
    PRIMARY KEY (idx, metric)
);
CREATE TABLE IF NOT EXISTS score_blocks (
    metric TEXT NOT NULL,
    start INTEGER NOT NULL,
    stop INTEGER NOT NULL,
    scores BLOB NOT NULL,
    PRIMARY KEY (metric, start)
);
"""
#: The tables every run database has (``meta`` is made first; format 1 has no
#: ``score_blocks``).
_TABLES = frozenset({"meta", "samples", "results"})
#: A sample's status in a :class:`StoredScores` column, by code: ``not_started`` where the
#: run has no result (yet): it stopped before it (its budget, a refused judge, a kill). The
#: file holds no row for such a result, as it always has, so runs of every format read alike.
STATUS_NAMES = (
    Status.NOT_STARTED.value,
    Status.OK.value,
    Status.NOT_APPLICABLE.value,
    Status.FAILED.value,
)
_STATUS_CODES = {name: code for code, name in enumerate(STATUS_NAMES)}
_OK_CODE = _STATUS_CODES[Status.OK.value]
#: The statuses of a row that a resumed run computes again, as if it had none.
_TO_REDO = frozenset({Status.FAILED.value, Status.NOT_STARTED.value})
_TO_REDO_SQL = ", ".join(f"'{status}'" for status in sorted(_TO_REDO))
#: How records and results are stored as text (one encoder: ``json.dumps`` with options makes
#: a new one per call). ``results.jsonl`` is written from these texts as they are.
to_json = json.JSONEncoder(ensure_ascii=False).encode


def result_json(result: MetricResult) -> str:
    """``result.to_dict()`` as stored: the JSON text ``json.dumps(..., ensure_ascii=False)``
    writes, made directly for a plain ok score (most results of a large retrieval run).

    >>> result_json(MetricResult.ok(0.5))
    '{"score": 0.5, "status": "ok"}'
    >>> result_json(MetricResult.not_applicable("none"))
    '{"score": null, "status": "not_applicable", "reason": "none"}'
    """
    if result.is_plain_ok:
        return _plain_json(result.score)  # type: ignore[arg-type]
    return to_json(result.to_dict())


def _plain_json(score: float) -> str:
    return f'{{"score": {float.__repr__(score)}, "status": "ok"}}'


def _result_row(index: int, metric: str, result: MetricResult) -> tuple[Any, ...]:
    """A row of ``results``: index, metric, status, score and the result's JSON text."""
    return index, metric, result.status.value, result.score, result_json(result)


@dataclasses.dataclass(frozen=True)
class StoredScores:
    """One metric's (status, score) per sample of a run, compact (9 bytes a sample): a status
    code (:data:`STATUS_NAMES`) and a float, NaN where there is no score."""

    codes: NDArray[np.uint8]
    scores: NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.codes)

    def pairs(self) -> Iterator[tuple[str, float | None]]:
        """(status, score or None) per sample, in dataset order."""
        names = STATUS_NAMES
        for code, score in zip(self.codes.tolist(), self.scores.tolist()):
            yield names[code], None if score != score else score  # NaN: no score

    def counts(self) -> Counter[str]:
        """How many samples have each status (those with none left out)."""
        found = np.bincount(self.codes, minlength=len(STATUS_NAMES)).tolist()
        return Counter({name: n for name, n in zip(STATUS_NAMES, found) if n})

    def ok_scores(self) -> NDArray[np.float64]:
        """The scores of the samples with an ok result, in dataset order."""
        return cast("NDArray[np.float64]", self.scores[self.codes == _OK_CODE])

    def ok_or_none(self) -> list[float | None]:
        """Per sample: its score where ok, else None."""
        ok = np.where(self.codes == _OK_CODE, self.scores, np.nan).tolist()
        return [None if score != score else score for score in ok]


class RunStorageError(OSError):
    """A run's file could not be read or written. ``str()`` is one line naming the file and
    the cause; ``errno`` is set where the cause has one (``ENOSPC`` disk full, ``EROFS``
    read-only, ``EACCES`` no permission, ``EIO``), and ``corrupt`` is true when the file
    itself is damaged or not a run database. Nothing written before the error is lost."""

    def __init__(
        self,
        message: str,
        path: str | os.PathLike[str],
        *,
        errno: int | None = None,
        corrupt: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.errno = errno  # OSError's own field, set after the message
        self.filename = str(path)
        self.corrupt = corrupt

    def __str__(self) -> str:
        return self.message

    @property
    def read_only(self) -> bool:
        """Whether the cause is that the file or its folder cannot be written."""
        return self.errno in (errno.EROFS, errno.EACCES, errno.EPERM)


# SQLite's primary result codes (the low byte of an extended code), what they mean as an
# errno where there is one, and words for the message.
_SQLITE_CAUSES: dict[int, tuple[int | None, str]] = {
    3: (errno.EACCES, "permission denied"),  # SQLITE_PERM
    5: (None, "the database is locked by another process"),  # SQLITE_BUSY
    8: (errno.EROFS, "the file or its folder is read-only"),  # SQLITE_READONLY
    10: (errno.EIO, "input/output error"),  # SQLITE_IOERR
    13: (errno.ENOSPC, "no space left on device"),  # SQLITE_FULL
    14: (errno.EACCES, "the file cannot be opened: no permission, or a read-only folder"),
}
_SQLITE_CORRUPT = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB
# For errors made without a code (older drivers, tests): the words SQLite uses for each.
_SQLITE_WORDS = (
    ("disk is full", 13),
    ("readonly", 8),
    ("read-only", 8),
    ("unable to open", 14),
    ("disk i/o error", 10),
    ("not a database", 26),
    ("malformed", 11),
    ("locked", 5),
)


def sqlite_code(error: sqlite3.Error) -> int | None:
    """SQLite's primary result code of ``error`` (from its code, else its words)."""
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    text = str(error).lower()
    return next((found for words, found in _SQLITE_WORDS if words in text), None)


def storage_error(
    error: BaseException, path: str | os.PathLike[str], *, action: str = "write"
) -> RunStorageError:
    """``error`` (from SQLite or the operating system) on ``path`` as a
    :class:`RunStorageError` whose message is one line: the file, what failed, the cause.

    >>> str(storage_error(OSError(errno.ENOSPC, "No space left on device"), "runs/a/run.db"))
    'cannot write runs/a/run.db: no space left on device (ENOSPC)'
    """
    if isinstance(error, RunStorageError):
        return error
    if isinstance(error, sqlite3.Error):
        code = sqlite_code(error)
        if code in _SQLITE_CORRUPT:
            return RunStorageError(
                f"{path} is not a ragmeter run database or is corrupt ({error})",
                path,
                corrupt=True,
            )
        number, cause = _SQLITE_CAUSES.get(code or -1, (None, f"{type(error).__name__}: {error}"))
        name = f" ({errno.errorcode[number]})" if number is not None else ""
        return RunStorageError(f"cannot {action} {path}: {cause}{name}", path, errno=number)
    if isinstance(error, OSError):
        where = error.filename if error.filename is not None else path
        number = error.errno
        if number is None:
            return RunStorageError(f"cannot {action} {where}: {error}", where)
        cause = (error.strerror or os.strerror(number)).rstrip(".")
        cause = cause[:1].lower() + cause[1:]
        name = errno.errorcode.get(number, str(number))
        return RunStorageError(f"cannot {action} {where}: {cause} ({name})", where, errno=number)
    return RunStorageError(f"cannot {action} {path}: {type(error).__name__}: {error}", path)


@contextlib.contextmanager
def _translated(path: Path, action: str) -> Iterator[None]:
    """SQLite and OS errors on ``path`` as :class:`RunStorageError` (constraint violations and
    misuse, which are bugs, as they are)."""
    try:
        yield
    except (sqlite3.IntegrityError, sqlite3.ProgrammingError, RunStorageError):
        raise
    except (sqlite3.DatabaseError, OSError) as error:
        raise storage_error(error, path, action=action) from error


class _Cursor:
    """A cursor whose fetches report storage errors as :class:`RunStorageError`."""

    def __init__(self, cursor: sqlite3.Cursor, path: Path) -> None:
        self._cursor = cursor
        self._path = path

    def fetchone(self) -> Any:
        with _translated(self._path, "read"):
            return self._cursor.fetchone()

    def fetchall(self) -> list[Any]:
        with _translated(self._path, "read"):
            return self._cursor.fetchall()


class _Connection:
    """A run database's SQLite connection whose errors are :class:`RunStorageError`: every
    statement, and the commit of a ``with`` block."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self._db = db
        self._path = path

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> _Cursor:
        action = "read" if sql.lstrip().upper().startswith("SELECT") else "write"
        with _translated(self._path, action):
            return _Cursor(self._db.execute(sql, parameters), self._path)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with _translated(self._path, "write"):
            self._db.executemany(sql, rows)

    def __enter__(self) -> _Connection:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        with _translated(self._path, "write"):
            if kind is None:
                self._db.commit()
            else:
                self._db.rollback()

    def close(self) -> None:
        self._db.close()


def tags_of(metadata: dict[str, Any]) -> dict[str, list[str]]:
    """The metadata fields a run can be broken down by: scalar values, or lists of them
    (a sample tagged ``["zh", "multi-hop"]`` counts in both groups)."""
    tags: dict[str, list[str]] = {}
    for key, value in metadata.items():
        if isinstance(value, str | int | bool) and not isinstance(value, float):
            tags[key] = [str(value)]
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            tags[key] = sorted(set(value))
    return tags


class RunDatabase:
    """A run directory's ``run.db``: per-sample inputs, per sample x metric results, usage and
    run metadata in SQLite (not :class:`ragmeter.store.Store`, which keeps many finished runs).

    ``RunDatabase(None)`` keeps the file in a private temporary directory that lives as long as
    the store (results of an ``evaluate()`` call without a run directory).

    ``read_only=True`` opens an existing file for reading only (SQLite ``mode=ro``, or
    ``immutable`` on read-only media); without it, a file that cannot be written (read-only
    media or permissions) is opened read-only too, so it can be read, and ``read_only`` says
    so. Errors reading or writing the file are :class:`RunStorageError`.
    """

    def __init__(self, path: str | Path | None, *, read_only: bool = False) -> None:
        self._tempdir: str | None = None
        self._remove_tempdir: weakref.finalize[Any, Any] | None = None
        if path is None:
            # Removed on close(), else when the store is collected: silently, as a result of
            # evaluate() without a run directory is routinely dropped without closing it.
            self._tempdir = tempfile.mkdtemp(prefix="ragmeter-run-")
            self._remove_tempdir = weakref.finalize(
                self, shutil.rmtree, self._tempdir, ignore_errors=True
            )
            path = Path(self._tempdir) / STORE_FILE
        self.path = Path(path)
        self._lock = threading.Lock()
        self.read_only = read_only
        if read_only:
            self._db = self._open_read_only()
        else:
            try:
                self._db = self._open_writable()
            except RunStorageError as error:
                if not (error.read_only and self.path.is_file()):
                    raise
                self._db = self._open_read_only()
                self.read_only = True
        version = self.get_meta("schema_version")
        if version is not None and version not in READABLE_VERSIONS:
            self._db.close()
            raise ValueError(
                f"{self.path} was written by a ragmeter with run format {version}; this one "
                f"reads formats {', '.join(map(str, READABLE_VERSIONS))}: re-run the "
                "evaluation into a new directory, or read it with a newer ragmeter"
            )
        if version != SCHEMA_VERSION and not self.read_only:
            # a new file, or an older format's: its tables were added on opening
            self.set_meta("schema_version", SCHEMA_VERSION)
        self._has_blocks = bool(
            self._rows(
                "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='score_blocks'"
            )[0][0]
        )

    def _open_writable(self) -> _Connection:
        with _translated(self.path, "open" if self.path.exists() else "create"):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            with _translated(self.path, "open"):
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                self._check_tables(db, required=False)
                db.executescript(_SCHEMA)
        except BaseException:
            db.close()
            raise
        return _Connection(db, self.path)

    def _open_read_only(self) -> _Connection:
        """``mode=ro``; on read-only media a WAL file cannot get its shared-memory file, and
        then, when no write is pending in ``run.db-wal``, ``immutable`` (no locks at all)."""
        if not self.path.is_file():
            raise RunStorageError(f"cannot read {self.path}: no such file", self.path)
        uri = self.path.resolve().as_uri()
        try:
            return self._connect_read_only(f"{uri}?mode=ro")
        except RunStorageError as error:
            if error.corrupt:
                raise
            wal = self.path.with_name(self.path.name + "-wal")
            if wal.exists() and wal.stat().st_size:
                raise RunStorageError(
                    f"cannot read {self.path} on read-only storage: {wal.name} holds results "
                    "not yet merged into it; copy the run folder to writable storage and read "
                    "it there",
                    self.path,
                    errno=error.errno,
                ) from error
        return self._connect_read_only(f"{uri}?immutable=1")

    def _connect_read_only(self, uri: str) -> _Connection:
        with _translated(self.path, "read"):
            db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        try:
            with _translated(self.path, "read"):
                self._check_tables(db, required=True)
        except BaseException:
            db.close()
            raise
        return _Connection(db, self.path)

    def _check_tables(self, db: sqlite3.Connection, *, required: bool) -> None:
        """Refuse a database of something else (it would get run tables added to it), and
        an empty one when reading (``required``)."""
        tables = {
            name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if (tables or required) and not (tables >= _TABLES if required else "meta" in tables):
            raise RunStorageError(
                f"{self.path} is not a ragmeter run database (its tables: "
                f"{', '.join(sorted(tables)) or 'none'})",
                self.path,
                corrupt=True,
            )

    @classmethod
    def in_dir(cls, run_dir: str | Path, *, read_only: bool = False) -> RunDatabase:
        return cls(Path(run_dir) / STORE_FILE, read_only=read_only)

    def close(self) -> None:
        with self._lock:
            self._db.close()
        if self._remove_tempdir is not None:
            self._remove_tempdir()

    def _rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[Any]:
        """Every row ``sql`` reads, under the store's lock."""
        with self._lock:
            return self._db.execute(sql, parameters).fetchall()

    # -- metadata --------------------------------------------------------------------------
    def get_meta(self, key: str) -> Any:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (key,))
        return json.loads(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: Any) -> None:
        text = json_text(value)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, text))

    def get_record(self) -> dict[str, Any] | None:
        """What the caller recorded to start the run again (``evaluate(record=...)``)."""
        record = self.get_meta(RECORD_KEY)
        return None if record is None else dict(record)

    def set_record(self, record: Mapping[str, Any]) -> None:
        self.set_meta(RECORD_KEY, dict(record))

    # -- writing ---------------------------------------------------------------------------
    def put_samples(self, rows: Iterable[tuple[int, int, str, dict[str, Any]]]) -> None:
        """Record samples (index, row, id, record) once; existing ones are kept."""
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR IGNORE INTO samples (idx, row, sample_id, sample, tags) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    (
                        index,
                        row,
                        sample_id,
                        to_json(record),
                        to_json(tags_of(record["metadata"])) if record.get("metadata") else "{}",
                    )
                    for index, row, sample_id, record in rows
                ),
            )

    def put_results(
        self,
        results: Iterable[tuple[int, str, MetricResult]],
        *,
        usage: dict[int, dict[str, Any]] | None = None,
        in_flight: Mapping[int, dict[str, Any]] | None = None,
    ) -> None:
        """Record results (index, metric, result) and sample usage in one transaction; with
        ``in_flight``, also the usage so far of the samples still being judged
        (:meth:`set_in_flight_usage`), so a kill at any moment neither loses nor doubles it."""
        with self._lock, self._db:
            self._db.execute("BEGIN")
            if in_flight is not None:
                self._db.execute(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    (IN_FLIGHT_KEY, json.dumps({str(i): u for i, u in in_flight.items()})),
                )
            self._db.executemany(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)",
                (_result_row(index, metric, result) for index, metric, result in results),
            )
            for index, used in (usage or {}).items():
                self._db.execute(
                    "UPDATE samples SET usage = ? WHERE idx = ?", (json.dumps(used), index)
                )

    def put_columns(self, start: int, columns: Mapping[str, ScoreColumn]) -> None:
        """Record the results of the consecutive samples from index ``start`` on, a column per
        metric, in one transaction: each column's plain ok scores as one block, its other
        results as rows."""
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO score_blocks VALUES (?, ?, ?, ?)",
                (
                    (metric, start, start + len(column), column.scores.astype("<f8").tobytes())
                    for metric, column in columns.items()
                    if len(column.others) < len(column)
                ),
            )
            self._db.executemany(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)",
                (
                    _result_row(start + i, metric, result)
                    for metric, column in columns.items()
                    for i, result in column.others.items()
                ),
            )

    def set_in_flight_usage(self, usage: Mapping[int, dict[str, Any]]) -> None:
        """The usage so far of the samples being judged now (index -> usage): requests already
        sent for samples whose results are not recorded yet. Written as the run goes, so the
        calls of samples a kill interrupts are still counted (:meth:`settle_in_flight_usage`)."""
        self.set_meta(IN_FLIGHT_KEY, {str(i): u for i, u in usage.items()})

    def settle_in_flight_usage(self) -> None:
        """At the start of a session: the in-flight usage a killed session left becomes
        interrupted usage (paid for, its samples to be judged again), counted in the total."""
        with self._lock, self._db:
            self._db.execute("BEGIN")
            rows = self._db.execute(
                "SELECT key, value FROM meta WHERE key IN (?, ?)", (IN_FLIGHT_KEY, INTERRUPTED_KEY)
            ).fetchall()
            found = {key: json.loads(value) for key, value in rows}
            left = found.get(IN_FLIGHT_KEY) or {}
            if not left:
                return
            before = _usage_of(found.get(INTERRUPTED_KEY) or {})
            total = sum(map(_usage_of, left.values()), before)
            self._db.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                (INTERRUPTED_KEY, json.dumps(total.to_dict())),
            )
            self._db.execute("DELETE FROM meta WHERE key = ?", (IN_FLIGHT_KEY,))

    # -- reading ---------------------------------------------------------------------------
    def n_samples(self) -> int:
        return int(self._rows("SELECT COUNT(*) FROM samples")[0][0])

    def samples_at(self, indexes: Sequence[int]) -> list[tuple[int, str, dict[str, Any]]]:
        """(index, id, sample record) of the samples at ``indexes``, in that order: how the
        runner reads a dataset streamed into the store back, a batch at a time."""
        found: dict[int, tuple[str, str]] = {}
        for start in range(0, len(indexes), 500):  # under SQLite's limit on parameters
            part = indexes[start : start + 500]
            rows = self._rows(
                "SELECT idx, sample_id, sample FROM samples "
                f"WHERE idx IN ({','.join('?' * len(part))})",
                tuple(part),
            )
            found.update((index, (sample_id, text)) for index, sample_id, text in rows)
        missing = [index for index in indexes if index not in found]
        if missing:
            raise KeyError(f"{self.path} holds no sample at index {missing[0]}")
        return [(i, found[i][0], json.loads(found[i][1])) for i in indexes]

    def todo(self, metrics: Sequence[str], start: int, stop: int) -> dict[int, list[str]]:
        """Samples with index in [start, stop) that lack an ok (or not applicable) result
        for some of ``metrics`` (none yet, failed or not started): index -> those metrics, in
        the given order."""
        marks = ",".join("?" * len(metrics))
        with self._lock:
            rows = self._db.execute(
                f"SELECT idx, metric, status FROM results WHERE idx >= ? AND idx < ? "
                f"AND metric IN ({marks})",
                (start, stop, *metrics),
            ).fetchall()
            n = int(self._db.execute("SELECT COUNT(*) FROM samples").fetchone()[0])
        done: set[tuple[int, str]] = set()
        for metric, first, scores in self._blocks(metrics, start, stop):
            done.update(
                (first + i, metric)
                for i in np.flatnonzero(~np.isnan(scores)).tolist()
                if start <= first + i < stop
            )
        for index, metric, status in rows:  # a row is the result read where both are
            if status in _TO_REDO:
                done.discard((index, metric))
            else:
                done.add((index, metric))
        missing = {
            i: [m for m in metrics if (i, m) not in done] for i in range(start, min(stop, n))
        }
        return {index: names for index, names in missing.items() if names}

    def count_todo(self, metrics: Sequence[str]) -> int:
        """How many samples :meth:`todo` would name over the whole run."""
        n = self.n_samples()
        if next(self._blocks(metrics, 0, n), None) is None:
            marks = ",".join("?" * len(metrics))
            complete = self._rows(
                "SELECT COUNT(*) FROM (SELECT idx FROM results WHERE metric IN "
                f"({marks}) AND status NOT IN ({_TO_REDO_SQL}) "
                "GROUP BY idx HAVING COUNT(*) = ?)",
                (*metrics, len(metrics)),
            )[0][0]
            return n - int(complete)
        complete = np.ones(n, dtype=bool)
        for metric in metrics:
            complete &= self._done_mask(metric, n)
        return n - int(complete.sum())

    def done(self, metric: str) -> set[int]:
        """Indexes of the samples that have a result for ``metric``."""
        done = {
            index for (index,) in self._rows("SELECT idx FROM results WHERE metric = ?", (metric,))
        }
        for _, first, scores in self._blocks([metric], 0, self.n_samples()):
            done.update((first + np.flatnonzero(~np.isnan(scores))).tolist())
        return done

    def _done_mask(self, metric: str, n: int) -> NDArray[np.bool_]:
        """Per sample: whether ``metric`` has a result other than failed or not started."""
        mask = np.zeros(n, dtype=bool)
        for _, first, scores in self._blocks([metric], 0, n):
            part = scores[: max(0, n - first)]
            mask[first : first + len(part)] |= ~np.isnan(part)
        rows = self._rows(
            "SELECT idx, status FROM results WHERE metric = ? AND idx < ?", (metric, n)
        )
        for index, status in rows:  # a row is the result read where both are
            mask[index] = status not in _TO_REDO
        return mask

    def _longest_block(self) -> int | None:
        """How many samples the longest score block holds (None: there are none)."""
        if not self._has_blocks:
            return None
        found = self._rows("SELECT MAX(stop - start) FROM score_blocks")[0][0]
        return None if found is None else int(found)

    def _blocks(
        self, metrics: Sequence[str], start: int, stop: int, longest: int | None = -1
    ) -> Iterator[tuple[str, int, NDArray[np.float64]]]:
        """(metric, first index, scores) of the score blocks of ``metrics`` that overlap the
        samples [start, stop), by first index. ``longest``: :meth:`_longest_block`, when a
        caller reading many ranges has it already."""
        if longest == -1:
            longest = self._longest_block()
        if longest is None or not metrics:
            return
        marks = ",".join("?" * len(metrics))
        rows = self._rows(
            f"SELECT metric, start, scores FROM score_blocks WHERE metric IN ({marks}) "
            "AND start > ? AND start < ? AND stop > ? ORDER BY start",
            (*metrics, start - longest, stop, start),
        )
        for metric, first, blob in rows:
            yield metric, first, np.frombuffer(blob, dtype="<f8")

    def scores(self, metric: str) -> StoredScores:
        """``metric``'s (status, score) per sample in dataset order (status ``not_started``
        where the run has not computed it yet), read at once into 9 bytes a sample (the
        rows of ``results`` a page at a time)."""
        n = self.n_samples()
        codes = np.zeros(n, dtype=np.uint8)
        scores = np.full(n, np.nan)
        for _, first, block in self._blocks([metric], 0, n):
            part = block[: max(0, n - first)]
            scored = np.flatnonzero(~np.isnan(part)) + first
            scores[scored] = part[scored - first]
            codes[scored] = _OK_CODE
        page = 65536
        for start in range(0, n, page):
            rows = self._rows(
                "SELECT idx, status, score FROM results WHERE metric = ? AND idx >= ? AND idx < ?",
                (metric, start, min(n, start + page)),
            )
            for index, status, score in rows:
                codes[index] = _STATUS_CODES[status]
                scores[index] = np.nan if score is None else score
        return StoredScores(codes, scores)

    def tag_counts(self) -> dict[str, dict[str, int]]:
        """tag -> value -> number of samples carrying it."""
        rows = self._rows(
            "SELECT t.key, v.value, COUNT(*) FROM samples s, json_each(s.tags) t, "
            "json_each(t.value) v GROUP BY t.key, v.value"
        )
        counts: dict[str, dict[str, int]] = {}
        for tag, value, n in rows:
            counts.setdefault(tag, {})[value] = n
        return counts

    def tagged_scores(
        self, metric: str, tags: Sequence[str], page: int = 4096
    ) -> Iterator[tuple[str, str, str, float | None]]:
        """(tag, value, status, score) of ``metric`` for every sample carrying ``tags``."""
        marks = ",".join("?" * len(tags))
        stored = self.scores(metric)
        names = STATUS_NAMES
        for start in range(0, len(stored), page):
            rows = self._rows(
                "SELECT s.idx, t.key, v.value FROM samples s "
                "JOIN json_each(s.tags) t JOIN json_each(t.value) v "
                f"WHERE s.idx >= ? AND s.idx < ? AND t.key IN ({marks})",
                (start, start + page, *tags),
            )
            for index, tag, value in rows:
                score = float(stored.scores[index])
                yield tag, value, names[stored.codes[index]], None if score != score else score

    def total_usage(self) -> Usage | None:
        """Judge usage summed over the samples, plus what samples interrupted by a kill (or
        still in flight) already sent: every request a provider would bill. None when
        nothing recorded any."""
        fields = [f.name for f in dataclasses.fields(Usage)]
        sums = ", ".join(f"TOTAL(json_extract(usage, '$.{name}'))" for name in fields)
        row = self._rows(f"SELECT COUNT(*), {sums} FROM samples WHERE usage IS NOT NULL")[0]
        unsettled = [
            _usage_of(self.get_meta(INTERRUPTED_KEY) or {}),
            *(_usage_of(u) for u in (self.get_meta(IN_FLIGHT_KEY) or {}).values()),
        ]
        if not row[0] and not any(u.calls or u.cached_calls for u in unsettled):
            return None
        total = Usage(
            **{
                f.name: (value if f.type in (float, "float") else int(value)) if row[0] else 0
                for f, value in zip(dataclasses.fields(Usage), row[1:])
            }
        )
        return sum(unsettled, total)

    def sample_ids(self, page: int = 65536) -> Iterator[str]:
        """Every sample's id, in dataset order, ``page`` at a time."""
        last = -1
        while True:
            rows = self._rows(
                "SELECT idx, sample_id FROM samples WHERE idx > ? ORDER BY idx LIMIT ?",
                (last, page),
            )
            if not rows:
                return
            last = rows[-1][0]
            yield from (sample_id for _, sample_id in rows)

    def iter_samples(
        self, batch: int = 500
    ) -> Iterator[tuple[int, int, str, dict[str, Any], dict[str, dict[str, Any]], Any]]:
        """(index, row, id, sample record, {metric: result dict}, usage) in dataset order,
        read ``batch`` samples at a time."""
        for index, row, sample_id, record, results, usage in self.iter_stored_json(batch):
            yield (
                index,
                row,
                sample_id,
                json.loads(record),
                {metric: json.loads(text) for metric, text in results.items()},
                None if usage is None else json.loads(usage),
            )

    def iter_stored_json(
        self, batch: int = 500
    ) -> Iterator[tuple[int, int, str, str, dict[str, str], str | None]]:
        """:meth:`iter_samples` with the record, each result and the usage as their stored
        JSON text, not decoded (``results.jsonl`` is written from them as they are)."""
        last = -1
        longest = self._longest_block()  # once per pass over the run
        in_blocks = (
            [m for (m,) in self._rows("SELECT DISTINCT metric FROM score_blocks")]
            if self._has_blocks
            else []
        )
        while True:
            with self._lock:
                samples = self._db.execute(
                    "SELECT idx, row, sample_id, sample, usage FROM samples WHERE idx > ? "
                    "ORDER BY idx LIMIT ?",
                    (last, batch),
                ).fetchall()
                if not samples:
                    return
                first, final = samples[0][0], samples[-1][0]
                results = self._db.execute(
                    "SELECT idx, metric, result FROM results WHERE idx BETWEEN ? AND ?",
                    (first, final),
                ).fetchall()
            by_index: dict[int, dict[str, str]] = {}
            for metric, start, scores in self._blocks(in_blocks, first, final + 1, longest):
                lo, hi = max(first, start), min(final + 1, start + len(scores))
                for index, score in zip(range(lo, hi), scores[lo - start : hi - start].tolist()):
                    if score == score:  # not NaN: this sample's result is in the block
                        by_index.setdefault(index, {})[metric] = _plain_json(score)
            for index, metric, text in results:
                by_index.setdefault(index, {})[metric] = text
            for index, row, sample_id, record, usage in samples:
                yield index, row, sample_id, record, by_index.get(index, {}), usage
            last = final


def _usage_of(value: Mapping[str, Any]) -> Usage:
    """A :class:`Usage` from its ``to_dict()`` (unknown keys ignored, missing ones 0)."""
    known = {f.name for f in dataclasses.fields(Usage)}
    return Usage(**{key: v for key, v in value.items() if key in known})


def json_text(value: Any, **options: Any) -> str:
    """``value`` as JSON text that can be written as UTF-8: readable (``ensure_ascii=False``)
    unless it holds a lone surrogate (a file name that is not UTF-8), which is then written
    as an escape that ``json.loads`` reads back as the same text."""
    text = json.dumps(value, ensure_ascii=False, **options)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, **options)
    return text
