"""The run store: every evaluation run, durable and comparable, in SQLite or PostgreSQL.

``Store()`` opens ``$RAGMETER_STORE_URL`` or the embedded default ``.ragmeter/runs.db`` and
brings its schema up to date (Alembic). ``record(result)`` writes a finished (or partial) run
in one transaction, so two evaluations recording at once lose nothing and a reader never sees
half a run. ``load(ref)`` gives the run back as an :class:`EvaluationResult`, so the
statistics, the report and the gate work on stored runs as on fresh ones.
"""

from __future__ import annotations

import builtins
import datetime as dt
import hashlib
import json
import os
import sqlite3
import subprocess
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ragmeter._services import redact_url
from ragmeter.store._labels import Label
from ragmeter.store._schema import labels as labels_table
from ragmeter.store._schema import run_results, run_samples, runs
from ragmeter.store._url import store_url

# ragmeter.results (numpy, the metrics) loads when a run is loaded or recorded, or a
# storage error is told: listing and getting runs need none of it.
if TYPE_CHECKING:
    from ragmeter.results import EvaluationResult

_MIGRATIONS = threading.Lock()
#: The newest migration's revision (a test ties it to ``migrations/versions``): a store stamped
#: with it is opened without loading Alembic.
HEAD_REVISION = "0003"
#: Samples written per INSERT statement.
PAGE = 500
#: Bootstrap resamples of the intervals a run keeps with it (:func:`run_estimates`): the
#: dashboard's, which shows them without reading the run's samples.
ESTIMATE_RESAMPLES = 2000


class RunNotFoundError(LookupError):
    """No run matches the reference given (an id, an id prefix or a name)."""


class AmbiguousRunError(RunNotFoundError):
    """The reference is the start of several run ids; ``candidates`` are their ids."""

    def __init__(self, message: str, candidates: Sequence[str]) -> None:
        super().__init__(message)
        self.candidates = list(candidates)


#: Seconds to wait for a database server to accept a connection (unless the URL says).
CONNECT_TIMEOUT_S = 10


