"""The cache of judge answers and embeddings: identical work is never paid for twice.

Keys cover the endpoint and model, every generation parameter, the prompt-template version,
the rendered messages and the output schema, so answers from different models or settings
never mix. SQLite in WAL mode is safe across threads and processes; a corrupt or locked
cache degrades to no cache with a warning.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import threading
import time
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ragmeter._services._types import Message

T = TypeVar("T")

CACHE_FORMAT = 1


def cache_key(
    *,
    identity: str,
    params: dict[str, Any],
    prompt_version: str,
    messages: Sequence[Message],
    schema: Mapping[str, Any] | None,
    salt: str = "",
) -> str:
    """A stable hash of everything that can change an answer.

    >>> k1 = cache_key(identity="u|m", params={}, prompt_version="v1",
    ...                messages=[Message("user", "hi")], schema=None)
    >>> k2 = cache_key(identity="u|m2", params={}, prompt_version="v1",
    ...                messages=[Message("user", "hi")], schema=None)
    >>> k1 == k2
    False
    """
    payload = json.dumps(
        {
            "format": CACHE_FORMAT,
            "identity": identity,
            "params": params,
            "prompt_version": prompt_version,
            "messages": [m.to_dict() for m in messages],
            "schema": schema,
            "salt": salt,
        },
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class Cache(ABC):
    """Where judge answers and embeddings are kept; a shared service that a cluster backend
    can replace."""

    @abstractmethod
    def get(self, key: str) -> dict[str, Any] | None: ...

    @abstractmethod
    def put(self, key: str, value: dict[str, Any]) -> None: ...

    # The async forms, which the judges and embeddings use: a cache in another process (a
    # cluster's cache service) answers them without holding up the event loop; a local one
    # answers at once through get / put.
    async def aget(self, key: str) -> dict[str, Any] | None:
        return self.get(key)

    async def aget_many(self, keys: Sequence[str]) -> list[dict[str, Any] | None]:
        return [self.get(key) for key in keys]

    async def aput(self, key: str, value: dict[str, Any]) -> None:
        self.put(key, value)

    async def aput_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        for key, value in items:
            self.put(key, value)

    def close(self) -> None:  # noqa: B027 - optional hook
        pass


class NullCache(Cache):
    """No caching (``--no-cache``)."""

    def get(self, key: str) -> dict[str, Any] | None:
        return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        return None


class MemoryCache(Cache):
    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            return self._data.get(key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            self._data[key] = value

    def __getstate__(self) -> dict[str, Any]:  # sent to another process: a copy
        with self._lock:
            return {"_data": dict(self._data)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._data = state["_data"]
        self._lock = threading.Lock()


class SQLiteCache(Cache):
    """One SQLite file. ``refresh=True`` ignores stored answers but stores new ones
    (``--refresh-cache``)."""

    def __init__(self, path: str | Path, *, refresh: bool = False, timeout_s: float = 10.0) -> None:
        self.path = Path(path)
        self.refresh = refresh
        self.timeout_s = timeout_s
        self._local = threading.local()
        self._broken: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)

            def create() -> None:
                with self._connection() as connection:
                    connection.execute(
                        "CREATE TABLE IF NOT EXISTS judge_cache (key TEXT PRIMARY KEY, "
                        "value TEXT NOT NULL, created REAL DEFAULT (julianday('now')))"
                    )

            self._while_locked(create)
        except (sqlite3.Error, OSError) as error:
            self._degrade(error)

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=self.timeout_s, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            self._local.connection = connection
        return connection

    def _while_locked(self, work: Callable[[], T]) -> T:
        """Run ``work``, retrying while another connection holds a lock SQLite does not wait
        for by itself (switching to WAL, recovering a WAL), up to ``timeout_s``."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                return work()
            except sqlite3.OperationalError as error:
                message = str(error).lower()
                if ("locked" not in message and "busy" not in message) or (
                    time.monotonic() > deadline
                ):
                    raise
                time.sleep(0.01 + random.random() * 0.04)

    def _degrade(self, error: Exception) -> None:
        if self._broken is None:
            self._broken = f"{type(error).__name__}: {error}"
            warnings.warn(
                f"judge cache {str(self.path)!r} is unusable ({self._broken}); "
                "continuing without a cache",
                RuntimeWarning,
                stacklevel=3,
            )

    def get(self, key: str) -> dict[str, Any] | None:
        if self._broken or self.refresh:
            return None
        try:
            row = self._while_locked(
                lambda: (
                    self._connection()
                    .execute("SELECT value FROM judge_cache WHERE key = ?", (key,))
                    .fetchone()
                )
            )
            return json.loads(row[0]) if row else None
        except (sqlite3.Error, json.JSONDecodeError) as error:
            self._degrade(error)
            return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        if self._broken:
            return
        text = json.dumps(value, ensure_ascii=False)

        def insert() -> None:
            with self._connection() as connection:
                connection.execute(
                    "INSERT OR REPLACE INTO judge_cache (key, value) VALUES (?, ?)", (key, text)
                )

        try:
            self._while_locked(insert)
        except sqlite3.Error as error:
            self._degrade(error)

    def __getstate__(self) -> dict[str, Any]:
        """Sent to another process (a cluster's cache service): the same file, opened there."""
        return {"path": str(self.path), "refresh": self.refresh, "timeout_s": self.timeout_s}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], refresh=state["refresh"], timeout_s=state["timeout_s"])  # type: ignore[misc]

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None
