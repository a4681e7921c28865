"""``import_traces``: trace exports of a format read into samples."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragmeter.traces._span import TraceImport

#: The formats ``import_traces`` reads (``phoenix`` is ``openinference``; ``otlp``,
#: ``traceloop`` and ``openllmetry`` are ``otel``).
FORMATS: tuple[str, ...] = (
    "openinference",
    "phoenix",
    "otel",
    "otlp",
    "traceloop",
    "openllmetry",
    "langfuse",
    "langsmith",
)


def import_traces(
    format: str,
    paths: str | Path | Sequence[str | Path],
    *,
    since: str | dt.datetime | None = None,
    until: str | dt.datetime | None = None,
) -> TraceImport:
    """Read trace exports of ``format`` into samples, one per trace.

    ``since``/``until`` keep the traces that started in ``[since, until)`` (ISO 8601; a date
    alone as ``until`` keeps that whole day). What was not mapped, and why, is in
    ``result.unmapped``; ``result.summary()`` says it in words, ``result.to_dataset()`` gives
    the samples as a dataset.
    """
    from ragmeter.traces._formats import keep_between, parse_bound, reader

    read = reader(format)
    files = [paths] if isinstance(paths, str | Path) else list(paths)
    start = None if since is None else parse_bound(since)
    end = None if until is None else parse_bound(until, end=True)
    return keep_between(read(files), start, end)
