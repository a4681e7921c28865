import csv
import json
import sqlite3

import pytest

from ragmeter import Direction, EvaluationResult, MetricResult, Status, evaluate

RECORDS = [
    {"id": "a", "retrieved_context_ids": ["x", "y"], "reference_context_ids": ["y"], "lang": "en"},
    {"id": "b", "retrieved_context_ids": ["x"], "reference_context_ids": []},
]


def test_save_and_load_round_trip(tmp_path):
    result = evaluate(RECORDS, ["mrr", "precision@2", "id_context_precision"])
    loaded = EvaluationResult.load(result.save(tmp_path / "run"))
    assert [s.sample_id for s in loaded] == ["a", "b"]
    assert loaded.samples[0].sample.metadata == {"lang": "en"}
    for name in ("mrr", "precision@2", "id_context_precision"):
        assert loaded.scores(name) == result.scores(name)
        assert loaded.aggregates[name] == result.aggregates[name]
    assert loaded.samples[1].scores["mrr"].status is Status.NOT_APPLICABLE
    assert loaded.samples[0].scores["id_context_precision"].details == {"verdicts": [0, 1]}
    assert loaded.config == result.config


def test_not_applicable_is_counted_not_averaged():
    agg = evaluate(RECORDS, ["mrr"]).aggregates["mrr"]
    assert (agg.n_total, agg.n_ok, agg.n_not_applicable, agg.mean) == (2, 1, 1, 0.5)
    assert agg.coverage == 0.5


def test_csv_export(tmp_path):
    path = evaluate(RECORDS, ["mrr"]).to_csv(tmp_path / "r.csv")
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert rows[0]["mrr"] == "0.5" and rows[0]["mrr:status"] == "ok"
    assert rows[1]["mrr"] == "" and rows[1]["mrr:status"] == "not_applicable"


def test_to_pandas():
    pytest.importorskip("pandas")
    frame = evaluate(RECORDS, ["mrr"]).to_pandas()
    assert list(frame["id"]) == ["a", "b"]
    assert frame["mrr:status"].tolist() == ["ok", "not_applicable"]


def test_an_ok_result_must_have_a_finite_score():
    with pytest.raises(ValueError, match="finite score"):
        MetricResult.ok(float("nan"))
    with pytest.raises(ValueError, match="carries no score"):
        MetricResult(0.0, Status.FAILED)


def test_asking_for_an_unknown_metric():
    with pytest.raises(KeyError, match="no metric 'map'"):
        evaluate(RECORDS, ["mrr"]).scores("map")


TAGGED = [
    {"id": "a", "response": "x", "reference": "x", "question_type": "single", "tags": ["zh"]},
    {"id": "b", "response": "y", "reference": "x", "question_type": "single", "tags": ["zh", "h"]},
    {"id": "c", "response": "x", "reference": "x", "question_type": "multi", "tags": ["h"]},
    {"id": "d", "response": "x", "question_type": "multi", "persona": "p1"},
]


def test_breakdowns_by_tag_count_and_average_each_group(tmp_path):
    result = evaluate(
        TAGGED, ["exact_match", "rouge_l"], skip_invalid=True, tags=["question_type", "tags"]
    )
    assert result.config["tags"] == ["question_type", "tags"]
    # d lacks a reference: skipped. Named tags are used whatever their counts.
    groups = result.breakdowns()
    assert sorted(groups) == ["question_type", "tags"]
    # Unnamed, question_type (3 samples in 2 values: 1.5 a value, under 2) is not chosen,
    # nor persona (one value left); tags (zh 2, h 2) is.
    unnamed = EvaluationResult(result.samples, result.metrics, {})
    assert sorted(unnamed.breakdowns()) == ["tags"]
    by_type = {g.value: g for g in groups["question_type"]}
    assert by_type["single"].n_samples == 2 and by_type["multi"].n_samples == 1
    assert by_type["single"].aggregates["exact_match"].mean == 0.5
    assert by_type["multi"].aggregates["exact_match"].mean == 1.0
    by_tag = {g.value: g for g in groups["tags"]}  # a list tag counts in every group
    assert (by_tag["zh"].n_samples, by_tag["h"].n_samples) == (2, 2)
    assert by_tag["h"].aggregates["exact_match"].mean == 0.5
    # The same from the run directory read back (computed in SQL) and from the samples.
    result.save(tmp_path / "run")
    reloaded = EvaluationResult.load(tmp_path / "run")
    in_memory = EvaluationResult(result.samples, result.metrics, result.config)
    for other in (reloaded, in_memory):
        assert other.breakdowns() == groups
    assert result.breakdowns(["tags"]) == {"tags": groups["tags"]}
    with pytest.raises(KeyError, match="no sample carries"):
        result.breakdowns(["language"])


