"""The OpenAI-compatible judge against the project's fake server: structured output by
capability, limits, retries, repair, cache, usage and cost, and secrets."""

import asyncio
import json
import time

import pytest
from pydantic import BaseModel

from ragmeter.judge import (
    BinaryVerdict,
    JudgeConfig,
    JudgeConfigError,
    JudgeOutputError,
    JudgeTransientError,
    JudgeTruncatedError,
    Message,
    OpenAIJudge,
    Price,
    SQLiteCache,
)
from ragmeter.testing import FakeOpenAIServer, Fault, ScriptedReply, tokenize

KEY = "sk-fake-0123456789abcdef-secret"
QUESTION = [Message("system", "You check claims."), Message("user", "Is the sky blue?")]


class Claims(BaseModel):
    claims: list[str]


def claims_responder(body):
    return {"claims": ["the sky is blue"]}


def make_judge(server, **overrides):
    settings = {
        "model": "judge-model",
        "base_url": server.base_url,
        "api_key": KEY,
        "timeout_s": 2.0,
        "max_retries": 3,
        **overrides,
    }
    return OpenAIJudge(JudgeConfig(**settings))


def run(coro):
    return asyncio.run(coro)


async def ask(judge, schema=Claims, messages=QUESTION, version="test@1"):
    try:
        return await judge.generate(messages, schema, prompt_version=version)
    finally:
        await judge.aclose()


def chat_requests(server):
    return [r for r in server.requests if r.path.endswith("/chat/completions")]


def test_json_schema_is_used_where_supported():
    with FakeOpenAIServer(responder=claims_responder, api_key=KEY) as server:
        judgment = run(ask(make_judge(server)))
        assert judgment.output.claims == ["the sky is blue"]
        (request,) = chat_requests(server)
        assert request.authorized
        assert request.body["response_format"]["type"] == "json_schema"
        assert request.body["temperature"] == 0.0 and request.body["seed"] == 42


def test_llama_cpp_style_endpoint_falls_back_to_json_object_and_remembers():
    with FakeOpenAIServer(responder=claims_responder, supports_json_schema=False) as server:
        judge = make_judge(server)
        run(ask(judge))
        run(ask(judge, messages=[Message("user", "another question")]))
        kinds = [r.body["response_format"]["type"] for r in chat_requests(server)]
        assert kinds == ["json_schema", "json_object", "json_object"]
        system = chat_requests(server)[1].body["messages"][0]
        assert system["role"] == "system" and '"claims"' in system["content"]


def test_retries_recover_from_429_500_timeouts_and_drops():
    with FakeOpenAIServer(responder=claims_responder) as server:
        server.inject(
            Fault.rate_limit(retry_after_s=0.05),
            Fault.server_error(),
            Fault.timeout(delay_s=3.0),
            Fault.connection_drop(),
        )
        # explicit json_schema: in "auto" a 500 on the first call would mean "no json_schema"
        judge = make_judge(server, timeout_s=0.5, max_retries=5, structured_output="json_schema")
        judgment = run(ask(judge))
        assert judgment.output.claims == ["the sky is blue"]
        assert judgment.usage.retries == 4
        assert judgment.usage.calls == 5 == len(chat_requests(server))


def test_retries_give_up_with_an_error_value_not_nan():
    with FakeOpenAIServer(responder=claims_responder) as server:
        server.inject(*[Fault.server_error() for _ in range(3)])
        with pytest.raises(JudgeTransientError, match="gave up after 3 attempts"):
            run(ask(make_judge(server, max_retries=2, structured_output="json_object")))


def test_retry_after_is_honoured():
    with FakeOpenAIServer(responder=claims_responder) as server:
        server.inject(Fault.rate_limit(retry_after_s=1.0))
        started = time.monotonic()
        run(ask(make_judge(server)))
        assert time.monotonic() - started >= 0.95


@pytest.mark.parametrize(
    ("fault", "hint"),
    [
        (Fault.not_found(), "RAGMETER_JUDGE_MODEL"),
        (Fault.bad_request("model 'x' does not support this"), "does not support"),
    ],
)
def test_client_errors_fail_fast_with_the_fix(fault, hint):
    with FakeOpenAIServer(responder=claims_responder) as server:
        server.inject(fault)
        with pytest.raises(JudgeConfigError, match=hint):
            run(ask(make_judge(server, structured_output="json_object")))
        assert len(chat_requests(server)) == 1


