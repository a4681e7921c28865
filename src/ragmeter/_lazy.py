"""Lazy re-exports for package ``__init__`` files (PEP 562).

A package lists where each public name lives; the module that defines it is imported on
first use, so that importing a package (``ragmeter.judge`` for its error types, say) does
not load every client, model and database driver behind it. ``ragmeter --help`` and a
retrieval-only evaluation stay fast this way. The packages also import the names under
``TYPE_CHECKING``, for type checkers and readers.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Mapping
from typing import Any


def exports(modules: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """``{name: module}`` from ``{module: names}``.

    >>> exports({"ragmeter._version": ["__version__"]})
    {'__version__': 'ragmeter._version'}
    """
    return {name: module for module, names in modules.items() for name in names}


def load(package: str, where: Mapping[str, str], name: str) -> Any:
    """The public ``name`` of ``package`` (imported from ``where[name]`` and kept in the
    package, so this runs once per name); ``AttributeError`` for any other name."""
    module = where.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    setattr(sys.modules[package], name, value)
    return value


def names(package: str, where: Mapping[str, str]) -> list[str]:
    """What ``dir(package)`` shows: what it holds and the names it loads on use."""
    return sorted({*vars(sys.modules[package]), *where})
