"""Running async code from sync code."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, also inside a running event loop
    (Jupyter): then it runs on a fresh loop in a worker thread, no patching needed.

    >>> async def answer() -> int:
    ...     return 42
    >>> run_sync(answer())
    42
    >>> async def nested() -> int:  # called while a loop runs, as in a notebook cell
    ...     return run_sync(answer())
    >>> asyncio.run(nested())
    42
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    results: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            results.append(asyncio.run(coroutine))
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(error)

    thread = threading.Thread(target=target, name="ragmeter-sync")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return results[0]
