"""Custom metrics go where built-ins go: evaluate, the stored run, the HTML and markdown
reports, the statistical comparison of two runs, and the CI gate."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from ragmeter import Direction, EvaluationResult, Status, evaluate
from ragmeter.gate import parse_rules, run_gate, to_markdown
from ragmeter.metrics.custom import SQLEquivalence, metric
from ragmeter.report import render_html, render_markdown
from ragmeter.stats import compare

N = 40


@metric(requires=["response"], direction="lower", version="2")
def query_chars(sample):
    """Characters in the generated query (shorter is better)."""
    return len(sample.response)


@metric(requires=["response"])
async def selects_star(sample):
    """Whether the query avoids SELECT *."""
    await asyncio.sleep(0)
    return "*" not in sample.response


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sql") / "shop.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE product(id INTEGER, name TEXT, price REAL)")
        connection.executemany(
            "INSERT INTO product VALUES (?, ?, ?)",
            [(i, f"item {i}", round(1.5 * i, 2)) for i in range(1, 21)],
        )
    connection.close()
    return path


def run(db: Path, wrong_every: int) -> EvaluationResult:
    """A text-to-SQL run: question i asks for the products over price i; every
    ``wrong_every``-th generated query uses >= instead of > (one row too many)."""
    records = []
    for i in range(N):
        limit = 1.5 * (i % 20)
        wrong = i % wrong_every == 0
        records.append(
            {
                "id": f"q{i}",
                "user_input": f"Which products cost more than {limit}?",
                "response": f"SELECT name FROM product WHERE price {'>=' if wrong else '>'} "
                f"{limit}",
                "reference": f"SELECT p.name FROM product AS p WHERE p.price > {limit}",
                "db_path": str(db),
                "difficulty": "hard" if i % 2 else "easy",
            }
        )
    return evaluate(records, [SQLEquivalence(), query_chars, selects_star, "exact_match"])


def test_custom_metrics_are_treated_like_built_ins(db, tmp_path):
    baseline, candidate = run(db, wrong_every=2), run(db, wrong_every=10)

    # evaluate: scores, directions, versions in the run record.
    # (">=" is right where no product costs exactly the limit: limit 0, questions 0 and 20.)
    assert baseline.aggregates["sql_equivalence"].mean == pytest.approx(22 / 40)
    assert candidate.aggregates["sql_equivalence"].mean == pytest.approx(38 / 40)
    assert candidate.aggregates["selects_star"].mean == 1.0
    assert candidate.aggregates["exact_match"].mean == 0.0  # the texts always differ
    infos = {m.name: m for m in candidate.metrics}
    assert infos["query_chars"].direction is Direction.LOWER_IS_BETTER
    assert infos["query_chars"].params["version"] == "2"
    assert infos["sql_equivalence"].params["db_path_key"] == "db_path"
    wrong = candidate.samples[10].scores["sql_equivalence"]
    assert (wrong.status, wrong.score) == (Status.OK, 0.0)
    assert wrong.reason == (
        "the generated query returns 11 row(s), the reference 10; it has the row "
        "('item 10'), which the reference lacks"
    )

    # The stored run loads back with the same metrics and scores.
    candidate.save(tmp_path / "candidate")
    loaded = EvaluationResult.load(tmp_path / "candidate")
    assert [m.to_dict() for m in loaded.metrics] == [m.to_dict() for m in candidate.metrics]
    assert loaded.scores("sql_equivalence") == candidate.scores("sql_equivalence")

    # Reports.
    html = render_html(candidate, compare=baseline)
    for name in ("sql_equivalence", "query_chars", "selects_star"):
        assert name in html
    assert "which the reference lacks" in html  # a worst sample's reason
    markdown = render_markdown(candidate)
    assert "| `sql_equivalence` | ↑ |" in markdown
    assert "| `query_chars` | ↓ |" in markdown

    # Statistics: the candidate is significantly better on SQL equivalence; the queries
    # got shorter (fewer ">="), which is better for a lower-is-better metric.
    by_metric = {c.metric: c for c in compare(baseline, candidate, n_resamples=2000)}
    assert by_metric["sql_equivalence"].paired and by_metric["sql_equivalence"].n_pairs == N
    assert by_metric["sql_equivalence"].change == "better"
    assert by_metric["sql_equivalence"].significant
    assert by_metric["query_chars"].difference < 0
    assert by_metric["query_chars"].change == "better"
    groups = compare(baseline, candidate, n_resamples=2000, tag="difficulty", value="easy")
    assert {c.metric for c in groups} >= {"sql_equivalence", "query_chars"}

    # The gate: floors, ceilings and regressions on custom metrics, by name.
    rules = parse_rules(
        {
            "gate": {"seed": 1},
            "thresholds": [
                {"metric": "sql_equivalence", "min": 0.8},
                {"metric": "query_chars", "max": 60},
                {"metric": "selects_star", "min_coverage": 1.0},
            ],
            "regressions": [
                {"metric": "sql_equivalence", "max_drop": 0.02},
                {"metric": "query_chars", "max_drop": 0.1},
            ],
        }
    )
    passing = run_gate(candidate, rules, baseline)
    assert passing.passed, to_markdown(passing)
    failing = run_gate(baseline, rules, candidate)
    assert not failing.passed
    failed = {(o.kind, o.metric) for o in failing.failures}
    assert ("threshold", "sql_equivalence") in failed
    assert ("regression", "sql_equivalence") in failed
    assert ("regression", "query_chars") in failed
