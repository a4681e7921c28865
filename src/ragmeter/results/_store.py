"""A run's results on disk as they are computed: one SQLite file in the run directory.

Every finished sample x metric is written as soon as it is known, so a run killed at any
moment loses nothing it already paid for, and ``--resume`` computes only what is missing.
Reading streams from the file, so results of a large run never have to fit in memory.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter.judge import Usage
from ragmeter.metrics import MetricResult

STORE_FILE = "run.db"
SCHEMA_VERSION = 1
#: The meta key of the caller's record; run directories have always stored it under this name.
RECORD_KEY = "invocation"

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
"""


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
    """

    def __init__(self, path: str | Path | None) -> None:
        self._tempdir = None
        if path is None:
            self._tempdir = tempfile.TemporaryDirectory(prefix="ragmeter-run-")
            path = Path(self._tempdir.name) / STORE_FILE
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        version = self.get_meta("schema_version")
        if version is None:
            self.set_meta("schema_version", SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            raise ValueError(
                f"{self.path} was written by a ragmeter with run format {version}; this one "
                f"reads format {SCHEMA_VERSION}: re-run the evaluation into a new directory"
            )

    @classmethod
    def in_dir(cls, run_dir: str | Path) -> RunDatabase:
        return cls(Path(run_dir) / STORE_FILE)

    def close(self) -> None:
        with self._lock:
            self._db.close()
        if self._tempdir is not None:
            self._tempdir.cleanup()

    # -- metadata --------------------------------------------------------------------------
    def get_meta(self, key: str) -> Any:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def set_meta(self, key: str, value: Any) -> None:
        text = json.dumps(value, ensure_ascii=False)
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
                        json.dumps(record, ensure_ascii=False),
                        json.dumps(tags_of(record.get("metadata") or {}), ensure_ascii=False),
                    )
                    for index, row, sample_id, record in rows
                ),
            )

    def put_results(
        self,
        results: Iterable[tuple[int, str, MetricResult]],
        *,
        usage: dict[int, dict[str, Any]] | None = None,
    ) -> None:
        """Record results (index, metric, result) and sample usage in one transaction."""
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)",
                (
                    (
                        index,
                        metric,
                        result.status.value,
                        result.score,
                        json.dumps(result.to_dict(), ensure_ascii=False),
                    )
                    for index, metric, result in results
                ),
            )
            for index, used in (usage or {}).items():
                self._db.execute(
                    "UPDATE samples SET usage = ? WHERE idx = ?", (json.dumps(used), index)
                )

    # -- reading ---------------------------------------------------------------------------
    def n_samples(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM samples").fetchone()[0])

    def todo(self, metrics: Sequence[str], start: int, stop: int) -> dict[int, list[str]]:
        """Samples with index in [start, stop) that lack an ok (or not applicable) result
        for some of ``metrics``: index -> those metrics, in the given order."""
        marks = ",".join("?" * len(metrics))
        with self._lock:
            rows = self._db.execute(
                f"SELECT idx, metric FROM results WHERE idx >= ? AND idx < ? "
                f"AND metric IN ({marks}) AND status != 'failed'",
                (start, stop, *metrics),
            ).fetchall()
            n = int(self._db.execute("SELECT COUNT(*) FROM samples").fetchone()[0])
        done = set(rows)
        out = {}
        for index in range(start, min(stop, n)):
            missing = [m for m in metrics if (index, m) not in done]
            if missing:
                out[index] = missing
        return out

    def count_todo(self, metrics: Sequence[str]) -> int:
        """How many samples :meth:`todo` would name over the whole run."""
        marks = ",".join("?" * len(metrics))
        with self._lock:
            complete = self._db.execute(
                f"SELECT COUNT(*) FROM (SELECT idx FROM results WHERE metric IN ({marks}) "
                "AND status != 'failed' GROUP BY idx HAVING COUNT(*) = ?)",
                (*metrics, len(metrics)),
            ).fetchone()[0]
            n = int(self._db.execute("SELECT COUNT(*) FROM samples").fetchone()[0])
        return n - int(complete)

    def done(self, metric: str) -> set[int]:
        """Indexes of the samples that have a result for ``metric``."""
        with self._lock:
            rows = self._db.execute("SELECT idx FROM results WHERE metric = ?", (metric,))
            return {index for (index,) in rows.fetchall()}

    def scores(self, metric: str, page: int = 4096) -> Iterator[tuple[str, float | None]]:
        """(status, score) of ``metric`` per sample in dataset order; ``("missing", None)``
        where the run has not computed it (yet). Read ``page`` samples at a time."""
        for start in range(0, self.n_samples(), page):
            with self._lock:
                rows = self._db.execute(
                    "SELECT r.status, r.score FROM samples s LEFT JOIN results r "
                    "ON r.idx = s.idx AND r.metric = ? WHERE s.idx >= ? AND s.idx < ? "
                    "ORDER BY s.idx",
                    (metric, start, start + page),
                ).fetchall()
            for status, score in rows:
                yield status or "missing", score

    def tag_counts(self) -> dict[str, dict[str, int]]:
        """tag -> value -> number of samples carrying it."""
        with self._lock:
            rows = self._db.execute(
                "SELECT t.key, v.value, COUNT(*) FROM samples s, json_each(s.tags) t, "
                "json_each(t.value) v GROUP BY t.key, v.value"
            ).fetchall()
        counts: dict[str, dict[str, int]] = {}
        for tag, value, n in rows:
            counts.setdefault(tag, {})[value] = n
        return counts

    def tagged_scores(
        self, metric: str, tags: Sequence[str], page: int = 4096
    ) -> Iterator[tuple[str, str, str, float | None]]:
        """(tag, value, status, score) of ``metric`` for every sample carrying ``tags``."""
        marks = ",".join("?" * len(tags))
        for start in range(0, self.n_samples(), page):
            with self._lock:
                rows = self._db.execute(
                    "SELECT t.key, v.value, r.status, r.score FROM samples s "
                    "JOIN json_each(s.tags) t JOIN json_each(t.value) v "
                    "LEFT JOIN results r ON r.idx = s.idx AND r.metric = ? "
                    f"WHERE s.idx >= ? AND s.idx < ? AND t.key IN ({marks})",
                    (metric, start, start + page, *tags),
                ).fetchall()
            for tag, value, status, score in rows:
                yield tag, value, status or "missing", score

    def total_usage(self) -> Usage | None:
        """Judge usage summed over the samples (None when no sample recorded any)."""
        fields = [f.name for f in dataclasses.fields(Usage)]
        sums = ", ".join(f"TOTAL(json_extract(usage, '$.{name}'))" for name in fields)
        with self._lock:
            row = self._db.execute(
                f"SELECT COUNT(*), {sums} FROM samples WHERE usage IS NOT NULL"
            ).fetchone()
        if not row[0]:
            return None
        return Usage(
            **{
                f.name: value if f.type in (float, "float") else int(value)
                for f, value in zip(dataclasses.fields(Usage), row[1:])
            }
        )

    def iter_samples(
        self, batch: int = 500
    ) -> Iterator[tuple[int, int, str, dict[str, Any], dict[str, dict[str, Any]], Any]]:
        """(index, row, id, sample record, {metric: result dict}, usage) in dataset order,
        read ``batch`` samples at a time."""
        last = -1
        while True:
            with self._lock:
                samples = self._db.execute(
                    "SELECT idx, row, sample_id, sample, usage FROM samples WHERE idx > ? "
                    "ORDER BY idx LIMIT ?",
                    (last, batch),
                ).fetchall()
                if not samples:
                    return
                results = self._db.execute(
                    "SELECT idx, metric, result FROM results WHERE idx BETWEEN ? AND ?",
                    (samples[0][0], samples[-1][0]),
                ).fetchall()
            by_index: dict[int, dict[str, dict[str, Any]]] = {}
            for index, metric, text in results:
                by_index.setdefault(index, {})[metric] = json.loads(text)
            for index, row, sample_id, record, usage in samples:
                yield (
                    index,
                    row,
                    sample_id,
                    json.loads(record),
                    by_index.get(index, {}),
                    None if usage is None else json.loads(usage),
                )
            last = samples[-1][0]
