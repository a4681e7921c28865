"""What an evaluation produced: per-sample results, per-metric aggregates and the run config."""

from __future__ import annotations

import csv
import html
import json
import re
import statistics
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter._services import fewer_collections
from ragmeter.dataset import SAMPLE_FIELDS, InvalidRow, Problem
from ragmeter.metrics import Direction, MetricResult, Status
from ragmeter.results._conversations import (
    TURN_FIELD,
    ConversationAggregate,
    ConversationResult,
    conversation_aggregate,
    group_conversations,
)
from ragmeter.results._store import (
    STORE_FILE,
    RunDatabase,
    RunStorageError,
    StoredScores,
    json_text,
    tags_of,
    to_json,
)

if TYPE_CHECKING:
    import pandas as pd

    from ragmeter._bootstrap import Interval
    from ragmeter.dataset import Sample

RESULTS_FILE = "results.jsonl"
#: The sample fields :meth:`EvaluationResult.to_pandas` and ``to_csv`` add after ``id`` and
#: ``row`` (those the dataset has), as RAGAS's ``to_pandas()`` does: the inputs, user_input to
#: reference_context_ids, in the dataset's own order.
INPUT_COLUMNS: tuple[str, ...] = SAMPLE_FIELDS[1 : SAMPLE_FIELDS.index("relevance")]
SUMMARY_FILE = "summary.json"


@dataclass(frozen=True)
class MetricInfo:
    """A metric as it ran: its name, which way is better, and its settings."""

    name: str
    direction: Direction
    params: dict[str, Any] = field(default_factory=dict)
    kind: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "direction": self.direction.value}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MetricInfo:
        return cls(
            data["name"],
            Direction(data["direction"]),
            data.get("params") or {},
            data.get("kind", ""),
        )


@dataclass
class SampleResult:
    """Every metric's result for one sample, with the sample itself.

    One read back from a run (:meth:`from_dict`, a run's store) holds the sample's record
    as it was stored and builds ``sample`` (pydantic) when it is first read; until then
    :meth:`sample_value` reads a field from the record, so that a command showing a run's
    figures does without the model."""

    index: int
    row: int
    sample_id: str
    sample: Sample
    scores: dict[str, MetricResult]
    #: Judge usage of this sample's calls (shared by its judged metrics), when any.
    usage: dict[str, Any] | None = None

    @classmethod
    def _of_record(
        cls,
        index: int,
        row: int,
        sample_id: str,
        record: dict[str, Any],
        scores: dict[str, MetricResult],
        usage: dict[str, Any] | None = None,
    ) -> SampleResult:
        """The result of a sample stored as ``record`` (:meth:`Sample.to_record`, so
        validated when it was written): the sample is built when first read."""
        if not _is_canonical(record):
            return cls(index, row, sample_id, _sample_of(record), scores, usage)
        made = cls.__new__(cls)
        vars(made).update(
            index=index, row=row, sample_id=sample_id, scores=scores, usage=usage, _record=record
        )
        return made

    if not TYPE_CHECKING:  # a type checker sees ``sample`` as the field it is

        def __getattr__(self, name: str) -> Any:
            # Only reached for an attribute the instance lacks: ``sample`` not built yet.
            values = vars(self)
            record = values.get("_record") if name == "sample" else None
            if record is not None:
                # the sample is set before the record goes: a thread that finds neither
                # here finds the sample below
                values.setdefault("sample", _sample_of(record))
                values.pop("_record", None)
            if name == "sample" and "sample" in values:
                return values["sample"]
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getstate__(self) -> dict[str, Any]:
        # the fields, the sample built: pickled as one made with its sample, never the record
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def sample_value(self, name: str) -> Any:
        """The sample's field ``name`` (one of :data:`~ragmeter.dataset.SAMPLE_FIELDS`),
        as ``getattr(result.sample, name)`` gives it, read from the stored record while the
        sample is not built (``history``, whose messages the model makes, builds it).

        >>> stored = {"user_input": "q"}
        >>> result = SampleResult.from_dict({"index": 0, "row": 1, "id": "q1", "sample": stored,
        ...                                  "metrics": {}})
        >>> result.sample_value("user_input"), result.sample_value("metadata")
        ('q', {})
        """
        record = vars(self).get("_record")
        if record is None or "sample" in vars(self) or name not in _RECORD_READ:
            return getattr(self.sample, name)
        return record.get(name, {} if name == "metadata" else None)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "index": self.index,
            "row": self.row,
            "id": self.sample_id,
            "sample": self.sample.to_record(),
            "metrics": {name: result.to_dict() for name, result in self.scores.items()},
        }
        if self.usage is not None:
            out["usage"] = self.usage
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SampleResult:
        """What :meth:`to_dict` wrote; its sample is built when first read (at once from a
        record in other names than ragmeter's, one written by hand say)."""
        return cls._of_record(
            data["index"],
            data["row"],
            data["id"],
            data["sample"],
            {name: MetricResult.from_dict(r) for name, r in data["metrics"].items()},
            data.get("usage"),
        )


