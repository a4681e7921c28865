"""SQL equivalence: does the generated SQL return what the reference SQL returns?

The shipped example of a metric that is neither judged nor a text comparison: the sample's
``response`` is a generated SQL query, its ``reference`` the reference query, and
``metadata["db_path"]`` the SQLite database both run on (execution accuracy, as in the
Spider and BIRD text-to-SQL benchmarks).

Both queries run read-only: the database is opened with ``mode=ro``, ``PRAGMA query_only`` is
on, an authorizer allows reading only, and a query must be one ``SELECT`` / ``WITH``
statement.

Both queries are bounded in time and memory, by limits that are options of the metric:

- ``timeout`` (10 s): a wall-clock deadline; a progress handler interrupts SQLite itself.
- ``max_cell_bytes`` (1,000,000): the largest string or blob. It is SQLite's own length
  limit (``SQLITE_LIMIT_LENGTH``), so SQLite refuses to build or read a bigger value (or to
  sort or store a bigger row) instead of handing it over; on Python 3.10, whose ``sqlite3``
  cannot set it, a value is checked as it arrives.
- ``max_rows`` (100,000) and ``max_result_bytes`` (16,000,000): rows are fetched one at a
  time and counted, their cells' bytes too (a text's UTF-8 bytes, a blob's length, 8 for a
  number or NULL), before anything else is done with them.

A query past a limit fails the sample (no score) with the limit, its value and the option to
raise: the metric cannot compare what it did not fetch.

The results are compared as multisets of rows (order ignored) unless the reference query has
a top-level ``ORDER BY``; then in order. Column names are ignored, the number of columns must
match, numbers are equal within ``float_tolerance`` (``1`` equals ``1.0``), other values
exactly. The score is 1 or 0, the reason says what differed.

A generated query that is refused or fails (a syntax error, an unknown column) is wrong: 0,
with the error as the reason. When execution is impossible - no database, a
missing one, or a reference query that itself fails - the metric falls back to
``fallback`` (any metric, e.g. a judge comparing the two queries) and records
``details["fallback"]``; without one the sample is not applicable.

:class:`SQLExecution` is the execution alone; :class:`SQLEquivalence` composes it with the
fallback (a :class:`~ragmeter.metrics.Fallback`).
"""

from __future__ import annotations

import asyncio
import functools
import math
import numbers
import os
import re
import sqlite3
import sys
import threading
import time
import urllib.parse
from collections import Counter, OrderedDict
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings
from ragmeter.metrics._base import Metric, MetricResult, Requirements
from ragmeter.metrics._sample import CannotScore, Fallback, SampleMetric
from ragmeter.metrics._spec import builtin_metric
from ragmeter.steps import Facts

Row = tuple[Any, ...]

#: The authorizer's allow-list: reading tables and views, calling functions, recursive CTEs.
_READ_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
#: Whitespace, semicolons and comments (a comment never runs past its first ``*/``).
_SKIPPABLE = re.compile(r"(?:\s|;|--[^\n]*(?:\n|\Z)|/\*(?:[^*]|\*(?!/))*(?:\*/|\Z))*")
_FENCE = re.compile(r"\A```[A-Za-z]*[ \t]*\n?(.*?)\n?```\Z", re.DOTALL)
#: SQLite's result codes for an interrupted query and a string or blob over the length limit
#: (``sqlite3`` names them from Python 3.11 only).
_SQLITE_INTERRUPT, _SQLITE_TOOBIG = 9, 18
#: Above this many unmatched pairs, rows are matched in sorted order instead of one by one.
_MAX_PAIRINGS = 4_000_000


class QueryRefused(ValueError):
    """A query that is not one read-only SELECT / WITH statement."""


class QueryLimit(ValueError):
    """A query that goes past one of the metric's limits: it cannot be compared. The message
    names the limit, its value and the option to raise."""


class QueryTooLarge(QueryLimit):
    """A query whose result is larger than the metric compares (``max_rows``,
    ``max_result_bytes``, ``max_cell_bytes``)."""


