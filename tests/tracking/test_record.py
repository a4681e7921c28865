"""What both trackers log, without either library: numbers, settings, tags, files."""

from __future__ import annotations

import json

import pytest

from ragmeter import evaluate
from ragmeter.stats import bootstrap_ci
from ragmeter.tracking._record import (  # private: what a tracker is given
    flat_params,
    metric_values,
    run_record,
    sample_columns,
    sample_rows,
    tag_values,
    usage_values,
    write_files,
)
from tests.tracking.runs import EXPECTED, MRR, RECALL_AT_2, Exploding, small_run


@pytest.fixture(scope="module")
def run():
    return small_run()


def test_every_number_is_the_hand_computed_one(run):
    values = metric_values(run)
    for name, expected in EXPECTED.items():
        assert values[name] == pytest.approx(expected), name


def test_the_cis_are_the_reports_bootstrap_of_the_scores(run):
    values = metric_values(run)
    for metric, scores in (("mrr", MRR), ("recall@2", RECALL_AT_2)):
        ci = bootstrap_ci(scores, n_resamples=2_000)  # BCa, seed 0: as `ragmeter show`
        assert (values[f"{metric}/ci_low"], values[f"{metric}/ci_high"]) == (ci.low, ci.high)
        assert values[f"{metric}/ci_low"] < values[metric] < values[f"{metric}/ci_high"]


def test_a_value_that_does_not_exist_is_left_out_not_logged_as_zero(run):
    assert not any(k.startswith(("judge/", "embeddings/")) for k in metric_values(run))
    every_one_fails = evaluate([{"response": "boom"}, {"response": "boom"}], [Exploding()])
    values = metric_values(every_one_fails)
    assert not {"exploding", "exploding/median", "exploding/ci_low"} & set(values)
    assert (values["exploding/coverage"], values["exploding/n_failed"]) == (0.0, 2)


def test_usage_counts_tokens_and_gives_a_cost_only_when_priced():
    priced = {
        "calls": 12,
        "cached_calls": 3,
        "prompt_tokens": 4000,
        "completion_tokens": 500,
        "retries": 1,
        "latency_s": 8.5,
        "cost": 0.0123,
        "currency": "USD",
    }
    assert usage_values("judge", priced) == {
        "judge/calls": 12,
        "judge/cached_calls": 3,
        "judge/prompt_tokens": 4000,
        "judge/completion_tokens": 500,
        "judge/retries": 1,
        "judge/latency_s": 8.5,
        "judge/total_tokens": 4500,
        "judge/cost": 0.0123,
    }
    unpriced = {**priced, "cost": 0.0, "currency": None}
    assert "judge/cost" not in usage_values("judge", unpriced)
    assert usage_values("judge", None) == {}


def test_the_config_names_the_run_its_dataset_metrics_judge_and_the_systems_params(run):
    run.config["judges"] = {
        "faithfulness": {"kind": "openai-compatible", "model": "gpt-4o-mini", "seed": 0},
        "answer_relevancy": {"kind": "openai-compatible", "model": "gpt-4o-mini", "seed": 0},
    }
    run.config["prompt_versions"] = ["verify@1/en", "response_analysis@1/en"]
    run.config["usage"] = {"calls": 2, "prompt_tokens": 10, "completion_tokens": 5}
    try:
        record = run_record(run, params={"top_k": 5, "retriever": "bm25"}, tags=["nightly"])
    finally:
        for key in ("judges", "prompt_versions", "usage"):
            del run.config[key]
    params = flat_params(record.config)
    assert params["ragmeter.metrics"] == "mrr,recall@2,exploding"
    assert params["ragmeter.repeats"] == "1"
    assert params["ragmeter.prompt_versions"] == "verify@1/en,response_analysis@1/en"
    assert params["dataset.fingerprint"] == run.config["dataset"]["fingerprint"]
    assert params["dataset.n_samples"] == "4"
    assert params["metrics.recall@2.k"] == "2"
    assert params["metrics.recall@2.direction"] == "higher"
    assert params["metrics.exploding.kind"] == "tests.tracking.runs.Exploding"
    # the metrics share one judge: one description, not one per metric
    assert params["judge.model"] == "gpt-4o-mini" and params["judge.seed"] == "0"
    assert (params["top_k"], params["retriever"]) == ("5", "bm25")
    assert record.metrics["judge/total_tokens"] == 15
    assert record.tags == {"nightly": "true"}