#: :data:`SAMPLE_FIELDS` for look-ups.
_FIELD_SET = frozenset(SAMPLE_FIELDS)
#: The fields :meth:`SampleResult.sample_value` reads from a record as the sample holds them
#: (a conversation's ``history`` is made of the model's messages).
_RECORD_READ = _FIELD_SET - {"history"}


def _is_canonical(record: Any) -> bool:
    """Whether ``record`` is a dict of ragmeter's field names with its ``metadata`` (if any)
    a dict: what :meth:`Sample.to_record` writes."""
    return (
        isinstance(record, dict)
        and _FIELD_SET.issuperset(record)
        and isinstance(record.get("metadata", {}), dict)
    )


def _sample_of(record: Any) -> Sample:
    from ragmeter.dataset import Sample  # pydantic: only when a sample is read

    return Sample.model_validate(record)


@dataclass(frozen=True)
class Aggregate:
    """A metric over the run. ``mean`` and ``median`` cover the ok samples only; the counts
    say how many samples that is, so nothing failed, not applicable or not started is
    averaged away. ``n_not_started`` counts the results the run stopped before computing (a
    budget, a judge that refused its configuration, a kill): not failures, and a resumed
    run computes them."""

    metric: str
    direction: Direction
    n_total: int
    n_ok: int
    n_not_applicable: int
    n_failed: int
    mean: float | None
    median: float | None
    n_not_started: int = 0

    @property
    def coverage(self) -> float:
        """Share of samples that got a score."""
        return self.n_ok / self.n_total if self.n_total else 0.0

    def scored_of_total(self) -> str:
        """ "n=1/2": the samples that got a score (what ``mean`` covers) of all of them.

        >>> Aggregate("mrr", Direction.HIGHER_IS_BETTER, 2, 1, 0, 1, 0.5, 0.5).scored_of_total()
        'n=1/2'
        """
        return f"n={self.n_ok}/{self.n_total}"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "direction": self.direction.value, "coverage": self.coverage}


