"""The run database on failing storage: a full disk, read-only media, a corrupt or foreign
file. One line naming the file and the cause, and nothing written before is lost."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

import pytest

from ragmeter import MetricResult, evaluate
from ragmeter.results import RunDatabase, RunStorageError, storage_error

ROWS = [
    {"id": f"s{i}", "retrieved_context_ids": ["x", "y"], "reference_context_ids": ["y"]}
    for i in range(3)
]
RUNNING_AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def a_run(tmp_path: Path) -> Path:
    """A finished run folder, its database closed (merged into run.db)."""
    result = evaluate(ROWS, ["mrr"], run_dir=tmp_path / "run")
    assert result.store is not None
    result.store.close()
    return tmp_path / "run"


def test_a_full_disk_is_one_line_and_what_was_written_stays(tmp_path):
    database = RunDatabase(tmp_path / "run.db")
    database.put_samples((i, i + 1, f"s{i}", {"response": "x" * 500}) for i in range(400))
    database.put_results([(0, "m", MetricResult.ok(1.0, "kept"))])
    pages = database._db.execute("PRAGMA page_count").fetchone()[0]
    database._db.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full from now on
    with pytest.raises(RunStorageError) as raised:
        for i in range(1, 400):
            database.put_results([(i, "m", MetricResult.ok(0.5, "r" * 2000))])
    error = raised.value
    assert str(error) == f"cannot write {tmp_path / 'run.db'}: no space left on device (ENOSPC)"
    assert error.errno == errno.ENOSPC and isinstance(error, OSError)
    database.close()
    reopened = RunDatabase(tmp_path / "run.db")
    assert 0 in reopened.done("m") and len(reopened.done("m")) < 400
    reopened.close()


@pytest.mark.parametrize(
    "content",
    [b"not a database at all " * 300, None],  # random bytes; a database cut short
    ids=["garbage", "truncated"],
)
def test_a_corrupt_run_database_is_named_as_such(tmp_path, content):
    run = a_run(tmp_path)
    path = run / "run.db"
    data = path.read_bytes()
    path.write_bytes(content if content is not None else data[: len(data) // 3])
    for read_only in (False, True):
        with pytest.raises(RunStorageError) as raised:
            RunDatabase(path, read_only=read_only)
        assert raised.value.corrupt
        assert str(raised.value).startswith(
            f"{path} is not a ragmeter run database or is corrupt ("
        )


def test_another_programs_database_is_refused_not_changed(tmp_path):
    path = tmp_path / "run.db"
    with sqlite3.connect(path) as other:
        other.execute("CREATE TABLE invoices (id INTEGER)")
    other.close()
    with pytest.raises(RunStorageError) as raised:
        RunDatabase(path)
    assert str(raised.value) == f"{path} is not a ragmeter run database (its tables: invoices)"
    with sqlite3.connect(path) as other:
        tables = other.execute("SELECT name FROM sqlite_master").fetchall()
    other.close()
    assert tables == [("invoices",)]


def test_reading_only_never_writes_and_refuses_writes(tmp_path):
    run = a_run(tmp_path)
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    database = RunDatabase.in_dir(run, read_only=True)
    assert database.read_only and database.n_samples() == 3
    with pytest.raises(RunStorageError, match=r"read-only \(EROFS\)") as raised:
        database.set_meta("x", 1)
    assert raised.value.read_only
    database.close()
    assert {name: (run / name).read_bytes() for name in before} == before


def test_a_run_that_cannot_be_written_opens_read_only(tmp_path, monkeypatch):
    """Read-only media, simulated (root ignores file permissions): SQLite refuses to write."""
    run = a_run(tmp_path)
    connect = sqlite3.connect

    def read_only_media(database, *args, **kwargs):
        if not (kwargs.get("uri") and ("mode=ro" in database or "immutable=1" in database)):
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return connect(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only_media)
    database = RunDatabase.in_dir(run)
    assert database.read_only
    assert database.n_samples() == 3 and database.done("mrr") == {0, 1, 2}
    database.close()


@pytest.mark.skipif(RUNNING_AS_ROOT, reason="root ignores file permissions")
def test_a_read_only_run_folder_is_read(tmp_path):
    run = a_run(tmp_path)
    for path in [run, *run.iterdir()]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        database = RunDatabase.in_dir(run)
        assert database.read_only and database.n_samples() == 3
        database.close()
        assert sorted(p.name for p in run.iterdir()) == ["results.jsonl", "run.db", "summary.json"]
    finally:
        for path in [run, *run.iterdir()]:
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_a_new_run_where_nothing_can_be_written_is_one_line(tmp_path, monkeypatch):
    def no_folder(self, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", no_folder)
    with pytest.raises(RunStorageError) as raised:
        RunDatabase(tmp_path / "new" / "run.db")
    assert str(raised.value) == f"cannot create {tmp_path / 'new'}: permission denied (EACCES)"


def test_storage_errors_say_the_file_and_the_cause():
    said = [
        str(storage_error(sqlite3.OperationalError(words), "r/run.db"))
        for words in (
            "database or disk is full",
            "attempt to write a readonly database",
            "disk I/O error",
            "file is not a database",
        )
    ]
    assert said == [
        "cannot write r/run.db: no space left on device (ENOSPC)",
        "cannot write r/run.db: the file or its folder is read-only (EROFS)",
        "cannot write r/run.db: input/output error (EIO)",
        "r/run.db is not a ragmeter run database or is corrupt (file is not a database)",
    ]
    read_only = storage_error(OSError(errno.EROFS, "Read-only file system", "r/x"), "r")
    assert str(read_only) == "cannot write r/x: read-only file system (EROFS)"
    assert read_only.read_only


def test_a_store_without_a_folder_removes_its_temporary_one_silently(recwarn):
    import gc
    import os

    closed = RunDatabase(None)
    folder = closed._tempdir
    closed.close()
    assert not os.path.exists(folder)
    dropped = RunDatabase(None)  # as evaluate() without run_dir leaves it, never closed
    folder = dropped._tempdir
    assert os.path.exists(folder)
    del dropped
    gc.collect()
    assert not os.path.exists(folder)
    assert not [w for w in recwarn if issubclass(w.category, ResourceWarning)]
