import csv

import pytest

from ragmeter import EvaluationResult, MetricResult, Status, evaluate

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
