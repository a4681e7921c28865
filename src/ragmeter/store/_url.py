"""Where the run store is (its URL), whether it exists yet and whether it may hold labels,
without SQLAlchemy for a plain SQLite file: ``ragmeter show RUN_DIR`` asks whether a store
holds labels of the run, and a store without any costs no import of the database layer."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path

DEFAULT_URL = "sqlite:///.ragmeter/runs.db"
#: The table of people's labels (``_schema.labels``).
LABELS_TABLE = "labels"
#: A SQLite URL whose path is the rest as it is (no query, no %-escapes to decode).
_PLAIN_SQLITE = "sqlite:///"


def store_url(url: str | None = None) -> str:
    """``url``, else ``$RAGMETER_STORE_URL``, else the embedded SQLite file. A PostgreSQL URL
    (``postgresql://user@host/db``) uses psycopg 3 (extra ``[postgres]``)."""
    url = url or os.environ.get("RAGMETER_STORE_URL") or DEFAULT_URL
    if url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def store_exists(url: str | None = None) -> bool:
    """Whether the run store at ``url`` (see :func:`store_url`) may hold runs: ``False`` only
    for a SQLite file that does not exist yet (opening it would create it).

    >>> store_exists("sqlite:////no/such/folder/runs.db"), store_exists("sqlite://")
    (False, True)
    """
    database = _plain_sqlite_file(url)
    if database is not None:
        return database in ("", ":memory:") or Path(database).exists()
    import sqlalchemy as sa

    resolved = store_url(url)

    try:
        parsed = sa.engine.make_url(resolved)
    except sa.exc.ArgumentError:
        return True  # opening it says what is wrong
    if parsed.get_backend_name() != "sqlite":
        return True
    found = parsed.database
    return found in (None, "", ":memory:") or Path(found).exists()


def may_hold_labels(url: str | None, metrics: Iterable[str]) -> bool:
    """Whether the run store at ``url`` may hold labels of ``metrics``: ``False`` only when
    a plain SQLite file surely holds none (read-only, with the standard library: what
    ``ragmeter show`` asks before it opens the store). Anything it cannot tell (another
    database, a file it cannot read) is ``True``: opening the store says what is wrong.

    >>> may_hold_labels("sqlite:////no/such/folder/runs.db", ["faithfulness"])
    False
    """
    database = _plain_sqlite_file(url)
    if database is None or database in ("", ":memory:"):
        return database is None
    if not Path(database).is_file():
        return False
    names = list(metrics)
    marks = ", ".join("?" * len(names))
    try:
        with contextlib.closing(
            sqlite3.connect(f"{Path(database).resolve().as_uri()}?mode=ro", uri=True)
        ) as db:
            found = db.execute(
                f"SELECT 1 FROM {LABELS_TABLE} WHERE metric IN ({marks}) LIMIT 1", names
            ).fetchone()
    except sqlite3.OperationalError as error:
        return "no such table" not in str(error)  # a store from before labels holds none
    except sqlite3.Error:
        return True
    return found is not None


def _plain_sqlite_file(url: str | None) -> str | None:
    """The database path of a SQLite URL written plainly (no query, no %-escapes), else
    None (another database, or a URL only SQLAlchemy can read)."""
    resolved = store_url(url)
    if resolved.startswith(_PLAIN_SQLITE) and not any(c in resolved for c in "?%"):
        return resolved[len(_PLAIN_SQLITE) :]
    return None