class Tally:
    """Counts and ok scores of one metric over some samples, one result at a time: what an
    :class:`Aggregate` is made of, in a few bytes per sample."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.ok_scores = array("d")

    @classmethod
    def of_stored(cls, stored: StoredScores) -> Tally:
        """The tally of a metric's scores as a run's store holds them."""
        tally = cls()
        tally.counts = stored.counts()
        tally.ok_scores = array("d", stored.ok_scores().tobytes())
        return tally

    def add(self, status: str, score: float | None) -> None:
        self.counts[status] += 1
        if status == Status.OK.value and score is not None:
            self.ok_scores.append(score)

    def aggregate(self, metric: MetricInfo) -> Aggregate:
        scores = self.ok_scores
        return Aggregate(
            metric=metric.name,
            direction=metric.direction,
            n_total=sum(self.counts.values()),
            n_ok=len(scores),
            n_not_applicable=self.counts[Status.NOT_APPLICABLE.value],
            n_failed=self.counts[Status.FAILED.value],
            mean=statistics.fmean(scores) if scores else None,
            median=statistics.median(scores) if scores else None,
            # A result the run never computed (it stopped) is counted, never absent.
            n_not_started=self.counts[Status.NOT_STARTED.value],
        )


def aggregate(
    metric: MetricInfo, results: Iterable[MetricResult | tuple[str, float | None]]
) -> Aggregate:
    """``metric`` over a run, from its results or their (status, score) pairs."""
    tally = Tally()
    for r in results:
        if isinstance(r, MetricResult):
            tally.add(r.status.value, r.score)
        else:
            tally.add(*r)
    return tally.aggregate(metric)


@dataclass(frozen=True)
class Group:
    """The samples of a run that carry one value of a tag, with every metric over them."""

    tag: str
    value: str
    n_samples: int
    aggregates: dict[str, Aggregate]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "aggregates": {n: a.to_dict() for n, a in self.aggregates.items()}}


#: A tag with more distinct values than this is an identifier, not a grouping.
MAX_GROUPS = 30
#: An automatic tag has at least this many samples per value on average (free text has ~1).
MIN_SAMPLES_PER_GROUP = 2.0
_ID_NAME = re.compile(r"(?:^|[^A-Za-z])[Ii][Dd][Ss]?$|[a-z]Ids?$")


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def is_automatic_tag(name: str, counts: dict[str, int]) -> bool:
    """Whether a metadata field is a grouping worth a breakdown without being named: 2 to
    :data:`MAX_GROUPS` distinct values with on average at least
    :data:`MIN_SAMPLES_PER_GROUP` samples each, values that are mostly not numbers (a score
    column such as a RAGAS export's ``faithfulness`` is a measurement, even as CSV text), and
    a name that does not end in ``id`` / ``ids`` (``source_document_ids``: identifiers, such
    as a multi-turn run's ``conversation_id``). A multi-turn run's ``turn`` is numbered yet a
    grouping (does quality drop over the turns?).

    >>> is_automatic_tag("question_type", {"single": 3, "multi": 2})
    True
    >>> is_automatic_tag("faithfulness", {"0.5": 2, "1.0": 3})
    False
    >>> is_automatic_tag("doc_ids", {"d1": 2, "d2": 2})
    False
    >>> is_automatic_tag("turn", {"1": 3, "2": 3, "3": 1})
    True
    """
    if not 2 <= len(counts) <= MAX_GROUPS or _ID_NAME.search(name):
        return False
    if sum(counts.values()) / len(counts) < MIN_SAMPLES_PER_GROUP:
        return False
    if name == TURN_FIELD:
        return True
    return sum(_numeric(value) for value in counts) * 2 <= len(counts)


def _value_order(values: Iterable[str]) -> list[str]:
    """Tag values sorted, numerically when all are whole numbers (turn 2 before turn 10)."""
    values = list(values)
    if all(v.isdigit() for v in values):
        return sorted(values, key=lambda v: (int(v), v))
    return sorted(values)


class EvaluationResult:
    """Results of one evaluation run, in dataset order.

    Backed by the run's store (``run.db``) when it comes from :func:`ragmeter.evaluate` or
    :meth:`load`: iterating streams samples from disk and aggregates read only the scores,
    so a large run need not fit in memory; ``samples`` loads them all into a list.
    ``skipped`` lists rows left out as invalid.
    """

    def __init__(
        self,
        samples: list[SampleResult] | None = None,
        metrics: list[MetricInfo] | None = None,
        config: dict[str, Any] | None = None,
        skipped: list[InvalidRow] | None = None,
        *,
        store: RunDatabase | None = None,
    ) -> None:
        if samples is None and store is None:
            raise ValueError("give the samples or the store that holds them")
        self._samples = samples
        self.metrics: list[MetricInfo] = list(metrics or [])
        self.config: dict[str, Any] = config or {}
        self.skipped: list[InvalidRow] = list(skipped or [])
        self.store = store
        self._aggregates: dict[str, Aggregate] | None = None
        self._score_columns: dict[str, StoredScores] = {}

    @classmethod
    def from_store(cls, store: RunDatabase) -> EvaluationResult:
        """The run recorded in ``store`` (its samples are read when needed)."""
        return cls(
            None,
            [MetricInfo.from_dict(m) for m in store.get_meta("metrics") or []],
            store.get_meta("config") or {},
            [_invalid_row(r) for r in store.get_meta("skipped") or []],
            store=store,
        )

    # -- samples ---------------------------------------------------------------------------
    @property
    def samples(self) -> list[SampleResult]:
        if self._samples is None:
            self._samples = list(self._stream())
        return self._samples

    def _missing(self) -> MetricResult:
        """The result of a metric the run never computed for a sample: not started (not
        failed: the run stopped first), with why and how to go on."""
        judge_error = self.config.get("judge_error")
        if judge_error:
            reason = f"not judged: {judge_error} (fix it, then resume the run)"
        elif (self.config.get("budget") or {}).get("stopped"):
            reason = (
                "not started: max_cost (--max-cost) stopped the run before this sample "
                "(resume the run with a higher max_cost)"
            )
        else:
            reason = "not started: the run stopped before this result (resume the run)"
        return MetricResult(None, Status.NOT_STARTED, reason=reason)

    def _stream(self) -> Iterator[SampleResult]:
        assert self.store is not None
        missing = self._missing()
        for index, row, sample_id, record, results, usage in self.store.iter_samples():
            scores = {
                m.name: MetricResult.from_dict(results[m.name]) if m.name in results else missing
                for m in self.metrics
            }
            yield SampleResult._of_record(index, row, sample_id, record, scores, usage)

    def judged_metrics(self) -> list[str]:
        """The run's metrics that a judge scored (those its record names a judge for), in
        the run's order: the ones people's labels can validate."""
        judges = self.config.get("judges") or {}
        return [m.name for m in self.metrics if m.name in judges]

    def sample_ids(self) -> list[str]:
        """Every sample's id in dataset order (from the run's store without reading the
        samples themselves)."""
        if self._samples is None and self.store is not None:
            return list(self.store.sample_ids())
        return [s.sample_id for s in self.samples]

    def _stored_lines(self) -> Iterator[str]:
        """The JSON text of :meth:`SampleResult.to_dict` of every sample, made from the stored
        JSON texts as they are (each record and result was stored as ``json.dumps`` of its
        ``to_dict()`` writes it): nothing is decoded, rebuilt or encoded again."""
        assert self.store is not None
        missing = to_json(self._missing().to_dict())
        keys = [(m.name, to_json(m.name)) for m in self.metrics]
        for index, row, sample_id, record, results, usage in self.store.iter_stored_json():
            metrics = ", ".join(f"{key}: {results.get(name, missing)}" for name, key in keys)
            used = "" if usage is None else f', "usage": {to_json(json.loads(usage))}'
            yield (
                f'{{"index": {index}, "row": {row}, "id": {to_json(sample_id)}, '
                f'"sample": {record}, "metrics": {{{metrics}}}{used}}}'
            )

    def __iter__(self) -> Iterator[SampleResult]:
        return iter(self._samples) if self._samples is not None else self._stream()

    def __len__(self) -> int:
        if self._samples is not None:
            return len(self._samples)
        assert self.store is not None
        return self.store.n_samples()

    def _pairs(self, metric: str) -> Iterator[tuple[str, float | None]]:
        if self._samples is None and self.store is not None:
            return self._stored_scores(metric).pairs()
        return ((s.scores[metric].status.value, s.scores[metric].score) for s in self.samples)

    def _stored_scores(self, metric: str) -> StoredScores:
        """``metric``'s (status, score) per sample, read from the store once (aggregates,
        intervals, breakdowns and diagnosis each read them) and kept in 9 bytes a sample."""
        column = self._score_columns.get(metric)
        if column is None:
            assert self.store is not None
            column = self._score_columns[metric] = self.store.scores(metric)
        return column

    @property
    def aggregates(self) -> dict[str, Aggregate]:
        """Per metric: mean and median of the ok scores, with coverage and counts."""
        if self._aggregates is None:
            self._aggregates = {
                m.name: (
                    Tally.of_stored(self._stored_scores(m.name)).aggregate(m)
                    if self._samples is None and self.store is not None
                    else aggregate(m, self._pairs(m.name))
                )
                for m in self.metrics
            }
        return self._aggregates

    def scores(self, metric: str) -> list[float | None]:
        """Per-sample scores of ``metric`` in dataset order (``None`` where not ok)."""
        if metric not in {m.name for m in self.metrics}:
            raise KeyError(
                f"no metric {metric!r} in this run; it has {[m.name for m in self.metrics]}"
            )
        if self._samples is None and self.store is not None:
            return self._stored_scores(metric).ok_or_none()
        return [
            score if status == Status.OK.value else None for status, score in self._pairs(metric)
        ]

    def repeat_scores(self, metric: str, *, soft: bool = False) -> list[list[float | None]]:
        """Per sample, the score of each judge repeat (a run with ``repeats`` R > 1; None
        where a repeat was not ok); a single score per sample for metrics not repeated.

        ``soft=True``: the scores computed from the judge's P(yes) instead of its yes/no
        verdicts, where the metric and judge give them (else an empty list for the sample).
        """
        if metric not in {m.name for m in self.metrics}:
            raise KeyError(
                f"no metric {metric!r} in this run; it has {[m.name for m in self.metrics]}"
            )
        key = "soft_repeats" if soft else "repeats"
        out: list[list[float | None]] = []
        for sample in self:
            result = sample.scores[metric]
            found = result.details.extra.get(key)
            out.append(list(found) if isinstance(found, list) else [] if soft else [result.score])
        return out

    def _tag_counts(self) -> dict[str, dict[str, int]]:
        if self._samples is None and self.store is not None:
            return self.store.tag_counts()
        counts: dict[str, dict[str, int]] = {}
        for s in self.samples:
            for tag, values in tags_of(s.sample_value("metadata")).items():
                for value in values:
                    counts.setdefault(tag, {}).setdefault(value, 0)
                    counts[tag][value] += 1
        return counts

    def _tagged(self, metric: str, tags: list[str]) -> Iterator[tuple[str, str, str, float | None]]:
        if self._samples is None and self.store is not None:
            yield from self.store.tagged_scores(metric, tags)
            return
        for s in self.samples:
            result = s.scores[metric]
            for tag, values in tags_of(s.sample_value("metadata")).items():
                if tag in tags:
                    for value in values:
                        yield tag, value, result.status.value, result.score

    def breakdowns(self, tags: Iterable[str] | None = None) -> dict[str, list[Group]]:
        """Every metric per value of each tag (sample ``metadata`` fields such as
        question_type, persona, synthesizer or source), groups sorted by value.

        Without ``tags``, the tags named when the run was made (``evaluate(tags=...)``,
        ``--tags``, kept in ``config["tags"]``), else every metadata field that
        :func:`is_automatic_tag` accepts: low-cardinality text or booleans, not scores,
        numbers, free text or ids. Tags that are named are used whatever their values.
        """
        counts = self._tag_counts()
        named = self.config.get("tags")
        if tags is None and isinstance(named, list):
            chosen = sorted(t for t in named if t in counts)  # rows that carried it may be gone
        elif tags is None:
            chosen = sorted(t for t, groups in counts.items() if is_automatic_tag(t, groups))
        else:
            chosen = sorted(tags)
            unknown = [t for t in chosen if t not in counts]
            if unknown:
                raise KeyError(
                    f"no sample carries tag(s) {unknown}; tags in this run: {sorted(counts)}"
                )
        if not chosen:
            return {}
        tallies: dict[tuple[str, str], dict[str, Tally]] = {}
        for m in self.metrics:
            for tag, value, status, score in self._tagged(m.name, chosen):
                tallies.setdefault((tag, value), {}).setdefault(m.name, Tally()).add(status, score)
        return {
            tag: [
                Group(
                    tag,
                    value,
                    counts[tag][value],
                    {
                        m.name: tallies.get((tag, value), {}).get(m.name, Tally()).aggregate(m)
                        for m in self.metrics
                    },
                )
                for value in _value_order(counts[tag])
            ]
            for tag in chosen
        }

    def conversations(self) -> list[ConversationResult]:
        """The run's conversations (samples with ``metadata["conversation_id"]``, one per
        assistant turn, numbered by ``metadata["turn"]``), in the order of their first turn,
        each with its turns in order and per metric the mean over its ok turns, its worst
        turn and its coverage. Empty for a single-turn run.

        >>> from ragmeter import evaluate
        >>> rows = [
        ...     {"id": f"{c}#{t}", "retrieved_context_ids": ret, "reference_context_ids": ["a"],
        ...      "metadata": {"conversation_id": c, "turn": t}}
        ...     for c, t, ret in [("A", 1, ["a"]), ("A", 2, ["b", "a"]), ("B", 1, ["b"])]
        ... ]
        >>> [(c.conversation_id, c.n_turns, c.metrics["mrr"].mean)
        ...  for c in evaluate(rows, ["mrr"]).conversations()]
        [('A', 2, 0.75), ('B', 1, 0.0)]
        """
        return group_conversations(self, self.metrics)

    def conversation_aggregates(
        self, *, level: float = 0.95, n_resamples: int = 10_000, seed: int = 0
    ) -> dict[str, ConversationAggregate]:
        """Per metric, the mean over conversations of each conversation's mean (so that long
        conversations do not dominate), with a bootstrap CI over conversations and how many
        conversations got no ok turn; empty for a single-turn run.

        With the rows of :meth:`conversations`: A's MRR is (1 + 1/2) / 2 = 0.75 and B's 0,
        so the conversation-level mean is (0.75 + 0) / 2 = 0.375, where the turn-level mean
        is (1 + 0.5 + 0) / 3 = 0.5.
        """
        found = self.conversations()
        if not found:
            return {}
        return {
            m.name: conversation_aggregate(
                m, found, level=level, n_resamples=n_resamples, seed=seed
            )
            for m in self.metrics
        }

    @property
    def usage(self) -> dict[str, Any]:
        """Judge usage and cost of the whole run (every session of a resumed run)."""
        return dict(self.config.get("usage") or {})

    # -- display ---------------------------------------------------------------------------
    def __repr__(self) -> str:
        means = [
            f"{name}={'n/a' if a.mean is None else f'{a.mean:.4f}'}"
            for name, a in self.aggregates.items()
        ]
        if len(means) > REPR_METRICS:
            means = [*means[:REPR_METRICS], f"+{len(means) - REPR_METRICS} more"]
        skipped = f", {len(self.skipped)} skipped" if self.skipped else ""
        return f"EvaluationResult({len(self)} samples{skipped}: {', '.join(means)})"

    def _repr_html_(self) -> str:
        """A compact summary for notebooks: per metric its mean with a 95% bootstrap CI (as
        ``ragmeter show`` computes it), coverage and direction; the samples, skipped rows,
        judge and usage. Self-contained HTML, every text escaped."""
        from ragmeter._bootstrap import bootstrap_ci  # numpy: only when shown

        def ci_of(metric: str) -> Interval | None:
            # as ragmeter.stats.estimate_means: BCa, seed 0, over the ok scores
            ok = [s for s in self.scores(metric) if s is not None]
            return bootstrap_ci(ok, n_resamples=REPR_CI_RESAMPLES) if len(ok) >= 2 else None

        cis = {m.name: ci_of(m.name) for m in self.metrics}
        unstarted = any(a.n_not_started for a in self.aggregates.values())
        e = html.escape
        cell = 'style="padding:2px 8px;text-align:{}"'
        titles = ["metric", "better", "mean", "95% CI", "ok / total", "failed", "n/a"]
        titles += ["not started"] if unstarted else []
        aligns = ["left", "center", *["right"] * (len(titles) - 2)]
        head = "".join(f"<th {cell.format(a)}>{e(title)}</th>" for title, a in zip(titles, aligns))
        rows = []
        for metric in self.metrics:
            agg = self.aggregates[metric.name]
            ci = cis[metric.name]
            values = [
                metric.name,
                "↑" if agg.direction is Direction.HIGHER_IS_BETTER else "↓",
                "—" if agg.mean is None else f"{agg.mean:.4f}",
                "—" if ci is None else f"{ci.low:.4f}–{ci.high:.4f}",
                f"{agg.n_ok:,} / {agg.n_total:,} ({agg.coverage:.0%})",
                f"{agg.n_failed:,}",
                f"{agg.n_not_applicable:,}",
                *([f"{agg.n_not_started:,}"] if unstarted else []),
            ]
            cells = (f"<td {cell.format(a)}>{e(text)}</td>" for text, a in zip(values, aligns))
            rows.append(f"<tr>{''.join(cells)}</tr>")
        lines = [
            f"{len(self):,} samples"
            + (f", {len(self.skipped):,} rows skipped as invalid" if self.skipped else "")
        ]
        lines += _service_lines(self.config, self.usage)
        footer = "".join(f"<div>{e(line)}</div>" for line in lines)
        return (
            '<div class="ragmeter-result" style="font-size:0.9em">'
            "<div><strong>EvaluationResult</strong></div>"
            '<table style="border-collapse:collapse">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
            f'<div style="margin-top:4px;color:#555">{footer}</div></div>'
        )

    # -- export ----------------------------------------------------------------------------
    def to_jsonl(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = (
            self._stored_lines()
            if self._samples is None and self.store is not None
            else (to_json(sample.to_dict()) for sample in self)
        )
        with path.open("w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line + "\n")
        return path

    def _input_fields(self) -> list[str]:
        """The fields of :data:`INPUT_COLUMNS` that some sample holds, in that order (one
        pass over the samples, stopped once every one was seen)."""
        found: set[str] = set()
        for s in self:
            found.update(f for f in INPUT_COLUMNS if f not in found and s.sample.has(f))
            if len(found) == len(INPUT_COLUMNS):
                break
        return [f for f in INPUT_COLUMNS if f in found]

    def _flat_rows(
        self, inputs: list[str] | None = None, *, as_json: bool = False
    ) -> Iterator[dict[str, Any]]:
        for s in self:
            row: dict[str, Any] = {"id": s.sample_id, "row": s.row}
            for name in inputs or ():
                value = getattr(s.sample, name)
                if isinstance(value, list):
                    value = list(value)
                    if as_json:
                        value = json.dumps(value, ensure_ascii=False)
                row[name] = value
            for m in self.metrics:
                result = s.scores[m.name]
                row[m.name] = result.score
                row[f"{m.name}:status"] = result.status.value
                row[f"{m.name}:reason"] = result.reason or result.error
            yield row

    def _columns(self, inputs: list[str]) -> list[str]:
        return ["id", "row", *inputs] + [
            f"{m.name}{suffix}" for m in self.metrics for suffix in ("", ":status", ":reason")
        ]

    def to_csv(self, path: str | Path) -> Path:
        """One row per sample: its id and row, the inputs the dataset has
        (:data:`INPUT_COLUMNS`; lists as JSON text), then each metric's score, status and
        reason or error."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        inputs = self._input_fields()
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=self._columns(inputs))
            writer.writeheader()
            writer.writerows(self._flat_rows(inputs, as_json=True))
        return path

    def to_pandas(self) -> pd.DataFrame:
        """One row per sample, the columns of :meth:`to_csv` (lists kept as lists)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_pandas needs pandas: pip install 'ragmeter[pandas]'") from None
        inputs = self._input_fields()
        return pd.DataFrame(list(self._flat_rows(inputs)), columns=self._columns(inputs))

    def summary(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "metrics": [m.to_dict() for m in self.metrics],
            "aggregates": {name: a.to_dict() for name, a in self.aggregates.items()},
            "breakdowns": {
                tag: [g.to_dict() for g in groups] for tag, groups in self.breakdowns().items()
            },
            "n_samples": len(self),
            "skipped": [r.to_dict() for r in self.skipped],
        }

    def save(self, run_dir: str | Path) -> Path:
        """Write ``results.jsonl`` (per sample) and ``summary.json`` into ``run_dir``."""
        run_dir = Path(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        with fewer_collections():
            self.to_jsonl(run_dir / RESULTS_FILE)
        (run_dir / SUMMARY_FILE).write_text(json_text(self.summary(), indent=2), encoding="utf-8")
        return run_dir

    @classmethod
    def load(cls, run_dir: str | Path) -> EvaluationResult:
        """Read back a run directory: its ``run.db`` when there is one, else the files
        written by :meth:`save`."""
        run_dir = Path(run_dir)
        store = run_dir / STORE_FILE
        # an empty run.db (a run stopped as it made it) is no run: opening it would make one
        empty = store.is_file() and store.stat().st_size == 0
        if store.exists() and not empty:
            return cls.from_store(RunDatabase.in_dir(run_dir))
        summary_path = run_dir / SUMMARY_FILE
        if empty and not summary_path.exists():
            raise RunStorageError(
                f"{store} is empty: the run stopped before it recorded anything; run the "
                "evaluation again",
                store,
                corrupt=True,
            )
        if not summary_path.exists():
            raise FileNotFoundError(
                f"{str(run_dir)!r} is not a ragmeter run directory (no {STORE_FILE} or "
                f"{SUMMARY_FILE}); give the directory passed to --output"
            )
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        with (run_dir / RESULTS_FILE).open(encoding="utf-8") as handle:
            samples = [SampleResult.from_dict(json.loads(line)) for line in handle if line.strip()]
        for sample in samples:  # a file that may have been edited is checked as it is read
            _ = sample.sample
        return cls(
            samples,
            [MetricInfo.from_dict(m) for m in summary["metrics"]],
            summary.get("config", {}),
            [_invalid_row(r) for r in summary.get("skipped", [])],
        )


#: Metrics shown in ``repr(result)``; bootstrap resamples of the notebook summary's CIs (as
#: ``ragmeter show``, seed 0).
REPR_METRICS = 6
REPR_CI_RESAMPLES = 2_000


def _service_lines(config: dict[str, Any], usage: dict[str, Any]) -> list[str]:
    """The judges and embedding models of a run, and the judge's usage and cost, as text."""
    lines = []
    for key, label in (("judges", "judge"), ("embeddings", "embeddings")):
        described = config.get(key) or {}
        names = sorted({_service_name(d) for d in described.values() if isinstance(d, dict)})
        if names:
            lines.append(f"{label}: {'; '.join(names)}")
    if usage.get("calls") or usage.get("cached_calls"):
        cost = (
            f"cost {float(usage.get('cost') or 0.0):.4f} {usage['currency']}"
            if usage.get("currency")
            else "cost not counted (no price set)"
        )
        lines.append(
            f"judge usage: {int(usage.get('calls') or 0):,} calls "
            f"({int(usage.get('cached_calls') or 0):,} cached), "
            f"{int(usage.get('prompt_tokens') or 0):,} prompt + "
            f"{int(usage.get('completion_tokens') or 0):,} completion tokens, {cost}"
        )
    return lines


def _service_name(described: dict[str, Any]) -> str:
    """A judge or embedding model as its ``describe()`` names it: its model, and its kind."""
    parts = (described.get("model") or described.get("name"), described.get("kind"))
    return " · ".join(dict.fromkeys(str(part) for part in parts if part))


def _invalid_row(data: dict[str, Any]) -> InvalidRow:
    return InvalidRow(
        data["row"],
        data["id"],
        tuple(_RecordedProblem(data["row"], None, text, "") for text in data["problems"]),
    )


class _RecordedProblem(Problem):
    """A problem read back from a run: its recorded text (row, field, message and fix) as is."""

    def __str__(self) -> str:
        return self.message