class StoreError(OSError):
    """The run store cannot be reached, read or written: a server that does not answer, a
    file that is not a ragmeter database or is corrupt, a full disk, read-only media. ``str()``
    is one line naming the store (without its password) and the cause; ``errno`` is set where
    the cause has one, ``corrupt`` and ``unreachable`` say which it is."""

    def __init__(
        self,
        message: str,
        *,
        errno: int | None = None,
        corrupt: bool = False,
        unreachable: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.errno = errno  # OSError's own field, set after the message
        self.corrupt = corrupt
        self.unreachable = unreachable

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class RunInfo:
    """A stored run's record, without its samples."""

    id: str
    name: str
    created_at: dt.datetime
    status: str
    n_samples: int
    dataset_hash: str | None
    dataset_path: str | None
    metrics: list[dict[str, Any]]
    aggregates: dict[str, dict[str, Any]]
    config: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    notes: str | None = None
    ragmeter_version: str | None = None
    git_commit: str | None = None
    git_dirty: bool | None = None
    run_dir: str | None = None
    #: Per metric, the mean of its scores with a 95% BCa interval (:func:`run_estimates`);
    #: None for a run recorded before the store kept them.
    estimates: dict[str, dict[str, Any]] | None = None

    def mean(self, metric: str) -> float | None:
        aggregate = self.aggregates.get(metric) or {}
        return aggregate.get("mean")


def run_estimates(scores: Mapping[str, Sequence[float | None]]) -> dict[str, dict[str, Any]]:
    """Per metric, from its per-sample scores (``None``: not scored): the scores counted
    (``n`` of ``n_total``), their mean and its 95% BCa bootstrap interval (``ci``, None under
    2 scores) over :data:`ESTIMATE_RESAMPLES` resamples with seed 0, as
    :func:`ragmeter.stats.estimate_means` computes them. Kept with a run when it is recorded.
    """
    from ragmeter._bootstrap import mean_with_ci  # numpy: only when a run is recorded

    found = {}
    for metric, values in scores.items():
        n, mean, ci = mean_with_ci(values, n_resamples=ESTIMATE_RESAMPLES, seed=0)
        found[metric] = {
            "n": n,
            "n_total": len(values),
            "mean": mean,
            "ci": None if ci is None else ci.to_dict(),
            "n_resamples": ESTIMATE_RESAMPLES,
            "seed": 0,
        }
    return cast("dict[str, dict[str, Any]]", _json_safe(found))


def git_state(directory: str | os.PathLike[str] | None = None) -> tuple[str | None, bool | None]:
    """The commit checked out in ``directory`` (the current one by default) and whether the
    working tree has uncommitted changes; ``(None, None)`` outside a git repository."""
    where = str(directory or Path.cwd())
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return None, None
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None, None
    dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
    return commit.stdout.strip() or None, dirty


def parameter_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """``top_k: 5 → 8`` for every parameter that differs (added or removed ones too).

    >>> parameter_changes({"top_k": 5, "model": "a"}, {"top_k": 8, "rerank": True})
    ['model: a → —', 'rerank: — → True', 'top_k: 5 → 8']
    """
    keys = sorted(set(before) | set(after))
    return [
        f"{k}: {before.get(k, '—')} → {after.get(k, '—')}"
        for k in keys
        if before.get(k, "—") != after.get(k, "—")
    ]


class Store:
    """Runs in a database: SQLite file by default, PostgreSQL for teams."""

    def __init__(self, url: str | None = None) -> None:
        self.url = store_url(url)
        try:
            parsed = sa.engine.make_url(self.url)
        except sa.exc.ArgumentError:
            raise ValueError(
                f"the run store URL {redact_url(self.url)!r} cannot be read: write it as "
                "sqlite:///path/runs.db or postgresql://user@host/db"
            ) from None
        if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
            try:
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise _sqlite_error(error, parsed.database, "create") from error
        try:
            self.engine: Engine = sa.create_engine(self.url, **_engine_options(parsed))
        except ImportError as error:
            raise ImportError(
                f"the run store {redact_url(self.url)} needs a driver: "
                f"pip install 'ragmeter[postgres]' ({error})"
            ) from error
        if parsed.get_backend_name() == "sqlite":
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
        sa.event.listen(self.engine, "handle_error", self._storage_error)
        self._upgrade()

    def __repr__(self) -> str:
        return f"Store({redact_url(self.url)!r})"

    def _storage_error(self, context: sa.engine.ExceptionContext) -> StoreError | None:
        """A failure of the storage itself as a :class:`StoreError` (SQLAlchemy raises it in
        place of its own); other database errors (a lock, a migration race) as they are."""
        original = context.original_exception
        parsed = sa.engine.make_url(self.url)
        if isinstance(original, sqlite3.Error):
            from ragmeter.results import sqlite_code

            if sqlite_code(original) not in _SQLITE_STORAGE_CODES:
                return None
            return _sqlite_error(original, parsed.database or self.url, "use")
        if context.connection is None or context.is_disconnect:
            said = str(original).strip().splitlines()[0] if str(original).strip() else ""
            return StoreError(
                f"cannot reach the run store {redact_url(self.url)} "
                f"({type(original).__name__}: {said}): check the URL and that the server is "
                "running",
                unreachable=True,
            )
        return None

    # -- schema ----------------------------------------------------------------------------
    def _upgrade(self) -> None:
        """Apply pending migrations. Alembic's context is process-global, so upgrades in one
        process take turns; another process upgrading at the same moment makes ours fail
        on its tables, and we then find the schema current."""
        if self._revision() == HEAD_REVISION:  # current: no need to load Alembic (0.3 s)
            return
        from alembic import command
        from alembic.config import Config
        from alembic.runtime.migration import MigrationContext
        from alembic.script import ScriptDirectory

        config = Config()
        config.set_main_option(
            "script_location", str(resources.files("ragmeter.store") / "migrations")
        )
        head = ScriptDirectory.from_config(config).get_current_head()

        def current() -> str | None:
            with self.engine.connect() as connection:
                return MigrationContext.configure(connection).get_current_revision()

        for attempt in range(20):
            if current() == head:
                return
            try:
                with _MIGRATIONS, self.engine.begin() as connection:
                    config.attributes["connection"] = connection
                    command.upgrade(config, "head")
                return
            except sa.exc.DBAPIError:
                if attempt == 19:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _revision(self) -> str | None:
        """The schema revision stamped in the store (``None``: a new or unmigrated store)."""
        with self.engine.connect() as connection:
            if not sa.inspect(connection).has_table("alembic_version"):
                return None
            value = connection.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
        return None if value is None else str(value)

    # -- writing ---------------------------------------------------------------------------
    def record(
        self,
        result: EvaluationResult,
        *,
        name: str | None = None,
        params: Mapping[str, Any] | None = None,
        tags: Iterable[str] = (),
        notes: str | None = None,
        pipeline: Sequence[Mapping[str, Any] | None] | None = None,
        project_dir: str | os.PathLike[str] | None = None,
    ) -> RunInfo:
        """Store ``result`` as a new run and return its record.

        ``params`` are the experiment's settings (top_k, model...), compared between runs;
        ``pipeline`` (one entry per sample, in order) holds what an experiment's pipeline
        returned, its latency and error. The git commit and dirty flag of ``project_dir``
        (the current directory by default) are recorded when it is a repository.
        """
        from ragmeter._version import __version__  # reads the package metadata: only here

        config = dict(result.config)
        dataset = config.get("dataset") or {}
        aggregates = {m: a.to_dict() for m, a in result.aggregates.items()}
        # Partial: some results failed, or were never started (a budget stopped the run).
        incomplete = any(a["n_failed"] or a["n_not_started"] for a in aggregates.values())
        commit, dirty = git_state(project_dir)
        run_id = uuid.uuid4().hex
        info = RunInfo(
            id=run_id,
            name=name or config.get("name") or Path(str(dataset.get("source") or "run")).stem,
            created_at=dt.datetime.now(dt.timezone.utc),
            status="partial" if incomplete else "complete",
            n_samples=len(result),
            dataset_hash=dataset.get("fingerprint"),
            dataset_path=None if dataset.get("source") is None else str(dataset.get("source")),
            metrics=[m.to_dict() for m in result.metrics],
            aggregates=aggregates,
            config=_json_safe(config),
            params=_json_safe(dict(params or {})),
            tags=list(dict.fromkeys(tags)),
            notes=notes,
            ragmeter_version=__version__,
            git_commit=commit,
            git_dirty=dirty,
            run_dir=_run_dir(result),
            estimates=run_estimates({m.name: result.scores(m.name) for m in result.metrics}),
        )
        with self.engine.begin() as connection:
            connection.execute(
                runs.insert().values(**{f.name: getattr(info, f.name) for f in fields(info)})
            )
            samples_page: list[dict[str, Any]] = []
            results_page: list[dict[str, Any]] = []
            for position, sample in enumerate(result):
                extra = pipeline[position] if pipeline is not None else None
                key = {"run_id": run_id, "position": position}
                samples_page.append(
                    {
                        **key,
                        "sample_id": sample.sample_id,
                        "row": sample.row,
                        "sample": _json_safe(sample.sample.to_record()),
                        "usage": sample.usage,
                        "pipeline": _json_safe(dict(extra)) if extra is not None else None,
                    }
                )
                results_page += (
                    {
                        **key,
                        "metric": metric,
                        "status": score.status.value,
                        "score": score.score,
                        "reason": score.reason,
                        "error": score.error,
                        "details": _json_safe(score.details.to_dict()) if score.details else None,
                    }
                    for metric, score in sample.scores.items()
                )
                if len(samples_page) >= PAGE:
                    _flush(connection, samples_page, results_page)
            _flush(connection, samples_page, results_page)
        return info

    def annotate(self, ref: str, *, tags: Iterable[str] = (), notes: str | None = None) -> RunInfo:
        """Add tags to a run and (when given) replace its notes."""
        info = self.get(ref)
        values: dict[str, Any] = {"tags": list(dict.fromkeys([*info.tags, *tags]))}
        if notes is not None:
            values["notes"] = notes
        with self.engine.begin() as connection:
            connection.execute(runs.update().where(runs.c.id == info.id).values(**values))
        return self.get(info.id)

    def delete(self, ref: str) -> None:
        info = self.get(ref)
        with self.engine.begin() as connection:
            connection.execute(run_results.delete().where(run_results.c.run_id == info.id))
            connection.execute(run_samples.delete().where(run_samples.c.run_id == info.id))
            connection.execute(runs.delete().where(runs.c.id == info.id))

    # -- reading ---------------------------------------------------------------------------
    def list(
        self,
        *,
        name: str | None = None,
        tag: str | None = None,
        dataset: str | None = None,
        limit: int | None = 50,
    ) -> list[RunInfo]:
        """Runs, newest first; ``name`` and ``dataset`` (hash) match exactly, ``tag`` is one
        of the run's tags."""
        query = sa.select(runs).order_by(runs.c.created_at.desc(), runs.c.id)
        if name is not None:
            query = query.where(runs.c.name == name)
        if dataset is not None:
            query = query.where(runs.c.dataset_hash == dataset)
        with self.engine.connect() as connection:
            found = [_info(row) for row in _mappings(connection, query)]
        if tag is not None:
            found = [info for info in found if tag in info.tags]
        return found[:limit] if limit is not None else found

    def get(self, ref: str) -> RunInfo:
        """The run with id ``ref``, the one whose id starts with ``ref``, or the latest run
        named ``ref``."""
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(runs).where(runs.c.id == ref)).mappings().first()
            if row is None:
                by_prefix = sa.select(runs).where(runs.c.id.startswith(ref, autoescape=True))
                prefixed = _mappings(connection, by_prefix) if len(ref) >= 4 else []
                if len(prefixed) > 1:
                    ids = ", ".join(f"{r['id'][:12]} ({r['name']})" for r in prefixed[:5]) + (
                        ", …" if len(prefixed) > 5 else ""
                    )
                    raise AmbiguousRunError(
                        f"{ref!r} is the start of several run ids: {ids}; give more of the id",
                        [r["id"] for r in prefixed],
                    )
                row = prefixed[0] if prefixed else None
            if row is None:
                latest = (
                    sa.select(runs).where(runs.c.name == ref).order_by(runs.c.created_at.desc())
                )
                row = connection.execute(latest).mappings().first()
        if row is None:
            raise RunNotFoundError(
                f"no run {ref!r} in {redact_url(self.url)}: give an id, an id prefix (4+ "
                "characters) or a run name (ragmeter runs list shows them)"
            )
        return _info(row)

    def load(self, ref: str) -> EvaluationResult:
        """A stored run as an :class:`EvaluationResult` (samples in dataset order)."""
        from ragmeter.results import EvaluationResult, MetricInfo, SampleResult

        info = self.get(ref)
        with self.engine.connect() as connection:
            sample_rows = _mappings(
                connection,
                sa.select(run_samples)
                .where(run_samples.c.run_id == info.id)
                .order_by(run_samples.c.position),
            )
            result_rows = _mappings(
                connection,
                sa.select(run_results)
                .where(run_results.c.run_id == info.id)
                .order_by(run_results.c.position, run_results.c.metric),
            )
        by_position: dict[int, dict[str, Any]] = {}
        for row in result_rows:
            entry: dict[str, Any] = {"score": row["score"], "status": row["status"]}
            for key in ("reason", "error", "details"):
                if row[key] is not None:
                    entry[key] = row[key]
            by_position.setdefault(row["position"], {})[row["metric"]] = entry
        samples = [
            SampleResult.from_dict(
                {
                    "index": row["position"],
                    "row": row["row"],
                    "id": row["sample_id"],
                    "sample": row["sample"],
                    "metrics": by_position.get(row["position"], {}),
                    "usage": row["usage"],
                }
            )
            for row in sample_rows
        ]
        config = {**info.config, "store_run_id": info.id, "name": info.name}
        return EvaluationResult(samples, [MetricInfo.from_dict(m) for m in info.metrics], config)

    # -- labels ----------------------------------------------------------------------------
    def add_labels(self, labels: Iterable[Label]) -> int:
        """Keep people's labels; returns how many were new. A label already kept (the same
        item, labeller and value) is not added again; the same item labelled by someone
        else, or with another value, is a new label. All or nothing: one transaction. Two
        imports of the same labels at once store each label once (the count of both may
        include it)."""
        rows: dict[str, dict[str, Any]] = {}
        for label in labels:
            if not isinstance(label, Label):
                raise TypeError(f"add_labels takes Label records, got {type(label).__name__}")
            record = label.to_dict()
            record["created_at"] = label.created_at.astimezone(dt.timezone.utc)  # SQLite: naive
            rows.setdefault(_fingerprint(label), record)
        if not rows:
            return 0
        with self.engine.begin() as connection:
            kept: set[str] = set()
            keys = builtins.list(rows)
            for start in range(0, len(keys), PAGE):
                page = keys[start : start + PAGE]
                kept.update(
                    connection.execute(
                        sa.select(labels_table.c.fingerprint).where(
                            labels_table.c.fingerprint.in_(page)
                        )
                    ).scalars()
                )
            new = [{"fingerprint": key, **row} for key, row in rows.items() if key not in kept]
            for start in range(0, len(new), PAGE):
                connection.execute(_insert_new(connection), new[start : start + PAGE])
        return len(new)

    def labels(
        self,
        metric: str | None = None,
        level: str | None = None,
        labeller: str | None = None,
    ) -> builtins.list[Label]:
        """The labels kept, oldest first, of one ``metric``, ``level`` and ``labeller`` when
        given (each matches exactly)."""
        query = sa.select(labels_table).order_by(labels_table.c.created_at, labels_table.c.id)
        for column, value in (("metric", metric), ("level", level), ("labeller", labeller)):
            if value is not None:
                query = query.where(labels_table.c[column] == value)
        with self.engine.connect() as connection:
            found = _mappings(connection, query)
        return [_label(row) for row in found]

    def count_labels(self, metrics: Iterable[str] | None = None) -> int:
        """How many labels are kept (of ``metrics`` when given): one COUNT query, so a
        summary can say "not validated on your data" without reading any label."""
        query = sa.select(sa.func.count()).select_from(labels_table)
        if metrics is not None:
            query = query.where(labels_table.c.metric.in_(builtins.list(metrics)))
        with self.engine.connect() as connection:
            return int(connection.execute(query).scalar_one())

    def pipeline_outputs(self, ref: str) -> builtins.list[dict[str, Any] | None]:
        """What an experiment's pipeline returned per sample (``None`` for plain runs)."""
        info = self.get(ref)
        with self.engine.connect() as connection:
            return [
                row[0]
                for row in connection.execute(
                    sa.select(run_samples.c.pipeline)
                    .where(run_samples.c.run_id == info.id)
                    .order_by(run_samples.c.position)
                )
            ]


