"""The run store's tables (SQLAlchemy Core), the same on SQLite and PostgreSQL.

``runs`` holds one row per evaluation run with everything needed to trust and reproduce it;
``run_samples`` each sample's inputs (and, for experiments, the pipeline's outputs, latency
and error); ``run_results`` one row per sample and metric, so comparisons and aggregates are
plain SQL. Schema changes go through Alembic migrations (``migrations/versions``).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

from ragmeter.store._url import LABELS_TABLE

metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("name", String(200), nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("status", String(20), nullable=False),  # complete | partial
    Column("dataset_hash", String(64)),
    Column("dataset_path", Text),
    Column("n_samples", Integer, nullable=False),
    Column("metrics", JSON, nullable=False),  # [{name, direction, params, kind}]
    Column("aggregates", JSON, nullable=False),  # {metric: Aggregate.to_dict()}
    # {metric: {n, n_total, mean, ci, n_resamples, seed}}: means with bootstrap intervals, so
    # trends read no samples (NULL in runs recorded before migration 0002)
    Column("estimates", JSON),
    Column("config", JSON, nullable=False),  # judge, embeddings, prompt versions, usage...
    Column("params", JSON, nullable=False),  # the experiment's parameters
    Column("tags", JSON, nullable=False),  # free-form labels
    Column("notes", Text),
    Column("ragmeter_version", String(64)),
    Column("git_commit", String(64)),
    Column("git_dirty", Boolean),
    Column("run_dir", Text),
)

run_samples = Table(
    "run_samples",
    metadata,
    Column("run_id", String(32), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("sample_id", String(500), nullable=False),
    Column("row", Integer, nullable=False),
    Column("sample", JSON, nullable=False),
    Column("usage", JSON),
    Column("pipeline", JSON),  # an experiment's outputs, latency and error
)

run_results = Table(
    "run_results",
    metadata,
    Column("run_id", String(32), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("metric", String(200), primary_key=True),
    Column("status", String(20), nullable=False),
    Column("score", Float),
    Column("reason", Text),
    Column("error", Text),
    Column("details", JSON),
    Index("ix_run_results_metric", "run_id", "metric"),
)

# People's labels of what metrics judged (ragmeter.store.Label), independent of runs: a label
# names its sample by content (sample_key), so it applies to every run of that sample.
labels = Table(
    LABELS_TABLE,
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    # sha256 of (sample_key, metric, level, item, labeller, value): the same label imported
    # twice is stored once
    Column("fingerprint", String(64), nullable=False, unique=True),
    Column("sample_key", String(64), nullable=False, index=True),
    Column("sample_id", String(500), nullable=False),
    Column("metric", String(200), nullable=False),
    Column("level", String(20), nullable=False),
    Column("item", JSON),  # the claim's text, the context's index, null for the sample
    Column("value", JSON, nullable=False),
    Column("labeller", String(200), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("note", Text, nullable=False),
    Index("ix_labels_metric_level", "metric", "level"),
)