class QueryTimeout(QueryLimit):
    """A query that runs longer than the metric's ``timeout``."""


@dataclass(frozen=True)
class QueryResult:
    columns: int
    rows: list[Row]


@dataclass(frozen=True)
class ExecutionImpossible:
    """Why execution cannot decide a sample (no database, or the reference query fails)."""

    reason: str


def single_select(sql: str) -> str:
    """``sql`` as one statement to run (a surrounding markdown code fence and trailing
    semicolons dropped), or :class:`QueryRefused` when it is not one SELECT / WITH statement.

    >>> single_select("```sql\\nSELECT 1;\\n```")
    'SELECT 1'
    >>> single_select("SELECT 1; DROP TABLE users")
    Traceback (most recent call last):
    ...
    ragmeter.metrics.custom.sql_equivalence.QueryRefused: more than one statement
    """
    text = sql.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    body = text[_SKIPPABLE.match(text).end() :]  # type: ignore[union-attr]  # always matches
    keyword = re.match(r"[A-Za-z]+", body)
    if keyword is None or keyword.group(0).upper() not in ("SELECT", "WITH"):
        start = body[:30] or "nothing"
        raise QueryRefused(f"not a SELECT or WITH query (it starts with {start!r})")
    for i, char in enumerate(text):
        if char == ";" and sqlite3.complete_statement(text[: i + 1]):
            rest = text[i + 1 :]
            if _SKIPPABLE.fullmatch(rest) is None:
                raise QueryRefused("more than one statement")
            return text[:i].rstrip()
    return text


def has_top_level_order_by(sql: str) -> bool:
    """Whether the query's outermost SELECT has an ORDER BY (not one in a subquery, a CTE, a
    window or a string).

    >>> has_top_level_order_by("SELECT a FROM t ORDER BY a DESC LIMIT 3")
    True
    >>> has_top_level_order_by(
    ...     "WITH x AS (SELECT a FROM t ORDER BY a) "
    ...     "SELECT 'order by', rank() OVER (ORDER BY a) FROM x"
    ... )
    False
    """
    outer: list[str] = []
    depth, i, n = 0, 0, len(sql)
    while i < n:
        char = sql[i]
        if char in "'\"`[":
            close = "]" if char == "[" else char
            end = sql.find(close, i + 1)
            while end != -1 and close != "]" and sql.startswith(close * 2, end):
                end = sql.find(close, end + 2)  # a doubled quote escapes itself
            i = n if end == -1 else end + 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end == -1 else end + 1
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end == -1 else end + 2
        else:
            if char == "(":
                depth += 1
            elif char == ")":
                depth = max(depth - 1, 0)
            elif depth == 0:
                outer.append(char)
            i += 1
            continue
        outer.append(" ")  # a string, a quoted name or a comment
    return re.search(r"\bORDER\s+BY\b", "".join(outer), re.IGNORECASE) is not None


def _cells_equal(a: Any, b: Any, tolerance: float) -> bool:
    numeric = (int, float)
    if isinstance(a, numeric) and isinstance(b, numeric):
        return a == b or math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)
    return type(a) is type(b) and a == b


def rows_equal(a: Row, b: Row, tolerance: float = 1e-6) -> bool:
    """Whether two rows hold the same values (numbers within ``tolerance``).

    >>> rows_equal((1, "a", 0.30000000000000004), (1.0, "a", 0.3)), rows_equal((1,), ("1",))
    (True, False)
    """
    return len(a) == len(b) and all(_cells_equal(x, y, tolerance) for x, y in zip(a, b))


def _sort_key(row: Row) -> tuple[tuple[int, Any], ...]:
    def cell(value: Any) -> tuple[int, Any]:
        if value is None:
            return (0, 0)
        if isinstance(value, int | float):
            return (1, float(value))
        if isinstance(value, str):
            return (2, value)
        return (3, bytes(value) if isinstance(value, bytes | bytearray | memoryview) else 0)

    return tuple(cell(v) for v in row)


