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

# The suite runs one worker per core: the embedded judge's llama.cpp uses one thread per
# worker, or its spinning threads stall each other (see ragmeter.judge._local).
os.environ.setdefault("RAGMETER_LOCAL_THREADS", "1")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files with a test marked ``slow`` first (``make test`` keeps this order with
    ``--no-loadscope-reorder``): with one worker per core, a minute-long test that starts
    last leaves the other cores idle while it runs."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)


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
