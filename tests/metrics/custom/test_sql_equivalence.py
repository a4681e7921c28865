"""SQL equivalence on a real SQLite database: execution, comparison, refusals, fallbacks."""

from __future__ import annotations

import asyncio
import math
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragmeter import MetricResult, Sample, Status, evaluate
from ragmeter.embed import Embeddings
from ragmeter.judge import JudgeError
from ragmeter.metrics import Requirements, SampleMetric
from ragmeter.metrics.custom import SQLEquivalence, SQLExecution, metric
from ragmeter.metrics.custom import sql_equivalence as module
from ragmeter.metrics.custom.sql_equivalence import (
    QueryRefused,
    has_top_level_order_by,
    single_select,
)
from ragmeter.steps import Facts, Need
from ragmeter.testing import ScriptedJudge

SCHEMA = """
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER, amount REAL);
INSERT INTO customer VALUES (1, 'Ann', 'Paris'), (2, 'Bo', 'Lyon'), (3, 'Cy', 'Paris');
INSERT INTO orders VALUES (1, 1, 10.5), (2, 1, 20.25), (3, 2, 7.0), (4, 3, 0.1), (5, 3, 0.2);
"""


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as connection:
        connection.executescript(SCHEMA)
    connection.close()
    return path


def sample(generated: str, reference: str, db: Path | str | None, **extra) -> Sample:
    metadata = {} if db is None else {"db_path": str(db)}
    return Sample(response=generated, reference=reference, metadata=metadata, **extra)


def score(generated: str, reference: str, db: Path | str | None, **options) -> MetricResult:
    return SQLEquivalence(**options).score(sample(generated, reference, db))


def table_rows(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        (count,) = connection.execute("SELECT count(*) FROM customer").fetchone()
    connection.close()
    return count


# -- equal results ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("generated", "reference"),
    [
        (  # a join against a subquery, other aliases and column names, another order
            "SELECT c.name AS who, SUM(o.amount) total FROM customer c JOIN orders o "
            "ON o.customer_id = c.id GROUP BY c.id ORDER BY total DESC",
            "SELECT name, (SELECT sum(amount) FROM orders WHERE customer_id = customer.id) "
            "FROM customer",
        ),
        (
            "select name from customer where city = 'Paris'",
            "SELECT name FROM customer WHERE id IN (SELECT id FROM customer WHERE city='Paris')",
        ),
        (  # an ORDER BY inside a CTE does not order the result
            "SELECT name FROM customer ORDER BY name DESC",
            "WITH c AS (SELECT name FROM customer ORDER BY name) SELECT name FROM c",
        ),
        ("```sql\nSELECT 1;\n```", "SELECT 1"),  # a code fence and a semicolon
        ("SELECT 1 -- one\n;", "/* the number */ SELECT 1.0"),  # 1 equals 1.0
        ("SELECT 0.1 + 0.2", "SELECT 0.3"),  # within the float tolerance
        ("SELECT name FROM customer WHERE 0", "SELECT city FROM customer WHERE id > 99"),
    ],
)
def test_equal_results(db, generated, reference):
    result = score(generated, reference, db)
    assert (result.status, result.score) == (Status.OK, 1.0), result.reason
    assert result.reason.startswith("same ")


def test_ordered_when_the_reference_has_a_top_level_order_by(db):
    reference = "SELECT name FROM customer ORDER BY name"
    assert score("SELECT name FROM customer ORDER BY 1", reference, db).score == 1.0
    result = score("SELECT name FROM customer ORDER BY name DESC", reference, db)
    assert result.score == 0.0
    assert result.reason == (
        "row 1 differs (the reference is ordered): generated ('Cy'), reference ('Ann')"
    )
    assert result.details["ordered"] is True
    assert result.details["first_difference"] == {
        "row": 1,
        "generated": "('Cy')",
        "reference": "('Ann')",
    }
    # Without ORDER BY in the reference the same rows in any order are equal.
    assert score("SELECT name FROM customer ORDER BY name DESC", "SELECT name FROM customer", db)


