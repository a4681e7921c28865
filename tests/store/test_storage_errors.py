"""The run store when its storage fails: a corrupt file, a server that does not answer, a
full disk, read-only media. One line naming the store (never its password) and the cause,
in bounded time."""

from __future__ import annotations

import errno
import socket
import time

import pytest
import sqlalchemy as sa

from ragmeter import evaluate
from ragmeter.store import Store, StoreError
from ragmeter.store._store import (  # private: the engine's connect timeout
    CONNECT_TIMEOUT_S,
    _engine_options,
)

ROWS = [{"id": "a", "retrieved_context_ids": ["x"], "reference_context_ids": ["x"]}]


def a_closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("cut", [False, True], ids=["garbage", "truncated"])
def test_a_corrupt_store_file_says_so_and_what_to_do(tmp_path, cut):
    path = tmp_path / "runs.db"
    if cut:
        Store(f"sqlite:///{path}").record(evaluate(ROWS, ["mrr"]))
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
    else:
        path.write_bytes(b"\x13garbage, not SQLite\x00" * 400)
    with pytest.raises(StoreError) as raised:
        Store(f"sqlite:///{path}")
    error = raised.value
    assert error.corrupt and "\n" not in str(error)
    assert str(error).startswith(f"{path} is not a ragmeter database or is corrupt (")
    assert str(error).endswith(
        "move it aside or choose another store (--store, RAGMETER_STORE_URL)"
    )


def test_a_server_that_is_not_there_is_one_line_without_the_password():
    pytest.importorskip("psycopg")
    url = f"postgresql://ragmeter:s3cret-pw@127.0.0.1:{a_closed_port()}/runs"
    started = time.monotonic()
    with pytest.raises(StoreError) as raised:
        Store(url)
    assert time.monotonic() - started < CONNECT_TIMEOUT_S
    said = str(raised.value)
    assert raised.value.unreachable and "\n" not in said
    assert said.startswith("cannot reach the run store ") and "127.0.0.1" in said
    assert "s3cret-pw" not in said
    assert said.endswith("check the URL and that the server is running")


def test_a_server_that_does_not_answer_is_given_up_in_bounded_time():
    options = _engine_options(sa.engine.make_url("postgresql+psycopg://u@10.0.0.1/x"))
    assert options["connect_args"] == {"connect_timeout": CONNECT_TIMEOUT_S}
    chosen = _engine_options(sa.engine.make_url("postgresql+psycopg://u@h/x?connect_timeout=3"))
    assert "connect_args" not in chosen  # the URL's own timeout is kept
    assert "connect_timeout" not in _engine_options(sa.engine.make_url("sqlite:///r.db")).get(
        "connect_args", {}
    )


def test_a_full_disk_while_recording_is_one_line(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    store.record(evaluate(ROWS, ["mrr"]))

    def full(connection, _record):
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {pages}")

    sa.event.listen(store.engine, "connect", full)
    big = [{**ROWS[0], "id": f"s{i}", "response": "x" * 3000} for i in range(50)]
    with pytest.raises(StoreError) as raised:
        store.record(evaluate(big, ["mrr"]))
    assert raised.value.errno == errno.ENOSPC
    assert str(raised.value) == (
        f"run store: cannot use {tmp_path / 'runs.db'}: no space left on device (ENOSPC)"
    )
    sa.event.remove(store.engine, "connect", full)
    assert len(store.list()) == 1  # the run recorded before is intact, nothing half-written


def test_a_read_only_store_file_is_one_line(tmp_path, monkeypatch):
    """Read-only media, simulated (root ignores file permissions): SQLite refuses to write."""
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")

    def read_only(connection, _record):
        connection.execute("PRAGMA query_only = ON")

    sa.event.listen(store.engine, "connect", read_only)
    with pytest.raises(StoreError, match="read-only") as raised:
        store.record(evaluate(ROWS, ["mrr"]))
    assert raised.value.errno == errno.EROFS
    assert store.list() == []  # reading still works
