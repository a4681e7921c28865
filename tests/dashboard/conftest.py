"""Stores for the dashboard tests: two judged runs of the same questions, and several runs
over nine metrics with failed and not-applicable results."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from ragmeter import EvaluationResult, Metric, MetricResult, evaluate
from ragmeter.gate import load_rules
from ragmeter.metrics import Requirements
from ragmeter.metrics.llm import ContextPrecision, Faithfulness
from ragmeter.store import Store
from ragmeter.testing import ScriptedJudge
from tests.metrics.llm import scripts
from tests.runner._fakes import samples

pytest.importorskip("fastapi")


def judged_run(rows, **options):
    judge = ScriptedJudge(scripts.answer)
    metrics = [Faithfulness(judge=judge), ContextPrecision(judge=judge)]
    return evaluate(rows, metrics, progress=False, **options)


@pytest.fixture
def populated(tmp_path: Path) -> tuple[Store, list[str]]:
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    rows = samples(6)
    for row in rows[3:]:
        row["retrieved_contexts"] = list(reversed(row["retrieved_contexts"]))
    first = store.record(judged_run(samples(6)), name="baseline", params={"top_k": 5})
    second = store.record(judged_run(rows), name="reranked", params={"top_k": 8}, tags=["new"])
    return store, [first.id, second.id]


# -- a store with several runs over nine metrics, one of which fails on some samples ------
NINE = ["precision@5", "recall@5", "ndcg@10", "mrr", "map", "exact_match", "rouge_l", "bleu"]
QUESTIONS = [
    ("What is the capital of France?", "Paris", "en"),
    ("法国的首都是哪里？", "巴黎", "zh"),
    ("Who wrote Hamlet?", "Shakespeare", "en"),
    ("水的沸点是多少？", "一百摄氏度", "zh"),
    ("How many legs does a spider have?", "eight", "en"),
    ("太阳系最大的行星是什么？", "木星", "zh"),
    ("What gas do plants absorb?", "carbon dioxide", "en"),
    ("光速是多少？", "每秒约三十万公里", "zh"),
]


class Flaky(Metric):
    """A metric that fails on the samples it is told to, and does not apply to others."""

    requires: Requirements = ()

    def __init__(self, failing: set[str], missing: set[str], bonus: float) -> None:
        self.name = "flaky"
        self.failing, self.missing, self.bonus = failing, missing, bonus

    def score(self, sample: Any) -> MetricResult:
        if sample.id in self.failing:
            return MetricResult.failed("the judge timed out")
        if sample.id in self.missing:
            return MetricResult.not_applicable("nothing to judge")
        return MetricResult.ok(min(1.0, 0.3 + 0.05 * int(sample.id[1:]) + self.bonus))


def varied_rows(shift: int) -> list[dict[str, Any]]:
    """The questions with answers and retrievals that get better as ``shift`` grows."""
    rows = []
    for i, (question, answer, language) in enumerate(QUESTIONS):
        good = (i + shift) % 3 != 0
        rows.append(
            {
                "id": f"q{i}",
                "user_input": question,
                "response": answer if good else f"not {answer}",
                "reference": answer,
                "retrieved_context_ids": ["d1", f"r{i}", "d2"] if good else ["d1", "d2", "d3"],
                "reference_context_ids": [f"r{i}"],
                "metadata": {"language": language, "difficulty": "hard" if i % 2 else "easy"},
            }
        )
    return rows


def nine_metric_run(shift: int, failing: set[str]) -> EvaluationResult:
    return evaluate(
        varied_rows(shift),
        [*NINE, Flaky(failing, {"q7"}, 0.05 * shift)],
        progress=False,
    )


@pytest.fixture
def several(tmp_path: Path) -> tuple[Store, list[str]]:
    """Four runs, oldest first: three "nightly" (tagged main) a day apart, one "experiment"."""
    store = Store(f"sqlite:///{tmp_path / 'several.db'}")
    ids = []
    plan = [
        ("nightly", 0, {"q1"}, ["main"]),
        ("nightly", 1, {"q1", "q3"}, ["main"]),
        ("nightly", 2, set(), ["main", "release"]),
        ("experiment", 1, {"q5"}, ["exp"]),
    ]
    for day, (name, shift, failing, tags) in enumerate(plan):
        info = store.record(
            nine_metric_run(shift, failing), name=name, params={"shift": shift}, tags=tags
        )
        when = dt.datetime(2026, 11, 1 + day, 9, 30, tzinfo=dt.timezone.utc)
        with store.engine.begin() as connection:
            connection.execute(
                sa.text("UPDATE runs SET created_at = :when WHERE id = :id"),
                {"when": when, "id": info.id},
            )
        ids.append(info.id)
    return store, ids


GATE = """
[[thresholds]]
metric = "mrr"
min = 0.5

[[thresholds]]
metric = "flaky"
min = 0.4
statistic = "ci_low"

[[thresholds]]
metric = "flaky"
max = 0.95
"""


# -- the dashboard served, and a headless browser (tests/dashboard/_browser.py) ----------
@pytest.fixture
def served(populated) -> Iterator[tuple[str, list[str]]]:
    from ragmeter.dashboard import create_app
    from tests.dashboard._browser import serving

    store, ids = populated
    with serving(create_app(store)) as base:
        yield base, ids


@pytest.fixture
def served_several(several, tmp_path) -> Iterator[tuple[str, list[str]]]:
    """Four runs over nine metrics, with a gate file's thresholds on the trend charts."""
    from ragmeter.dashboard import create_app
    from tests.dashboard._browser import serving

    store, ids = several
    (tmp_path / "gate.toml").write_text(GATE, encoding="utf-8")
    rules = load_rules(tmp_path / "gate.toml")
    with serving(create_app(store, gate=rules, gate_source="gate.toml")) as base:
        yield base, ids


@pytest.fixture
def browser() -> Iterator[Any]:
    from tests.dashboard._browser import chromium_driver

    with chromium_driver() as driver:
        yield driver
