"""The dry run's prediction (``estimate``) against the calls real runs record: a judge that
batches verdicts, one that asks a verdict at a time, cached answers and resumed runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragmeter import evaluate
from ragmeter.dataset import load_dataset
from ragmeter.judge import JudgeConfig, MemoryCache, NullCache, OpenAIJudge, Price
from ragmeter.runner import estimate
from ragmeter.testing import FakeOpenAIServer, ScriptedJudge
from tests.metrics.llm import scripts
from tests.runner._fakes import samples, server_responder
from tests.runner.test_resume import Interrupted, StopAfter

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo.jsonl"
#: The judged metrics of the Makefile's demo, and the retrieval ones beside them.
DEMO_METRICS = [
    "faithfulness",
    "answer_relevancy",
    "context_precision",
    "context_recall",
    "answer_correctness",
    "precision@3",
    "recall@3",
    "mrr",
    "ndcg@3",
]
WIDE = [*DEMO_METRICS[:5], "context_entity_recall", "context_utilization", "rouge_l"]


def within(predicted: float, real: float, share: float) -> bool:
    return abs(predicted - real) <= share * real


def test_a_batching_judge_on_50_samples_is_predicted_call_for_call():
    judge = scripts.judge(cache=MemoryCache())
    data = samples(50)
    predicted = estimate(data, WIDE, judge=judge)
    assert judge.n_calls == 0  # the prediction asked nothing
    result = evaluate(data, WIDE, judge=judge, embeddings=scripts.embeddings())
    real = result.config["usage"]
    # 6 calls a sample: the response read once with the question (claims) and once alone
    # (reverse-generated questions), the reference and contexts once (statements,
    # usefulness, entities), the contexts against the response once (context_utilization),
    # the response's claims and the reference's statements verified once each
    assert real["calls"] == judge.n_calls == 50 * 6
    assert predicted.total.calls == real["calls"]
    assert {step: u.calls for step, u in predicted.by_step.items()} == {
        step: u.calls for step, u in judge.ledger.by_scope.items()
    }
    assert within(predicted.total.prompt_tokens, real["prompt_tokens"], 0.10)
    assert predicted.n_samples == predicted.n_to_judge == 50


def test_the_demo_through_the_fake_server_is_predicted_call_for_call():
    data = load_dataset(DEMO)
    with FakeOpenAIServer(responder=server_responder) as server:
        judge = OpenAIJudge(
            JudgeConfig(
                model="m",
                base_url=server.base_url,
                api_key="k",
                price=Price(input_per_million=100.0, output_per_million=400.0),
            ),
            cache=MemoryCache(),
        )
        predicted = estimate(data, DEMO_METRICS, judge=judge)
        assert server.requests == []
        result = evaluate(data, DEMO_METRICS, judge=judge, embeddings=scripts.embeddings())
        chat = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert predicted.total.calls == len(chat) == result.config["usage"]["calls"]
    assert predicted.priced and predicted.currency == "USD"
    # tokens (and so the cost) are estimated without the server's tokenizer
    assert within(predicted.total.cost, result.config["usage"]["cost"], 0.25)


def _sentences(text: str) -> list[str]:
    """How this test's judge splits a text into claims: at 。 ! ? and ". "."""
    parts = re.split(r"(?<=[。！？])|(?<=[.!?])\s+", text)
    return [p.strip() for p in parts if p.strip()]


def _block(messages, name: str) -> str:
    found = re.search(rf"<{name}>\n(.*?)\n</{name}>", messages[-1].content, re.DOTALL)
    return found.group(1) if found else ""