def _unmatched(
    reference: list[Row], generated: list[Row], tolerance: float
) -> tuple[Counter[Row], Counter[Row]]:
    """The reference rows the generated result lacks and the generated rows the reference
    lacks, as multisets: exact matches first, then the rest within the tolerance."""
    missing = Counter(reference)
    extra = Counter(generated)
    exact = missing & extra
    missing -= exact
    extra -= exact
    left, right = list(missing.elements()), list(extra.elements())
    if not left or not right:
        return missing, extra
    if len(left) * len(right) <= _MAX_PAIRINGS:
        unused = right
        for row in left:
            for j, candidate in enumerate(unused):
                if rows_equal(row, candidate, tolerance):
                    missing[row] -= 1
                    extra[candidate] -= 1
                    del unused[j]
                    break
    else:  # too many to pair one by one: pair them in sorted order
        for row, candidate in zip(sorted(left, key=_sort_key), sorted(right, key=_sort_key)):
            if rows_equal(row, candidate, tolerance):
                missing[row] -= 1
                extra[candidate] -= 1
    return +missing, +extra


def _show(row: Row, limit: int = 200) -> str:
    """``row`` as its repr, at most ``limit`` characters (long values are cut before their
    repr is made: a cell can hold a megabyte)."""

    def cell(value: Any) -> str:
        if isinstance(value, str | bytes) and len(value) > limit:
            return repr(value[:limit])
        return repr(value)

    text = ", ".join(cell(value) for value in row).join("()")  # one cell: no trailing comma
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compare_results(
    reference: QueryResult, generated: QueryResult, *, ordered: bool, tolerance: float = 1e-6
) -> MetricResult:
    """1 when ``generated`` holds the reference's rows (in order when ``ordered``), else 0
    with what differed.

    >>> ref = QueryResult(2, [("a", 1), ("b", 2)])
    >>> compare_results(ref, QueryResult(2, [("b", 2.0), ("a", 1)]), ordered=False).score
    1.0
    >>> print(compare_results(ref, QueryResult(2, [("b", 2), ("a", 1)]), ordered=True).reason)
    row 1 differs (the reference is ordered): generated ('b', 2), reference ('a', 1)
    """
    details: dict[str, Any] = {
        "ordered": ordered,
        "columns": reference.columns,
        "reference_rows": len(reference.rows),
        "generated_rows": len(generated.rows),
    }
    if generated.columns != reference.columns:
        return MetricResult.ok(
            0.0,
            f"the generated query returns {generated.columns} column(s), the reference "
            f"{reference.columns}",
            **{**details, "generated_columns": generated.columns},
        )
    counts = ""
    if len(generated.rows) != len(reference.rows):
        counts = (
            f"the generated query returns {len(generated.rows)} row(s), the reference "
            f"{len(reference.rows)}"
        )
    if ordered:
        for i, (ref_row, gen_row) in enumerate(zip(reference.rows, generated.rows)):
            if not rows_equal(ref_row, gen_row, tolerance):
                where = f"row {i + 1} differs (the reference is ordered): generated "
                where += f"{_show(gen_row)}, reference {_show(ref_row)}"
                return MetricResult.ok(
                    0.0,
                    f"{counts}; {where}" if counts else where,
                    **details,
                    first_difference={
                        "row": i + 1,
                        "generated": _show(gen_row),
                        "reference": _show(ref_row),
                    },
                )
        if counts:
            shorter = min(len(generated.rows), len(reference.rows))
            return MetricResult.ok(
                0.0,
                f"{counts}; the first {shorter} row(s) agree",
                **details,
                first_difference={"row": shorter + 1},
            )
        return MetricResult.ok(
            1.0, f"same {len(reference.rows)} row(s), in the reference's order", **details
        )
    missing, extra = _unmatched(reference.rows, generated.rows, tolerance)
    if not missing and not extra:
        return MetricResult.ok(1.0, f"same {len(reference.rows)} row(s) (order ignored)", **details)
    parts = [counts] if counts else []
    difference: dict[str, Any] = {}
    if missing:
        first = next(row for row in reference.rows if missing[row] > 0)
        parts.append(f"the generated result lacks the reference row {_show(first)}")
        difference["reference"] = _show(first)
    if extra:
        first = next(row for row in generated.rows if extra[row] > 0)
        parts.append(f"it has the row {_show(first)}, which the reference lacks")
        difference["generated"] = _show(first)
    return MetricResult.ok(
        0.0,
        "; ".join(parts),
        **details,
        rows_missing=sum(missing.values()),
        rows_extra=sum(extra.values()),
        first_difference=difference,
    )


