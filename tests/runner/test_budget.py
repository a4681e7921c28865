"""``evaluate(max_cost=...)``: stop starting samples before the budget would be passed, keep
what was judged, and resume without a call made twice; ``limit`` / ``sample`` subsets."""

from __future__ import annotations

import json

import pytest
from pydantic import SecretStr

from ragmeter import EvaluationResult, evaluate
from ragmeter.dataset import Dataset
from ragmeter.dataset import sample as draw
from ragmeter.judge import JudgeConfig, MemoryCache, NullCache, OpenAIJudge, Price
from ragmeter.metrics import Status
from ragmeter.testing import FakeOpenAIServer
from tests.metrics.llm import scripts
from tests.runner._fakes import samples, server_responder

SUITE = ["faithfulness", "context_recall", "context_precision", "rouge_l"]
#: Dear enough that a sample of the suite costs about 2.7 (some 2,700 tokens a sample).
PRICE = Price(input_per_million=1000.0, output_per_million=2000.0)


def priced_judge(server: FakeOpenAIServer) -> OpenAIJudge:
    config = JudgeConfig(model="m", base_url=server.base_url, api_key=SecretStr("k"), price=PRICE)
    return OpenAIJudge(config, cache=NullCache())  # no cache: a repeated call is paid again


def chat_calls(server: FakeOpenAIServer) -> int:
    return sum(r.path.endswith("/chat/completions") for r in server.requests)


def test_the_budget_stops_the_run_and_a_resume_finishes_it_without_paying_twice(tmp_path):
    data = samples(8)
    with FakeOpenAIServer(responder=server_responder) as server:
        unbounded = evaluate(data, SUITE, judge=priced_judge(server))
        calls_without_budget = chat_calls(server)
    per_sample = unbounded.config["usage"]["cost"] / 8
    assert calls_without_budget == 8 * 3

    run_dir = tmp_path / "run"
    budget = 3.5 * per_sample
    with FakeOpenAIServer(responder=server_responder) as server:
        stopped = evaluate(
            data, SUITE, judge=priced_judge(server), run_dir=run_dir, max_cost=budget
        )
        first_calls = chat_calls(server)
        record = stopped.config["budget"]
        assert record["stopped"] is True and record["max_cost"] == budget
        assert record["currency"] == "USD"
        assert 1 <= record["samples_judged"] < 8 and record["samples"] == 8
        judged = record["samples_judged"]
        assert first_calls == judged * 3  # no sample was begun and dropped
        assert record["spent"] == pytest.approx(stopped.config["usage"]["cost"])
        assert record["spent"] <= budget * 1.1  # estimates are estimates
        kept = EvaluationResult.load(run_dir)
        assert kept.scores("faithfulness")[:judged] == unbounded.scores("faithfulness")[:judged]
        assert kept.aggregates["faithfulness"].n_ok == judged
        assert kept.scores("rouge_l") == unbounded.scores("rouge_l")  # no judge: all scored

        resumed = evaluate(
            data, SUITE, judge=priced_judge(server), run_dir=run_dir, resume=True, max_cost=100.0
        )
        assert chat_calls(server) == calls_without_budget  # both sessions, nothing twice
    assert resumed.config["budget"]["stopped"] is False
    assert resumed.config["budget"]["samples_judged"] == 8
    assert resumed.scores("faithfulness") == unbounded.scores("faithfulness")
    assert resumed.config["usage"]["calls"] == calls_without_budget
    assert resumed.config["budget"]["spent"] == pytest.approx(unbounded.config["usage"]["cost"])


def test_a_resumed_run_counts_what_was_spent_before(tmp_path):
    data = samples(6)
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(responder=server_responder) as server:
        first = evaluate(
            data, SUITE, judge=priced_judge(server), run_dir=run_dir, concurrency=1, max_cost=6.0
        )
        spent = first.config["budget"]["spent"]
        judged = first.config["budget"]["samples_judged"]
        calls = chat_calls(server)
        # a budget a little above what was spent: not enough for another sample
        again = evaluate(
            data,
            SUITE,
            judge=priced_judge(server),
            run_dir=run_dir,
            resume=True,
            max_cost=spent + 0.1,
        )
        assert chat_calls(server) == calls
    assert again.config["budget"]["stopped"] is True
    assert again.config["budget"]["samples_judged"] == judged
    assert again.config["budget"]["spent"] == pytest.approx(spent)


