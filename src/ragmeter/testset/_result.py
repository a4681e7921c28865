"""What a generation returns: the samples, their size accounting, the graph and the cost."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.judge import Usage
from ragmeter.steps import Persona
from ragmeter.testset._graph import KnowledgeGraph

if TYPE_CHECKING:
    from ragmeter.dataset import Dataset


@dataclass(frozen=True)
class GeneratedSample:
    """One test question with its reference answer and the chunks it was written from."""

    id: str
    user_input: str
    reference: str
    reference_contexts: tuple[str, ...]
    reference_context_ids: tuple[str, ...]
    synthesizer: str
    persona: str
    style: str
    length: str
    focus: str
    source_document_ids: tuple[str, ...]
    language: str
    #: ``easy``, ``medium`` or ``hard`` (see :mod:`ragmeter.testset._difficulty`).
    difficulty: str = ""
    #: False for an unanswerable question: its reference is an abstention, it has no
    #: reference contexts, and ``checked_context_ids`` are the chunks found not to answer it
    #: (its source chunk first, then the most similar others).
    answerable: bool = True
    checked_context_ids: tuple[str, ...] = ()
    #: A false-premise question's false assumption, which no source chunk supports.
    premise: str = ""
    #: A calculation question's arithmetic over the values of its chunks, e.g. ``120 - 85``.
    expression: str = ""

    def to_record(self) -> dict[str, Any]:
        """The sample as a JSON-ready record; the fields of other kinds of question
        (``checked_context_ids``, ``premise``, ``expression``) only when set."""
        record = asdict(self)
        for key in _LISTS:
            record[key] = list(record[key])
        for key in _ONLY_WHEN_SET:
            if not record[key]:
                del record[key]
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> GeneratedSample:
        values = dict(record)
        for key in _LISTS:
            if key in values:
                values[key] = tuple(values[key])
        return cls(**values)


_LISTS = (
    "reference_contexts",
    "reference_context_ids",
    "source_document_ids",
    "checked_context_ids",
)
_ONLY_WHEN_SET = ("checked_context_ids", "premise", "expression")


@dataclass
class SynthesizerAccount:
    """Per synthesizer: asked for (from the mix), planned after moving shortfalls, candidates
    available, attempts made, kept, and rejections by reason."""

    requested: int = 0
    planned: int = 0
    available: int = 0
    attempted: int = 0
    produced: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    why_few: str = ""
    #: Planned questions handed to other synthesizers (by name) and taken from them.
    gave: Counter[str] = field(default_factory=Counter)
    took: Counter[str] = field(default_factory=Counter)
    #: Whether it stopped with candidates left, at the limit of attempts per question.
    stopped: bool = False

    def explain(self, name: str) -> str | None:
        """Why this synthesizer produced other than its share of the mix, in words."""
        rejected = ", ".join(f"{count} {reason}" for reason, count in self.rejected.items())
        if self.produced < self.requested:
            why = (
                f"stopped after {self.attempted} attempts (the limit per question was reached)"
                if self.stopped
                else self.why_few
            )
            text = f"{name}: {self.produced} of {self.requested}: {why}"
            text += f"; rejected {rejected}" if rejected else ""
            if self.gave:
                text += "; " + ", ".join(f"{c} moved to {o}" for o, c in self.gave.items())
            return text
        if self.produced > self.requested:
            sources = ", ".join(f"{c} from {o}" for o, c in self.took.items())
            return f"{name}: {self.produced} instead of {self.requested} ({sources})"
        return None


@dataclass
class SizeAccounting:
    requested: int
    produced: int = 0
    synthesizers: dict[str, SynthesizerAccount] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "requested": self.requested,
            "produced": self.produced,
            "synthesizers": {  # the counters (rejected, gave, took) as plain dicts
                name: {k: dict(v) if isinstance(v, Counter) else v for k, v in vars(a).items()}
                for name, a in self.synthesizers.items()
            },
            "notes": list(self.notes),
        }


@dataclass
class GeneratedTestset:
    """The generated samples, the size accounting, the graph and what it all cost."""

    samples: list[GeneratedSample]
    accounting: SizeAccounting
    graph: KnowledgeGraph
    personas: list[Persona]
    usage: dict[str, Usage]
    prompt_versions: list[str]
    settings: dict[str, Any]

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[GeneratedSample]:
        return iter(self.samples)

    @property
    def total_usage(self) -> Usage:
        return sum(self.usage.values(), Usage())

    @property
    def judge_calls_per_sample(self) -> float | None:
        """Judge calls (cache hits excluded) per sample kept, graph building included."""
        return self.total_usage.calls / len(self.samples) if self.samples else None

    def to_records(self) -> list[dict[str, Any]]:
        return [sample.to_record() for sample in self.samples]

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the samples as JSONL, ready for ``ragmeter eval`` once responses are added."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        with temporary.open("w", encoding="utf-8") as out:
            for record in self.to_records():
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        temporary.replace(path)
        return path

    def to_dataset(self) -> Dataset:
        """A :class:`~ragmeter.Dataset`; synthesizer, difficulty, persona, style, length,
        language and answerable become metadata tags, so results break down by them."""
        from ragmeter.dataset import Dataset

        return Dataset.from_records(self.to_records())

    def report(self) -> dict[str, Any]:
        """The accounting, graph summary, personas and usage, as recorded in the work dir."""
        return {
            "accounting": self.accounting.to_dict(),
            "difficulty": dict(Counter(sample.difficulty for sample in self.samples)),
            "graph": self.graph.summary(),
            "personas": [str(p) for p in self.personas],
            "usage": {phase: usage.to_dict() for phase, usage in self.usage.items()},
            "judge_calls_per_sample": self.judge_calls_per_sample,
            "prompt_versions": self.prompt_versions,
            "settings": self.settings,
        }
