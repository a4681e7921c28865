"""OTLP protobuf trace files, read into the objects an OTLP/JSON file holds.

Two files are read: an OTLP/HTTP request body (``ExportTraceServiceRequest``, the bytes an
exporter posts to ``/v1/traces``; ``TracesData`` is the same message), and the collector's
file exporter with ``format: proto`` (each message preceded by its size, zstd-compressed or
not: see ``_compression``). Each message is decoded with ``opentelemetry-proto`` (``pip
install 'ragmeter[otlp]'``) and given to the OTLP/JSON reader as protobuf's JSON mapping
writes it (ids in base64, int64 as text, enums by name), which it reads too.

A file is protobuf when its first byte (decompressed) is ``0x0a``, the tag of the message's
first ``resourceSpans``, and it does not go on like JSON text (a ``{`` or ``[`` after white
space): the file's name does not decide.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragmeter.traces._compression import decoded, frames, head
from ragmeter.traces._shapes import check_export
from ragmeter.traces._span import TraceFileError

PROTO_MISSING = (
    "reading OTLP protobuf files needs opentelemetry-proto: pip install 'ragmeter[otlp]' (or "
    "have the collector's file exporter write JSON: format: json)"
)


def is_protobuf(path: Path) -> bool:
    """Whether ``path`` holds OTLP protobuf (its first byte ``0x0a``, not JSON after it)."""
    check_export(path)  # a FIFO or a device is refused before it is opened
    start = head(path)
    return start[:1] == b"\n" and start.lstrip(b" \t\r\n")[:1] not in (b"{", b"[")


def looks_like_protobuf(path: Path) -> bool:
    """:func:`is_protobuf`, False for a file that cannot be read: to guess a format."""
    try:
        return is_protobuf(path)
    except (OSError, ValueError, ImportError):
        return False


def protobuf_objects(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, {"resourceSpans": [...]})`` for each message of an OTLP protobuf file."""
    try:
        from google.protobuf.json_format import MessageToDict
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
    except ImportError:
        raise ImportError(PROTO_MISSING) from None
    with decoded(path) as (stream, framed):
        messages = frames(stream, path) if framed else iter([(str(path), stream.read())])
        for where, payload in messages:
            request = ExportTraceServiceRequest()
            try:
                request.ParseFromString(payload)
            except (DecodeError, RecursionError) as error:
                raise TraceFileError(
                    f"{where}: not an OTLP protobuf trace message ({error}); give the request "
                    "body an OTLP/HTTP exporter sends (ExportTraceServiceRequest) or the "
                    "collector's file exporter output, as written"
                ) from None
            found: dict[str, Any] = MessageToDict(request)
            yield where, {"resourceSpans": found.get("resourceSpans", [])}