def test_aggregates_from_the_store_match_hand_counts():
    rows = [
        {"id": "a", "retrieved_context_ids": ["x", "y"], "reference_context_ids": ["y"]},
        {"id": "b", "retrieved_context_ids": ["x"], "reference_context_ids": ["x"]},
        {"id": "c", "retrieved_context_ids": ["x"], "reference_context_ids": []},
    ]
    agg = evaluate(rows, ["mrr"]).aggregates["mrr"]
    assert (agg.n_total, agg.n_ok, agg.n_not_applicable, agg.n_failed) == (3, 2, 1, 0)
    assert (agg.mean, agg.median, agg.coverage) == (0.75, 0.75, pytest.approx(2 / 3))


def test_results_written_in_the_old_details_shape_load_as_typed_records(tmp_path):
    """results.jsonl written before details were typed (multi-hop claims as
    {"claim": 1, "text": ...}) still loads, and writes back in the current shape."""
    import json

    run_dir = evaluate(RECORDS[:1], ["id_context_precision"]).save(tmp_path / "run")
    path = run_dir / "results.jsonl"
    record = json.loads(path.read_text(encoding="utf-8"))
    old_claims = [{"claim": 1, "text": "first"}, {"claim": 2, "text": "second"}]
    record["metrics"]["id_context_precision"]["details"] = {
        "verdicts": [0, 1],
        "claims": old_claims,
        "soft_score": 0.25,
    }
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    details = EvaluationResult.load(run_dir).samples[0].scores["id_context_precision"].details
    assert [c.text for c in details.claims] == ["first", "second"]
    assert [m.matched for m in details.matches] == [False, True]
    assert details.extra == {"soft_score": 0.25}
    assert details.to_dict()["claims"] == [{"claim": "first"}, {"claim": "second"}]


def test_skipped_rows_read_back_say_their_problem_once(tmp_path):
    rows = [
        {"id": "a", "response": "x", "reference": "x"},
        {"id": "b", "response": "y"},
    ]
    written = evaluate(rows, ["exact_match"], run_dir=tmp_path / "run", skip_invalid=True)
    original = [str(p) for r in written.skipped for p in r.problems]
    for loaded in (EvaluationResult.load(tmp_path / "run"), written):
        texts = [str(p) for r in loaded.skipped for p in r.problems]
        assert texts == original and len(texts) == 1
        assert texts[0].count("Fix:") == 1 and texts[0].count("row 2") == 1
    written.save(tmp_path / "saved")
    (tmp_path / "saved" / "run.db").unlink(missing_ok=True)
    again = EvaluationResult.load(tmp_path / "saved")
    assert [str(p) for r in again.skipped for p in r.problems] == original


def test_results_jsonl_from_the_store_is_what_the_samples_write(tmp_path):
    # Written straight from the stored JSON (no sample or result rebuilt): the same lines as
    # each SampleResult.to_dict(), a failed, an n/a, a not-started result and usage included.
    from tests.metrics.llm import scripts
    from tests.runner._fakes import samples

    rows = samples(3)
    rows[1]["retrieved_contexts"] = ["unrelated"]
    rows[2]["reference"] = ""
    result = evaluate(
        rows, ["faithfulness", "context_recall", "rouge_l"], judge=scripts.judge(), run_dir=tmp_path
    )
    with sqlite3.connect(tmp_path / "run.db") as db:  # one result never computed
        db.execute("DELETE FROM results WHERE idx = 0 AND metric = 'rouge_l'")
    loaded = EvaluationResult.load(tmp_path)
    written = loaded.to_jsonl(tmp_path / "again.jsonl").read_text(encoding="utf-8")
    expected = "".join(json.dumps(s.to_dict(), ensure_ascii=False) + "\n" for s in loaded.samples)
    assert written == expected
    first = json.loads(written.splitlines()[0])
    assert first["metrics"]["rouge_l"]["status"] == "not_started"
    assert "the run stopped before this result" in first["metrics"]["rouge_l"]["reason"]
    assert first["usage"]["calls"] > 0
    assert loaded.sample_ids() == ["case-0", "case-1", "case-2"] == result.sample_ids()


