"""Read back an offline W&B run: its ``run-ID.wandb`` log of protobuf records (W&B 0.19+
writes the summary and config only there, not as JSON files), and its media files.

The log is W&B's LevelDB-style format: a 7-byte header (``:W&B``, magic, version), then
32 KiB blocks of records, each with a 7-byte header (CRC32, length, type: 1 whole, 2 first,
3 middle, 4 last piece); a block's tail too short for a header is padding.
"""

from __future__ import annotations

import json
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BLOCK = 32 * 1024
HEADER = struct.Struct("<IHB")


def records(path: Path) -> list[bytes]:
    raw = path.read_bytes()
    assert raw[:4] == b":W&B", f"{path} is not a W&B run log"
    out, pending, pos = [], b"", 7
    while pos + HEADER.size <= len(raw):
        left = BLOCK - pos % BLOCK
        if left < HEADER.size:
            pos += left
            continue
        _, length, kind = HEADER.unpack_from(raw, pos)
        if kind == 0:  # zero padding up to the end of the block
            pos += left
            continue
        data = raw[pos + HEADER.size : pos + HEADER.size + length]
        pos += HEADER.size + length
        if kind == 1:
            out.append(data)
        elif kind == 2:
            pending = data
        elif kind == 3:
            pending += data
        elif kind == 4:
            out.append(pending + data)
    return out


@dataclass
class OfflineRun:
    folder: Path
    run_id: str = ""
    project: str = ""
    name: str = ""
    job_type: str = ""
    tags: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    artifacts: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> type, files
    exit_code: int | None = None

    def media(self, kind: str) -> list[Path]:
        return sorted((self.folder / "files" / "media" / kind).glob("*"))

    def table(self, key: str) -> dict[str, Any]:
        (path,) = [p for p in self.media("table") if p.name.startswith(f"{key}_")]
        return json.loads(path.read_text(encoding="utf-8"))


def _set(target: dict[str, Any], item: Any) -> None:
    keys = list(item.nested_key) or [item.key]
    for key in keys[:-1]:
        target = target.setdefault(key, {})
    target[keys[-1]] = json.loads(item.value_json)


def read_run(root: Path, *, wait_s: float = 10.0) -> OfflineRun:
    """The single offline run under ``root`` (the ``dir`` given to ``wandb.init``), once its
    log is complete: W&B's service may still be writing it when ``run.finish()`` returns."""
    (folder,) = sorted((root / "wandb").glob("offline-run-*"))
    (log,) = sorted(folder.glob("run-*.wandb"))
    deadline = time.monotonic() + wait_s
    run = _parse(folder, log)
    while run.exit_code is None and time.monotonic() < deadline:
        time.sleep(0.1)
        run = _parse(folder, log)
    assert run.exit_code is not None, f"{log} has no exit record after {wait_s} s"
    return run


def _parse(folder: Path, log: Path) -> OfflineRun:
    from wandb.proto import wandb_internal_pb2 as pb

    run = OfflineRun(folder)
    for data in records(log):
        record = pb.Record()
        record.ParseFromString(data)
        kind = record.WhichOneof("record_type")
        if kind == "run":
            r = record.run
            run.run_id, run.project, run.name = r.run_id, r.project, r.display_name
            run.job_type, run.tags = r.job_type, list(r.tags)
            for item in r.config.update:
                _set(run.config, item)
        elif kind == "config":
            for item in record.config.update:
                _set(run.config, item)
        elif kind == "summary":
            for item in record.summary.update:
                _set(run.summary, item)
        elif kind == "artifact":
            a = record.artifact
            run.artifacts[a.name] = {
                "type": a.type,
                "files": sorted(c.path for c in a.manifest.contents),
            }
        elif kind == "exit":
            run.exit_code = record.exit.exit_code
    return run
