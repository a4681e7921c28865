"""Plain ok scores of a batch kept as one block: every reader of the run database answers
exactly as it does for the same results stored a row each, and older files are still read."""

from __future__ import annotations

import json
import math
import sqlite3

import numpy as np
import pytest

from ragmeter import MetricResult, evaluate
from ragmeter.metrics import ScoreColumn
from ragmeter.results import EvaluationResult, RunDatabase

N = 23


def result_of(i: int, metric: str) -> MetricResult:
    """A mix of what a vectorised metric returns: mostly plain scores, some other results."""
    if i % 7 == 3:
        return MetricResult.not_applicable("nothing relevant")
    if i % 11 == 5:
        return MetricResult.failed("missing field(s): retrieved_context_ids")
    if metric == "b" and i % 5 == 0:
        return MetricResult.ok(0.25, "kept with its reason")  # ok, but not plain
    return MetricResult.ok((i * 37 % 19) / 19)


def filled(path, *, blocks: bool, upto: int = N) -> RunDatabase:
    """A store of N samples (every third one tagged) with results of "a" and "b" for the
    first ``upto``: as blocks of 5 (the last shorter) or as rows."""
    store = RunDatabase(path)
    store.put_samples(
        (i, i + 1, f"s{i}", {"user_input": f"q{i}", "metadata": {"kind": ["x", "y"][i % 2]}})
        for i in range(N)
    )
    for start in range(0, upto, 5):
        indexes = range(start, min(upto, start + 5))
        if blocks:
            store.put_columns(
                start, {m: ScoreColumn.of([result_of(i, m) for i in indexes]) for m in "ab"}
            )
        else:
            store.put_results([(i, m, result_of(i, m)) for i in indexes for m in "ab"])
    return store


@pytest.mark.parametrize("upto", [N, 12], ids=["all", "part"])
def test_every_reader_answers_as_for_rows(tmp_path, upto):
    rows = filled(tmp_path / "rows.db", blocks=False, upto=upto)
    blocks = filled(tmp_path / "blocks.db", blocks=True, upto=upto)
    # Blocks were written, and hold no row of a plain score.
    assert blocks._db.execute("SELECT COUNT(*) FROM score_blocks").fetchone()[0] > 0
    assert blocks._db.execute("SELECT COUNT(*) FROM results").fetchone()[0] < 2 * upto
    for metric in ("a", "b", "c"):
        expected = list(rows.scores(metric).pairs())
        assert list(blocks.scores(metric).pairs()) == expected
        assert blocks.done(metric) == rows.done(metric)
        assert list(blocks.tagged_scores(metric, ["kind"])) == list(
            rows.tagged_scores(metric, ["kind"])
        )
    # Spelled out for one sample of each kind, not only compared.
    pairs = list(blocks.scores("a").pairs())
    assert pairs[0] == ("ok", 0.0) and pairs[1] == ("ok", 18 / 19)
    assert pairs[3] == ("not_applicable", None) and pairs[5] == ("failed", None)
    assert pairs[N - 1] == (("ok", 16 / 19) if upto == N else ("not_started", None))  # 22*37 % 19
    for metrics in (["a"], ["a", "b"], ["b", "c"]):
        assert blocks.count_todo(metrics) == rows.count_todo(metrics)
        for start in range(0, N, 4):  # windows that cut blocks
            assert blocks.todo(metrics, start, start + 4) == rows.todo(metrics, start, start + 4)
    assert list(blocks.iter_stored_json(batch=4)) == list(rows.iter_stored_json(batch=4))
    assert list(blocks.iter_samples(batch=7)) == list(rows.iter_samples(batch=7))
    rows.close()
    blocks.close()


def test_a_row_written_later_is_the_result_read(tmp_path):
    store = filled(tmp_path / "run.db", blocks=True)
    store.put_results([(1, "a", MetricResult.failed("recomputed and failed"))])
    assert list(store.scores("a").pairs())[1] == ("failed", None)
    assert 1 in store.todo(["a"], 0, 5)
    texts = {index: results for index, _, _, _, results, _ in store.iter_stored_json()}
    assert json.loads(texts[1]["a"]) == {
        "score": None,
        "status": "failed",
        "error": "recomputed and failed",
    }
    store.close()


def test_a_run_of_ranking_metrics_stores_blocks_and_reads_back_the_same(tmp_path):
    rows = [
        {"id": f"q{i}", "retrieved_context_ids": ["a", "b", "c"], "reference_context_ids": ids}
        for i, ids in enumerate([["b"], ["z"], [], ["a", "c"]] * 10)
    ]
    result = evaluate(rows, ["mrr", "precision@2"], run_dir=tmp_path / "run", batch_size=8)
    result.save(tmp_path / "run")
    assert result.store is not None
    n_blocks, n_rows = result.store._db.execute(
        "SELECT (SELECT COUNT(*) FROM score_blocks), (SELECT COUNT(*) FROM results)"
    ).fetchone()
    assert n_blocks == 2 * 5  # 40 samples in batches of 8, two metrics
    assert n_rows == 10  # the samples without relevant ids: mrr not applicable
    result.store.close()
    loaded = EvaluationResult.load(tmp_path / "run")
    assert loaded.scores("mrr") == [0.5, 0.0, None, 1.0] * 10
    assert loaded.scores("precision@2") == [0.5, 0.0, 0.0, 0.5] * 10
    lines = (tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    third = json.loads(lines[2])["metrics"]
    assert third["precision@2"] == {"score": 0.0, "status": "ok"}
    assert third["mrr"]["status"] == "not_applicable" and third["mrr"]["score"] is None
    assert third["mrr"]["reason"].startswith("no relevant context exists for this sample")
    assert json.loads(lines[0])["metrics"] == {
        "mrr": {"score": 0.5, "status": "ok"},
        "precision@2": {"score": 0.5, "status": "ok"},
    }
    assert loaded.aggregates["mrr"].n_ok == 30 and math.isclose(loaded.aggregates["mrr"].mean, 0.5)


def test_a_file_of_format_1_is_read_and_upgraded_when_written(tmp_path):
    path = tmp_path / "run.db"
    filled(path, blocks=False).close()
    with sqlite3.connect(path) as db:  # as a ragmeter before score blocks wrote it
        db.execute("DROP TABLE score_blocks")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    db.close()
    old = RunDatabase(path, read_only=True)
    assert list(old.scores("a").pairs())[:2] == [("ok", 0.0), ("ok", 18 / 19)]
    assert old.count_todo(["a"]) == 2 and len(list(old.iter_stored_json())) == N
    old.close()
    upgraded = RunDatabase(path)
    assert upgraded.get_meta("schema_version") == 2
    upgraded.put_columns(0, {"c": ScoreColumn(np.array([0.5]), {})})
    assert list(upgraded.scores("c").pairs())[:2] == [("ok", 0.5), ("not_started", None)]
    upgraded.close()


def test_a_file_of_a_newer_format_is_refused_with_the_fix(tmp_path):
    path = tmp_path / "run.db"
    filled(path, blocks=True).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    db.close()
    with pytest.raises(ValueError, match="run format 3; this one reads formats 1, 2"):
        RunDatabase(path)
