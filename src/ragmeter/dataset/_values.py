"""Metadata values of any type pandas, Parquet or Hugging Face produce, made strict JSON.

Everything downstream (the dataset fingerprint, run.db, results.jsonl, the report) writes
metadata as JSON, and strict JSON: no bare ``NaN`` or ``Infinity``. So each value is
converted once, when a sample is built:

- missing values (``None``, ``NaN``, ``pd.NA``, ``NaT``) become ``None``;
- ``±inf`` becomes the string ``"inf"`` / ``"-inf"`` (JSON has no number for it);
- numpy scalars become the Python number / bool / str they hold;
- dates, times and timestamps (``datetime``, ``pd.Timestamp``, ``np.datetime64``) become
  ISO 8601 strings, time zone kept;
- durations (``timedelta``, ``pd.Timedelta``, ``np.timedelta64``) become seconds (a float);
- ``Decimal`` becomes an ``int`` when integral (below 10^18), else a ``float`` (JSON numbers:
  digits past float precision are dropped; beyond float's range, its text), ``NaN`` ``None``,
  infinities ``"inf"``/``"-inf"``;
- ``bytes`` become text when they are valid UTF-8, else ``"base64:"`` + their base64;
- lists, tuples, sets and arrays become lists, mappings become objects with string keys, both
  converted recursively (sets sorted, for a stable fingerprint);
- a categorical cell is its category, converted as above (a text category stays text);
- anything else (periods, intervals, UUIDs, paths, ...) becomes ``str(value)``.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import os
import re
from collections.abc import Mapping
from typing import Any, cast

#: Metadata nested deeper than this is refused: it is a mistake, and would overflow the stack.
MAX_DEPTH = 100

_MISSING_TYPES = frozenset({"NAType", "NaTType"})
_PLAIN = frozenset({str, int, bool})


def _numpy(value: Any) -> Any:
    """A numpy scalar or array as plain Python (dates and durations handled apart)."""
    import numpy as np

    if isinstance(value, np.ndarray):
        if value.dtype.kind in "mMO":  # .tolist() turns ns datetimes into ints
            return list(value)  # its items are converted one by one
        return value.tolist()
    if isinstance(value, np.datetime64):
        if np.isnat(value):
            return None
        return str(np.datetime_as_string(value))
    if isinstance(value, np.timedelta64):
        if np.isnat(value):
            return None
        return float(value / np.timedelta64(1, "us")) / 1e6
    return value.item()


def _scalar(value: Any) -> Any:
    if isinstance(value, float):
        if math.isnan(value):
            return None
        return value if math.isfinite(value) else "inf" if value > 0 else "-inf"
    if isinstance(value, dt.datetime | dt.date | dt.time | dt.timedelta):
        if type(value).__name__ == "NaTType":
            return None
        return value.total_seconds() if isinstance(value, dt.timedelta) else value.isoformat()
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return None if value.is_nan() else ("inf" if value > 0 else "-inf")
        if value == value.to_integral_value() and value.adjusted() < 18:
            return int(value)
        number = float(value)
        return number if math.isfinite(number) else str(value)  # beyond float: keep the digits
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return "base64:" + base64.b64encode(raw).decode("ascii")
    if type(value).__name__ in _MISSING_TYPES:
        return None
    return str(value)


def json_safe(value: Any, depth: int = 0) -> Any:
    """``value`` as strict JSON (see the module docstring); raises ``ValueError`` past
    :data:`MAX_DEPTH` levels of nesting.

    >>> import datetime, decimal
    >>> json_safe({"t": datetime.date(2024, 1, 2), "d": decimal.Decimal("1.5"), "n": float("nan")})
    {'t': '2024-01-02', 'd': 1.5, 'n': None}
    >>> json_safe([b"caf\\xc3\\xa9", b"\\xff", float("inf"), {1: (2, 3)}])
    ['café', 'base64:/w==', 'inf', {'1': [2, 3]}]
    """
    if value is None or (isinstance(value, str | bool | int) and not hasattr(value, "dtype")):
        return value
    if depth > MAX_DEPTH:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
    if type(value).__module__ == "numpy":
        value = _numpy(value)
        if value is None or isinstance(value, str | bool | int):
            return value
    if isinstance(value, Mapping):
        return {
            key if isinstance(key, str) else str(json_safe(key, depth + 1)): json_safe(
                item, depth + 1
            )
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [json_safe(item, depth + 1) for item in value]
    if isinstance(value, set | frozenset):
        items = [json_safe(item, depth + 1) for item in value]
        return sorted(items, key=repr)
    if hasattr(value, "tolist") and not isinstance(value, str):  # pandas / arrow arrays
        try:
            listed = value.tolist()
        except (TypeError, ValueError):
            return _scalar(value)
        if listed is not value and isinstance(listed, list):
            return [json_safe(item, depth + 1) for item in listed]
    return _scalar(value)


def json_safe_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` with every value made strict JSON (unchanged when it already is)."""
    for value in metadata.values():
        if value is not None and type(value) not in _PLAIN:
            break
    else:
        return metadata
    return cast("dict[str, Any]", json_safe(metadata))


_SURROGATE = re.compile("[\ud800-\udfff]")
LONE_SURROGATE_FIX = (
    "write the character whole (both halves of a pair, e.g. \\ud83d\\ude00) or remove the "
    "lone half; re-export the data if a tool wrote it"
)


def _holds_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif item is None or isinstance(item, int | float):
            continue
        elif isinstance(item, list | tuple):
            stack += item
        elif isinstance(item, Mapping):
            stack += item.keys()
            stack += item.values()
        elif hasattr(item, "model_dump"):
            stack.append(item.model_dump())
    return False


def lone_surrogate(value: Any) -> str | None:
    """What is wrong when ``value`` holds a lone surrogate (``"\\ud800"`` from a JSON
    escape, a byte of a non-UTF-8 file name), which no UTF-8 file can hold: the problem, with
    where it is inside ``value`` (``at metadata.tags[2]``; a key holding one counts too);
    ``None`` when there is none. Walked without recursion, so any nesting is safe."""
    if not _holds_surrogate(value):  # the usual case, without building the places
        return None
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        texts: list[Any] = [item]
        if isinstance(item, Mapping):
            texts = list(item)
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in item.items())
        elif hasattr(item, "model_dump"):  # a chat message of a history
            stack.append((where, item.model_dump()))
        elif isinstance(item, list | tuple):
            stack.extend((f"{where}[{n}]", inner) for n, inner in enumerate(item))
        for text in texts:
            if isinstance(text, str) and not text.isascii() and (found := _SURROGATE.search(text)):
                at = f" at {ascii(where)[1:-1]}" if where else ""
                return (
                    f"text holds a lone surrogate \\u{ord(found.group()):04x}{at}: half of a "
                    "UTF-16 pair, not a character, so it cannot be written as UTF-8"
                )
    return None


def utf8_text(text: str | os.PathLike[str]) -> str:
    """``text`` (a message, a path: a dataset's ``source``) as UTF-8 can hold it: a lone
    surrogate, which is what a byte of a non-UTF-8 file name becomes in Python's ``str``, is
    shown as its escape (``\\udcff``), so every message and file that names it can be
    written."""
    return os.fspath(text).encode("utf-8", "backslashreplace").decode("utf-8")
