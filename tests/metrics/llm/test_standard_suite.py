"""The LLM metrics on the seeds' worked examples, through the scripted judge: exact scores,
shared steps, and the call budget (standard suite: 4 calls per sample, 2 in sequence)."""

import pytest

from ragmeter import Sample, Status, evaluate
from ragmeter.metrics.llm import (
    AnswerCorrectness,
    AnswerRelevancy,
    ContextEntityRecall,
    ContextPrecision,
    ContextRecall,
    ContextUtilization,
    FactualCorrectness,
    Faithfulness,
    NoiseSensitivity,
)
from tests.metrics.llm import scripts

SUITE = ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]


def test_standard_suite_reproduces_the_seeds_in_four_calls():
    judge, embeddings = scripts.judge(), scripts.embeddings()
    result = evaluate([scripts.SAMPLE], SUITE, judge=judge, embeddings=embeddings)
    scores = {name: result.scores(name)[0] for name in SUITE}
    assert scores["faithfulness"] == pytest.approx(2 / 3)  # seeds: 2 / 3 = 0.667
    assert round(scores["answer_relevancy"], 3) == 0.523  # seeds: mean(0.55, 0.50, 0.52)
    assert round(scores["context_precision"], 3) == 0.833  # seeds: useful at ranks 1 and 3
    assert scores["context_recall"] == pytest.approx(0.8)  # seeds: 4 of 5 statements
    assert len(judge.calls) == 4
    assert [c.schema.__name__ for c in judge.calls][-1] == "VerifySupport"
    assert result.config["usage"]["calls"] == 4
    assert {"response_analysis@3/zh", "reverse_questions@1/zh"} <= set(
        result.config["prompt_versions"]
    )


def test_on_topic_answer_relevancy_from_the_seeds():
    metric = AnswerRelevancy(
        judge=scripts.judge(), embeddings=scripts.embeddings((0.88, 0.82, 0.86))
    )
    assert round(metric.score(Sample(**scripts.SAMPLE)).score, 3) == 0.853


def test_the_call_budget_does_not_grow_with_contexts():
    for n in (1, 3, 10):
        sample = {**scripts.SAMPLE, "retrieved_contexts": [f"c{i}" for i in range(n)]}
        judge = scripts.judge()

        def answer(messages, schema, n=n):
            if schema.__name__.startswith("ReferenceReview"):
                return {
                    "statements": [{"text": "s", "contexts": [1]}],
                    "usefulness": [
                        {"index": i, "useful": 1, "reason": ""} for i in range(1, n + 1)
                    ],
                }
            return scripts.answer(messages, schema)

        judge = scripts.ScriptedJudge(answer)
        evaluate([sample], SUITE, judge=judge, embeddings=scripts.embeddings())
        assert len(judge.calls) == 4


def test_details_carry_claims_verdicts_and_reasons():
    metric = Faithfulness(judge=scripts.judge())
    result = metric.score(Sample(**scripts.SAMPLE))
    claims = result.details["claims"]
    assert [c["supported"] for c in claims] == [True, True, False]
    assert claims[2]["claim"] == scripts.CLAIMS[2] and claims[2]["reason"] == "reason 3"


def test_answer_correctness_from_tp_fp_fn_and_similarity():
    # TP 2 (claims 1-2 in the reference), FP 1 (AppleCare+), FN 3 (statements 3-5 missing)
    embeddings = scripts.ScriptedEmbeddings(
        {
            scripts.RESPONSE: scripts.unit_vector_with_cosine(1.0, 1),
            scripts.REFERENCE: scripts.unit_vector_with_cosine(0.9, 2),
        }
    )
    metric = AnswerCorrectness(judge=scripts.judge(), embeddings=embeddings)
    result = metric.score(Sample(**scripts.SAMPLE))
    assert (result.details["tp"], result.details["fp"], result.details["fn"]) == (2, 1, 3)
    f1 = 2 * 2 / (2 * 2 + 1 + 3)
    assert result.details["f_score"] == pytest.approx(f1)
    assert result.score == pytest.approx(0.75 * f1 + 0.25 * 0.9, abs=1e-6)