def test_ordered_prefix_with_other_row_counts(db):
    result = score(
        "SELECT name FROM customer ORDER BY name LIMIT 2",
        "SELECT name FROM customer ORDER BY name",
        db,
    )
    assert result.score == 0.0
    assert result.reason == (
        "the generated query returns 2 row(s), the reference 3; the first 2 row(s) agree"
    )


def test_float_tolerance(db):
    assert score("SELECT 0.3001", "SELECT 0.3", db).score == 0.0
    assert score("SELECT 0.3001", "SELECT 0.3", db, float_tolerance=1e-3).score == 1.0
    # Rows matched within the tolerance although exact matching pairs them differently.
    result = score(
        "SELECT 1.0000000001, 'a' UNION ALL SELECT 1.0, 'b'",
        "SELECT 1.0, 'a' UNION ALL SELECT 1.0000000001, 'b'",
        db,
    )
    assert result.score == 1.0


# -- different results ----------------------------------------------------------------------------
def test_wrong_column_count(db):
    result = score("SELECT name, city FROM customer", "SELECT name FROM customer", db)
    assert result.score == 0.0
    assert result.reason == "the generated query returns 2 column(s), the reference 1"


def test_missing_and_extra_rows_are_named(db):
    result = score(
        "SELECT name FROM customer WHERE city = 'Lyon' OR name = 'Cy'",
        "SELECT name FROM customer WHERE city = 'Paris'",
        db,
    )
    assert result.score == 0.0
    assert result.reason == (
        "the generated result lacks the reference row ('Ann'); it has the row ('Bo'), which "
        "the reference lacks"
    )
    assert (result.details["rows_missing"], result.details["rows_extra"]) == (1, 1)


def test_duplicates_count(db):
    result = score(
        "SELECT city FROM customer", "SELECT DISTINCT city FROM customer ORDER BY city", db
    )
    assert result.score == 0.0
    assert result.reason.startswith("the generated query returns 3 row(s), the reference 2")
    result = score("SELECT city FROM customer", "SELECT DISTINCT city FROM customer", db)
    assert result.reason == (
        "the generated query returns 3 row(s), the reference 2; it has the row ('Paris'), "
        "which the reference lacks"
    )


def test_types_are_not_mixed(db):
    assert score("SELECT '1'", "SELECT 1", db).score == 0.0


# -- wrong and refused generated queries --------------------------------------------------------
def test_a_syntax_error_is_a_wrong_query(db):
    result = score("SELEC name FROM customer", "SELECT name FROM customer", db)
    assert (result.status, result.score) == (Status.OK, 0.0)
    assert result.reason == "the generated query is refused: not a SELECT or WITH query " + (
        "(it starts with 'SELEC name FROM customer')"
    )
    result = score("SELECT name FROM customer WHERE", "SELECT name FROM customer", db)
    assert result.score == 0.0
    assert result.reason == "the generated query fails: incomplete input"
    result = score("SELECT nme FROM customer", "SELECT name FROM customer", db)
    assert result.reason == "the generated query fails: no such column: nme"


@pytest.mark.parametrize(
    ("generated", "reason"),
    [
        ("DELETE FROM customer", "refused: not a SELECT or WITH query"),
        ("SELECT 1; DELETE FROM customer", "refused: more than one statement"),
        ("DROP TABLE customer", "refused: not a SELECT or WITH query"),
        ("PRAGMA writable_schema = 1", "refused: not a SELECT or WITH query"),
        ("ATTACH 'x.db' AS x", "refused: not a SELECT or WITH query"),
        ("WITH x AS (SELECT 1) DELETE FROM customer", "fails: not authorized"),
        ("WITH x AS (SELECT 1) INSERT INTO customer VALUES (9, 'Z', 'Z')", "fails: not auth"),
        ("", "refused: not a SELECT or WITH query (it starts with 'nothing')"),
        ("   ", "refused: not a SELECT or WITH query"),
    ],
)
def test_only_reading_is_allowed(db, generated, reason):
    result = score(generated, "SELECT name FROM customer", db)
    assert (result.status, result.score) == (Status.OK, 0.0)
    assert reason in result.reason
    assert table_rows(db) == 3


