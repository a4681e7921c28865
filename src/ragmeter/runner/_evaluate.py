"""``evaluate()``: a dataset and metrics in, complete results out."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import itertools
import signal
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ragmeter._services import fewer_collections, open_breakers, reset_breakers
from ragmeter._version import __version__
from ragmeter.dataset import (
    Dataset,
    DatasetError,
    DatasetFingerprint,
    DatasetLike,
    InvalidRow,
    Problem,
    ProblemKind,
    Sample,
    is_streamed,
    load_dataset,
    problem_kind,
    stream_jsonl,
)
from ragmeter.embed import Embeddings
from ragmeter.judge import Judge, JudgeConfigError, Usage, VerdictCalibration, load_calibration
from ragmeter.metrics import (
    BatchContext,
    Metric,
    MetricResult,
    SampleMetric,
    ScoreColumn,
    Status,
    resolve_metrics,
)
from ragmeter.prompts import Language
from ragmeter.results import STORE_FILE, EvaluationResult, MetricInfo, RunDatabase
from ragmeter.runner._budget import Budget, check_budget, take_subset
from ragmeter.runner._defaults import DEFAULT_CONCURRENCY, DEFAULT_INTERRUPT_WAIT_S
from ragmeter.runner._judged import JudgedSetup, calibrate, release, setup
from ragmeter.runner._progress import ProgressReporter, make_progress
from ragmeter.runner._ray import RayBackend, WorkerPool
from ragmeter.runner._sync import synchronous
from ragmeter.runner._task import SampleTask, TaskOutcome, run_task

DEFAULT_BATCH_SIZE = 4096
CHECK_HINT = (
    "Fix these rows (or choose other metrics), or pass skip_invalid=True (--skip-invalid) to "
    "evaluate the valid rows only."
)
#: Problems listed at most for a streamed file (the error gives the count of all of them).
MAX_LISTED_PROBLEMS = 1000


def _needs(metrics: Sequence[Metric], given_later: Sequence[str] = ()) -> dict[str, list[Any]]:
    """What each metric needs of a row, less what one of the ``given_later`` fields meets."""
    later = set(given_later)
    return {m.name: [alts for alts in m.requires if not set(alts) & later] for m in metrics}


def check_inputs(
    dataset: Dataset,
    metrics: Sequence[Metric],
    *,
    skip_invalid: bool,
    load_problems: Sequence[Problem] = (),
    given_later: Sequence[str] = (),
    hint: str = CHECK_HINT,
) -> Dataset:
    """The dataset less the rows that are invalid or lack a field some metric needs.

    Unless ``skip_invalid``, every such problem (from loading and from the metrics' needs)
    is raised at once in one :class:`DatasetError` with ``hint``. A need that one of the
    ``given_later`` fields can meet (e.g. a pipeline's outputs) is not checked here.
    """
    problems = dataset.problems_for(_needs(metrics, given_later))
    if (problems or load_problems) and not skip_invalid:
        raise DatasetError(
            sorted([*load_problems, *problems], key=lambda p: p.row),
            hint=hint,
            n_rows=len({*dataset.rows, *(p.row for p in load_problems)}),
        )
    return dataset.without_rows(problems) if problems else dataset


def _score_column(metric: Metric, batch: Sequence[Any], context: BatchContext) -> ScoreColumn:
    try:
        column = metric.score_column(batch, context)
    except Exception as error:  # noqa: BLE001 - one metric's bug must not lose the rest of the run
        return ScoreColumn.failed(len(batch), f"{type(error).__name__}: {error}")
    if len(column) != len(batch):  # a custom score_batch's bug: no result can be trusted
        return ScoreColumn.failed(
            len(batch),
            f"{metric.name} returned {len(column)} results for a batch of {len(batch)} "
            "samples: its score_batch must return one result per sample, in order",
        )
    return column


async def aevaluate(
    dataset: DatasetLike,
    metrics: Sequence[Metric | str] | str,
    *,
    column_map: Mapping[str, str] | None = None,
    skip_invalid: bool = False,
    format: str | None = None,
    judge: Judge | None = None,
    embeddings: Embeddings | None = None,
    language: Language | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    batch_size: int = DEFAULT_BATCH_SIZE,
    run_dir: str | Path | None = None,
    resume: bool = False,
    progress: bool | ProgressReporter | None = None,
    record: Mapping[str, Any] | None = None,
    repeats: int = 1,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    stratify: str | None = None,
    max_cost: float | None = None,
    tags: Sequence[str] | None = None,
    backend: str | RayBackend = "local",
    interrupt_wait_s: float = DEFAULT_INTERRUPT_WAIT_S,
    calibration: VerdictCalibration | str | Path | None = None,
    force_calibration: bool = False,
) -> EvaluationResult:
    """:func:`evaluate` for async code (same arguments)."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if not interrupt_wait_s >= 0:
        raise ValueError(f"interrupt_wait_s must be at least 0, got {interrupt_wait_s}")
    cluster = RayBackend.of(backend)
    if calibration is not None and not isinstance(calibration, VerdictCalibration):
        calibration = load_calibration(calibration)
    resolved = resolve_metrics(metrics if isinstance(metrics, str) else list(metrics))
    if max_cost is not None:
        check_budget(max_cost, resolved, judge)  # before anything runs or is written
    reading = Reading(column_map, skip_invalid, format, limit, sample, seed, stratify)
    read = _read_input(dataset, resolved, reading, tags)
    infos = [
        MetricInfo(m.name, m.direction, m.params(), f"{type(m).__module__}.{type(m).__qualname__}")
        for m in resolved
    ]
    reporter = progress if not isinstance(progress, bool | None) else make_progress(progress)
    judged = [m for m in resolved if isinstance(m, SampleMetric)]
    plain = [m for m in resolved if not isinstance(m, SampleMetric)]
    # A new run scores the metrics without a judge as its samples are stored, while they are
    # in memory: a resumed run reads back the samples that miss a result.
    n_samples = None if read.data is None else len(read.data)
    scorer = _PlainScorer(plain, batch_size, reporter, n_samples)
    try:
        store = _open_store(run_dir, resume, read.chunks, infos, record, repeats, scorer)
    except BaseException:
        reporter.stop()
        raise
    noted = {"column_warnings": read.column_notes} if read.column_notes else {}
    if read.tags is not None:
        noted["tags"] = read.tags
    if noted:
        store.set_meta("config", {**(store.get_meta("config") or {}), **noted})
    samples = _StoredSamples(store) if read.data is None else _InMemory(read.data)
    session = _Session(store, reporter, repeats, max_cost, cluster, interrupt_wait_s)
    session.calibration = calibration
    session.force_calibration = force_calibration
    try:
        if judged:
            _check_calibration_resumable(store, str(run_dir), calibration)
        if not scorer.scored_all:
            scorer.score_missing(samples, store)
        if judged:
            await session.score_judged(samples, judged, judge, embeddings, language, concurrency)
    finally:
        reporter.stop()
        store.set_meta("config", _config(store, session))
    if session.interrupted is not None:
        store.close()
        raise KeyboardInterrupt(session.interrupted)  # what was answered is recorded
    result = EvaluationResult.from_store(store)
    if run_dir is not None:
        result.save(run_dir)
    return result


@synchronous(aevaluate)
def evaluate() -> None:
    """Score every sample of ``dataset`` with every metric.

    ``dataset`` is a :class:`Dataset`, a path (JSONL, JSON, CSV, Parquet), a list of dicts, a
    pandas DataFrame or a Hugging Face dataset; ``metrics`` are metric objects or names such
    as ``"precision@5"`` or ``"faithfulness"``, of any kind in one call. Every problem in the
    input is reported before anything is scored; with ``skip_invalid`` the valid rows are
    scored and the others listed in ``result.skipped``.

    A JSONL file streams: it is read, checked and written to the run's store a chunk of lines
    at a time (the metrics without a judge score each chunk as it is stored, the judged ones
    read the samples back from the store), so its length is bounded by disk, not memory (the
    problems of a file with very many are counted, the first 1000 listed). JSON, CSV and
    Parquet files, and a JSONL file with ``limit`` or ``sample``, are loaded whole.

    Judged metrics use their own judge / embeddings if they have one, else ``judge`` /
    ``embeddings``, else the configured endpoint or the embedded offline defaults; within a
    sample they share every judge call, and up to ``concurrency`` samples are in flight at
    once under the judge's own request limits. ``language`` ("en" / "zh") overrides
    per-sample language detection.

    Each finished sample x metric is written at once to ``run_dir/run.db`` (a temporary file
    without ``run_dir``). If the run stops, ``resume=True`` with the same ``run_dir``
    computes only the results that are missing or failed; judge answers already paid for come
    from the judge cache. ``progress`` shows a live display on stderr (default: when stderr
    is a terminal). Results are in dataset order.

    ``repeats`` R > 1 judges every sample R times (each repeat cached apart) to measure the
    judge's own noise (:func:`ragmeter.stats.judge_noise`): a judged metric's score is then
    the mean of its repeats, each repeat's score in ``details["repeats"]``. Repeats differ
    only where the judge samples (temperature > 0).

    ``record`` is what the caller needs to start the run again (JSON, never a secret; the CLI
    records its options): it is kept in ``run_dir`` (:meth:`RunDatabase.get_record` reads it
    back) and in ``result.config["invocation"]``; a resumed run without one keeps the old one.

    A cheap first pass: ``limit`` N scores the first N valid samples, ``sample`` N a random N
    of them, the same for the same ``seed`` (by the metadata tag ``stratify``, each value its
    share); resume with the same options. ``max_cost`` stops starting samples once what the
    run spent (in ``run_dir``, over every session) plus the estimated cost of the samples in
    flight and of the next one would pass it: the samples in flight finish and are kept, the
    rest are ``not_started`` (not failed; ``result.config["budget"]`` says so) for a resumed
    run with a higher ``max_cost``. Every judge asked needs a price (a ``ValueError`` says
    how to give one).

    ``tags`` names the ``metadata`` fields that :meth:`EvaluationResult.breakdowns` (the CLI
    summary and the report) group results by, kept in ``result.config["tags"]``; without
    it, low-cardinality text fields are chosen (not scores, numbers, free text or ids).

    A judge or embeddings endpoint that cannot answer stops the run (its breaker opens):
    one that asks to wait longer than its ``max_retry_wait_s``, or whose calls keep failing
    with no answer (``breaker_failures`` in a row, or two or more across
    ``breaker_silence_s``). No new sample starts, those in flight settle, what was answered
    is kept, and ``result.config["endpoint_down"]`` says why, for a resumed run once the
    endpoint answers.

    The first Ctrl-C (or SIGTERM) stops starting samples and waits up to
    ``interrupt_wait_s`` seconds for those in flight, so that their answers are recorded and
    not paid again by a resumed run; then ``KeyboardInterrupt`` is raised. A second one
    stops at once. (From the main thread only; elsewhere Ctrl-C stops at once.)

    ``backend`` runs the per-sample (judged) metrics in this process (``"local"``) or on the
    workers of a Ray cluster (``"ray"``, or a :class:`RayBackend` with its address, workers and
    per-node endpoint): the same results, recorded here as they come back, with the judges'
    limits kept across the cluster and one shared cache (docs/scale.md).

    ``calibration`` (a :class:`~ragmeter.judge.VerdictCalibration`, or ``NAME``, ``NAME@vN``
    or the path of a .json file saved by ``ragmeter calibrate fit``) maps every judge's
    verdict P(yes) to a calibrated one after the judge's own; the run record names it
    (``result.config["judges"][metric]["verdict_calibration"]``). It is refused for a judge
    other than the one it was fitted for unless ``force_calibration``. Judge answers stay
    cached as they were: a calibration changes no answer, so none is paid for twice.

    >>> result = evaluate(
    ...     [{"retrieved_context_ids": ["a", "b"], "reference_context_ids": ["b"]}],
    ...     ["mrr", "hit@1"],
    ... )
    >>> {name: a.mean for name, a in result.aggregates.items()}
    {'mrr': 0.5, 'hit@1': 0.0}
    """


@dataclass
class _Input:
    """The samples a run reads: ``chunks`` to store, ``data`` when they are in memory (None
    when a JSONL file is streamed), the ``tags`` breakdowns use (``result.config["tags"]``)
    and the columns probably meant for a field (``config["column_warnings"]``, filled as a
    streamed file is read)."""

    chunks: Iterable[Dataset]
    data: Dataset | None
    tags: list[str] | None
    column_notes: list[str]


@dataclass(frozen=True)
class Reading:
    """How a run reads its dataset: :func:`evaluate`'s ``column_map``, ``skip_invalid`` and
    ``format``, and the subset it scores (``limit``, ``sample``, ``seed``, ``stratify``)."""

    column_map: Mapping[str, str] | None
    skip_invalid: bool
    format: str | None
    limit: int | None
    sample: int | None
    seed: int
    stratify: str | None

    def read_checked(self, dataset: DatasetLike, metrics: Sequence[Metric]) -> Dataset:
        """The whole dataset in memory, checked for ``metrics`` (rows that cannot load
        reported with the rest) and cut to its subset: what a run and its estimate score."""
        if isinstance(dataset, Dataset):
            data, load_problems = dataset, []
        else:
            data = load_dataset(
                dataset, column_map=self.column_map, skip_invalid=True, format=self.format
            )
            load_problems = [p for row in data.invalid for p in row.problems]
        data = check_inputs(
            data, metrics, skip_invalid=self.skip_invalid, load_problems=load_problems
        )
        return take_subset(
            data, limit=self.limit, sample=self.sample, seed=self.seed, stratify=self.stratify
        )


def _read_input(
    dataset: DatasetLike, metrics: Sequence[Metric], reading: Reading, tags: Sequence[str] | None
) -> _Input:
    """The dataset checked for ``metrics`` and cut to its subset: a JSONL file streamed a
    chunk at a time (checked as it is read), anything else read into memory."""
    # A subset is drawn from the whole (valid) dataset: it is read into memory.
    if is_streamed(dataset, reading.format) and reading.limit is None and reading.sample is None:
        jsonl = cast("str | Path", dataset)  # is_streamed: a path
        column_notes: list[str] = []
        chunks: Iterable[Dataset] = _checked_chunks(
            jsonl, metrics, reading.column_map, reading.skip_invalid
        )
        named_tags = None
        if tags is not None:  # checked once the whole file is read
            named_tags = Dataset.tag_names(tags)
            chunks = _carrying_tags(chunks, named_tags)
        return _Input(_noting_columns(chunks, column_notes), None, named_tags, column_notes)
    data = reading.read_checked(dataset, metrics)
    named_tags = None if tags is None else data.check_tags(tags)
    return _Input([data], data, named_tags, data.column_warnings())


def _checked_chunks(
    path: str | Path,
    metrics: Sequence[Metric],
    column_map: Mapping[str, str] | None,
    skip_invalid: bool,
) -> Iterator[Dataset]:
    """A JSONL file's samples a chunk at a time, checked as :func:`check_inputs` checks a
    loaded dataset: the same problems, raised together at the end of the file unless
    ``skip_invalid`` (the first :data:`MAX_LISTED_PROBLEMS` listed, with the count of all), or
    else the rows left out listed in each chunk's ``invalid``. A missing file is refused here.
    """
    stream = stream_jsonl(path, column_map=column_map)
    needs = _needs(metrics)

    def checked() -> Iterator[Dataset]:
        listed: list[Problem] = []
        n_problems = n_rows = n_read = 0
        # the rows of each listed kind of problem over the whole file (and the last one)
        rows_of_kind: dict[ProblemKind, int] = {}
        last_row: dict[ProblemKind, int] = {}
        for chunk in stream:
            n_read += len({*chunk.rows, *(row.row for row in chunk.invalid)})
            missing = chunk.problems_for(needs)
            found = sorted(
                [*(p for row in chunk.invalid for p in row.problems), *missing],
                key=lambda p: p.row,
            )
            n_problems += len(found)
            n_rows += len({p.row for p in found})
            for problem in found:
                kind = problem_kind(problem)
                if kind not in rows_of_kind and (
                    len(listed) < MAX_LISTED_PROBLEMS or len(rows_of_kind) < MAX_LISTED_PROBLEMS
                ):  # the first of each kind is listed, past the first MAX_LISTED_PROBLEMS too
                    listed.append(problem)
                    rows_of_kind[kind] = 0
                elif len(listed) < MAX_LISTED_PROBLEMS:
                    listed.append(problem)
                if kind in rows_of_kind and last_row.get(kind) != problem.row:
                    last_row[kind] = problem.row
                    rows_of_kind[kind] += 1
            if skip_invalid:
                yield chunk.without_rows(missing) if missing else chunk
            elif not n_problems:
                yield chunk  # after a problem nothing more is stored: the run will not start
        if n_problems and not skip_invalid:
            more = len(listed) < n_problems
            shown = f"(The first {len(listed)} of {n_problems} problems in {n_rows} rows.) "
            if len(listed) > MAX_LISTED_PROBLEMS:
                shown = (
                    f"(The first {MAX_LISTED_PROBLEMS} of {n_problems} problems in {n_rows} "
                    "rows, and the first of each other kind.) "
                )
            raise DatasetError(
                listed,
                hint=(shown if more else "") + CHECK_HINT,
                n_rows=n_read,
                rows_of_kind=rows_of_kind,
            )

    return checked()


def _open_store(
    run_dir: str | Path | None,
    resume: bool,
    chunks: Iterable[Dataset],
    infos: list[MetricInfo],
    record: Mapping[str, Any] | None,
    repeats: int,
    scorer: _PlainScorer,
) -> RunDatabase:
    """A new store for the run holding the samples of ``chunks`` (a checked dataset, or the
    checked chunks of a streamed file), or the existing one of a run being resumed, whose
    samples must be the same (same fingerprint). A new store that cannot be filled (bad input
    found while streaming, an interrupt) is removed, so the run can start again in its place.
    A new store's samples are scored by ``scorer`` as they are stored.
    """
    path = None if run_dir is None else Path(run_dir) / STORE_FILE
    resuming = path is not None and path.exists()
    restarted = False
    if resuming and path is not None and _never_filled(path):
        # Killed while its samples were stored: nothing was scored, so the run starts
        # again in its place (a new run, or --resume, which finds the options it recorded).
        _remove_store(path, made_dir=False)
        resuming, restarted = False, True
    if resuming and not resume:
        raise FileExistsError(
            f"{str(run_dir)!r} already holds a run: resume it (resume=True, "
            "--resume) or choose another directory"
        )
    if resume and run_dir is not None and not resuming and not restarted:
        raise FileNotFoundError(
            f"nothing to resume: {str(run_dir)!r} holds no run ({STORE_FILE} is missing)"
        )
    made_dir = run_dir is not None and not Path(run_dir).exists()
    store = RunDatabase(path)
    if record is not None and not resuming:
        store.set_record(record)  # first: a kill while the samples are stored can resume
    try:
        with fewer_collections():
            fingerprint, source, counts, skipped = _fill(
                None if resuming else store, chunks, None if resuming else scorer
            )
        if resuming:
            _check_resumable(store, str(run_dir), fingerprint, infos, repeats)
    except BaseException:
        store.close()
        if not resuming and path is not None:
            _remove_store(path, made_dir)
        raise
    if not resuming:
        store.set_meta("dataset", {"source": source, "fingerprint": fingerprint, **counts})
        store.set_meta("created_at", dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))
        store.set_meta("repeats", repeats)
    if record is not None:
        store.set_record(record)
    store.set_meta("metrics", [info.to_dict() for info in infos])
    store.set_meta("skipped", [row.to_dict() for row in skipped])
    return store


def _fill(
    store: RunDatabase | None, chunks: Iterable[Dataset], scorer: _PlainScorer | None = None
) -> tuple[str, str | None, dict[str, int], list[InvalidRow]]:
    """The fingerprint of the samples of ``chunks``, their source, their counts and
    the rows left out; each chunk's samples go to ``store`` as they come (None: a resumed run,
    which already holds them), then to ``scorer``."""
    fingerprint = DatasetFingerprint()
    skipped: list[InvalidRow] = []
    source: str | None = None
    n = 0
    for chunk in chunks:
        source = chunk.source
        records = [sample.to_record() for sample in chunk.samples]
        for one in records:
            fingerprint.add_record(one)
        if store is not None:
            store.put_samples(
                (n + offset, row, sample_id, one)
                for offset, (one, row, sample_id) in enumerate(zip(records, chunk.rows, chunk.ids))
            )
            if scorer is not None:
                scorer.score_new(store, n, chunk.samples)
        n += len(records)
        skipped += chunk.invalid
    counts = {"n_samples": n, "n_skipped": len(skipped)}
    return fingerprint.hexdigest(), source, counts, skipped


def _never_filled(path: Path) -> bool:
    """Whether the store at ``path`` was stopped before its samples were all stored (it has
    no dataset record: nothing in it was scored)."""
    with contextlib.closing(RunDatabase(path, read_only=True)) as store:
        return store.get_meta("dataset") is None


def _remove_store(path: Path, made_dir: bool) -> None:
    """Delete a store that never held a started run (and its folder, if made for it)."""
    for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
        path.with_name(name).unlink(missing_ok=True)
    if made_dir:
        with contextlib.suppress(OSError):  # something else was put there meanwhile
            path.parent.rmdir()


def _check_resumable(
    store: RunDatabase, run_dir: str, fingerprint: str, infos: list[MetricInfo], repeats: int
) -> None:
    """Refuse to resume a run with other data, repeats or metric settings than it started with."""
    recorded = store.get_meta("dataset")
    if recorded is None:
        raise ValueError(
            f"{run_dir!r} was stopped while its data was being stored, before anything was "
            "scored: delete it, or choose another run directory"
        )
    if recorded.get("fingerprint") != fingerprint:
        raise ValueError(
            f"the dataset differs from the one {run_dir!r} was started with "
            f"(fingerprint {recorded.get('fingerprint')} there, {fingerprint} now): "
            "resume with the same data and column mapping, or start a new run directory"
        )
    recorded_repeats = store.get_meta("repeats") or 1
    if recorded_repeats != repeats:
        raise ValueError(
            f"{run_dir!r} was started with repeats={recorded_repeats}, now "
            f"{repeats}: resume with the same repeats or start a new run directory"
        )
    before = {m["name"]: m for m in store.get_meta("metrics") or []}
    for info in infos:
        old = before.get(info.name)
        if old is not None and old.get("params") != info.params:
            raise ValueError(
                f"metric {info.name!r} ran with settings {old.get('params')} in "
                f"{run_dir!r}, now {info.params}: resume with the same settings "
                "or start a new run directory"
            )


def _check_calibration_resumable(
    store: RunDatabase, run_dir: str, calibration: VerdictCalibration | None
) -> None:
    """Refuse to resume a run whose judged results were decided under another verdict
    calibration (a judge record without one was judged without)."""
    judges = (store.get_meta("config") or {}).get("judges") or {}
    now = None if calibration is None else calibration.label
    for metric, described in judges.items():
        if isinstance(described, dict):
            before = described.get("verdict_calibration")
            if before != now:
                raise ValueError(
                    f"{run_dir!r} judged {metric!r} with verdict calibration "
                    f"{before or 'none'}, now {now or 'none'}: resume with the same "
                    "calibration or start a new run directory"
                )


@dataclass
class _InMemory:
    """The samples of a dataset in memory: (id, sample) at each of ``indexes``."""

    data: Dataset

    def __len__(self) -> int:
        return len(self.data)

    def samples_at(self, indexes: Sequence[int]) -> list[tuple[str, Sample]]:
        return [(self.data.ids[index], self.data.samples[index]) for index in indexes]


class _StoredSamples:
    """The samples of a streamed file, read back from the run's store a batch at a time."""

    def __init__(self, store: RunDatabase) -> None:
        self.store = store
        self._n = store.n_samples()

    def __len__(self) -> int:
        return self._n

    def samples_at(self, indexes: Sequence[int]) -> list[tuple[str, Sample]]:
        # Not validated again (a quarter of the scoring time): each record is the to_record()
        # of a sample validated by this version, a resumed run's too (their fingerprints
        # agree), and a record of a valid sample is one, field for field.
        return [
            (sample_id, Sample.model_construct(**record))
            for _, sample_id, record in self.store.samples_at(indexes)
        ]


#: Where the runner reads samples by index: a dataset in memory, or the run's store.
_SampleSource = _InMemory | _StoredSamples


#: The progress display's name for scoring the metrics without a judge.
PLAIN_PHASE = "retrieval & text metrics"
#: Samples whose missing results are looked up at a time (bounds the runner's memory).
TODO_CHUNK = 1024
#: Seconds between looks at the in-flight samples' usage: written to the run's file when
#: it changed, so a kill loses at most this long's count of requests sent.
USAGE_WRITE_INTERVAL_S = 0.05
#: Seconds between asking a Ray cluster whether an endpoint's breaker opened.
RAY_BREAKER_CHECK_S = 0.25


def _todo(store: RunDatabase, metrics: Sequence[Metric], n: int) -> Iterator[tuple[int, list[str]]]:
    """(index, metric names) still to compute, never computed or failed, in dataset order."""
    names = [m.name for m in metrics]
    for start in range(0, n, TODO_CHUNK):
        yield from store.todo(names, start, start + TODO_CHUNK).items()


@dataclass
class _PlainScorer:
    """The metrics without a judge, vectorised over batches of ``batch_size`` samples, their
    results recorded batch by batch. A new run's samples are scored as they are stored
    (:meth:`score_new`, ``total`` of them, ``None`` while a file is streamed); what a run
    still misses (a resumed run, a new metric) is read back and scored by :meth:`score_missing`.
    """

    metrics: list[Metric]
    batch_size: int
    reporter: ProgressReporter
    total: int | None
    #: Whether every sample was scored as it was stored (nothing is left to read back).
    scored_all: bool = False
    _started: bool = False

    def score_new(self, store: RunDatabase, start: int, samples: Sequence[Sample]) -> None:
        """Score ``samples``, just stored from index ``start`` on."""
        if not self.metrics:
            return
        if not self._started:
            self.reporter.start(PLAIN_PHASE, self.total)
            self._started = True
        for offset in range(0, len(samples), self.batch_size):
            batch = samples[offset : offset + self.batch_size]
            indexes = range(start + offset, start + offset + len(batch))
            self._score(store, batch, [(index, None) for index in indexes])
        self.scored_all = True  # read by aevaluate once the store is filled

    def score_missing(self, samples: _SampleSource, store: RunDatabase) -> None:
        """Score what the run still misses: never computed, or failed."""
        if not self.metrics or not (total := store.count_todo([m.name for m in self.metrics])):
            return
        self.reporter.start(PLAIN_PHASE, total)
        todo = _todo(store, self.metrics, len(samples))
        while chunk := list(itertools.islice(todo, self.batch_size)):
            batch = [sample for _, sample in samples.samples_at([index for index, _ in chunk])]
            self._score(store, batch, [(index, set(names)) for index, names in chunk])

    def _score(
        self,
        store: RunDatabase,
        batch: Sequence[Sample],
        wanted: Sequence[tuple[int, set[str] | None]],
    ) -> None:
        """Score and record, for each sample's index, the metrics it wants (None: all of
        them): each metric on the samples that want it, which share their preparation."""
        contexts: dict[tuple[int, ...], BatchContext] = {}
        columns: dict[str, ScoreColumn] = {}
        written: list[tuple[int, str, MetricResult]] = []
        together = all(names is None for _, names in wanted)  # consecutive samples, all metrics
        for metric in self.metrics:
            rows = tuple(
                i for i, (_, names) in enumerate(wanted) if names is None or metric.name in names
            )
            if not rows:
                continue
            part = batch if len(rows) == len(batch) else [batch[i] for i in rows]
            context = contexts.setdefault(rows, BatchContext())
            column = columns[metric.name] = _score_column(metric, part, context)
            if not together:
                written += (
                    (wanted[i][0], metric.name, result) for i, result in zip(rows, column.results())
                )
        if together:
            store.put_columns(wanted[0][0], columns)
        else:
            store.put_results(written)
        failed = sum(column.n_failed for column in columns.values())
        self.reporter.advance(len(wanted), failed=failed)


@dataclass(eq=False)
class _Session:
    """What one call of the runner did with the judge (a resumed run has several)."""

    store: RunDatabase
    reporter: ProgressReporter
    repeats: int = 1
    #: ``max_cost``: the budget that decides whether the next sample may start.
    max_cost: float | None = None
    #: Where tasks run: ``None`` in this process, else on a Ray cluster.
    cluster: RayBackend | None = None
    interrupt_wait_s: float = DEFAULT_INTERRUPT_WAIT_S
    services: JudgedSetup | None = None
    prompt_versions: set[str] = field(default_factory=set)
    configuration_error: str | None = None
    #: Applied to every judge's verdicts (``calibration``), checked against the judge's
    #: identity unless ``force_calibration``.
    calibration: VerdictCalibration | None = None
    force_calibration: bool = False
    #: Tasks being judged: (index, sample id), whose usage so far is written as it grows.
    _flying: dict[asyncio.Task[TaskOutcome], tuple[int, str]] = field(default_factory=dict)
    budget: Budget | None = None
    pool: WorkerPool | None = None
    #: Why an endpoint's breaker stopped the run (``config["endpoint_down"]``).
    endpoint_down: str | None = None
    #: The first Ctrl-C / SIGTERM: the signal's name; the run then raises
    #: ``KeyboardInterrupt`` once the samples in flight settled (``interrupt_wait_s``).
    interrupted: str | None = None
    _stop_by: float | None = None
    _breakers_asked: float = 0.0
    _woken: asyncio.Future[None] | None = None
    #: The in-flight usage when the run stopped waiting: calls cancelled then are gone
    #: from the judges' ledgers, yet were sent (and billed).
    _at_stop: dict[int, dict[str, Any]] | None = None

    def _tasks(
        self, samples: _SampleSource, metrics: list[SampleMetric], language: Language | None
    ) -> Iterator[SampleTask]:
        """Tasks made as they are needed, their samples read a chunk at a time, so only a
        chunk and the tasks in flight are in memory."""
        todo = _todo(self.store, metrics, len(samples))
        while chunk := list(itertools.islice(todo, TODO_CHUNK)):
            read = samples.samples_at([index for index, _ in chunk])
            for (index, names), (sample_id, sample) in zip(chunk, read):
                yield SampleTask(index, sample_id, sample, tuple(names), language, self.repeats)

    async def score_judged(
        self,
        samples: _SampleSource,
        metrics: list[SampleMetric],
        judge: Judge | None,
        embeddings: Embeddings | None,
        language: Language | None,
        concurrency: int,
    ) -> None:
        total = self.store.count_todo([m.name for m in metrics])
        if not total:
            return
        self.services = services = setup(metrics, judge, embeddings)
        if self.calibration is not None:
            calibrate(services, self.calibration, force=self.force_calibration)
        reset_breakers()  # a new run tries again an endpoint that stopped the last one
        self.store.settle_in_flight_usage()
        if self.max_cost is not None:
            spent = (self.store.total_usage() or Usage()).cost
            self.budget = Budget(self.max_cost, services, spent)
        if self.cluster is not None:
            self.pool = WorkerPool(self.cluster, services)  # blocks: nothing else runs yet
        self.reporter.start("judged metrics", total)
        flusher = asyncio.create_task(self._write_usage_as_it_grows(services))
        try:
            with self._graceful_interrupt():
                await self._run(self._tasks(samples, metrics, language), services, concurrency)
        finally:
            flusher.cancel()
            await asyncio.gather(flusher, return_exceptions=True)
            flying = self._in_flight_usage(services)
            if self._at_stop is not None:  # what cancelled calls sent, as they left it
                flying = {**self._at_stop, **flying}
            self.store.set_in_flight_usage(flying)
            if self.pool is not None:
                await self.pool.close()
            await release(services)

    async def _write_usage_as_it_grows(self, services: JudgedSetup) -> None:
        """The usage of the samples in flight goes to the run's file as it changes (looked
        at every :data:`USAGE_WRITE_INTERVAL_S`): a kill, even in the run's first second,
        loses at most the last 50 ms' count, never a long sample's calls."""
        written: dict[int, dict[str, Any]] = {}
        while True:
            await asyncio.sleep(USAGE_WRITE_INTERVAL_S)
            if self._flying:
                flying = self._in_flight_usage(services)
                if flying != written:
                    self.store.set_in_flight_usage(flying)
                    written = flying

    @contextlib.contextmanager
    def _graceful_interrupt(self) -> Iterator[None]:
        """While the run judges: the first SIGINT / SIGTERM stops starting samples and
        lets those in flight settle for ``interrupt_wait_s``; a second one cancels the run
        at once (``KeyboardInterrupt``). Only in the main thread, where signals arrive."""
        loop = asyncio.get_running_loop()
        main = asyncio.current_task()
        self._woken = loop.create_future()
        if threading.current_thread() is not threading.main_thread() or main is None:
            yield
            return

        def on_signal(number: signal.Signals) -> None:
            if self.interrupted is None:
                self.interrupted = number.name
                self._stop_by = time.monotonic() + self.interrupt_wait_s
                if self._woken is not None and not self._woken.done():
                    self._woken.set_result(None)
            elif main is not None:
                main.cancel("interrupted again: stopping at once")

        installed = []
        try:
            for number in (signal.SIGINT, signal.SIGTERM):
                previous = signal.getsignal(number)
                try:
                    loop.add_signal_handler(number, on_signal, number)
                except (NotImplementedError, RuntimeError, ValueError):
                    continue  # Windows, or a loop that takes none: Ctrl-C stops at once
                installed.append((number, previous))
            yield
        except asyncio.CancelledError:
            if self.interrupted is None:
                raise
            raise KeyboardInterrupt from None
        finally:
            for number, previous in installed:
                loop.remove_signal_handler(number)
                signal.signal(number, previous)  # asyncio.run's own, say

    def _stopping(self) -> bool:
        """Whether no new sample may start: interrupted, or an endpoint cannot answer."""
        stopped = self.interrupted is not None or self.endpoint_down is not None
        return stopped or bool(self.configuration_error)

    async def _check_breakers(self, *, now: bool = False) -> bool:
        """Whether an endpoint's breaker is open (the first reason is kept). On Ray the
        cluster's breakers are asked at most every :data:`RAY_BREAKER_CHECK_S` (``now``, or
        after a sample that failed: at once), not once per sample."""
        if self.endpoint_down is None:
            if self.pool is None:
                reasons = open_breakers()
            elif now or time.monotonic() >= self._breakers_asked + RAY_BREAKER_CHECK_S:
                self._breakers_asked = time.monotonic()
                reasons = await self.pool.open_breakers()
            else:
                reasons = []
            self.endpoint_down = reasons[0] if reasons else None
        return self.endpoint_down is not None

    def _in_flight_usage(self, services: JudgedSetup) -> dict[int, dict[str, Any]]:
        judges = {id(j): j for j in services.judges.values() if j}.values()
        flying: dict[int, dict[str, Any]] = {}
        for index, sample_id in self._flying.values():
            used = sum((judge.ledger.sample_usage(sample_id) for judge in judges), Usage())
            if used.calls or used.cached_calls:
                flying[index] = used.to_dict()
        return flying

    async def _run(
        self, tasks: Iterator[SampleTask], services: JudgedSetup, concurrency: int
    ) -> None:
        """Keep ``concurrency`` tasks in flight; record each outcome the moment it is known.
        A judge that refuses its configuration stops the run: what is done stays recorded,
        the rest stays missing, so a resumed run computes it once the configuration is fixed.
        """
        pending: set[asyncio.Task[TaskOutcome]] = set()
        try:
            for task in tasks:
                while len(pending) >= concurrency and not self._stopping():
                    pending = await self._collect(pending, services)
                if self._stopping() or await self._check_breakers():
                    break
                live = self._in_flight_usage(services) if self.budget else {}
                if self.budget and not await self.budget.admits(task, live):
                    break  # over budget: the samples in flight finish, the rest stay missing
                started = asyncio.create_task(
                    self.pool.run(task) if self.pool else run_task(task, services)
                )
                self._flying[started] = (task.index, task.sample_id)
                pending.add(started)
            # The samples in flight settle (an interrupt waits for them a bounded time).
            while pending and not self.configuration_error and not self._waited_enough():
                pending = await self._collect(pending, services)
            await self._check_breakers(now=True)  # it may have opened on the last samples
        finally:
            if pending:
                self._at_stop = self._in_flight_usage(services)
                for leftover in pending:
                    leftover.cancel()
                await asyncio.gather(*pending, return_exceptions=True)

    def _waited_enough(self) -> bool:
        """Whether an interrupt's ``interrupt_wait_s`` for the samples in flight is over."""
        return self._stop_by is not None and time.monotonic() >= self._stop_by

    async def _collect(
        self, pending: set[asyncio.Task[TaskOutcome]], services: JudgedSetup
    ) -> set[asyncio.Task[TaskOutcome]]:
        woken = self._woken if self._woken is not None and not self._woken.done() else None
        waited: set[asyncio.Future[Any]] = {*pending, *([woken] if woken else [])}
        left = None if self._stop_by is None else max(0.0, self._stop_by - time.monotonic())
        done_any, _ = await asyncio.wait(waited, timeout=left, return_when=asyncio.FIRST_COMPLETED)
        done = {task for task in pending if task in done_any}
        still = pending - done
        for finished in done:
            self._flying.pop(finished, None)
            try:
                outcome = finished.result()
            except JudgeConfigError as error:
                self.configuration_error = self.configuration_error or (
                    f"{type(error).__name__}: {error}"
                )
                continue
            self.store.put_results(
                ((outcome.index, name, result) for name, result in outcome.results.items()),
                usage={outcome.index: outcome.usage.to_dict()},
                in_flight=self._in_flight_usage(services),
            )
            self.prompt_versions |= outcome.prompt_versions
            if self.budget is not None:
                self.budget.finished(outcome.index, outcome.usage)
            for judge in {id(j): j for j in services.judges.values() if j}.values():
                judge.ledger.forget_sample(outcome.sample_id)
            failed = sum(r.status is Status.FAILED for r in outcome.results.values())
            if failed:  # a failure may be the breaker opening: the next check asks at once
                self._breakers_asked = 0.0
            self.reporter.advance(1, usage=outcome.usage, failed=failed)
        return still


def _config(store: RunDatabase, session: _Session) -> dict[str, Any]:
    """The run record: versions, dataset identity, judges and prompts, usage over every
    session of the run. Never holds a secret (judges and embeddings describe themselves)."""
    config = dict(store.get_meta("config") or {})
    config.update(
        {
            "ragmeter_version": __version__,
            "created_at": store.get_meta("created_at"),
            "dataset": store.get_meta("dataset"),
            "repeats": store.get_meta("repeats") or 1,
        }
    )
    record = store.get_record()
    if record is not None:
        config["invocation"] = record
    services = session.services
    if services is not None:
        # Only the metrics that ask a judge: a comparison of two runs checks these judges.
        asking = {m.name for m in services.metrics if m.uses_judge}
        config["judges"] = {
            name: judge.run_record()
            for name, judge in services.judges.items()
            if judge is not None and name in asking
        }
        config["embeddings"] = {
            name: vectors.describe() for name, vectors in services.embeddings.items() if vectors
        }
        versions = set(config.get("prompt_versions") or []) | session.prompt_versions
        config["prompt_versions"] = sorted(versions)
        prices = (getattr(j, "price", None) for j in services.judges.values())
        currencies = {price.currency for price in prices if price is not None}
        config["currency"] = currencies.pop() if len(currencies) == 1 else None
        vectors = {id(e): e for e in services.embeddings.values() if e is not None}
        if vectors:
            used = sum((embedding.ledger.total for embedding in vectors.values()), Usage())
            config["embedding_usage"] = used.to_dict()
    total = store.total_usage()
    if total is not None:
        config["usage"] = {**total.to_dict(), "currency": config.get("currency")}
    if session.budget is not None and services is not None:
        left = store.count_todo([m.name for m in services.metrics])
        config["budget"] = session.budget.record(store.n_samples(), store.n_samples() - left)
    else:
        config.pop("budget", None)
    if session.pool is not None:
        config["backend"] = {
            **session.pool.backend.describe(),
            "workers": len(session.pool.slots),
            "workers_lost": session.pool.workers_lost,
        }
    if session.configuration_error:
        config["judge_error"] = session.configuration_error
    else:
        config.pop("judge_error", None)
    if session.endpoint_down:
        config["endpoint_down"] = session.endpoint_down
    else:
        config.pop("endpoint_down", None)
    return config


def _carrying_tags(chunks: Iterable[Dataset], tags: list[str]) -> Iterator[Dataset]:
    """``chunks``, then a ``ValueError`` if no sample carried one of ``tags`` (raised while
    the store is filled, so a new run's store is removed)."""
    carried: set[str] = set()
    for chunk in chunks:
        carried.update(key for sample in chunk for key in sample.metadata)
        yield chunk
    Dataset.check_tag_names(tags, carried)


def _noting_columns(chunks: Iterable[Dataset], notes: list[str]) -> Iterator[Dataset]:
    """``chunks``, adding to ``notes`` each chunk's new :meth:`Dataset.column_warnings`."""
    for chunk in chunks:
        notes += [note for note in chunk.column_warnings() if note not in notes]
        yield chunk
