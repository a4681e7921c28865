"""Suite-wide settings: no test writes to the developer's own run store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# pytest-xdist's workers start with COLUMNS=80 and LINES=24 set, and rich fixes a console's
# width from COLUMNS when the console is made (at import): drop them, so that a test's own
# COLUMNS applies as it does in a serial run.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


@pytest.fixture(scope="session")
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache") / "cache.db"


@pytest.fixture(autouse=True)
def _private_cache(_session_cache: Path, monkeypatch: pytest.MonkeyPatch):
    """Judge answers and vectors are cached in the session's own file, never in the
    developer's ``.ragmeter/cache.db`` (tests that count requests see no stale hit)."""
    monkeypatch.setenv("RAGMETER_CACHE", str(_session_cache))


@pytest.fixture(autouse=True)
def _private_run_store(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """``ragmeter eval`` records every run; in tests, into a store of the test's own."""
    folder: Path = tmp_path_factory.mktemp("store")
    monkeypatch.setenv("RAGMETER_STORE_URL", f"sqlite:///{folder / 'runs.db'}")
