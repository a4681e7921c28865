"""OTLP protobuf files and gzip/zstd-compressed exports, told apart by their bytes.

The protobuf files are made here from the OTLP/JSON fixture recorded with the real
OpenTelemetry SDK (otel_openinference.jsonl): each line parsed into the
``ExportTraceServiceRequest`` an OTLP/HTTP exporter posts, then written the ways files hold
it: one request (an exporter's request body), and the collector's file exporter framing (each
message preceded by its size in 4 bytes, big-endian; with ``compression: zstd`` each message
compressed on its own, or, with its native compression, the whole stream). Each must give the
samples the JSON file gives.
"""

from __future__ import annotations

import base64
import gzip
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.traces import TraceImport, import_traces

zstandard = pytest.importorskip("zstandard")
pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")
from google.protobuf.json_format import ParseDict  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FIXTURES = Path(__file__).parent / "fixtures"
OTLP_JSON = FIXTURES / "otel_openinference.jsonl"
runner = CliRunner()


def _base64_ids(node: Any) -> Any:
    """OTLP/JSON's hex ids as protobuf's JSON mapping writes bytes (base64), to parse it."""
    if isinstance(node, dict):
        return {
            key: base64.b64encode(bytes.fromhex(value)).decode()
            if key in ("traceId", "spanId", "parentSpanId") and value
            else _base64_ids(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_base64_ids(item) for item in node]
    return node


def _messages() -> list[bytes]:
    lines = OTLP_JSON.read_text("utf-8").splitlines()
    return [
        ParseDict(_base64_ids(json.loads(line)), ExportTraceServiceRequest()).SerializeToString()
        for line in lines
    ]


def _framed(payloads: list[bytes]) -> bytes:
    return b"".join(len(p).to_bytes(4, "big") + p for p in payloads)


def _same(result: TraceImport) -> None:
    expected = import_traces("otel", OTLP_JSON)
    assert result.samples == expected.samples
    assert result.unmapped_counts() == expected.unmapped_counts()
    assert result.n_records == expected.n_records == 16


def test_one_otlp_protobuf_request_whatever_the_files_name(tmp_path: Path) -> None:
    request = ExportTraceServiceRequest()
    for message in _messages():
        request.MergeFromString(message)
    path = tmp_path / "spans.json"  # the bytes decide, not the name
    path.write_bytes(request.SerializeToString())
    _same(import_traces("otel", path))


@pytest.mark.parametrize("compressed", ["none", "each message", "whole file"])
def test_the_collectors_file_exporter_with_format_proto(tmp_path: Path, compressed: str) -> None:
    messages = _messages()
    zstd = zstandard.ZstdCompressor()
    if compressed == "each message":  # compression: zstd (its long-standing behaviour)
        data = _framed([zstd.compress(m) for m in messages])
    elif compressed == "whole file":  # its native compression: one zstd stream
        data = zstd.compress(_framed(messages))
    else:
        data = _framed(messages)
    path = tmp_path / "traces"
    path.write_bytes(data)
    _same(import_traces("otel", path))


def test_the_collectors_json_compressed_message_by_message(tmp_path: Path) -> None:
    zstd = zstandard.ZstdCompressor()
    lines = OTLP_JSON.read_bytes().splitlines()
    path = tmp_path / "traces.json"
    path.write_bytes(_framed([zstd.compress(line) for line in lines]))
    _same(import_traces("otel", path))


@pytest.mark.parametrize(
    ("format", "fixture"),
    [
        ("otel", "otel_openinference.jsonl"),
        ("otel", "otel_genai.json"),
        ("openinference", "phoenix_spans.json"),
        ("langfuse", "langfuse_traces.json"),
        ("langsmith", "langsmith_runs.jsonl"),
    ],
)
@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_every_json_export_compressed(
    tmp_path: Path, format: str, fixture: str, codec: str
) -> None:
    raw = (FIXTURES / fixture).read_bytes()
    data = gzip.compress(raw) if codec == "gzip" else zstandard.ZstdCompressor().compress(raw)
    path = tmp_path / f"{fixture}.{'gz' if codec == 'gzip' else 'zst'}"
    path.write_bytes(data)
    expected = import_traces(format, FIXTURES / fixture)
    found = import_traces(format, path)
    assert found.samples == expected.samples
    assert found.unmapped_counts() == expected.unmapped_counts()


def _invoke(*args: str) -> Any:
    return runner.invoke(app, ["import", *args], env={"COLUMNS": "300"})


def test_damaged_files_are_one_error_line_naming_the_file(tmp_path: Path) -> None:
    cut_gzip = tmp_path / "cut.jsonl.gz"
    cut_gzip.write_bytes(gzip.compress(OTLP_JSON.read_bytes())[:300])
    cut_frame = tmp_path / "cut.bin"
    cut_frame.write_bytes(_framed(_messages())[:500])
    not_proto = tmp_path / "bad.pb"
    not_proto.write_bytes(b"\n\x05garbage, not a protobuf message")
    cases = [
        (cut_gzip, "not readable as gzip"),
        (cut_frame, "cut short"),
        (not_proto, "not an OTLP protobuf trace message"),
    ]
    for path, expected in cases:
        done = _invoke("otel", str(path), "-o", str(tmp_path / "out.jsonl"))
        assert done.exit_code == 2, done.output
        assert str(path) in done.output and expected in done.output, done.output
        assert "Traceback" not in done.output
    assert not (tmp_path / "out.jsonl").exists()


def test_a_protobuf_file_given_as_another_format_names_otel(tmp_path: Path) -> None:
    path = tmp_path / "traces.bin"
    path.write_bytes(_framed(_messages()))
    done = _invoke("langsmith", str(path), "-o", str(tmp_path / "out.jsonl"))
    assert done.exit_code == 2, done.output
    assert "look like an OpenTelemetry (OTLP) export" in done.output
    assert f"ragmeter import otel {path}" in done.output


def test_without_the_packages_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proto = tmp_path / "one.pb"
    proto.write_bytes(_messages()[0])
    packed = tmp_path / "lines.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress(OTLP_JSON.read_bytes()))
    monkeypatch.setitem(
        sys.modules, "opentelemetry.proto.collector.trace.v1.trace_service_pb2", None
    )
    monkeypatch.setitem(sys.modules, "zstandard", None)
    done = _invoke("otel", str(proto), "-o", str(tmp_path / "out.jsonl"))
    assert done.exit_code == 2, done.output
    assert "needs opentelemetry-proto: pip install 'ragmeter[otlp]'" in done.output
    if sys.version_info < (3, 14):  # 3.14 reads zstd with compression.zstd
        done = _invoke("otel", str(packed), "-o", str(tmp_path / "out.jsonl"))
        assert done.exit_code == 2, done.output
        assert "needs zstandard: pip install 'ragmeter[otlp]'" in done.output


def test_the_command_writes_the_samples_of_a_compressed_protobuf_file(tmp_path: Path) -> None:
    path = tmp_path / "traces.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(_framed(_messages())))
    out = tmp_path / "samples.jsonl"
    done = _invoke("otel", str(path), "-o", str(out))
    assert done.exit_code == 0, done.output
    assert done.output.startswith("5 traces -> 4 samples (from 16 otel records)")
    written = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert written == import_traces("otel", OTLP_JSON).samples
