"""Why an import gave no sample: what the files' records carry, against what the format's
reader maps, so that a user sees which instrumentation their traces come from."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

#: How each format is called in messages.
NAMES: dict[str, str] = {
    "otel": "OpenTelemetry (OTLP)",
    "openinference": "Phoenix / OpenInference",
    "langfuse": "Langfuse",
    "langsmith": "LangSmith",
}
#: What each format's reader maps, said when a file of it gave nothing.
READS: dict[str, str] = {
    "otel": (
        "spans with OpenInference attributes (openinference.span.kind, input.value), the GenAI "
        "conventions (gen_ai.operation.name, gen_ai.input.messages, gen_ai.prompt) or "
        "OpenLLMetry's (traceloop.span.kind, traceloop.entity.input, llm.request.type)"
    ),
    "openinference": (
        "Phoenix span records (context.span_id, span_kind, attributes.input.value...)"
    ),
    "langfuse": "Langfuse traces and observations (id, type, input, output, traceId...)",
    "langsmith": "LangSmith runs (id, run_type, inputs, outputs, trace_id...)",
}
_SHOWN = 6


def format_name(format: str) -> str:
    """``otel`` -> ``OpenTelemetry (OTLP)``..., for messages."""
    return NAMES.get(format, format)


def nothing_read(format: str, paths: Sequence[str | Path], records: int = 2000) -> str:
    """What the first ``records`` records of ``paths`` carry (the attribute names of OTLP
    spans, the fields of other records; by namespace, the most common first) and what a
    ``format`` reader maps: why nothing became a sample. Empty when nothing can be read."""
    counts: Counter[str] = Counter()
    seen = 0
    try:
        for keys in _keys(format, paths):
            counts.update({_namespace(key) for key in keys})
            seen += 1
            if seen >= records:
                break
    except (OSError, ValueError, ImportError):
        pass
    reads = READS.get(format, "")
    if not seen:
        return f"no record read; the format reads {reads}" if reads else ""
    what = "spans" if format == "otel" else "records"
    common = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:_SHOWN]
    shown = ", ".join(f"{name} ({n})" for name, n in common)
    more = len(counts) - _SHOWN
    return (
        f"the {seen} {what} read carry {shown}{f' and {more} more' if more > 0 else ''}; "
        f"the format reads {reads}"
    )


def _namespace(key: str) -> str:
    """``http.request.method`` -> ``http.*``; a key without a dot as it is."""
    head, dot, _ = key.partition(".")
    return f"{head}.*" if dot else key


def _keys(format: str, paths: Sequence[str | Path]) -> Iterator[set[str]]:
    """The attribute names of each OTLP span, or the field names of each record."""
    if format == "otel":
        from ragmeter.traces._otel import _objects, _raw_spans, key_values

        for path in map(Path, paths):
            for where, data in _objects(path):
                if not isinstance(data, Mapping):
                    continue
                for _, raw in _raw_spans(data, where):
                    if isinstance(raw, Mapping):
                        yield set(key_values(raw.get("attributes")))
        return
    from ragmeter.traces._shapes import read_records

    for path in map(Path, paths):
        for _, record in read_records(path, list_keys=("data", "runs", "observations")):
            if isinstance(record, Mapping):
                yield {str(key) for key in record}