def test_a_judge_without_a_price_is_refused_before_anything_is_written(tmp_path):
    judge = scripts.judge(cache=MemoryCache())
    with pytest.raises(ValueError) as error:
        evaluate(samples(2), SUITE, judge=judge, run_dir=tmp_path / "run", max_cost=1.0)
    assert "[judge.price]" in str(error.value) and "input_per_million" in str(error.value)
    assert not (tmp_path / "run").exists()
    assert judge.n_calls == 0
    with pytest.raises(ValueError, match="more than 0"):
        evaluate(samples(2), SUITE, judge=judge, max_cost=0)


def test_metrics_without_a_judge_need_no_price():
    result = evaluate(samples(2), ["rouge_l"], max_cost=0.01)
    assert len(result.scores("rouge_l")) == 2 and "budget" not in result.config


def test_limit_and_sample_score_a_subset_that_a_resume_finds_again(tmp_path):
    data = samples(12)
    judge = scripts.judge(cache=MemoryCache())
    first = evaluate(data, ["rouge_l"], limit=3, judge=judge)
    assert [s.sample_id for s in first] == ["case-0", "case-1", "case-2"]
    drawn = evaluate(
        data, ["rouge_l"], sample=4, seed=9, stratify="question_type", run_dir=tmp_path / "r"
    )
    expected = draw(Dataset.from_records(data), 4, seed=9, stratify="question_type").ids
    assert [s.sample_id for s in drawn] == expected
    again = evaluate(
        data,
        ["rouge_l"],
        sample=4,
        seed=9,
        stratify="question_type",
        run_dir=tmp_path / "r",
        resume=True,
    )
    assert [s.sample_id for s in again] == expected
    with pytest.raises(ValueError, match="not both"):
        evaluate(data, ["rouge_l"], limit=2, sample=2)
    with pytest.raises(ValueError, match="give sample too"):
        evaluate(data, ["rouge_l"], stratify="question_type")


def test_samples_the_budget_never_started_are_not_started_not_failed_and_resume(tmp_path):
    data = samples(6)
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(responder=server_responder) as server:
        stopped = evaluate(
            data, SUITE, judge=priced_judge(server), run_dir=run_dir, concurrency=1, max_cost=6.0
        )
        judged = stopped.config["budget"]["samples_judged"]
        assert 1 <= judged < 6
        kept = EvaluationResult.load(run_dir)
        faithfulness = kept.aggregates["faithfulness"]
        assert (faithfulness.n_ok, faithfulness.n_failed) == (judged, 0)
        assert faithfulness.n_not_started == 6 - judged == faithfulness.n_total - judged
        assert kept.aggregates["rouge_l"].n_not_started == 0  # no judge: all scored
        statuses = [s.scores["faithfulness"].status for s in kept]
        assert statuses == [Status.OK] * judged + [Status.NOT_STARTED] * (6 - judged)
        last = kept.samples[-1].scores["faithfulness"]
        assert last.error is None and "max_cost" in (last.reason or "")
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        assert summary["aggregates"]["faithfulness"]["n_not_started"] == 6 - judged
        assert summary["aggregates"]["faithfulness"]["n_failed"] == 0
        lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
        assert json.loads(lines[-1])["metrics"]["faithfulness"]["status"] == "not_started"

        calls = chat_calls(server)
        resumed = evaluate(
            data, SUITE, judge=priced_judge(server), run_dir=run_dir, resume=True, max_cost=100.0
        )
        assert chat_calls(server) == calls + (6 - judged) * 3  # only those never started
    assert resumed.aggregates["faithfulness"].n_ok == 6
    assert resumed.aggregates["faithfulness"].n_not_started == 0
    assert {s.scores["faithfulness"].status for s in resumed} == {Status.OK}
