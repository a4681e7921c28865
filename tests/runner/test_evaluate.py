import pytest

from ragmeter import DatasetError, Metric, MetricResult, Sample, Status, evaluate
from ragmeter.metrics import Requirements

RECORDS = [
    {
        "id": f"s{i}",
        "retrieved_context_ids": ["a", "b", "c"],
        "reference_context_ids": [rel],
        "response": "Paris",
        "reference": ref,
    }
    for i, (rel, ref) in enumerate([("a", "Paris"), ("c", "Lyon"), ("b", "paris"), ("z", "Nice")])
]


class Exploding(Metric):
    """Raises on samples whose response is 'boom'."""

    name = "exploding"
    requires: Requirements = (("response",),)

    def score(self, sample: Sample) -> MetricResult:
        if sample.response == "boom":
            raise ValueError("cannot score boom")
        return MetricResult.ok(1.0)


class BrokenBatch(Metric):
    """A metric whose batch scoring has a bug."""

    name = "broken"

    def score(self, sample: Sample) -> MetricResult:
        raise AssertionError("unreachable")

    def score_batch(self, samples, context=None):
        raise RuntimeError("bug in the metric")


def test_mixed_metrics_in_one_call_in_dataset_order():
    result = evaluate(RECORDS, ["mrr", "precision@1", "exact_match"])
    assert [s.sample_id for s in result] == ["s0", "s1", "s2", "s3"]
    assert result.scores("mrr") == [1.0, pytest.approx(1 / 3), 0.5, 0.0]
    assert result.scores("exact_match") == [1.0, 0.0, 1.0, 0.0]
    agg = result.aggregates["mrr"]
    assert (agg.n_total, agg.n_ok, agg.n_failed) == (4, 4, 0)
    assert agg.mean == pytest.approx((1 + 1 / 3 + 0.5 + 0) / 4)


def test_a_failing_sample_is_recorded_and_the_rest_are_kept():
    records = [{"response": "ok"}, {"response": "boom"}, {"response": "ok"}]
    result = evaluate(records, [Exploding()])
    statuses = [s.scores["exploding"].status for s in result]
    assert statuses == [Status.OK, Status.FAILED, Status.OK]
    assert "cannot score boom" in result.samples[1].scores["exploding"].error
    agg = result.aggregates["exploding"]
    assert (agg.n_ok, agg.n_failed, agg.mean, agg.coverage) == (2, 1, 1.0, pytest.approx(2 / 3))


def test_a_metric_that_crashes_does_not_lose_the_other_metrics():
    result = evaluate(RECORDS, ["mrr", BrokenBatch()])
    assert all(s.scores["broken"].status is Status.FAILED for s in result)
    assert "bug in the metric" in result.samples[0].scores["broken"].error
    assert result.aggregates["mrr"].n_ok == 4
    assert result.aggregates["broken"].mean is None


def test_batches_give_the_same_scores_as_one_batch():
    one = evaluate(RECORDS, ["map", "ndcg@2", "rouge_l"])
    small = evaluate(RECORDS, ["map", "ndcg@2", "rouge_l"], batch_size=3)
    for name in ("map", "ndcg@2", "rouge_l"):
        assert one.scores(name) == small.scores(name)


def test_missing_fields_raise_before_scoring_unless_skipped():
    records = [*RECORDS, {"id": "no-ids", "response": "x", "reference": "y"}]
    with pytest.raises(DatasetError, match="no-ids"):
        evaluate(records, ["mrr"])
    result = evaluate(records, ["mrr"], skip_invalid=True)
    assert [s.sample_id for s in result] == ["s0", "s1", "s2", "s3"]
    assert [r.sample_id for r in result.skipped] == ["no-ids"]
    assert result.config["dataset"]["n_skipped"] == 1


def test_unknown_and_duplicate_metrics_are_rejected():
    with pytest.raises(ValueError, match="unknown metric 'precison@5'"):
        evaluate(RECORDS, ["precison@5"])
    with pytest.raises(ValueError, match="needs a cutoff"):
        evaluate(RECORDS, ["precision"])
    with pytest.raises(ValueError, match="given twice"):
        evaluate(RECORDS, ["mrr", "reciprocal_rank"])


def test_config_records_what_ran():
    result = evaluate(RECORDS, "ndcg_exp@3, map")
    assert result.config["dataset"]["n_samples"] == 4
    assert len(result.config["dataset"]["fingerprint"]) == 16
    info = {m.name: m for m in result.metrics}
    assert info["ndcg_exp@3"].params == {"k": 3, "gain": "exponential"}


def test_metric_names_are_case_insensitive():
    result = evaluate(RECORDS, ["rougeL", "MRR"])
    assert [m.name for m in result.metrics] == ["rouge_l", "mrr"]


def test_default_embeddings_are_cached_on_disk_so_a_second_run_pays_nothing(tmp_path, monkeypatch):
    from ragmeter.testing import FakeOpenAIServer

    monkeypatch.setenv("RAGMETER_CACHE", str(tmp_path / "cache.db"))
    with FakeOpenAIServer(embedding_dimensions=16) as server:
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_MODEL", "embed-a")
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_BASE_URL", server.base_url)
        first = evaluate(RECORDS, ["semantic_similarity"])
        paid = len(server.requests)
        second = evaluate(RECORDS, ["semantic_similarity"])
        assert paid > 0 and len(server.requests) == paid  # the second run sent nothing
    assert first.scores("semantic_similarity") == second.scores("semantic_similarity")
    assert (tmp_path / "cache.db").exists()


class DropsOne(Metric):
    """A buggy batch metric: one result short for every batch."""

    name = "drops_one"

    def score(self, sample: Sample) -> MetricResult:
        return MetricResult.ok(1.0)

    def score_batch(self, samples, context=None):
        return [MetricResult.ok(1.0) for _ in samples[1:]]


def test_a_batch_metric_with_too_few_results_fails_its_batch_and_nothing_else():
    result = evaluate(RECORDS, [DropsOne(), "mrr"], batch_size=2)
    failed = [s.scores["drops_one"] for s in result]
    assert [r.status for r in failed] == [Status.FAILED] * 4
    assert failed[0].error == (
        "drops_one returned 1 results for a batch of 2 samples: its score_batch must return "
        "one result per sample, in order"
    )
    assert result.scores("mrr") == [1.0, 1 / 3, 0.5, 0.0]  # "z" is relevant, not retrieved
