"""The run store: every evaluation run recorded in SQLite (embedded default) or PostgreSQL,
listed, loaded back as an :class:`~ragmeter.EvaluationResult` and compared."""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
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

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter.store._store": (
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
        ),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