def test_factual_correctness_modes():
    sample = Sample(**scripts.SAMPLE)
    assert FactualCorrectness("precision", judge=scripts.judge()).score(
        sample
    ).score == pytest.approx(2 / 3)
    assert FactualCorrectness("recall", judge=scripts.judge()).score(sample).score == pytest.approx(
        2 / 5
    )
    assert FactualCorrectness(judge=scripts.judge()).score(sample).score == pytest.approx(0.5)


def test_context_utilization_and_entity_recall():
    sample = Sample(**scripts.SAMPLE)
    utilization = ContextUtilization(judge=scripts.judge()).score(sample)
    assert utilization.score == pytest.approx(0.325)  # useful at ranks 4 and 5
    entities = ContextEntityRecall(judge=scripts.judge()).score(sample)
    # the judge says 1 of 3; the fuzzy match also finds "1 年" in context 1
    assert entities.score == pytest.approx(2 / 3)


def test_noise_sensitivity_in_a_constant_number_of_calls():
    judge = scripts.judge()
    result = evaluate(
        [scripts.SAMPLE],
        [NoiseSensitivity("relevant"), NoiseSensitivity("irrelevant")],
        judge=judge,
    )
    # the AppleCare+ claim is wrong but supported by no context: no noise in either mode
    assert result.scores("noise_sensitivity_relevant") == [0.0]
    assert result.scores("noise_sensitivity_irrelevant") == [0.0]
    assert len(judge.calls) == 3


def test_a_response_without_claims_is_not_applicable():
    judge = scripts.ScriptedJudge(lambda m, s: {"claims": []})
    result = Faithfulness(judge=judge).score(Sample(**{**scripts.SAMPLE, "response": "您好！"}))
    assert result.status is Status.NOT_APPLICABLE and result.score is None


def test_empty_contexts_give_zero_recall_without_a_call():
    judge = scripts.judge()
    sample = Sample(**{**scripts.SAMPLE, "retrieved_contexts": []})
    assert ContextRecall(judge=judge).score(sample).score == 0.0
    assert ContextPrecision(judge=judge).score(sample).status is Status.NOT_APPLICABLE
    assert judge.calls == []


def test_fewer_verdicts_than_claims_are_re_asked_then_failed():
    def short(messages, schema):
        if schema.__name__ == "VerifySupport":
            return {"support": [{"claim": 1, "passages": [1], "reason": ""}]}
        return scripts.answer(messages, schema)

    judge = scripts.ScriptedJudge(short)
    result = Faithfulness(judge=judge).score(Sample(**scripts.SAMPLE))
    assert result.status is Status.FAILED
    assert "1 of 3 claims" in result.error
    assert [c.schema.__name__ for c in judge.calls].count("VerifySupport") == 2


def test_a_judge_error_fails_the_metric_and_keeps_the_others():
    from ragmeter.judge import JudgeTransientError

    def flaky(messages, schema):
        if schema.__name__.startswith("ReferenceReview"):
            raise JudgeTransientError("HTTP 500 (gave up after 6 attempts)")
        return scripts.answer(messages, schema)

    result = evaluate(
        [scripts.SAMPLE], SUITE, judge=scripts.ScriptedJudge(flaky), embeddings=scripts.embeddings()
    )
    assert result.samples[0].scores["context_recall"].status is Status.FAILED
    assert "HTTP 500" in result.samples[0].scores["context_precision"].error
    assert result.scores("faithfulness")[0] == pytest.approx(2 / 3)


def test_a_second_run_is_served_from_the_cache():
    judge = scripts.judge()
    evaluate([scripts.SAMPLE], SUITE, judge=judge, embeddings=scripts.embeddings())
    again = evaluate([scripts.SAMPLE], SUITE, judge=judge, embeddings=scripts.embeddings())
    assert len(judge.calls) == 4
    assert again.config["usage"]["calls"] == 0 and again.config["usage"]["cached_calls"] == 4


def test_english_samples_get_english_prompts():
    judge = scripts.ScriptedJudge(
        lambda m, s: (
            {"claims": ["Paris is in France."]}
            if s.__name__.startswith("Response")
            else {"support": [{"claim": 1, "passages": [1], "reason": ""}]}
        )
    )
    sample = Sample(
        user_input="Where is Paris?",
        response="Paris is in France.",
        retrieved_contexts=["Paris is the capital of France."],
    )
    assert Faithfulness(judge=judge).score(sample).score == 1.0
    assert "You analyse an answer" in judge.calls[0].messages[0].content