def test_wrong_key_fails_fast_and_never_shows_the_key():
    with FakeOpenAIServer(responder=claims_responder, api_key="the-right-key") as server:
        with pytest.raises(JudgeConfigError) as raised:
            run(ask(make_judge(server, structured_output="json_object")))
        message = str(raised.value)
        assert "RAGMETER_JUDGE_API_KEY" in message
        assert KEY not in message and KEY not in repr(raised.value)
        assert len(chat_requests(server)) == 1


def test_malformed_answer_gets_one_repair_re_ask():
    with FakeOpenAIServer(responder=claims_responder) as server:
        server.inject(Fault.malformed_json())
        judgment = run(ask(make_judge(server)))
        assert judgment.output.claims == ["the sky is blue"]
        requests = chat_requests(server)
        assert len(requests) == 2
        assert "invalid" in requests[1].body["messages"][-1]["content"]


def test_an_answer_still_invalid_after_repair_is_reported():
    with FakeOpenAIServer(responder=lambda body: "I refuse to answer in JSON.") as server:
        with pytest.raises(JudgeOutputError, match="after one repair re-ask"):
            run(ask(make_judge(server)))
        assert len(chat_requests(server)) == 2


def test_truncated_answer_is_retried_with_a_larger_budget():
    with FakeOpenAIServer(responder=claims_responder) as server:
        server.inject(Fault.truncated())
        judgment = run(ask(make_judge(server, max_tokens=100)))
        assert judgment.output.claims == ["the sky is blue"]
        budgets = [r.body["max_tokens"] for r in chat_requests(server)]
        assert budgets == [100, 200]


def test_a_truncated_answer_is_reported_without_the_key_or_url_credentials():
    # an answer echoing the configured key and a URL's credentials, cut off at the largest
    # budget: the error and its raw text show neither (as the Anthropic and LiteLLM judges)
    url = "https://user:pw-0123456789@db.example/x?api_key=tok-0123456789"
    leaked = f"the key is {KEY}, the store {url} "

    def leaking(body):
        return {"claims": [leaked * 4]}

    with FakeOpenAIServer(responder=leaking, api_key=KEY) as server:
        server.inject(Fault.truncated(keep_fraction=0.9))
        with pytest.raises(JudgeTruncatedError, match="16384 tokens") as caught:
            run(ask(make_judge(server, max_tokens=16384)))
    error = caught.value
    assert error.raw and "the key is ***" in error.raw
    for secret in (KEY, "pw-0123456789", "tok-0123456789"):
        assert secret not in str(error) and secret not in error.raw


def test_cache_hits_make_zero_calls_and_other_settings_miss(tmp_path):
    with FakeOpenAIServer(responder=claims_responder) as server:
        cache_path = tmp_path / "judge.db"

        def judge(**overrides):
            return OpenAIJudge(
                JudgeConfig(
                    model=overrides.pop("model", "judge-model"),
                    base_url=server.base_url,
                    **overrides,
                ),
                cache=SQLiteCache(cache_path),
            )

        first = run(ask(judge()))
        assert not first.cached
        again = run(ask(judge()))  # a new judge, same cache file: a re-run
        assert again.cached and again.usage.calls == 0 and again.usage.cached_calls == 1
        assert len(chat_requests(server)) == 1
        run(ask(judge(model="other-model")))
        run(ask(judge(temperature=0.7)))
        run(ask(judge(), version="test@2"))
        assert len(chat_requests(server)) == 4
        assert KEY not in cache_path.read_bytes().decode("utf-8", "replace")


def test_identical_concurrent_requests_share_one_call():
    with FakeOpenAIServer(responder=claims_responder, latency_s=0.2) as server:
        judge = make_judge(server)

        async def main():
            try:
                return await asyncio.gather(
                    *(judge.generate(QUESTION, Claims, prompt_version="v") for _ in range(5))
                )
            finally:
                await judge.aclose()

        results = run(main())
        assert len(chat_requests(server)) == 1
        assert sum(r.cached for r in results) == 4


def test_concurrency_limit_holds_at_the_server():
    with FakeOpenAIServer(responder=claims_responder, latency_s=0.15) as server:
        judge = make_judge(server, max_concurrency=4)

        async def main():
            try:
                await asyncio.gather(
                    *(
                        judge.generate([Message("user", f"q{i}")], Claims, prompt_version="v")
                        for i in range(16)
                    )
                )
            finally:
                await judge.aclose()

        run(main())
        assert server.max_in_flight == 4