def per_sentence_answer(messages, schema):
    """A judge that reads one claim per sentence and says yes to everything."""
    fields = schema.model_fields
    if schema.__name__ == "TextLikelihood":
        return {"logprob": -1.5, "tokens": 3}
    if schema.__name__ == "BinaryVerdict":
        return {"verdict": 1}
    out = {}
    if "claims" in fields:
        out["claims"] = _sentences(_block(messages, "answer"))
    if "questions" in fields:
        out |= {"questions": ["q1?", "q2?", "q3?"], "noncommittal": 0}
    if "statements" in fields:
        said = _sentences(_block(messages, "reference"))
        out["statements"] = [{"text": s, "contexts": []} for s in said]
    if "entities" in fields:
        out["entities"] = [{"entity": "AirPods", "in_contexts": 1}]
    return out


def test_a_judge_asked_one_verdict_at_a_time_is_predicted_call_for_call():
    def judge():
        made = ScriptedJudge(
            per_sentence_answer,
            cache=MemoryCache(),
            likelihood_probability=lambda task, language, gain: 0.7,
        )
        made.supports_batched_verdicts = False  # like the embedded judge
        return made

    data = samples(6)
    data[0]["response"] = data[0]["retrieved_contexts"][0]  # said word for word: no verdict
    first = judge()
    predicted = estimate(data, WIDE, judge=first)
    result = evaluate(data, WIDE, judge=first, embeddings=scripts.embeddings())
    assert first.n_calls == result.config["usage"]["calls"] > 6 * 10
    assert predicted.total.calls == first.n_calls
    assert {step: u.calls for step, u in predicted.by_step.items()} == {
        step: u.calls for step, u in first.ledger.by_scope.items()
    }


def test_after_a_run_its_answers_are_cached_not_calls():
    judge = scripts.judge(cache=MemoryCache())
    data = samples(5)
    result = evaluate(data, WIDE, judge=judge, embeddings=scripts.embeddings())
    again = estimate(data, WIDE, judge=judge)
    assert again.total.calls == 0
    assert again.total.cached_calls == result.config["usage"]["calls"]
    assert again.total.cost == 0


def test_a_resumed_run_is_predicted_for_what_it_lacks(tmp_path):
    data = samples(8)
    suite = ["faithfulness", "context_recall", "context_precision", "rouge_l"]
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(responder=server_responder) as server:

        def judge():  # no cache: what the run lacks is asked again, nothing else
            config = JudgeConfig(model="m", base_url=server.base_url, api_key="k")
            return OpenAIJudge(config, cache=NullCache())

        with pytest.raises(Interrupted):
            evaluate(
                data, suite, judge=judge(), run_dir=run_dir, concurrency=1, progress=StopAfter(3)
            )
        before = len(server.requests)
        predicted = estimate(data, suite, judge=judge(), run_dir=run_dir, resume=True)
        assert len(server.requests) == before
        evaluate(data, suite, judge=judge(), run_dir=run_dir, resume=True)
        made = len(server.requests) - before
    assert predicted.n_to_judge == 5 and predicted.n_samples == 8
    assert predicted.total.calls == made == 5 * 3


def test_a_resumed_prediction_needs_the_run_and_its_data(tmp_path):
    judge = scripts.judge(cache=MemoryCache())
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        estimate(samples(2), ["faithfulness"], judge=judge, run_dir=tmp_path, resume=True)
    evaluate(samples(2), ["rouge_l"], run_dir=tmp_path / "run")
    with pytest.raises(ValueError, match="dataset differs"):
        estimate(samples(3), ["rouge_l"], judge=judge, run_dir=tmp_path / "run", resume=True)


def test_a_subset_is_predicted_for_its_samples_only():
    judge = scripts.judge(cache=MemoryCache())
    predicted = estimate(samples(20), ["faithfulness"], judge=judge, sample=4, seed=2)
    assert (predicted.n_samples, predicted.total.calls) == (4, 4 * 2)
    assert estimate(samples(20), ["faithfulness"], judge=judge, limit=3).total.calls == 3 * 2


def test_metrics_without_a_judge_make_no_call_and_need_no_judge():
    predicted = estimate(samples(3), ["rouge_l", "exact_match"])
    assert predicted.total.calls == 0 and predicted.n_to_judge == 0 and predicted.judges == {}
