"""Trackers in tests: everything they write stays in a temporary folder, nothing goes online."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

#: Where W&B writes besides the run's own folder: logs, staged artifact files, settings.
WANDB_FOLDERS = (
    "WANDB_DIR",
    "WANDB_CACHE_DIR",
    "WANDB_CONFIG_DIR",
    "WANDB_DATA_DIR",
    "WANDB_ARTIFACT_DIR",
)
#: Settings of the developer's own that would send a run somewhere or change it.
TRACKER_SETTINGS = (
    "WANDB_API_KEY",
    "WANDB_BASE_URL",
    "WANDB_ENTITY",
    "WANDB_PROJECT",
    "WANDB_MODE",
    "WANDB_INIT_TIMEOUT",
    "WANDB_FINISH_TIMEOUT",
    "MLFLOW_TRACKING_URI",
    "MLFLOW_EXPERIMENT_NAME",
    "MLFLOW_EXPERIMENT_ID",
    "MLFLOW_HTTP_REQUEST_TIMEOUT",
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES",
)


@contextmanager
def private_trackers(root: Path) -> Iterator[pytest.MonkeyPatch]:
    """Run from ``root``, W&B's folders in it (MLflow's default store and artifacts are
    relative to the working directory), no tracker settings of the developer's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        for name in TRACKER_SETTINGS:
            patch.delenv(name, raising=False)
        for name in WANDB_FOLDERS:
            patch.setenv(name, str(root / name.lower()))
        patch.setenv("WANDB_SILENT", "true")
        patch.setenv("WANDB_DISABLE_CODE", "true")
        yield patch


@pytest.fixture
def trackers(tmp_path: Path) -> Iterator[pytest.MonkeyPatch]:
    with private_trackers(tmp_path) as patch:
        yield patch


def closed_port() -> int:
    """A local port nothing listens on: a tracking server that is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