# -- limits: every query is bounded in time and memory --------------------------------------------
ENDLESS = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
CELL_LIMIT = "needs a string or blob of more than 1,000,000 bytes (raise max_cell_bytes to compare)"


def assert_failed(result: MetricResult, error: str) -> None:
    """A limit fails the sample: no score (never 0, never NaN), the limit named."""
    assert (result.status, result.score, result.error) == (Status.FAILED, None, error), result


def test_a_slow_query_fails_at_the_time_limit(db):
    start = time.monotonic()
    result = score(ENDLESS + "SELECT max(i) FROM n", "SELECT 1", db, timeout=0.2)
    assert_failed(result, "the generated query takes more than 0.2 s (raise timeout to compare)")
    assert time.monotonic() - start < 10
    # The deadline also interrupts a query while its rows are fetched.
    result = score(
        ENDLESS + "SELECT i FROM n", "SELECT 1", db, timeout=0.2, max_rows=10**9,
        max_result_bytes=10**12,
    )  # fmt: skip
    assert_failed(result, "the generated query takes more than 0.2 s (raise timeout to compare)")


def test_too_many_rows_fail(db):
    result = score("SELECT * FROM orders", "SELECT 1", db, max_rows=3)
    assert_failed(
        result, "the generated query returns more than 3 rows (raise max_rows to compare)"
    )
    # A large reference is not "impossible": no fallback, the sample fails.
    too_large = sample("SELECT 1", "SELECT * FROM orders", db)
    metric_ = SQLEquivalence(fallback=ClaimsAgree(judge=ScriptedJudge(claims)), max_rows=3)
    assert metric_.needs(too_large) == []
    result = metric_.score(too_large)
    assert result.status is Status.FAILED and "fallback" not in result.details
    assert result.error.startswith("the reference query returns more than 3 rows")


def test_endless_rows_stop_at_the_row_limit(db):
    result = score(ENDLESS + "SELECT i FROM n", "SELECT 1", db)  # 100,000 rows by default
    assert_failed(
        result, "the generated query returns more than 100,000 rows (raise max_rows to compare)"
    )
    assert score(ENDLESS + "SELECT i FROM n LIMIT 5", ENDLESS + "SELECT i FROM n LIMIT 5", db)


@pytest.mark.parametrize(
    "huge",
    [
        "SELECT zeroblob(500000000)",  # 500 MB of zeros
        "SELECT hex(randomblob(200000000))",  # a 200 MB blob, a 400 MB string
        "SELECT replace(hex(zeroblob(300000000)), '0', 'ab')",
        "SELECT replace(hex(zeroblob(300000)), '0', 'ab')",  # 600 kB, replaced: 1.2 MB
        "WITH RECURSIVE s(x) AS (SELECT 'x' UNION ALL SELECT x || x FROM s) SELECT x FROM s",
        "SELECT name, zeroblob(2000000) FROM customer",
    ],
)
def test_sqlite_refuses_a_value_over_the_cell_limit(db, huge):
    start = time.monotonic()
    assert_failed(score(huge, "SELECT 1", db), f"the generated query {CELL_LIMIT}")
    assert time.monotonic() - start < 10
    # A reference past a limit fails the sample too: the fallback is for impossible queries.
    result = SQLEquivalence(fallback=same_text).score(sample("SELECT 1", huge, db))
    assert_failed(result, f"the reference query {CELL_LIMIT}")