def _is(error: sqlite3.Error, code: int, message: str) -> bool:
    """Whether ``error`` is SQLite's (primary) error ``code``; its message where Python 3.10
    does not say the code."""
    errorcode = getattr(error, "sqlite_errorcode", None)
    return errorcode & 0xFF == code if isinstance(errorcode, int) else message in str(error)


def _authorize(action: int, *args: Any) -> int:
    return sqlite3.SQLITE_OK if action in _READ_ACTIONS else sqlite3.SQLITE_DENY


def _cell_bytes(value: Any) -> int:
    """What a cell counts toward ``max_result_bytes``: a text's UTF-8 bytes, a blob's length,
    8 for a number or NULL.

    >>> _cell_bytes("été"), _cell_bytes(b"ab"), _cell_bytes(2.5), _cell_bytes(None)
    (5, 2, 8, 8)
    """
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bytes):
        return len(value)
    return 8


def _limit_length(connection: sqlite3.Connection, max_bytes: int) -> None:
    """Make SQLite refuse to build or read a string or blob over ``max_bytes`` (Python 3.10's
    ``sqlite3`` cannot: values are then checked as they arrive)."""
    if sys.version_info >= (3, 11):
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max_bytes)


@functools.cache
def _length_ceiling() -> int:
    """The largest string or blob this SQLite can be allowed (``SQLITE_MAX_LENGTH``)."""
    if sys.version_info >= (3, 11):
        with closing(sqlite3.connect(":memory:")) as connection:
            connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 2**31 - 1)  # clamped to the ceiling
            return connection.getlimit(sqlite3.SQLITE_LIMIT_LENGTH)
    return 1_000_000_000  # SQLite's default SQLITE_MAX_LENGTH