def _mappings(connection: sa.Connection, query: Any) -> Sequence[sa.RowMapping]:
    return connection.execute(query).mappings().all()


def _run_dir(result: EvaluationResult) -> str | None:
    """The run's own directory, unless it lives in a temporary one."""
    store = result.store
    if store is None or getattr(store, "_tempdir", None) is not None:
        return None
    return str(store.path.parent.resolve())


def _engine_options(url: sa.engine.URL) -> dict[str, Any]:
    if url.get_backend_name() == "sqlite":
        if url.database in (None, "", ":memory:"):  # one connection, or no shared database
            return {
                "connect_args": {"check_same_thread": False},
                "poolclass": sa.pool.StaticPool,
            }
        # Writers wait for each other instead of failing; WAL lets readers run alongside.
        return {"connect_args": {"timeout": 30}, "poolclass": sa.pool.NullPool}
    # A connection per unit of work: a store is used in bursts (record a run, read a page),
    # and nothing is left open between them.
    options: dict[str, Any] = {"poolclass": sa.pool.NullPool}
    if url.get_backend_name() == "postgresql" and "connect_timeout" not in url.query:
        # A server that does not answer is an error in seconds, not a hang.
        options["connect_args"] = {"connect_timeout": CONNECT_TIMEOUT_S}
    return options