def test_a_stored_value_over_the_cell_limit_is_not_read(tmp_path):
    path = tmp_path / "files.db"
    with sqlite3.connect(path) as connection:
        connection.executescript(
            "CREATE TABLE file(name TEXT, content BLOB);"
            "INSERT INTO file VALUES ('small', x'00'), ('large', zeroblob(3000000));"
        )
    connection.close()
    result = score("SELECT content FROM file", "SELECT name FROM file", path)
    assert_failed(result, f"the generated query {CELL_LIMIT}")
    assert score("SELECT length(content) FROM file", "SELECT 1 UNION SELECT 3000000", path)


def test_raising_the_cell_limit_compares_large_values(db):
    large = "SELECT zeroblob(1500000)"
    assert_failed(score(large, large, db), f"the reference query {CELL_LIMIT}")
    result = score(large, large, db, max_cell_bytes=2_000_000)
    assert (result.status, result.score) == (Status.OK, 1.0)
    # the first difference shows a cut value, not a megabyte-long repr
    result = score(large, "SELECT zeroblob(1500001)", db, max_cell_bytes=2_000_000)
    assert result.score == 0.0 and len(result.reason) < 500


def test_values_are_checked_as_they_arrive_where_sqlite_cannot_refuse_them(db, monkeypatch):
    # Python 3.10's sqlite3 cannot set SQLite's length limit: the rows are checked instead.
    monkeypatch.setattr(module, "_limit_length", lambda connection, max_bytes: None)
    result = score("SELECT 'short', zeroblob(2000)", "SELECT 1", db, max_cell_bytes=1000)
    assert_failed(
        result,
        "the generated query needs a string or blob of more than 1,000 bytes "
        "(raise max_cell_bytes to compare)",
    )
    result = score("SELECT 'été'", "SELECT 'été'", db, max_cell_bytes=5)  # 5 UTF-8 bytes
    assert result.score == 1.0


def test_sqlite_errors_are_told_apart_by_code_or_by_message(db):
    connection = sqlite3.connect(db)
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 10)
    with pytest.raises(sqlite3.DataError) as raised:
        connection.execute("SELECT zeroblob(11)")
    connection.close()
    assert module._is(raised.value, sqlite3.SQLITE_TOOBIG, "no such message")
    assert not module._is(raised.value, sqlite3.SQLITE_INTERRUPT, "too big")
    # Python 3.10's errors carry no code: their message tells.
    assert module._is(sqlite3.OperationalError("interrupted"), 9, "interrupted")
    assert not module._is(sqlite3.OperationalError("no such table: t"), 9, "interrupted")


def test_the_result_is_bounded_in_bytes(db):
    blobs = "SELECT zeroblob(600) UNION ALL SELECT zeroblob(600)"
    assert_failed(
        score(blobs, blobs, db, max_result_bytes=1000),
        "the reference query returns more than 1,000 bytes (raise max_result_bytes to compare)",
    )
    assert score(blobs, blobs, db, max_result_bytes=1200).score == 1.0
    # Endless rows of 900 kB: the fetching stops past 16 MB, the default.
    endless_blobs = ENDLESS + "SELECT zeroblob(900000) FROM n"
    assert_failed(
        score(endless_blobs, "SELECT 1", db, max_rows=10**9),
        "the generated query returns more than 16,000,000 bytes "
        "(raise max_result_bytes to compare)",
    )


def test_a_sample_past_a_limit_leaves_the_others_alone(db):
    records = [
        {"id": "blob", "response": "SELECT zeroblob(500000000)", "reference": "SELECT 1"},
        {"id": "endless", "response": ENDLESS + "SELECT max(i) FROM n", "reference": "SELECT 1"},
        {"id": "ok", "response": "SELECT 1", "reference": "SELECT 1"},
        {"id": "wrong", "response": "SELECT 2", "reference": "SELECT 1"},
    ]
    for record in records:
        record["db_path"] = str(db)
    result = evaluate(records, [SQLEquivalence(timeout=0.5)], concurrency=4, progress=False)
    by_id = {s.sample_id: s.scores["sql_equivalence"] for s in result.samples}
    assert by_id["blob"].error == f"the generated query {CELL_LIMIT}"
    assert by_id["endless"].error == (
        "the generated query takes more than 0.5 s (raise timeout to compare)"
    )
    assert (by_id["ok"].score, by_id["wrong"].score) == (1.0, 0.0)
    assert result.aggregates["sql_equivalence"].mean == 0.5


