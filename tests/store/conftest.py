"""The store tests run on every backend: an SQLite file, and PostgreSQL when a server is
reachable (``RAGMETER_TEST_POSTGRES_URL``, set by ``.ci/run``; else the tests start a
throwaway server with the local PostgreSQL binaries, and skip saying why when they cannot).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REQUIRE = os.environ.get("RAGMETER_REQUIRE_POSTGRES") == "1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _binaries() -> Path | None:
    for root in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (root / "initdb").exists():
            return root
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _as_postgres(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run its binaries as the postgres user."""
    if os.geteuid() == 0 and shutil.which("runuser"):
        return ["runuser", "-u", "postgres", "--", *command]
    return command


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    given = os.environ.get("RAGMETER_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    pytest.importorskip("psycopg")
    binaries = _binaries()
    if binaries is None:
        message = "no PostgreSQL server: set RAGMETER_TEST_POSTGRES_URL or install postgresql"
        if REQUIRE:
            pytest.fail(message)
        pytest.skip(message)
    data = Path(tempfile.mkdtemp(prefix="ragmeter-pg-"))
    port = _free_port()
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
    log = data / "server.log"
    try:
        subprocess.run(
            _as_postgres([str(binaries / "initdb"), "-D", str(data / "db"), "-U", "ragmeter",
                          "--auth=trust", "-E", "UTF8"]),
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        subprocess.run(
            _as_postgres([str(binaries / "pg_ctl"), "-D", str(data / "db"), "-l", str(log),
                          "-o", f"-h 127.0.0.1 -p {port} -k {data}", "-w", "start"]),
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    except (subprocess.SubprocessError, OSError) as error:
        shutil.rmtree(data, ignore_errors=True)
        message = f"could not start a PostgreSQL server: {error}"
        if REQUIRE:
            pytest.fail(message)
        pytest.skip(message)
    try:
        yield f"postgresql://ragmeter@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_postgres([str(binaries / "pg_ctl"), "-D", str(data / "db"), "-m", "fast",
                          "-w", "stop"]),
            capture_output=True, timeout=120,
        )  # fmt: skip
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty store on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs.db'}"
        return
    server = request.getfixturevalue("postgres_server")
    import psycopg

    database = f"t_{uuid.uuid4().hex[:12]}"
    admin = server.replace("postgresql://", "postgresql://", 1)
    for attempt in range(30):
        try:
            with psycopg.connect(admin, autocommit=True) as connection:
                connection.execute(f"CREATE DATABASE {database}")
            break
        except psycopg.OperationalError:
            if attempt == 29:
                raise
            time.sleep(0.2)
    yield server.rsplit("/", 1)[0] + f"/{database}"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