#: SQLite result codes that are failures of the file or the disk, not of a statement:
#: permission, read-only, I/O, corrupt, full, cannot open, not a database.
_SQLITE_STORAGE_CODES = frozenset({3, 8, 10, 11, 13, 14, 26})


def _sqlite_error(error: BaseException, path: str, action: str) -> StoreError:
    """An SQLite or OS ``error`` on the store file ``path`` as one line that says what to do."""
    from ragmeter.results import storage_error

    found = storage_error(error, path, action=action)
    if found.corrupt:
        return StoreError(
            f"{path} is not a ragmeter database or is corrupt ({error}): move it aside or "
            "choose another store (--store, RAGMETER_STORE_URL)",
            corrupt=True,
        )
    return StoreError(f"run store: {found}", errno=found.errno)


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    if cursor.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()


def _flush(
    connection: sa.Connection, samples: list[dict[str, Any]], results: list[dict[str, Any]]
) -> None:
    for table, rows in ((run_samples, samples), (run_results, results)):
        if rows:
            connection.execute(table.insert(), rows)
            rows.clear()


def _info(row: sa.RowMapping) -> RunInfo:
    values = {f.name: row[f.name] for f in fields(RunInfo)}
    if values["created_at"].tzinfo is None:  # SQLite returns naive datetimes
        values["created_at"] = values["created_at"].replace(tzinfo=dt.timezone.utc)
    return RunInfo(**{**values, "params": row["params"] or {}, "tags": row["tags"] or []})


