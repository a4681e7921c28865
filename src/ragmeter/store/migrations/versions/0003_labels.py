"""People's labels of what metrics judged (``labels``): per sample, claim or context, with who
and when; several labellers per item, the same label stored once (``fingerprint``).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "labels",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("fingerprint", sa.String(64), nullable=False, unique=True),
        sa.Column("sample_key", sa.String(64), nullable=False),
        sa.Column("sample_id", sa.String(500), nullable=False),
        sa.Column("metric", sa.String(200), nullable=False),
        sa.Column("level", sa.String(20), nullable=False),
        sa.Column("item", sa.JSON),
        sa.Column("value", sa.JSON, nullable=False),
        sa.Column("labeller", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("note", sa.Text, nullable=False),
    )
    op.create_index("ix_labels_sample_key", "labels", ["sample_key"])
    op.create_index("ix_labels_metric_level", "labels", ["metric", "level"])


def downgrade() -> None:
    op.drop_table("labels")
