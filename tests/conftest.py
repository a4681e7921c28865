"""Suite-wide settings: no test writes to the developer's own run store."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_run_store(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """``ragmeter eval`` records every run; in tests, into a store of the test's own."""
    folder: Path = tmp_path_factory.mktemp("store")
    monkeypatch.setenv("RAGMETER_STORE_URL", f"sqlite:///{folder / 'runs.db'}")