def _insert_new(connection: sa.Connection) -> Any:
    """An INSERT of labels that skips those another writer kept since they were looked up
    (their fingerprint is unique)."""
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        return postgresql_insert(labels_table).on_conflict_do_nothing(
            index_elements=["fingerprint"]
        )
    if connection.dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(labels_table).on_conflict_do_nothing(index_elements=["fingerprint"])
    return labels_table.insert()


def _fingerprint(label: Label) -> str:
    """What makes two labels the same: the item, the labeller and the value."""
    value = label.value
    if isinstance(value, int) and not isinstance(value, bool):
        value = float(value)  # 1 and 1.0 are the same score
    identity = [label.sample_key, label.metric, label.level, label.item, label.labeller, value]
    return hashlib.sha256(json.dumps(identity, ensure_ascii=False).encode("utf-8")).hexdigest()


def _label(row: sa.RowMapping) -> Label:
    created = row["created_at"]
    if created.tzinfo is None:  # SQLite returns naive datetimes
        created = created.replace(tzinfo=dt.timezone.utc)
    return Label(
        sample_id=row["sample_id"],
        sample_key=row["sample_key"],
        metric=row["metric"],
        level=row["level"],
        item=row["item"],
        value=row["value"],
        labeller=row["labeller"],
        created_at=created,
        note=row["note"],
    )


def _json_safe(value: Any) -> Any:
    """Plain JSON values: NaN and infinities become None (PostgreSQL's JSON refuses them),
    other objects their string form."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)
