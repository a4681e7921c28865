"""A generation's work directory: what it was started with, and every attempt so far."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter._services import UsageLedger, replaced_atomically
from ragmeter.judge import Usage

WORK_FORMAT = 1
#: Seconds between two writes of the usage of the work in flight (as the runner's).
USAGE_WRITE_INTERVAL_S = 1.0


@dataclass
class InFlight:
    """The judge calls of the work under way (a chunk read, a question attempt, personas),
    each under its own sample id, written to ``in_flight_usage.json`` as they grow: a kill
    loses at most the last second's count, and the next session counts what the killed one
    sent for work no checkpoint holds (:meth:`WorkDir.prepare`), as ``ragmeter eval`` does.
    """

    path: Path | None
    ledger: UsageLedger | None = None
    flying: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    #: Set once the work dir is prepared (what a killed session left is settled by then).
    ready: bool = False

    @contextmanager
    def item(self, sample_id: str) -> Iterator[str]:
        """Work under ``sample_id``, whose calls count as in flight until the block ends
        (after the work's checkpoint is written); stopped by an error or an interruption, it
        stays in flight: the last write counts its calls for the next session."""
        self.flying.add(sample_id)
        yield sample_id
        self.flying.discard(sample_id)
        self.kept(sample_id)

    def kept(self, sample_id: str) -> None:
        """The finished calls of ``sample_id`` are in a checkpoint now: no longer in flight."""
        if self.ledger is not None:
            self.ledger.forget_sample(sample_id)
        if sample_id in self.written:
            self.write()

    def usage(self) -> dict[str, dict[str, Any]]:
        if self.ledger is None:
            return {}
        found = {sid: self.ledger.sample_usage(sid) for sid in sorted(self.flying)}
        return {sid: u.to_dict() for sid, u in found.items() if u.calls or u.cached_calls}

    def write(self) -> None:
        if self.path is None or not self.ready:
            return
        flying = self.usage()
        with replaced_atomically(self.path) as partial:
            partial.write_text(json.dumps(flying), encoding="utf-8")
        self.written = set(flying)

    async def write_as_it_grows(self) -> None:
        while True:
            await asyncio.sleep(USAGE_WRITE_INTERVAL_S)
            if self.flying or self.written:
                self.write()


@dataclass
class WorkDir:
    path: Path | None
    #: What earlier sessions spent on work that no checkpoint holds (a kill interrupted it).
    interrupted: Usage = field(default_factory=Usage)
    in_flight: InFlight = field(init=False)

    def __post_init__(self) -> None:
        self.in_flight = InFlight(self.file("in_flight_usage.json"))

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
        self._settle_usage()

    def _settle_usage(self) -> None:
        """The usage a killed session left in flight joins the interrupted usage of earlier
        sessions (paid for; its work is done again, from the cache where it was answered)."""
        interrupted_file, flying_file = self.file("interrupted_usage.json"), self.in_flight.path
        assert interrupted_file is not None and flying_file is not None
        total = Usage()
        if interrupted_file.exists():
            total = Usage(**json.loads(interrupted_file.read_text(encoding="utf-8")))
        left: dict[str, dict[str, Any]] = {}
        if flying_file.exists():
            try:
                left = json.loads(flying_file.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                left = {}  # written atomically: only a damaged disk leaves it so
        for used in left.values():
            total = total + Usage(**used)
        if left:
            with replaced_atomically(interrupted_file) as partial:
                partial.write_text(json.dumps(total.to_dict()), encoding="utf-8")
            flying_file.unlink()
        self.interrupted = total
        self.in_flight.ready = True

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
