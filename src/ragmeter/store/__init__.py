"""The run store: every evaluation run recorded in SQLite (embedded default) or PostgreSQL,
listed, loaded back as an :class:`~ragmeter.EvaluationResult` and compared."""

from ragmeter.store._store import (
    DEFAULT_URL,
    AmbiguousRunError,
    RunInfo,
    RunNotFoundError,
    Store,
    StoreError,
    git_state,
    parameter_changes,
    store_exists,
    store_url,
)

__all__ = [
    "DEFAULT_URL",
    "AmbiguousRunError",
    "RunInfo",
    "RunNotFoundError",
    "Store",
    "StoreError",
    "git_state",
    "parameter_changes",
    "store_exists",
    "store_url",
]
