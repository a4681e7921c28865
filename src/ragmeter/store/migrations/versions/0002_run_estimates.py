"""Each run keeps its metrics' means with their bootstrap intervals (``runs.estimates``), so
the dashboard's trends read one row per run instead of every sample of every run.

Runs recorded before it have none (NULL): their intervals are computed from their samples
when first shown, as before.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("estimates", sa.JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("estimates")