def test_whitespace_only_fields_are_not_applicable_without_a_call():
    judge = scripts.judge()
    sample = Sample(**{**scripts.SAMPLE, "response": "   \n"})
    result = Faithfulness(judge=judge).score(sample)
    assert result.status is Status.NOT_APPLICABLE and "empty response" in result.reason
    assert judge.calls == []


def test_sync_score_works_inside_a_running_event_loop():
    import asyncio

    async def notebook_cell():
        return Faithfulness(judge=scripts.judge()).score(Sample(**scripts.SAMPLE))

    assert asyncio.run(notebook_cell()).score == pytest.approx(2 / 3)


def test_independent_steps_of_a_sample_run_concurrently():
    from ragmeter.judge import JudgeConfig, NullCache, OpenAIJudge
    from ragmeter.testing import FakeOpenAIServer

    def responder(body):
        from ragmeter.judge import Message

        requested = body["response_format"]["json_schema"]
        schema = type(requested["name"], (), {"model_fields": requested["schema"]["properties"]})

        messages = [Message(m["role"], m["content"]) for m in body["messages"]]
        return scripts.answer(messages, schema)

    with FakeOpenAIServer(responder=responder, latency_s=0.4) as server:
        judge = OpenAIJudge(
            JudgeConfig(model="m", base_url=server.base_url, structured_output="json_schema"),
            cache=NullCache(),
        )
        result = evaluate([scripts.SAMPLE], SUITE, judge=judge, embeddings=scripts.embeddings())
        assert len(server.requests) == 4
        # Claims, the reverse-generated questions and the reference review were in flight
        # together: two rounds of requests (counted by the server, not timed).
        assert server.max_in_flight == 3
    assert result.scores("faithfulness")[0] == pytest.approx(2 / 3)


def test_context_relevance_from_the_question_alone():
    from ragmeter.metrics.llm import ContextRelevance

    def relevance(messages, schema):
        assert schema.__name__ == "ContextRelevanceUsefulness"
        assert "<reference>" not in messages[-1].content and "<answer>" not in messages[-1].content
        return {
            "usefulness": [{"index": i, "useful": int(i == 1), "reason": ""} for i in range(1, 6)]
        }

    result = ContextRelevance(judge=scripts.ScriptedJudge(relevance)).score(
        Sample(**scripts.SAMPLE)
    )
    assert result.score == pytest.approx(1 / 5)
    assert [c["relevant"] for c in result.details["contexts"]] == [True, False, False, False, False]


def test_a_rejected_judge_configuration_stops_the_run_and_says_why():
    from ragmeter.judge import JudgeConfigError

    def refuse(messages, schema):
        raise JudgeConfigError("HTTP 401: the API key was rejected")

    judge = scripts.ScriptedJudge(refuse)
    samples = [{**scripts.SAMPLE, "id": f"s{i}"} for i in range(20)]
    result = evaluate(samples, ["faithfulness", "rouge_l"], judge=judge, concurrency=1)
    assert len(judge.calls) == 1  # no call after the first refusal
    assert "401" in result.config["judge_error"]
    statuses = {s.scores["faithfulness"].status for s in result}
    assert statuses == {Status.NOT_STARTED}  # the run stopped: not failures, resumable
    assert "not judged" in result.samples[-1].scores["faithfulness"].reason
    assert "401" in result.samples[-1].scores["faithfulness"].reason
    assert all(s.scores["rouge_l"].status is Status.OK for s in result)  # kept


def test_each_sample_records_its_judge_usage(tmp_path):
    from ragmeter import EvaluationResult

    result = evaluate(
        [scripts.SAMPLE], SUITE, judge=scripts.judge(), embeddings=scripts.embeddings()
    )
    assert result.samples[0].usage["calls"] == 4
    loaded = EvaluationResult.load(result.save(tmp_path / "run"))
    assert loaded.samples[0].usage == result.samples[0].usage
