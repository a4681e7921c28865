"""Telling an async callable from a sync one; ``run_sync`` is the services' (re-exported)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ragmeter._services import run_sync

__all__ = ["is_async", "run_sync"]


def is_async(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` returns a coroutine: an ``async def`` function, or an object
    whose ``__call__`` is one.

    >>> async def fetch(sample): ...
    >>> class Pipeline:
    ...     async def __call__(self, sample): ...
    >>> is_async(fetch), is_async(Pipeline()), is_async(len)
    (True, True, False)
    """
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - a callable object's async __call__
    )