#: Scores the queries given in a fresh interpreter, then prints how much its peak RSS grew.
MEMORY_PROBE = """
import resource, sys
from ragmeter import Sample
from ragmeter.metrics.custom import SQLEquivalence
metric = SQLEquivalence(max_rows=10**9)
def run(query):
    sample = Sample(response=query, reference="SELECT 1", metadata={"db_path": sys.argv[1]})
    return metric.score(sample)
run("SELECT 1")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for query in sys.argv[2:]:
    print(run(query).status.value)
growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(growth if sys.platform == "darwin" else growth * 1024)
"""


def test_huge_values_do_not_grow_the_process(db):
    pytest.importorskip("resource")
    queries = [
        "SELECT zeroblob(500000000)",
        "SELECT printf('%.*c', 30000000, 'x')",  # SQLite's printf gives NULL: too big
        "SELECT hex(randomblob(200000000))",
        "SELECT replace(hex(zeroblob(300000000)), '0', 'ab')",
        ENDLESS + "SELECT zeroblob(900000) FROM n",  # stops past 16 MB
    ]
    done = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(db), *queries],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    *statuses, growth = done.stdout.split()
    assert statuses == ["failed", "ok", "failed", "failed", "failed"], done.stdout
    assert int(growth) < 100 * 2**20  # the values alone: 500 MB, 30 MB, 400 MB, 1.2 GB, endless


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("timeout", 0, "timeout must be a positive, finite number of seconds, got 0"),
        ("timeout", -1.5, "timeout must be a positive, finite number of seconds, got -1.5"),
        ("timeout", math.inf, "timeout must be a positive, finite number of seconds, got inf"),
        ("timeout", math.nan, "timeout must be a positive, finite number of seconds, got nan"),
        ("timeout", "3", "timeout must be a positive, finite number of seconds, got '3'"),
        ("max_rows", 0, "max_rows must be a positive whole number of rows, got 0"),
        ("max_rows", 2.5, "max_rows must be a positive whole number of rows, got 2.5"),
        ("max_rows", True, "max_rows must be a positive whole number of rows, got True"),
        ("max_cell_bytes", -1, "max_cell_bytes must be a positive whole number of bytes, got -1"),
        ("max_cell_bytes", 2 * 10**9, "max_cell_bytes can be at most 1,000,000,000"),
        ("max_result_bytes", None, "max_result_bytes must be a positive whole number of bytes"),
        ("float_tolerance", -1e-6, "float_tolerance must be a number >= 0, got -1e-06"),
    ],
)
def test_limits_are_validated(option, value, message):
    for metric_class in (SQLEquivalence, SQLExecution):
        with pytest.raises(ValueError, match=re.escape(message)):
            metric_class(**{option: value})


def test_limits_are_options_and_params():
    metric_ = SQLEquivalence(timeout=2, max_rows=1e3, max_cell_bytes=4096, max_result_bytes=2**20)
    assert (metric_.timeout, metric_.max_rows) == (2.0, 1000)
    assert (metric_.max_cell_bytes, metric_.max_result_bytes) == (4096, 2**20)
    params = metric_.execution.params()
    assert (params["timeout"], params["max_rows"]) == (2.0, 1000)
    assert (params["max_cell_bytes"], params["max_result_bytes"]) == (4096, 2**20)
    defaults = SQLExecution()
    assert (defaults.timeout, defaults.max_rows) == (10.0, 100_000)
    assert (defaults.max_cell_bytes, defaults.max_result_bytes) == (1_000_000, 16_000_000)