def test_judges_that_differ_are_named_per_metric(run):
    run.config["judges"] = {"a": {"model": "m1"}, "b": {"model": "m2"}}
    try:
        params = flat_params(run_record(run).config)
    finally:
        del run.config["judges"]
    assert (params["judge.a.model"], params["judge.b.model"]) == ("m1", "m2")


def test_a_parameter_may_not_overwrite_ragmeters_own(run):
    with pytest.raises(ValueError, match=r"\['judge.model'\].*rename them, e.g. system.judge"):
        run_record(run, params={"judge.model": "mine"})


def test_tags_are_names_or_name_value_pairs():
    assert tag_values(["nightly", "baseline"]) == {"nightly": "true", "baseline": "true"}
    assert tag_values({"team": "search"}) == {"team": "search"}
    with pytest.raises(TypeError, match="list of names or a dict"):
        tag_values("nightly")


def test_the_sample_table_has_each_metrics_score_status_and_reason(run):
    columns = sample_columns(run)
    assert columns[:5] == ["id", "row", "question", "response", "reference"]
    assert columns[-3:] == ["exploding", "exploding/status", "exploding/reason"]
    rows = [dict(zip(columns, row)) for row in sample_rows(run)]
    assert [r["id"] for r in rows] == ["s0", "s1", "s2", "s3"]
    assert [r["mrr"] for r in rows] == pytest.approx(MRR)
    assert rows[0]["question"] == "question 0?" and rows[2]["response"] == "boom"
    assert (rows[2]["exploding"], rows[2]["exploding/status"]) == (None, "failed")
    assert "cannot score boom" in rows[2]["exploding/reason"]


def test_the_files_are_the_report_the_results_and_the_run_record(run, tmp_path):
    written = write_files(run_record(run), tmp_path)
    assert [p.name for p in written] == [
        "report.html",
        "results.jsonl",
        "summary.json",
        "config.json",
    ]
    assert "<html" in (tmp_path / "report.html").read_text(encoding="utf-8")
    lines = (tmp_path / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["s0", "s1", "s2", "s3"]
    config = json.loads((tmp_path / "config.json").read_text(encoding="utf-8"))
    assert config["dataset"]["fingerprint"] == run.config["dataset"]["fingerprint"]


def test_anything_but_a_result_is_refused_by_name():
    with pytest.raises(TypeError, match=r"expected an EvaluationResult.*got dict"):
        run_record({"mrr": 1.0})  # type: ignore[arg-type]


def test_an_experiment_logs_its_pipeline_its_name_and_its_params(tmp_path):
    from ragmeter.experiments import experiment

    rows = [{"id": f"q{i}", "user_input": "?", "reference_context_ids": ["d1"]} for i in range(3)]

    @experiment(rows, ["mrr"], name="bm25", params={"top_k": 2}, retries=0, store=False)
    def pipeline(sample, top_k=2):
        if sample.id == "q1":
            raise RuntimeError("retriever down")
        return {"response": "r", "retrieved_context_ids": ["x", "d1", "y"][:top_k]}

    result = pipeline.run()
    record = run_record(result, run_name=None)
    assert record.evaluation is result.result and record.name == "bm25"
    assert flat_params(record.config)["top_k"] == "2"
    assert record.config["experiment"] == {"name": "bm25"}
    assert record.metrics["mrr"] == 0.5  # q0 and q2 find d1 at rank 2; q1 failed
    assert record.metrics["mrr/n_failed"] == 1 and record.metrics["pipeline/n_failed"] == 1
    assert 0 < record.metrics["pipeline/latency_p50_s"] <= record.metrics["pipeline/latency_max_s"]
    written = write_files(record, tmp_path)
    assert written[-1].name == "pipeline.jsonl"
    lines = written[-1].read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["ok"] for line in lines] == [True, False, True]
