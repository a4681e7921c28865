"""Command-line values read without pydantic where that changes nothing.

Typer (0.29) checks every value given to a command, defaults included, through a pydantic
``TypeAdapter``: pydantic (0.1-0.2 s) loads for ``ragmeter show RUN``, which needs none of
it. The values ragmeter's commands take are text, flags, whole numbers, numbers, paths and
lists of them; :func:`install` has typer read those here, the way its adapters read them, and
hands anything else to typer's own coercion: another type, a value that does not read
plainly (so that its error message is typer's), a number out of its range, a clamp.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args, get_origin

_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_LEAVES = (str, bool, int, float, Path)


class _Unread(Exception):
    """A value this module does not read: typer's coercion reads it."""


def _in_range(number: float, info: Any) -> bool:
    return (info.min is None or number >= info.min) and (info.max is None or number <= info.max)


def _leaf(kind: type, value: Any, param: Any, ctx: Any) -> Any:
    info = param.type_descriptor.parameter_info
    if kind is str:
        if isinstance(value, str):
            return value
    elif kind is bool:
        if isinstance(value, bool):
            return value
    elif kind is int:
        whole = value if type(value) is int else None
        if isinstance(value, str) and _INT.fullmatch(value):
            whole = int(value)
        if whole is not None and _in_range(whole, info):
            return whole
    elif kind is float:
        number = float(value) if type(value) in (int, float) else None
        if isinstance(value, str) and _FLOAT.fullmatch(value):
            number = float(value)
        if number is not None and _in_range(number, info):
            return number
    elif kind is Path and isinstance(value, (str, Path)):
        from typer._param_types import coerce_cli_path

        # What typer does, given the path as a Path (from text it would ask pydantic).
        return coerce_cli_path(
            Path(value), info, path_type=info.path_type or Path, param=param, ctx=ctx
        )
    raise _Unread


class _Light:
    """A parameter's coercion: plain values here, the rest by typer's (built when needed)."""

    def __init__(self, descriptor: Any, kind: type, many: bool, full: Any) -> None:
        self.descriptor, self.kind, self.many, self._full = descriptor, kind, many, full
        self._built: Any = None

    def full(self) -> Any:
        if self._built is None:
            self._built = self._full(self.descriptor)
        return self._built

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        many = self.many or param.multiple or param.nargs == -1
        if value is None:
            return () if many else None
        try:
            if many:
                if not isinstance(value, (list, tuple)):
                    raise _Unread
                return [_leaf(self.kind, item, param, ctx) for item in value]
            return _leaf(self.kind, value, param, ctx)
        except _Unread:
            return self.full().coerce(value, param=param, ctx=ctx)


def light_runtime_param(descriptor: Any, full: Any) -> Any:
    """The coercion of a parameter of type ``descriptor``: :class:`_Light` for text, whole
    numbers, numbers and paths (and lists of one of them), else ``full(descriptor)``."""
    info = descriptor.parameter_info
    annotation = descriptor.annotation
    many = get_origin(annotation) is list
    kind = get_args(annotation)[0] if many else annotation
    plain = (
        descriptor.file_annotation is None
        and info.parser is None
        and not getattr(info, "clamp", False)
        and kind in _LEAVES
        and (kind is Path or info.path_type is None)
    )
    return _Light(descriptor, kind, many, full) if plain else full(descriptor)


def install() -> None:
    """Have typer coerce plain values with :func:`light_runtime_param` (once; a typer
    without the hook this relies on is left as it is)."""
    import typer.core

    full = getattr(typer.core, "build_runtime_param", None)  # typer 0.29's hook
    if full is None or getattr(full, "_ragmeter_light", False):
        return

    def build(descriptor: Any) -> Any:
        return light_runtime_param(descriptor, full)

    build._ragmeter_light = True  # type: ignore[attr-defined]
    typer.core.build_runtime_param = build  # type: ignore[attr-defined]
