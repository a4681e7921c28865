"""A generation's work directory: what it was started with, and every attempt so far."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WORK_FORMAT = 1


@dataclass
class WorkDir:
    path: Path | None

    def file(self, name: str) -> Path | None:
        return None if self.path is None else self.path / name

    def prepare(self, identity: dict[str, Any], resume: bool) -> None:
        if self.path is None:
            return
        marker = self.path / "identity.json"
        if self.path.exists() and any(self.path.iterdir()):
            if not resume:
                raise FileExistsError(
                    f"{self.path} holds an earlier generation; continue it with resume=True "
                    "(ragmeter generate --resume) or remove the folder to start over"
                )
            if marker.exists():
                recorded = json.loads(marker.read_text(encoding="utf-8"))
                changed = [k for k in identity if recorded.get(k) != identity[k]]
                if changed:
                    raise ValueError(
                        f"cannot resume {self.path}: {', '.join(changed)} changed since it "
                        "was started; remove the folder to start over"
                    )
        self.path.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps(identity, ensure_ascii=False, indent=1), encoding="utf-8")

    def read_attempts(self) -> dict[str, dict[str, Any]]:
        path = self.file("attempts.jsonl")
        if path is None or not path.exists():
            return {}
        attempts = {}
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                try:
                    record = json.loads(line)
                    attempts[record["key"]] = record
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a line cut short by a kill: that attempt is made again
        return attempts

    def append_attempt(self, record: dict[str, Any]) -> None:
        path = self.file("attempts.jsonl")
        if path is not None:
            with path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
