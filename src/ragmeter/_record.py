"""A record of some of an object's attributes, each key written once."""

from __future__ import annotations

from typing import Any


def attributes(obj: object, *names: str) -> dict[str, Any]:
    """``{name: obj.name}`` for each of ``names``, in that order (properties too).

    >>> from types import SimpleNamespace
    >>> attributes(SimpleNamespace(a=1, b=2), "b", "a")
    {'b': 2, 'a': 1}
    """
    return {name: getattr(obj, name) for name in names}
