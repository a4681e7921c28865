"""The sync form of an async entry point, written once: :func:`synchronous`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from ragmeter._services import run_sync

P = ParamSpec("P")
T = TypeVar("T")


def synchronous(
    coroutine_function: Callable[P, Coroutine[Any, Any, T]],
) -> Callable[[Callable[[], None]], Callable[P, T]]:
    """A decorator for a function that holds only a name and a docstring: it becomes one
    that takes the arguments of ``coroutine_function`` (its signature, for type checkers and
    ``help``) and runs it to the end from sync code (:func:`ragmeter._services.run_sync`).

    >>> async def atwice(n: int, *, plus: int = 0) -> int:
    ...     return 2 * n + plus
    >>> @synchronous(atwice)
    ... def twice() -> None:
    ...     "Twice ``n``."
    >>> twice(3, plus=1), twice.__name__, twice.__doc__
    (7, 'twice', 'Twice ``n``.')
    >>> import inspect; list(inspect.signature(twice).parameters)
    ['n', 'plus']
    >>> import typing; typing.get_type_hints(twice)["plus"]
    <class 'int'>
    """

    def decorate(stub: Callable[[], None]) -> Callable[P, T]:
        def run(*args: P.args, **kwargs: P.kwargs) -> T:
            return run_sync(coroutine_function(*args, **kwargs))

        names = ("__module__", "__name__", "__qualname__", "__doc__")
        functools.update_wrapper(run, stub, assigned=names, updated=())
        run.__wrapped__ = coroutine_function  # type: ignore[attr-defined]  # for its signature
        # its annotations too: typing.get_type_hints resolves them in the coroutine
        # function's module (it follows __wrapped__), where this module's P and T are not
        run.__annotations__ = dict(coroutine_function.__annotations__)
        return run

    return decorate
