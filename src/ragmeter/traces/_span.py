"""One span of a trace, in a shape every tracing tool's export is read into.

Each format module (OpenInference / Phoenix, OpenTelemetry GenAI, Langfuse, LangSmith) turns
its records into :class:`Span` objects; one builder (``_build.py``) turns the spans of each
trace into a sample. Nothing a format reads is dropped silently: what cannot become a span
or a sample field is an :class:`Unmapped` entry that says why.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ragmeter.dataset import Dataset

#: What a span did, as the builder needs it: the root (question in, answer out), retrieval,
#: reranking, a model call, or anything else (kept only for counting).
SpanKind = Literal["chain", "agent", "retriever", "reranker", "llm", "embedding", "tool", "other"]


@dataclass(frozen=True)
class Document:
    """A retrieved (or reranked) document, in the order the span returned it."""

    content: str | None = None
    id: str | None = None
    score: float | None = None


@dataclass
class Span:
    """One unit of work in a trace, with the fields the builder maps to a sample.

    ``input`` / ``output`` are text (a format unwraps its message or JSON shapes into the
    question and the answer); ``documents`` are a retriever's or reranker's output in rank
    order and ``input_documents`` a reranker's input. ``attributes`` keeps the span's own
    attributes for metadata and for explaining what was not mapped.
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: SpanKind = "other"
    start: dt.datetime | None = None
    end: dt.datetime | None = None
    input: str | None = None
    output: str | None = None
    documents: list[Document] = field(default_factory=list)
    input_documents: list[Document] = field(default_factory=list)
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    session_id: str | None = None
    user_id: str | None = None
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # the span's error status / message, if it failed
    attributes: dict[str, Any] = field(default_factory=dict)

    @property
    def latency_s(self) -> float | None:
        if self.start is None or self.end is None:
            return None
        return (self.end - self.start).total_seconds()


@dataclass(frozen=True)
class Unmapped:
    """A record, span or trace that did not become (part of) a sample, and why."""

    reason: str
    trace_id: str | None = None
    span_id: str | None = None
    source: str | None = None  # the file (and line or row) it came from


@dataclass
class TraceImport:
    """What an import produced: sample records (ragmeter field names, tags in ``metadata``)
    and everything that was not mapped, counted and explained."""

    format: str
    samples: list[dict[str, Any]] = field(default_factory=list)
    unmapped: list[Unmapped] = field(default_factory=list)
    n_records: int = 0  # records read from the files (spans, observations, runs, traces)
    n_traces: int = 0

    def to_dataset(self) -> Dataset:
        """The samples as a :class:`~ragmeter.dataset.Dataset` (ids are the trace ids). A
        sample that is not valid (metadata nested too deeply, say) leaves ``samples`` for
        ``unmapped``, with the problem as its reason: one trace does not stop the others."""
        from ragmeter.dataset import Dataset

        dataset = Dataset.from_records(
            self.samples, source=f"{self.format} traces", skip_invalid=True
        )
        if dataset.invalid:
            invalid = {row.row - 1 for row in dataset.invalid}
            for row in dataset.invalid:
                trace_id = str(self.samples[row.row - 1].get("id"))
                self.unmapped += [
                    Unmapped(
                        f"trace whose sample is not valid: {p.field or 'the sample'}: "
                        f"{p.message} (fix: {p.fix})",
                        trace_id=trace_id,
                    )
                    for p in row.problems
                ]
            self.samples = [s for n, s in enumerate(self.samples) if n not in invalid]
        return dataset

    def unmapped_counts(self) -> dict[str, int]:
        """How many records were left out for each reason, the most common first."""
        return dict(Counter(u.reason for u in self.unmapped).most_common())

    def summary(self) -> str:
        """``N traces -> M samples; K not mapped`` and one line per reason with its count."""
        head = (
            f"{self.n_traces} traces -> {len(self.samples)} samples "
            f"(from {self.n_records} {self.format} records); "
            f"{len(self.unmapped)} not mapped"
        )
        lines = [head + (":" if self.unmapped else "")]
        lines += [f"  {n} x {reason}" for reason, n in self.unmapped_counts().items()]
        return "\n".join(lines)


class TraceFileError(ValueError):
    """A trace export that cannot be read: the message names the file, the line or record,
    and the fix."""