@pytest.mark.parametrize(
    ("sql", "statement"),
    [
        ("SELECT 1;", "SELECT 1"),
        ("  select ';' ;  -- done\n", "select ';'"),
        ("with a as (select 1) select * from a", "with a as (select 1) select * from a"),
        ("SELECT 1 /* ; */ ;;", "SELECT 1 /* ; */"),
    ],
)
def test_single_select(sql, statement):
    assert single_select(sql) == statement


def test_single_select_refuses_two_statements_behind_a_comment():
    with pytest.raises(QueryRefused, match="more than one statement"):
        single_select("SELECT 1; /* hidden */ DELETE FROM customer")


@pytest.mark.parametrize(
    ("sql", "ordered"),
    [
        ("SELECT a FROM t ORDER BY a", True),
        ("select a from t order\n  by a limit 3", True),
        ("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", True),
        ("SELECT a FROM (SELECT a FROM t ORDER BY a)", False),
        ("SELECT a, row_number() OVER (ORDER BY a) FROM t", False),
        ("SELECT 'ORDER BY' FROM t", False),
        ('SELECT "order by" FROM t -- ORDER BY a', False),
        ("SELECT 'it''s' FROM t ORDER BY a", True),
        ("SELECT [order by] FROM t", False),
    ],
)
def test_top_level_order_by(sql, ordered):
    assert has_top_level_order_by(sql) is ordered


# -- when execution is impossible ---------------------------------------------------------------
@metric(name="same_text", requires=["response", "reference"])
def same_text(sample):
    """Whether both queries are the same text, spaces and case aside."""
    return " ".join(sample.response.lower().split()) == " ".join(sample.reference.lower().split())


@pytest.mark.parametrize(
    ("where", "why"),
    [
        (None, "no database (the sample has no metadata 'db_path')"),
        ("missing.db", "the database 'missing.db' does not exist"),
    ],
)
def test_no_database_without_fallback_is_not_applicable(where, why):
    result = score("SELECT 1", "SELECT 1", where)
    assert result.status is Status.NOT_APPLICABLE
    assert result.reason == f"cannot execute: {why}"


def test_no_database_uses_the_fallback(tmp_path):
    metric_ = SQLEquivalence(fallback=same_text)
    result = metric_.score(sample("select  NAME from t", "SELECT name FROM t", tmp_path / "x.db"))
    assert (result.status, result.score) == (Status.OK, 1.0)
    assert result.details["fallback"] == "same_text"
    assert "does not exist" in result.details["fallback_because"]
    assert result.reason.startswith("judged by same_text (the database")
    assert metric_.params()["fallback"] == {
        "name": "same_text",
        "params": {"version": "1", "function": f"{__name__}.same_text"},
    }


def test_a_failing_reference_uses_the_fallback(db):
    result = SQLEquivalence(fallback=same_text).score(
        sample("SELECT x FROM nowhere", "SELECT x FROM nowhere", db)
    )
    assert result.score == 1.0
    assert result.details["fallback_because"] == (
        "the reference query fails: no such table: nowhere"
    )
    result = score("SELECT 1", "DELETE FROM customer", db)
    assert result.status is Status.NOT_APPLICABLE
    assert result.reason == (
        "cannot execute: the reference query is refused: not a SELECT or WITH query "
        "(it starts with 'DELETE FROM customer')"
    )


