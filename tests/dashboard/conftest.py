"""A store with two judged runs of the same questions, for the dashboard tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragmeter import evaluate
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
