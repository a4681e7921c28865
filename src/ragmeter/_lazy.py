"""Lazy packages (PEP 562): each public name declared once, imported on first use.

A package ``__init__.py`` imports its public names under ``if TYPE_CHECKING:``, each as a
redundant alias (``from ragmeter.stats._compare import compare as compare``, the form that
re-exports a name to mypy and IDEs), and ends with ``_lazy.attach(__name__, __file__)``.
That block is the one list: on first use (a name, ``dir()``, ``__all__``) it is read once,
with ``ast``, and the module that defines a name is imported when the name is. So importing
a package (``ragmeter.judge`` for its error types, say) does not load every client, model
and database driver behind it, and ``ragmeter --help`` and a retrieval-only evaluation stay
fast.
"""

from __future__ import annotations

import importlib
import sys
from functools import cache
from types import ModuleType
from typing import Any


def attach(package: str, file: str) -> ModuleType:
    """Give ``package`` (its source is ``file``) ``__getattr__``, ``__dir__`` and ``__all__``
    from the names it imports under ``if TYPE_CHECKING:``; returns the package."""
    module = sys.modules[package]

    @cache
    def where() -> dict[str, tuple[str, str]]:
        return declared(file)

    def __getattr__(name: str) -> Any:  # a loaded name is kept, so this runs once per name
        if name == "__all__":
            value: Any = sorted(where())
        elif name in where():
            origin, attribute = where()[name]
            value = getattr(importlib.import_module(origin, package), attribute)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(module), *where(), "__all__"})

    vars(module).update(__getattr__=__getattr__, __dir__=__dir__)
    return module


def declared(file: str) -> dict[str, tuple[str, str]]:
    """``{public name: (module, attribute)}``: what ``file`` imports under ``if TYPE_CHECKING:``.

    >>> declared(__file__)
    {}
    """
    import ast  # here: only a package in use pays for it

    with open(file, encoding="utf-8") as source:
        tree = ast.parse(source.read(), file)
    return {
        alias.asname or alias.name: ("." * node.level + (node.module or ""), alias.name)
        for block in tree.body
        if isinstance(block, ast.If)
        and isinstance(block.test, ast.Name)
        and block.test.id == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