def test_requests_per_minute_hold_at_the_server():
    with FakeOpenAIServer(responder=claims_responder) as server:
        judge = make_judge(server, max_concurrency=32, requests_per_minute=1200)

        async def main():
            try:
                await asyncio.gather(
                    *(
                        judge.generate([Message("user", f"q{i}")], Claims, prompt_version="v")
                        for i in range(50)
                    )
                )
            finally:
                await judge.aclose()

        started = time.monotonic()
        run(main())
        times = sorted(server.request_times)
        # 1200 rpm = 20/s with a burst of 20: the 50th request cannot leave before the 30
        # tokens after the burst have refilled, 1.5 s after the start. (Measured from the
        # start, not from the first arrival: connection set-up delays the first arrivals,
        # not the tokens, which made the spread between arrivals as short as 1.23 s.)
        assert times[-1] - started >= 1.45
        assert len(times) == 50


def test_usage_and_cost_add_up():
    with FakeOpenAIServer(responder=claims_responder) as server:
        judge = make_judge(server, price=Price(input_per_million=1.0, output_per_million=2.0))

        async def main():
            try:
                for i in range(3):
                    await judge.generate(
                        [Message("user", f"question {i}")], Claims, prompt_version="v"
                    )
                await judge.generate([Message("user", "question 0")], Claims, prompt_version="v")
            finally:
                await judge.aclose()

        run(main())
        total = judge.ledger.total
        assert (total.calls, total.cached_calls) == (3, 1)
        # what the server reported: its own tokenizer over what was sent and answered
        answer = json.dumps({"claims": ["the sky is blue"]})
        requests = chat_requests(server)
        prompt = sum(len(tokenize(m["content"])) for r in requests for m in r.body["messages"])
        completion = len(tokenize(answer)) * len(requests)
        assert total.prompt_tokens == prompt and total.completion_tokens == completion
        assert total.cost == pytest.approx((prompt * 1.0 + completion * 2.0) / 1e6)
        assert total.estimated_calls == 0


def test_tokens_are_estimated_when_the_endpoint_reports_none():
    with FakeOpenAIServer(responder=claims_responder, report_usage=False) as server:
        judgment = run(ask(make_judge(server)))
        assert judgment.usage.estimated_calls == 1
        assert judgment.usage.prompt_tokens > 0 and judgment.usage.completion_tokens > 0


def test_probabilistic_verdicts_from_logprobs():
    def responder(body):
        return ScriptedReply(content='{"verdict": 1}', p_yes=0.8)

    with FakeOpenAIServer(responder=responder) as server:
        judgment = run(ask(make_judge(server, logprobs=True), schema=BinaryVerdict))
        assert judgment.output.verdict == 1
        assert judgment.probabilities == pytest.approx([0.8])
        assert chat_requests(server)[0].body["logprobs"] is True


def test_describe_never_holds_the_key():
    with FakeOpenAIServer() as server:
        judge = make_judge(server)
        assert KEY not in json.dumps(judge.describe())
        assert judge.describe()["api_key_set"] is True


def test_failed_calls_count_every_request_sent_and_the_tokens_answered():
    """A call that ends in an error (truncated at every budget, or invalid after the repair)
    still sent requests and got billed answers: the error and the ledger count them."""
    with FakeOpenAIServer(responder=claims_responder) as server:
        server.fault_rate(Fault.truncated(), 1.0)
        judge = make_judge(
            server, max_tokens=4096, price=Price(input_per_million=1.0, output_per_million=1.0)
        )
        with pytest.raises(JudgeOutputError) as caught:
            run(ask(judge))
        sent = len(chat_requests(server))
        assert sent >= 2  # the first answer, then the larger budget(s)
        usage = caught.value.usage
        assert usage is not None and usage.calls == sent
        assert usage.prompt_tokens > 0 and usage.completion_tokens > 0 and usage.cost > 0
        assert judge.ledger.total.calls == sent

    with FakeOpenAIServer(responder=lambda body: "I refuse to answer in JSON.") as server:
        judge = make_judge(server)
        with pytest.raises(JudgeOutputError) as caught:
            run(ask(judge))
        assert caught.value.usage is not None and caught.value.usage.calls == 2
        assert judge.ledger.total.calls == 2


def test_a_shared_failed_call_is_counted_once():
    with FakeOpenAIServer(responder=lambda body: "no JSON here", latency_s=0.2) as server:
        judge = make_judge(server)

        async def main():
            try:
                return await asyncio.gather(
                    *(judge.generate(QUESTION, Claims, prompt_version="v") for _ in range(3)),
                    return_exceptions=True,
                )
            finally:
                await judge.aclose()

        errors = run(main())
        assert all(isinstance(e, JudgeOutputError) for e in errors)
        assert len(chat_requests(server)) == 2
        assert sum(e.usage.calls for e in errors if e.usage is not None) == 2
        assert judge.ledger.total.calls == 2
