"""Which reader each trace format uses, and the filter on the traces' start times.

A format's reader (``read_X(paths) -> TraceImport``) lives in its own module, imported only
when that format is asked for.
"""

from __future__ import annotations

import datetime as dt
import importlib
import itertools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import cast

from ragmeter.traces._build import as_utc
from ragmeter.traces._shapes import reading, time_field
from ragmeter.traces._span import TraceImport, Unmapped

#: format -> (module, reader function)
READERS: dict[str, tuple[str, str]] = {
    "openinference": ("ragmeter.traces._openinference", "read_openinference"),
    "otel": ("ragmeter.traces._otel", "read_otel"),
    "langfuse": ("ragmeter.traces._langfuse", "read_langfuse"),
    "langsmith": ("ragmeter.traces._langsmith", "read_langsmith"),
}
ALIASES: dict[str, str] = {
    "phoenix": "openinference",
    "opentelemetry": "otel",
    "otlp": "otel",
    "traceloop": "otel",  # OpenLLMetry's spans are OTLP: read with otel (issue 38)
    "openllmetry": "otel",
}
FORMATS: tuple[str, ...] = (*READERS, *ALIASES)

BEFORE_SINCE = "trace started before --since"
AFTER_UNTIL = "trace started at or after --until"
NO_TIME = "trace without a start time, so outside any --since/--until"


def canonical_format(format: str) -> str:
    """The format ``format`` names (``phoenix`` is ``openinference``); ``ValueError`` naming
    the formats known."""
    name = ALIASES.get(format.lower(), format.lower())
    if name not in READERS:
        raise ValueError(f"unknown trace format {format!r}: give one of {', '.join(FORMATS)}")
    return name


def reader(format: str) -> Callable[[Sequence[str | Path]], TraceImport]:
    """The reader of ``format`` (or an alias); ``ValueError`` naming the formats known."""
    name = canonical_format(format)
    module, function = READERS[name]
    try:
        found = getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError):
        raise ValueError(
            f"the trace format {name!r} is not available in this installation"
        ) from None
    return cast(Callable[[Sequence[str | Path]], TraceImport], found)


def parse_bound(value: str | dt.datetime, *, end: bool = False) -> dt.datetime:
    """``--since``/``--until`` as a UTC time. A date alone is its midnight; as an ``end``
    (``--until``) it is the midnight after, so ``--until 2026-01-31`` keeps that day."""
    if isinstance(value, dt.datetime):
        return as_utc(value)
    text = value.strip()
    try:
        if len(text) == 10:  # YYYY-MM-DD
            day = dt.date.fromisoformat(text)
            moment = dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc)
            return moment + dt.timedelta(days=1) if end else moment
        return as_utc(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        raise ValueError(
            f"not an ISO 8601 date or time: {value!r}; give e.g. 2026-01-31 or "
            "2026-01-31T14:00:00Z (a time without a zone is UTC)"
        ) from None


def keep_between(
    result: TraceImport, since: dt.datetime | None, until: dt.datetime | None
) -> TraceImport:
    """The samples whose trace started in ``[since, until)``; the others become
    :class:`Unmapped` entries, so the summary says how many the window left out."""
    if since is None and until is None:
        return result
    kept = []
    for sample in result.samples:
        # the trace's start, or (a trace without one) a timestamp its own metadata gives
        with reading(f"trace {sample.get('id')!r}, metadata"):
            moment = time_field(sample.get("metadata") or {}, "timestamp")
        reason = None
        if moment is None:
            reason = NO_TIME
        elif since is not None and moment < since:
            reason = BEFORE_SINCE
        elif until is not None and moment >= until:
            reason = AFTER_UNTIL
        if reason is None:
            kept.append(sample)
        else:
            result.unmapped.append(Unmapped(reason, trace_id=str(sample.get("id"))))
    result.samples = kept
    return result


#: Fields only one tool's records carry, the format each says; the first found decides.
_MARKS: tuple[tuple[str, frozenset[str]], ...] = (
    ("otel", frozenset({"resourceSpans", "scopeSpans"})),
    ("langsmith", frozenset({"run_type", "dotted_order", "child_runs", "parent_run_id"})),
    ("openinference", frozenset({"context.span_id", "context.trace_id", "span_kind"})),
    (
        "langfuse",
        frozenset(
            {"traceId", "observations", "parentObservationId", "parent_observation_id"}
            | {"startTime", "sessionId", "expectedOutput"}
        ),
    ),
)


def guess_format(paths: Sequence[str | Path], records: int = 20) -> str | None:
    """The trace format the first ``records`` records of ``paths`` look like (OTLP's
    ``resourceSpans``, LangSmith's ``run_type``, Phoenix's ``context.span_id``, Langfuse's
    ``traceId``...), or None: to name the right format when the one asked for read nothing.
    A file that cannot be read says nothing."""
    from ragmeter.traces._otlp_proto import looks_like_protobuf
    from ragmeter.traces._shapes import read_records

    if any(looks_like_protobuf(Path(path)) for path in paths):
        return "otel"  # OTLP protobuf (issue 38)
    for path in paths:
        try:
            read = read_records(Path(path), list_keys=("data", "runs"))
            for _, record in itertools.islice(read, max(records, 1)):
                found = _format_of(record)
                if found is not None:
                    return found
        except (OSError, ValueError, ImportError):
            continue
    return None


def _format_of(record: object) -> str | None:
    if not isinstance(record, Mapping):
        return None
    keys = set(record)
    context = record.get("context")
    if isinstance(context, Mapping) and "span_id" in context:
        keys.add("context.span_id")
    if isinstance(record.get("trace"), Mapping) or isinstance(record.get("traces"), list):
        keys.add("observations")  # a Langfuse trace or session download
    return next((name for name, marks in _MARKS if keys & marks), None)
