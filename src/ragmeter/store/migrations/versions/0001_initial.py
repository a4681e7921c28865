"""The first schema: runs, run_samples, run_results.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("dataset_hash", sa.String(64)),
        sa.Column("dataset_path", sa.Text),
        sa.Column("n_samples", sa.Integer, nullable=False),
        sa.Column("metrics", sa.JSON, nullable=False),
        sa.Column("aggregates", sa.JSON, nullable=False),
        sa.Column("config", sa.JSON, nullable=False),
        sa.Column("params", sa.JSON, nullable=False),
        sa.Column("tags", sa.JSON, nullable=False),
        sa.Column("notes", sa.Text),
        sa.Column("ragmeter_version", sa.String(64)),
        sa.Column("git_commit", sa.String(64)),
        sa.Column("git_dirty", sa.Boolean),
        sa.Column("run_dir", sa.Text),
    )
    op.create_index("ix_runs_name", "runs", ["name"])
    op.create_index("ix_runs_created_at", "runs", ["created_at"])
    op.create_table(
        "run_samples",
        sa.Column(
            "run_id",
            sa.String(32),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("sample_id", sa.String(500), nullable=False),
        sa.Column("row", sa.Integer, nullable=False),
        sa.Column("sample", sa.JSON, nullable=False),
        sa.Column("usage", sa.JSON),
        sa.Column("pipeline", sa.JSON),
    )
    op.create_table(
        "run_results",
        sa.Column(
            "run_id",
            sa.String(32),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("metric", sa.String(200), primary_key=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("score", sa.Float),
        sa.Column("reason", sa.Text),
        sa.Column("error", sa.Text),
        sa.Column("details", sa.JSON),
    )
    op.create_index("ix_run_results_metric", "run_results", ["run_id", "metric"])


def downgrade() -> None:
    op.drop_table("run_results")
    op.drop_table("run_samples")
    op.drop_table("runs")
