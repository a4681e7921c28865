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
import os
import sqlite3
import subprocess
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ragmeter._services import redact_url
from ragmeter._version import __version__
from ragmeter.results import EvaluationResult, MetricInfo, SampleResult, sqlite_code, storage_error
from ragmeter.store._schema import run_results, run_samples, runs

DEFAULT_URL = "sqlite:///.ragmeter/runs.db"
_MIGRATIONS = threading.Lock()
#: The newest migration's revision (a test ties it to ``migrations/versions``): a store stamped
#: with it is opened without loading Alembic.
HEAD_REVISION = "0002"
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
    safe: dict[str, dict[str, Any]] = _json_safe(found)
    return safe


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


def store_url(url: str | None = None) -> str:
    """``url``, else ``$RAGMETER_STORE_URL``, else the embedded SQLite file. A PostgreSQL URL
    (``postgresql://user@host/db``) uses psycopg 3 (extra ``[postgres]``)."""
    url = url or os.environ.get("RAGMETER_STORE_URL") or DEFAULT_URL
    if url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def store_exists(url: str | None = None) -> bool:
    """Whether the run store at ``url`` (see :func:`store_url`) may hold runs: ``False`` only
    for a SQLite file that does not exist yet (opening it would create it)."""
    resolved = store_url(url)
    try:
        parsed = sa.engine.make_url(resolved)
    except sa.exc.ArgumentError:
        return True  # opening it says what is wrong
    if parsed.get_backend_name() != "sqlite":
        return True
    database = parsed.database
    return database in (None, "", ":memory:") or Path(database).exists()


def _redacted(url: str) -> str:
    """``url`` as it may be shown: no user, password or ``?password=`` (also when SQLAlchemy
    cannot read it)."""
    return redact_url(url)


class Store:
    """Runs in a database: SQLite file by default, PostgreSQL for teams."""

    def __init__(self, url: str | None = None) -> None:
        self.url = store_url(url)
        try:
            parsed = sa.engine.make_url(self.url)
        except sa.exc.ArgumentError:
            raise ValueError(
                f"the run store URL {_redacted(self.url)!r} cannot be read: write it as "
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
                f"the run store {_redacted(self.url)} needs a driver: "
                f"pip install 'ragmeter[postgres]' ({error})"
            ) from error
        if parsed.get_backend_name() == "sqlite":
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
        sa.event.listen(self.engine, "handle_error", self._storage_error)
        self._upgrade()

    def __repr__(self) -> str:
        return f"Store({_redacted(self.url)!r})"

    def _storage_error(self, context: sa.engine.ExceptionContext) -> StoreError | None:
        """A failure of the storage itself as a :class:`StoreError` (SQLAlchemy raises it in
        place of its own); other database errors (a lock, a migration race) as they are."""
        original = context.original_exception
        parsed = sa.engine.make_url(self.url)
        if isinstance(original, sqlite3.Error):
            if sqlite_code(original) not in _SQLITE_STORAGE_CODES:
                return None
            return _sqlite_error(original, parsed.database or self.url, "use")
        if context.connection is None or context.is_disconnect:
            said = str(original).strip().splitlines()[0] if str(original).strip() else ""
            return StoreError(
                f"cannot reach the run store {_redacted(self.url)} "
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
            connection.execute(runs.insert().values(**_row(info)))
            samples_page: list[dict[str, Any]] = []
            results_page: list[dict[str, Any]] = []
            for position, sample in enumerate(result):
                extra = pipeline[position] if pipeline is not None else None
                samples_page.append(
                    {
                        "run_id": run_id,
                        "position": position,
                        "sample_id": sample.sample_id,
                        "row": sample.row,
                        "sample": _json_safe(sample.sample.to_record()),
                        "usage": sample.usage,
                        "pipeline": _json_safe(dict(extra)) if extra is not None else None,
                    }
                )
                for metric, score in sample.scores.items():
                    results_page.append(
                        {
                            "run_id": run_id,
                            "position": position,
                            "metric": metric,
                            "status": score.status.value,
                            "score": score.score,
                            "reason": score.reason,
                            "error": score.error,
                            "details": _json_safe(score.details.to_dict())
                            if score.details
                            else None,
                        }
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
            rows = connection.execute(query).mappings().all()
        found = [_info(row) for row in rows]
        if tag is not None:
            found = [info for info in found if tag in info.tags]
        return found[:limit] if limit is not None else found

    def get(self, ref: str) -> RunInfo:
        """The run with id ``ref``, the one whose id starts with ``ref``, or the latest run
        named ``ref``."""
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(runs).where(runs.c.id == ref)).mappings().first()
            if row is None:
                prefixed = (
                    connection.execute(
                        sa.select(runs).where(runs.c.id.startswith(ref, autoescape=True))
                    )
                    .mappings()
                    .all()
                    if len(ref) >= 4
                    else []
                )
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
                row = (
                    connection.execute(
                        sa.select(runs).where(runs.c.name == ref).order_by(runs.c.created_at.desc())
                    )
                    .mappings()
                    .first()
                )
        if row is None:
            raise RunNotFoundError(
                f"no run {ref!r} in {_redacted(self.url)}: give an id, an id prefix (4+ "
                "characters) or a run name (ragmeter runs list shows them)"
            )
        return _info(row)

    def load(self, ref: str) -> EvaluationResult:
        """A stored run as an :class:`EvaluationResult` (samples in dataset order)."""
        info = self.get(ref)
        with self.engine.connect() as connection:
            sample_rows = (
                connection.execute(
                    sa.select(run_samples)
                    .where(run_samples.c.run_id == info.id)
                    .order_by(run_samples.c.position)
                )
                .mappings()
                .all()
            )
            result_rows = (
                connection.execute(
                    sa.select(run_results)
                    .where(run_results.c.run_id == info.id)
                    .order_by(run_results.c.position, run_results.c.metric)
                )
                .mappings()
                .all()
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
    if samples:
        connection.execute(run_samples.insert(), samples)
        samples.clear()
    if results:
        connection.execute(run_results.insert(), results)
        results.clear()


def _row(info: RunInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "name": info.name,
        "created_at": info.created_at,
        "status": info.status,
        "dataset_hash": info.dataset_hash,
        "dataset_path": info.dataset_path,
        "n_samples": info.n_samples,
        "metrics": info.metrics,
        "aggregates": info.aggregates,
        "config": info.config,
        "params": info.params,
        "tags": info.tags,
        "notes": info.notes,
        "ragmeter_version": info.ragmeter_version,
        "git_commit": info.git_commit,
        "git_dirty": info.git_dirty,
        "run_dir": info.run_dir,
        "estimates": info.estimates,
    }


def _info(row: sa.RowMapping) -> RunInfo:
    created = row["created_at"]
    if created.tzinfo is None:  # SQLite returns naive datetimes
        created = created.replace(tzinfo=dt.timezone.utc)
    return RunInfo(
        id=row["id"],
        name=row["name"],
        created_at=created,
        status=row["status"],
        n_samples=row["n_samples"],
        dataset_hash=row["dataset_hash"],
        dataset_path=row["dataset_path"],
        metrics=row["metrics"],
        aggregates=row["aggregates"],
        config=row["config"],
        params=row["params"] or {},
        tags=row["tags"] or [],
        notes=row["notes"],
        ragmeter_version=row["ragmeter_version"],
        git_commit=row["git_commit"],
        git_dirty=row["git_dirty"],
        run_dir=row["run_dir"],
        estimates=row["estimates"],
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