def test_a_file_that_is_not_a_database_uses_the_fallback(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("not a database")
    result = SQLEquivalence(fallback=same_text).score(
        sample("SELECT name FROM customer", "SELECT name FROM customer", path)
    )
    assert result.score == 1.0 and result.details["fallback"] == "same_text"
    assert "file is not a database" in result.details["fallback_because"]


def test_a_failing_fallback_fails_the_sample():
    @metric(name="explodes", requires=["response"])
    def explodes(sample):
        raise RuntimeError("no judge today")

    result = SQLEquivalence(fallback=explodes).score(sample("SELECT 1", "SELECT 1", None))
    assert result.status is Status.FAILED
    assert result.details["fallback"] == "explodes"
    assert "no judge today" in result.error


def test_the_database_key_and_folder_are_configurable(db):
    equal = Sample(
        response="SELECT 1", reference="SELECT 1", metadata={"sqlite": db.name, "db_path": "x"}
    )
    metric_ = SQLEquivalence(db_path_key="sqlite", db_dir=db.parent)
    assert metric_.db_path_key == "sqlite" and SQLEquivalence.db_path_key == "db_path"
    assert metric_.score(equal).score == 1.0
    assert metric_.params()["db_dir"] == str(db.parent)


# -- a judged fallback inside evaluate -------------------------------------------------------------
class ClaimsAgree(SampleMetric):
    """A stand-in for a judge comparing the queries: 1 when the judge finds a claim."""

    name = "claims_agree"
    requires: Requirements = (("response",),)

    def needs(self, sample: Sample) -> list[Need]:
        return [Need("response_claims")]

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        return MetricResult.ok(float(bool(facts.response_claims)), "the judge found claims")


def claims(messages, schema):
    assert schema.__name__.startswith("ResponseAnalysis"), schema.__name__
    # A claim made of the query's own words (a claim not from the response is left out).
    answer = re.search(r"<answer>\n(.*?)\n</answer>", messages[-1].content, re.DOTALL)
    return {"claims": [f"The query {answer.group(1)} lists customers."]}


def test_a_judged_fallback_gets_the_runs_judge_only_where_execution_is_impossible(db, tmp_path):
    judge = ScriptedJudge(claims)
    metric_ = SQLEquivalence(fallback=ClaimsAgree())
    assert metric_.uses_judge
    records = [
        {"id": "ok", "response": "SELECT 1", "reference": "SELECT 1", "db_path": str(db)},
        {"id": "wrong", "response": "SELECT 2", "reference": "SELECT 1", "db_path": str(db)},
        {"id": "no-db", "response": "SELECT name FROM customer", "reference": "SELECT 1"},
        {
            "id": "bad-ref",
            "response": "SELECT 3",
            "reference": "SELECT * FROM nowhere",
            "db_path": str(db),
        },
    ]
    result = evaluate(records, [metric_], judge=judge)
    by_id = {s.sample_id: s.scores["sql_equivalence"] for s in result.samples}
    assert by_id["ok"].score == 1.0 and "fallback" not in by_id["ok"].details
    assert by_id["wrong"].score == 0.0 and "fallback" not in by_id["wrong"].details
    for key in ("no-db", "bad-ref"):
        assert by_id[key].score == 1.0
        assert by_id[key].details["fallback"] == "claims_agree"
        assert by_id[key].reason.endswith(": the judge found claims")
    assert len(judge.calls) == 2  # only the two samples execution could not decide
    assert result.config["usage"]["calls"] == 2
    assert result.config["judges"]["sql_equivalence"] == {"kind": "scripted", "name": "scripted"}


def test_a_judged_fallbacks_judge_errors_fail_the_sample(db):
    judge = ScriptedJudge(lambda messages, schema: JudgeError("judge down"))
    result = evaluate(
        [{"response": "SELECT 1", "reference": "SELECT 1"}],
        [SQLEquivalence(fallback=ClaimsAgree())],
        judge=judge,
    )
    (only,) = result.samples
    outcome = only.scores["sql_equivalence"]
    assert outcome.status is Status.FAILED
    assert outcome.error == "JudgeError: judge down"
    assert outcome.details["fallback"] == "claims_agree"


def test_without_a_judged_fallback_no_judge_is_made(db, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("no judge should be made")

    monkeypatch.setattr("ragmeter.judge._default.default_judge", refuse)
    records = [
        {"response": "SELECT 1", "reference": "SELECT 1", "db_path": str(db)},
        {"response": "SELECT 1", "reference": "SELECT 1"},
    ]
    result = evaluate(records, [SQLEquivalence(fallback=same_text)])
    assert result.scores("sql_equivalence") == [1.0, 1.0]
    assert result.samples[1].scores["sql_equivalence"].details["fallback"] == "same_text"


def test_many_samples_run_concurrently_in_threads(db):
    records = [
        {"response": f"SELECT {i}", "reference": f"SELECT {i % 2}", "db_path": str(db)}
        for i in range(40)
    ]
    result = evaluate(records, [SQLEquivalence()], concurrency=8)
    assert result.scores("sql_equivalence") == [1.0, 1.0] + [0.0] * 38


def test_ascore_inside_a_running_loop(db):
    metric_ = SQLEquivalence()

    async def main() -> MetricResult:
        return await metric_.ascore(sample("SELECT 1", "SELECT 1", db))

    assert asyncio.run(main()).score == 1.0
    assert metric_.score_batch([sample("SELECT 1", "SELECT 2", db)])[0].score == 0.0


def test_scored_alone_a_judged_fallback_uses_its_own_judge(db):
    judge = ScriptedJudge(claims)
    metric_ = SQLEquivalence(fallback=ClaimsAgree(judge=judge))
    assert metric_.judge is judge  # the runner would use it too
    result = metric_.score(sample("SELECT 1", "SELECT 1", None))
    assert result.score == 1.0 and result.details["fallback"] == "claims_agree"
    assert metric_.score(sample("SELECT 1", "SELECT 1", db)).score == 1.0
    assert len(judge.calls) == 1


def test_an_async_function_fallback_needs_no_judge_and_no_early_execution(db):
    @metric(name="async_same", requires=["response", "reference"])
    async def async_same(sample):
        return sample.response == sample.reference

    metric_ = SQLEquivalence(fallback=async_same)
    assert not metric_.uses_judge
    broken_reference = sample("SELECT 1", "SELECT * FROM nowhere", db)
    assert metric_.needs(broken_reference) == []
    assert metric_._memory == {}  # the reference did not run to decide the needs
    records = [
        {"response": "SELECT 1", "reference": "SELECT 1"},
        {"response": "SELECT 1", "reference": "SELECT 2", "db_path": str(db)},
        {"response": "SELECT 1", "reference": "SELECT * FROM nowhere", "db_path": str(db)},
    ]
    result = evaluate(records, [metric_])
    assert result.scores("sql_equivalence") == [1.0, 0.0, 0.0]
    details = [s.scores["sql_equivalence"].details.get("fallback") for s in result.samples]
    assert details == ["async_same", None, "async_same"]


def test_the_shipped_judge_fallback_is_asked_only_when_execution_is_impossible(tmp_path, db):
    from ragmeter import evaluate
    from ragmeter.metrics.custom import sql_equivalence_judge
    from ragmeter.testing import ScriptedJudge

    judge = ScriptedJudge(lambda m, s: {"reason": "same filter", "label": "equivalent"})
    metric = SQLEquivalence(fallback=sql_equivalence_judge())
    rows = [
        {"id": "ran", "user_input": "How many?", "response": "SELECT 1",
         "reference": "SELECT 1", "metadata": {"db_path": str(db)}},
        {"id": "no-db", "user_input": "How many users?", "response": "SELECT count(*) FROM u",
         "reference": "SELECT count(id) FROM u", "metadata": {"db_path": str(tmp_path / "x.db")}},
    ]  # fmt: skip
    result = evaluate(rows, [metric], judge=judge, progress=False)
    ran, judged = result.samples
    assert ran.scores["sql_equivalence"].score == 1.0
    assert "fallback" not in ran.scores["sql_equivalence"].details
    assert judged.scores["sql_equivalence"].score == 1.0
    assert judged.scores["sql_equivalence"].details["fallback"] == "sql_equivalence_judge"
    assert len(judge.calls) == 1
    assert "SELECT count(id) FROM u" in judge.calls[0].messages[-1].content
