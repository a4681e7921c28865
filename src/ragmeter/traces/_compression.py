"""Trace exports as the bytes they hold: gzip- or zstd-compressed files, and the OpenTelemetry
collector's file exporter framing (each message preceded by its size in 4 bytes, big-endian:
what it writes with ``format: proto``, or with ``compression: zstd``, each message then
compressed on its own).

What a file is, is told by its first bytes (gzip ``1f 8b``, zstd ``28 b5 2f fd``, a frame's
size ``00 ...``), never by its name: ``spans.json`` may be compressed and ``spans.gz`` not.
gzip is read with the standard library; zstd with ``zstandard`` (``pip install
'ragmeter[otlp]'``) or, on Python 3.14 and later, ``compression.zstd``.
"""

from __future__ import annotations

import gzip
import importlib
import io
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from ragmeter.traces._span import TraceFileError

GZIP = b"\x1f\x8b"
ZSTD = b"\x28\xb5\x2f\xfd"
ZSTD_MISSING = (
    "reading zstd-compressed exports needs zstandard: pip install 'ragmeter[otlp]' (or "
    "decompress the file first: zstd -d FILE)"
)
_CHUNK = 1 << 16
#: A frame's payload starts like one of these: zstd, gzip, JSON, an OTLP protobuf message.
_PAYLOAD_STARTS = (ZSTD, GZIP, b"{", b"\n")


class _Chunks(io.RawIOBase):
    """A readable stream over an iterator of byte chunks; a chunk that fails to decompress
    is a :class:`TraceFileError` naming the file."""

    def __init__(self, chunks: Iterator[bytes], where: str) -> None:
        super().__init__()
        self._chunks = chunks
        self._where = where
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            try:
                self._pending = next(self._chunks)
            except StopIteration:
                return 0
            except (EOFError, zlib.error, gzip.BadGzipFile) as error:
                raise TraceFileError(_broken(self._where, "gzip", error)) from None
            except Exception as error:
                if type(error).__name__ == "ZstdError":  # zstandard's or compression.zstd's
                    raise TraceFileError(_broken(self._where, "zstd", error)) from None
                raise
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size


def _broken(where: str, what: str, error: BaseException) -> str:
    return (
        f"{where}: not readable as {what} ({error or 'the data ends too soon'}); the file is cut "
        "short or damaged: give it as it was exported"
    )


def _stream(chunks: Iterator[bytes], where: str | Path) -> io.BufferedReader:
    return io.BufferedReader(_Chunks(chunks, str(where)), buffer_size=_CHUNK)


def _reads(read: Callable[[int], bytes]) -> Iterator[bytes]:
    return iter(lambda: read(_CHUNK), b"")


def _zstd_reader(raw: BinaryIO) -> Callable[[int], bytes]:
    try:
        import zstandard
    except ImportError:
        if sys.version_info >= (3, 14):  # the standard library's (named so that the check
            # of declared imports, run on older Pythons, does not take it for a package)
            zstd = importlib.import_module("compression.zstd")
            return zstd.ZstdFile(raw).read  # type: ignore[no-any-return]
        raise ImportError(ZSTD_MISSING) from None
    reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    return reader.read


def _decompress(payload: bytes, where: str) -> bytes:
    """One frame's payload, decompressed when it is gzip or zstd."""
    if payload.startswith(GZIP) or payload.startswith(ZSTD):
        return _stream(_layer(io.BytesIO(payload)), where).read()
    return payload


def _layer(raw: BinaryIO) -> Iterator[bytes]:
    """The chunks of ``raw`` decompressed (gzip, zstd) or as they are."""
    head = raw.read(4)
    raw.seek(0)
    if head.startswith(GZIP):
        return _reads(gzip.GzipFile(fileobj=raw).read)
    if head == ZSTD:
        return _reads(_zstd_reader(raw))
    return _reads(raw.read)


def is_framed(head: bytes) -> bool:
    """Whether bytes start like the collector's framed messages: a 4-byte big-endian size
    (whose first byte no JSON, gzip, zstd or protobuf file starts with) and a payload that
    starts like zstd, gzip, JSON or an OTLP message."""
    return (
        len(head) >= 5
        and head[0] < 0x09
        and int.from_bytes(head[:4], "big") > 0
        and any(head[4:].startswith(start[: len(head) - 4]) for start in _PAYLOAD_STARTS)
    )


def frames(stream: BinaryIO, path: Path) -> Iterator[tuple[str, bytes]]:
    """``(where, payload)`` for each framed message of ``stream``, decompressed."""
    number = 0
    while True:
        size_bytes = stream.read(4)
        if not size_bytes:
            return
        number += 1
        where = f"{path}, message {number}"
        size = int.from_bytes(size_bytes, "big") if len(size_bytes) == 4 else -1
        payload = stream.read(size) if size >= 0 else b""
        if size < 0 or len(payload) < size:
            raise TraceFileError(
                f"{where}: cut short ({len(payload)} of {max(size, 0)} bytes; each message of "
                "the collector's file exporter is preceded by its size in 4 bytes): give the "
                "whole file"
            )
        yield where, _decompress(payload, where)


@contextmanager
def decoded(path: Path) -> Iterator[tuple[io.BufferedReader, bool]]:
    """``(stream, framed)``: the bytes of ``path`` decompressed, and whether they are the
    collector's framed messages (then read them with :func:`frames`)."""
    with path.open("rb") as raw:
        stream = _stream(_layer(raw), path)
        yield stream, is_framed(stream.peek(9)[:9])


@contextmanager
def open_export(path: Path) -> Iterator[BinaryIO]:
    """``path`` opened for reading its text, decompressed; framed messages (the collector's
    JSON, when it compressed each message) come one a line, as JSON lines."""
    with decoded(path) as (stream, framed):
        if framed:
            lines = (payload + b"\n" for _, payload in frames(stream, path))
            yield _stream(lines, path)
        else:
            yield stream


def head(path: Path, size: int = 64) -> bytes:
    """The first ``size`` bytes ``path`` holds, decompressed (of its first framed message when
    it is framed)."""
    with decoded(path) as (stream, framed):
        if framed:
            return next((payload[:size] for _, payload in frames(stream, path)), b"")
        return stream.read(size)