def _is_number(value: Any) -> bool:
    """Whether ``value`` is a real number (numpy's too), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _whole(name: str, value: Any, unit: str) -> int:
    """``value`` as a positive whole number, or a :class:`ValueError` naming option ``name``."""
    if not _is_number(value) or not math.isfinite(value) or value < 1 or value != int(value):
        raise ValueError(f"{name} must be a positive whole number of {unit}, got {value!r}")
    return int(value)


def _check_limits(
    timeout: float, max_rows: int, max_cell_bytes: int, max_result_bytes: int
) -> tuple[float, int, int, int]:
    """The limits, validated: positive numbers (whole ones for rows and bytes)."""
    if not _is_number(timeout) or not 0 < timeout < math.inf:
        raise ValueError(f"timeout must be a positive, finite number of seconds, got {timeout!r}")
    rows = _whole("max_rows", max_rows, "rows")
    cell = _whole("max_cell_bytes", max_cell_bytes, "bytes")
    result = _whole("max_result_bytes", max_result_bytes, "bytes")
    if cell > _length_ceiling():
        raise ValueError(
            f"max_cell_bytes can be at most {_length_ceiling():,} (SQLite's own maximum), "
            f"got {max_cell_bytes!r}"
        )
    return float(timeout), rows, cell, result


@builtin_metric(
    "sql_execution",
    family="custom",
    rank=400,
    summary="sql_equivalence's execution alone: n/a where the queries cannot be run",
)
class SQLExecution(SampleMetric):
    """1 when the generated SQL returns the reference SQL's rows on the sample's SQLite
    database, else 0; :class:`~ragmeter.metrics.CannotScore` where execution cannot decide.

    ``db_path_key`` names the metadata field with the database path (``db_path``); relative
    paths are under ``db_dir`` when given. An empty generated query is a wrong one, not
    "nothing to judge": blank fields are scored. Calls no judge.

    Each query is bounded (see the module's documentation): ``timeout`` seconds (10),
    ``max_rows`` rows (100,000), strings and blobs of ``max_cell_bytes`` (1,000,000) and
    ``max_result_bytes`` in all (16,000,000). A query past one fails the sample, with the
    limit named; positive numbers only (whole ones for rows and bytes).
    """

    name = "sql_execution"
    requires: Requirements = (("response",), ("reference",))
    scores_blank_fields: ClassVar[bool] = True
    _uses_judge = False
    #: The sample metadata field that holds the database path.
    db_path_key: str = "db_path"
    #: Reference outcomes remembered per (database, reference query), for :meth:`cannot_score`.
    memory_size: ClassVar[int] = 1024

    def __init__(
        self,
        *,
        db_path_key: str | None = None,
        db_dir: str | os.PathLike[str] | None = None,
        timeout: float = 10.0,
        float_tolerance: float = 1e-6,
        max_rows: int = 100_000,
        max_cell_bytes: int = 1_000_000,
        max_result_bytes: int = 16_000_000,
    ) -> None:
        limits = _check_limits(timeout, max_rows, max_cell_bytes, max_result_bytes)
        if not _is_number(float_tolerance) or not 0 <= float_tolerance < math.inf:
            raise ValueError(f"float_tolerance must be a number >= 0, got {float_tolerance!r}")
        super().__init__()
        if db_path_key is not None:
            self.db_path_key = db_path_key
        self.db_dir = Path(db_dir) if db_dir is not None else None
        self.timeout, self.max_rows, self.max_cell_bytes, self.max_result_bytes = limits
        self.float_tolerance = float(float_tolerance)
        self._memory: OrderedDict[tuple[Any, ...], str | None] = OrderedDict()
        self._lock = threading.Lock()

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "db_path_key": self.db_path_key,
            "timeout": self.timeout,
            "float_tolerance": self.float_tolerance,
            "max_rows": self.max_rows,
            "max_cell_bytes": self.max_cell_bytes,
            "max_result_bytes": self.max_result_bytes,
        }
        if self.db_dir is not None:
            params["db_dir"] = str(self.db_dir)
        return params

    # -- executing ---------------------------------------------------------------------------
    def database(self, sample: Sample) -> Path | ExecutionImpossible:
        """The sample's database file, or why there is none."""
        value = sample.metadata.get(self.db_path_key)
        if value is None or value == "":
            return ExecutionImpossible(
                f"no database (the sample has no metadata {self.db_path_key!r})"
            )
        if not isinstance(value, str | os.PathLike):
            return ExecutionImpossible(f"metadata {self.db_path_key!r} is not a path: {value!r}")
        path = Path(value)
        if self.db_dir is not None and not path.is_absolute():
            path = self.db_dir / path
        if not path.is_file():
            return ExecutionImpossible(f"the database {str(path)!r} does not exist")
        return path

    def _connect(self, path: Path) -> sqlite3.Connection:
        uri = f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro"
        connection = sqlite3.connect(uri, uri=True, timeout=self.timeout)
        try:
            connection.text_factory = lambda data: data.decode("utf-8", "replace")
            connection.execute("PRAGMA query_only = ON")
            _limit_length(connection, self.max_cell_bytes)
            connection.set_authorizer(_authorize)
        except BaseException:
            connection.close()
            raise
        return connection

    def _run(self, connection: sqlite3.Connection, sql: str) -> QueryResult:
        """The query's result, within the limits: :class:`QueryLimit` past one of them."""
        statement = single_select(sql)
        deadline = time.monotonic() + self.timeout
        # Every 1000 virtual-machine steps: past the deadline, SQLite stops with "interrupted".
        connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
        rows: list[Row] = []
        size = 0
        cursor = None
        try:
            cursor = connection.execute(statement)
            columns = len(cursor.description or ())
            for row in cursor:  # one row at a time: counted before anything else holds it
                for value in row:  # _cell_bytes, inlined: it runs for every cell
                    if isinstance(value, str | bytes):
                        cell = _cell_bytes(value)
                        if cell > self.max_cell_bytes:  # SQLite refuses it first from 3.11
                            raise self._too_big()
                        size += cell
                    else:
                        size += 8
                if size > self.max_result_bytes:
                    raise QueryTooLarge(
                        f"returns more than {self.max_result_bytes:,} bytes "
                        "(raise max_result_bytes to compare)"
                    )
                if len(rows) == self.max_rows:
                    raise QueryTooLarge(
                        f"returns more than {self.max_rows:,} rows (raise max_rows to compare)"
                    )
                if time.monotonic() > deadline:
                    raise self._timed_out()
                rows.append(tuple(row))
        except sqlite3.Error as error:
            if _is(error, _SQLITE_INTERRUPT, "interrupted") and time.monotonic() > deadline:
                raise self._timed_out() from None
            if _is(error, _SQLITE_TOOBIG, "string or blob too big"):
                raise self._too_big() from None
            raise
        finally:
            if cursor is not None:
                cursor.close()  # frees the statement's values now
            connection.set_progress_handler(None, 0)
        return QueryResult(columns, rows)

    def _too_big(self) -> QueryTooLarge:
        return QueryTooLarge(
            f"needs a string or blob of more than {self.max_cell_bytes:,} bytes "
            "(raise max_cell_bytes to compare)"
        )

    def _timed_out(self) -> QueryTimeout:
        return QueryTimeout(f"takes more than {self.timeout:g} s (raise timeout to compare)")

    def _reference(self, connection: sqlite3.Connection, sample: Sample) -> QueryResult | str:
        """The reference's result, or why it has none (:class:`QueryLimit` is raised: the
        reference may work, the metric cannot compare it)."""
        try:
            return self._run(connection, sample.reference or "")
        except QueryLimit:
            raise
        except QueryRefused as error:
            return f"the reference query is refused: {error}"
        except (sqlite3.Error, ValueError) as error:
            return f"the reference query fails: {error}"

    def compare(self, sample: Sample) -> MetricResult | ExecutionImpossible:
        """Execute both queries and compare (blocking; the runner calls it in a thread)."""
        path = self.database(sample)
        if isinstance(path, ExecutionImpossible):
            return path
        try:
            connection = self._connect(path)
        except sqlite3.Error as error:
            return ExecutionImpossible(f"cannot open the database {str(path)!r}: {error}")
        with closing(connection):
            try:
                reference = self._reference(connection, sample)
            except QueryLimit as error:
                return MetricResult.failed(f"the reference query {error}")
            if isinstance(reference, str):
                return ExecutionImpossible(reference)
            try:
                generated = self._run(connection, sample.response or "")
            except QueryRefused as error:
                return MetricResult.ok(0.0, f"the generated query is refused: {error}")
            except QueryLimit as error:
                return MetricResult.failed(f"the generated query {error}")
            except (sqlite3.Error, ValueError) as error:
                return MetricResult.ok(0.0, f"the generated query fails: {error}")
        return compare_results(
            reference,
            generated,
            ordered=has_top_level_order_by(sample.reference or ""),
            tolerance=self.float_tolerance,
        )

    def impossible(self, sample: Sample) -> str | None:
        """Why execution cannot decide ``sample``, or ``None`` when it can. Runs the reference
        query (once per database state and query: remembered)."""
        path = self.database(sample)
        if isinstance(path, ExecutionImpossible):
            return path.reason
        try:
            stat = path.stat()
        except OSError as error:
            return f"the database {str(path)!r} cannot be read: {error}"
        key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, sample.reference)
        with self._lock:
            if key in self._memory:
                self._memory.move_to_end(key)
                return self._memory[key]
        try:
            with closing(self._connect(path)) as connection:
                outcome = self._reference(connection, sample)
        except sqlite3.Error as error:
            outcome = f"cannot open the database {str(path)!r}: {error}"
        except QueryLimit:
            outcome = None  # executable: compare() reports the limit as the sample's failure
        reason = outcome if isinstance(outcome, str) else None
        with self._lock:
            self._memory[key] = reason
            while len(self._memory) > self.memory_size:
                self._memory.popitem(last=False)
        return reason

    # -- the SampleMetric protocol -----------------------------------------------------------
    def cannot_score(self, sample: Sample) -> str | None:
        """Why execution cannot decide ``sample`` (runs the reference query, remembered)."""
        return self.impossible(sample)

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        try:
            outcome = await asyncio.to_thread(self.compare, sample)
        except Exception as error:  # noqa: BLE001 - never lose the run over one sample
            return MetricResult.failed(f"{type(error).__name__}: {error}")
        if isinstance(outcome, ExecutionImpossible):
            raise CannotScore(outcome.reason)
        return outcome