def test_results_never_started_are_counted_apart_from_failures_and_computed_again(tmp_path):
    from ragmeter.results import MetricInfo, RunDatabase

    db = RunDatabase(tmp_path / "run.db")
    db.put_samples((i, i + 1, f"s{i}", {"response": "x", "metadata": {}}) for i in range(4))
    not_started = MetricResult(None, Status.NOT_STARTED, reason="not started: max_cost")
    # s0 ok, s1 failed, s2 a row saying not started, s3 no row at all (the run stopped)
    db.put_results(
        [(0, "m", MetricResult.ok(1.0)), (1, "m", MetricResult.failed("x")), (2, "m", not_started)]
    )
    assert db.todo(["m"], 0, 4) == {1: ["m"], 2: ["m"], 3: ["m"]}  # what a resume computes
    assert db.count_todo(["m"]) == 3
    db.set_meta("metrics", [MetricInfo("m", Direction.HIGHER_IS_BETTER).to_dict()])
    result = EvaluationResult.from_store(db)
    agg = result.aggregates["m"]
    assert (agg.n_total, agg.n_ok, agg.n_failed, agg.n_not_started) == (4, 1, 1, 2)
    assert agg.coverage == 0.25 and agg.to_dict()["n_not_started"] == 2
    statuses = [s.scores["m"].status for s in result]
    assert statuses == [Status.OK, Status.FAILED, Status.NOT_STARTED, Status.NOT_STARTED]
    in_memory = EvaluationResult(result.samples, result.metrics, result.config)
    assert in_memory.aggregates == result.aggregates  # counted alike from the samples
    db.close()


INPUT_RECORDS = [
    {
        "id": "q1",
        "user_input": "什么是 RAG？",
        "response": "检索增强生成",
        "retrieved_contexts": ["RAG 即检索增强生成", "c2"],
        "retrieved_context_ids": ["d1", "d2"],
        "reference_context_ids": ["d1"],
    },
    {"id": "q2", "user_input": "q", "retrieved_context_ids": ["d3"], "reference_context_ids": []},
]
INPUT_HEADER = [
    "id",
    "row",
    "user_input",
    "response",
    "retrieved_contexts",
    "retrieved_context_ids",
    "reference_context_ids",
    "mrr",
    "mrr:status",
    "mrr:reason",
]


def test_csv_export_holds_the_inputs_the_dataset_has(tmp_path):
    result = evaluate(INPUT_RECORDS, ["mrr"])
    for source in (result, EvaluationResult.load(result.save(tmp_path / "run"))):
        path = source.to_csv(tmp_path / "r.csv")
        with path.open(encoding="utf-8", newline="") as handle:
            header = next(csv.reader(handle))
        assert header == INPUT_HEADER  # no reference or reference_contexts: none has them
        rows = list(csv.DictReader(path.open(encoding="utf-8", newline="")))
        assert rows[0]["user_input"] == "什么是 RAG？" and rows[0]["response"] == "检索增强生成"
        assert json.loads(rows[0]["retrieved_contexts"]) == ["RAG 即检索增强生成", "c2"]
        assert json.loads(rows[1]["reference_context_ids"]) == []
        assert rows[1]["response"] == "" and rows[1]["retrieved_contexts"] == ""
        assert rows[0]["mrr"] == "1.0" and rows[1]["mrr:status"] == "not_applicable"


def test_to_pandas_holds_the_inputs_as_lists(tmp_path):
    pytest.importorskip("pandas")
    result = evaluate(INPUT_RECORDS, ["mrr"])
    loaded = EvaluationResult.load(result.save(tmp_path / "run"))
    for frame in (result.to_pandas(), loaded.to_pandas()):
        assert list(frame.columns) == INPUT_HEADER
        assert frame["retrieved_contexts"][0] == ["RAG 即检索增强生成", "c2"]
        assert frame["retrieved_context_ids"].tolist() == [["d1", "d2"], ["d3"]]
        assert frame["user_input"].tolist() == ["什么是 RAG？", "q"]
    frame = evaluate(RECORDS, ["mrr"]).to_pandas()  # ids only: no text columns
    ids = ["retrieved_context_ids", "reference_context_ids"]
    assert list(frame.columns)[:4] == ["id", "row", *ids]