@builtin_metric(
    "sql_equivalence",
    family="custom",
    rank=390,
    summary=(
        "1 if the generated SQL returns the reference SQL's rows on the SQLite database in "
        "metadata db_path (execution accuracy), else 0; no judge"
    ),
)
class SQLEquivalence(Fallback):
    """1 when the generated SQL returns the reference SQL's rows on the sample's SQLite
    database, else 0 (execution accuracy).

    ``db_path_key`` names the metadata field with the database path (``db_path``); relative
    paths are under ``db_dir`` when given. ``fallback`` scores the samples execution cannot
    decide (see the module's documentation): it is ``Fallback(SQLExecution(...), fallback)``,
    so a judged fallback gets the run's judge, is cached and counted like any judge call, and
    is asked only where execution is impossible. The queries run in worker threads,
    ``concurrency`` samples at once.

    Each query is bounded: ``timeout`` seconds (10), ``max_rows`` rows (100,000), strings and
    blobs of at most ``max_cell_bytes`` (1,000,000, enforced by SQLite itself) and
    ``max_result_bytes`` in all (16,000,000, counted as rows arrive). A query past a limit
    fails the sample - no score, no fallback - with the limit, its value and the option to
    raise; other samples are unaffected. The limits must be positive numbers.

    >>> import sqlite3, tempfile, os
    >>> db = os.path.join(tempfile.mkdtemp(), "shop.db")
    >>> with sqlite3.connect(db) as connection:
    ...     _ = connection.executescript(
    ...         "CREATE TABLE item(name TEXT, price REAL);"
    ...         "INSERT INTO item VALUES ('pen', 1.5), ('ink', 4.0), ('pad', 2.25);"
    ...     )
    >>> connection.close()
    >>> metric = SQLEquivalence()
    >>> def check(generated):
    ...     reference = "SELECT name FROM item WHERE price >= 2.25 ORDER BY name"
    ...     sample = Sample(response=generated, reference=reference, metadata={"db_path": db})
    ...     result = metric.score(sample)
    ...     return result.score, result.reason
    >>> check("select i.name from item i where i.price > 2 order by 1")
    (1.0, "same 2 row(s), in the reference's order")
    >>> check("select name from item where price > 2 order by name desc")
    (0.0, "row 1 differs (the reference is ordered): generated ('pad'), reference ('ink')")
    >>> check("select nam from item")
    (0.0, 'the generated query fails: no such column: nam')
    """

    name = "sql_equivalence"
    cannot: ClassVar[str] = "cannot execute"
    #: The sample metadata field that holds the database path.
    db_path_key: str = "db_path"

    def __init__(self, *, fallback: Metric | None = None, **options: Any) -> None:
        """``options``: the keyword arguments of :class:`SQLExecution`."""
        execution = SQLExecution(**options)
        super().__init__(execution, fallback)
        self.execution = execution
        self.fallback = fallback
        if options.get("db_path_key") is not None:
            self.db_path_key = options["db_path_key"]
        self.db_dir = execution.db_dir
        self.timeout = execution.timeout
        self.float_tolerance = execution.float_tolerance
        self.max_rows = execution.max_rows
        self.max_cell_bytes = execution.max_cell_bytes
        self.max_result_bytes = execution.max_result_bytes

    @property
    def _memory(self) -> OrderedDict[tuple[Any, ...], str | None]:
        """The execution's remembered reference outcomes."""
        return self.execution._memory
