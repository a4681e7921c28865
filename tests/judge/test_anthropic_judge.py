"""The Anthropic judge against the fake server's Messages API: structured output by a forced
tool (and its fallbacks), retries, repair, truncation, cache, usage and cost, secrets; the
emulation's rejections; choosing the judge from options, environment and config files."""

import asyncio
import json
import time
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, SecretStr
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.cli._judging import CacheOptions, JudgeOptions  # private: the CLI's judge options
from ragmeter.judge import (
    AnthropicConfig,
    AnthropicJudge,
    BinaryVerdict,
    EndpointClient,
    JudgeConfigError,
    JudgeOutputError,
    JudgeTransientError,
    JudgeTruncatedError,
    Limiter,
    LimitSettings,
    MemoryCache,
    Message,
    Price,
    SQLiteCache,
    Usage,
    anthropic_key_for,
    default_judge,
    judge_config,
)
from ragmeter.results import EvaluationResult
from ragmeter.testing import (
    FakeAnthropicServer,
    FakeOpenAIServer,
    Fault,
    ScriptedReply,
    input_tokens_of,
    tokenize,
)

KEY = "sk-ant-fake-0123456789abcdef-secret"
QUESTION = [Message("system", "You check claims."), Message("user", "Is the sky blue?")]
ANSWER = {"claims": ["the sky is blue"]}
runner = CliRunner()


class Claims(BaseModel):
    claims: list[str]


def claims_responder(body):
    return ANSWER


def make_judge(server, **overrides):
    settings = {
        "model": "claude-fake",
        "base_url": server.base_url,
        "api_key": KEY,
        "timeout_s": 2.0,
        "max_retries": 3,
        **overrides,
    }
    return AnthropicJudge(AnthropicConfig(**settings))


def run(coro):
    return asyncio.run(coro)


async def ask(judge, schema=Claims, messages=QUESTION, version="test@1"):
    try:
        return await judge.generate(messages, schema, prompt_version=version)
    finally:
        await judge.aclose()


def sent(server):
    return [r for r in server.requests if r.path == "/v1/messages"]


# -- the request and the structured answer -------------------------------------------------


def test_structured_output_comes_from_a_forced_tool():
    with FakeAnthropicServer(responder=claims_responder, api_key=KEY) as server:
        judgment = run(ask(make_judge(server)))
        assert judgment.output.claims == ["the sky is blue"]
        assert judgment.probabilities is None
        (request,) = sent(server)
        assert request.authorized  # the right x-api-key
        assert request.headers["anthropic-version"] == "2023-06-01"
        body = request.body
        assert body["system"] == "You check claims."
        assert body["messages"] == [{"role": "user", "content": "Is the sky blue?"}]
        assert (body["max_tokens"], body["temperature"]) == (1024, 0.0)
        (tool,) = body["tools"]
        assert tool["name"] == "Claims" and tool["input_schema"]["properties"]["claims"]
        assert body["tool_choice"] == {"type": "tool", "name": "Claims"}
        assert not {"seed", "response_format", "logprobs"} & set(body)


def test_the_key_goes_in_x_api_key_never_as_a_bearer_token():
    seen: list[httpx.Request] = []

    def answer(request):
        seen.append(request)
        tool = json.loads(request.content)["tools"][0]["name"]
        content = [{"type": "tool_use", "id": "toolu_1", "name": tool, "input": ANSWER}]
        usage = {"input_tokens": 10, "output_tokens": 5}
        return httpx.Response(
            200, json={"content": content, "stop_reason": "tool_use", "usage": usage}
        )

    judge = AnthropicJudge(
        AnthropicConfig(model="claude-haiku-4-5", api_key=KEY),
        transport=httpx.MockTransport(answer),
    )
    assert run(ask(judge)).output.claims == ["the sky is blue"]
    (request,) = seen
    assert str(request.url) == "https://api.anthropic.com/v1/messages"
    assert request.headers["x-api-key"] == KEY
    assert "authorization" not in request.headers
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"


def test_a_base_url_ending_in_v1_is_taken_too():
    with FakeOpenAIServer(responder=claims_responder) as server:  # http://127.0.0.1:PORT/v1
        judgment = run(ask(make_judge(server)))
        assert judgment.output.claims == ["the sky is blue"]
        assert [r.path for r in server.requests] == ["/v1/messages"]


def test_an_invalid_tool_input_gets_one_repair_re_ask_as_the_tool_result():
    answers = iter([{"claims": "not a list"}, ANSWER])
    with FakeAnthropicServer(responder=lambda body: next(answers)) as server:
        judgment = run(ask(make_judge(server)))
        assert judgment.output.claims == ["the sky is blue"]
        _, repair = sent(server)
        assistant, user = repair.body["messages"][-2:]
        (call,) = assistant["content"]
        assert call["type"] == "tool_use" and call["input"] == {"claims": "not a list"}
        (result,) = user["content"]
        assert result["type"] == "tool_result" and result["tool_use_id"] == call["id"]
        assert result["is_error"] is True and "invalid" in result["content"]
        assert judgment.usage.calls == 2


def test_a_prose_answer_gets_one_repair_re_ask():
    with FakeAnthropicServer(responder=claims_responder) as server:
        server.inject(Fault.malformed_json())
        judgment = run(ask(make_judge(server)))
        assert judgment.output.claims == ["the sky is blue"]
        _, repair = sent(server)
        assert repair.body["messages"][-2]["role"] == "assistant"
        assert "invalid" in repair.body["messages"][-1]["content"]


def test_an_answer_still_invalid_after_repair_is_reported_with_its_cost():
    with FakeAnthropicServer(responder=lambda body: "I refuse to answer in JSON.") as server:
        judge = make_judge(server)
        with pytest.raises(JudgeOutputError, match="after one repair re-ask") as caught:
            run(ask(judge))
        assert len(sent(server)) == 2
        assert caught.value.usage is not None and caught.value.usage.calls == 2
        assert judge.ledger.total.calls == 2


@pytest.mark.parametrize(
    ("stop_reason", "error", "words"),
    [
        ("refusal", JudgeOutputError, "declined to answer"),
        ("model_context_window_exceeded", JudgeTruncatedError, "context window"),
    ],
)
def test_a_refusal_or_a_full_context_is_reported_without_a_re_ask(stop_reason, error, words):
    reply = ScriptedReply(json.dumps(ANSWER), finish_reason=stop_reason)
    with FakeAnthropicServer(responder=lambda body: reply) as server:
        with pytest.raises(error, match=words):
            run(ask(make_judge(server)))
        assert len(sent(server)) == 1


def test_thinking_blocks_are_not_the_answer():
    def answer(request):
        content = [
            {"type": "thinking", "thinking": "The sky is {blue}.", "signature": "sig"},
            {"type": "text", "text": json.dumps(ANSWER)},
        ]
        usage = {"input_tokens": 10, "output_tokens": 30}
        return httpx.Response(
            200, json={"content": content, "stop_reason": "end_turn", "usage": usage}
        )

    judge = AnthropicJudge(
        AnthropicConfig(model="claude-sonnet-5", api_key=KEY, structured_output="json"),
        transport=httpx.MockTransport(answer),
    )
    judgment = run(ask(judge))
    assert judgment.output.claims == ["the sky is blue"] and judgment.usage.calls == 1


# -- retries and budgets ---------------------------------------------------------------------


def test_retries_on_429_529_and_500_honour_retry_after():
    with FakeAnthropicServer(responder=claims_responder) as server:
        server.inject(
            Fault.rate_limit(retry_after_s=0.6),
            Fault.http_error(529),
            Fault.server_error(),
        )
        started = time.monotonic()
        judgment = run(ask(make_judge(server, max_retries=5)))
        assert time.monotonic() - started >= 0.55
        assert judgment.output.claims == ["the sky is blue"]
        assert judgment.usage.retries == 3
        assert judgment.usage.calls == 4 == len(sent(server))


def test_an_overloaded_api_gives_up_with_an_error_value():
    with FakeAnthropicServer(responder=claims_responder) as server:
        server.inject(*[Fault.http_error(529) for _ in range(3)])
        with pytest.raises(JudgeTransientError, match=r"HTTP 529.*Overloaded.*after 3 attempts"):
            run(ask(make_judge(server, max_retries=2)))


def test_a_truncated_answer_is_retried_with_a_larger_budget():
    with FakeAnthropicServer(responder=claims_responder) as server:
        server.inject(Fault.truncated())
        judgment = run(ask(make_judge(server, max_tokens=100)))
        assert judgment.output.claims == ["the sky is blue"]
        assert [r.body["max_tokens"] for r in sent(server)] == [100, 200]


def test_an_answer_longer_than_max_tokens_gets_the_budget_it_needs():
    long = {"claims": [f"claim number {i}" for i in range(12)]}  # 74 tokens
    with FakeAnthropicServer(responder=lambda body: long) as server:
        judgment = run(ask(make_judge(server, max_tokens=20)))
        assert len(judgment.output.claims) == 12
        assert [r.body["max_tokens"] for r in sent(server)] == [20, 40, 80]


def test_cut_off_at_every_budget_is_a_truncation_error_that_counts_its_cost():
    with FakeAnthropicServer(responder=claims_responder) as server:
        server.fault_rate(Fault.truncated(), 1.0)
        price = Price(input_per_million=1.0, output_per_million=1.0)
        judge = make_judge(server, max_tokens=8192, price=price)
        with pytest.raises(JudgeTruncatedError, match="stop_reason=max_tokens") as caught:
            run(ask(judge))
        assert [r.body["max_tokens"] for r in sent(server)] == [8192, 16384]
        usage = caught.value.usage
        assert usage is not None and usage.calls == 2
        assert usage.prompt_tokens > 0 and usage.completion_tokens > 0 and usage.cost > 0
        assert judge.ledger.total.calls == 2


# -- structured output fallbacks -----------------------------------------------------------


def test_a_model_refusing_forced_tool_use_is_offered_the_tool_instead():
    with FakeAnthropicServer(responder=claims_responder, forced_tool_use=False) as server:
        judge = make_judge(server)
        assert run(ask(judge)).output.claims == ["the sky is blue"]
        refused, answered = sent(server)
        assert refused.body["tool_choice"]["type"] == "tool"
        assert answered.body["tool_choice"] == {"type": "auto"}
        assert "Claims" in answered.body["system"]
        assert judge.structured_output_mode == "tool_auto"
        run(ask(make_judge(server), messages=[Message("user", "again?")]))  # remembered
        assert len(sent(server)) == 3


def test_an_endpoint_refusing_tools_gets_the_schema_in_the_system_prompt():
    with FakeAnthropicServer(responder=claims_responder) as server:
        server.inject(Fault.bad_request("tools: this model does not support tools"))
        judge = make_judge(server)
        assert run(ask(judge)).output.claims == ["the sky is blue"]
        refused, answered = sent(server)
        assert "tools" in refused.body and "tools" not in answered.body
        assert '"claims"' in answered.body["system"]
        assert judge.structured_output_mode == "json"


def test_json_instructions_can_be_chosen():
    with FakeAnthropicServer(responder=claims_responder) as server:
        judgment = run(ask(make_judge(server, structured_output="json")))
        assert judgment.output.claims == ["the sky is blue"]
        (request,) = sent(server)
        assert "tools" not in request.body and "JSON schema" in request.body["system"]


def test_a_model_refusing_temperature_gets_its_default():
    with FakeAnthropicServer(responder=claims_responder, accepts_temperature=False) as server:
        judge = make_judge(server)
        assert run(ask(judge)).output.claims == ["the sky is blue"]
        refused, answered = sent(server)
        assert refused.body["temperature"] == 0.0 and "temperature" not in answered.body
        assert judge.describe()["temperature_sent"] is None


# -- usage, cost, cache, secrets --------------------------------------------------------------


def test_usage_and_cost_add_up_to_what_the_server_counted():
    with FakeAnthropicServer(responder=claims_responder) as server:
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
        requests = sent(server)
        prompt = sum(input_tokens_of(r.body) for r in requests)
        completion = len(tokenize(json.dumps(ANSWER))) * len(requests)
        assert total.prompt_tokens == prompt and total.completion_tokens == completion
        assert total.cost == pytest.approx((prompt * 1.0 + completion * 2.0) / 1e6)
        assert total.estimated_calls == 0


def test_known_claude_models_have_a_price():
    with FakeAnthropicServer(responder=claims_responder) as server:
        judge = make_judge(server, model="claude-haiku-4-5-20251001")
        assert judge.describe()["price"]["output_per_million"] == 5.0
        judgment = run(ask(judge))
        usage = judgment.usage
        expected = (usage.prompt_tokens * 1.0 + usage.completion_tokens * 5.0) / 1e6
        assert usage.cost == pytest.approx(expected) and usage.cost > 0
        assert isinstance(make_judge(server, model="claude-new").describe()["price"], str)


def test_tokens_are_estimated_when_the_endpoint_reports_none():
    with FakeAnthropicServer(responder=claims_responder, report_usage=False) as server:
        judgment = run(ask(make_judge(server)))
        assert judgment.usage.estimated_calls == 1
        assert judgment.usage.prompt_tokens > 0 and judgment.usage.completion_tokens > 0


def test_cache_hits_make_no_call(tmp_path):
    with FakeAnthropicServer(responder=claims_responder) as server:
        cache_path = tmp_path / "judge.db"

        def judge(**overrides):
            config = AnthropicConfig(
                model=overrides.pop("model", "claude-fake"),
                base_url=server.base_url,
                api_key=KEY,
                **overrides,
            )
            return AnthropicJudge(config, cache=SQLiteCache(cache_path))

        assert not run(ask(judge())).cached
        again = run(ask(judge()))  # a new judge, same cache file: a re-run
        assert again.cached and again.usage.calls == 0 and again.usage.cached_calls == 1
        assert len(sent(server)) == 1
        run(ask(judge(model="claude-other")))
        run(ask(judge(temperature=0.5)))
        assert len(sent(server)) == 3
        assert KEY not in cache_path.read_bytes().decode("utf-8", "replace")


def test_describe_and_repr_never_hold_the_key():
    with FakeAnthropicServer() as server:
        judge = make_judge(server)
        described = judge.describe()
        assert KEY not in json.dumps(described) and KEY not in repr(judge.config)
        assert described["api_key_set"] is True and described["kind"] == "anthropic"
        assert judge.identity == f"{server.base_url}|claude-fake"


def test_a_wrong_key_fails_fast_naming_the_endpoint_never_the_key():
    with FakeAnthropicServer(responder=claims_responder, api_key="sk-ant-right") as server:
        with pytest.raises(JudgeConfigError) as raised:
            run(ask(make_judge(server)))
        message = str(raised.value)
        assert "HTTP 401" in message and server.base_url in message
        assert "ANTHROPIC_API_KEY" in message and "rejected" in message
        assert KEY not in message and KEY not in repr(raised.value)
        assert len(sent(server)) == 1
        with pytest.raises(JudgeConfigError, match="no API key was sent"):
            run(ask(make_judge(server, api_key=None)))


def test_a_reached_spend_limit_is_not_retried():
    calls = []

    def answer(request):
        calls.append(request)
        error = {
            "type": "rate_limit_error",
            "message": "spend limit reached",
            "details": {"error_code": "enforced_spend_limit_reached"},
        }
        return httpx.Response(429, json={"type": "error", "error": error})

    judge = AnthropicJudge(
        AnthropicConfig(model="claude-haiku-4-5", api_key=KEY),
        transport=httpx.MockTransport(answer),
    )
    with pytest.raises(JudgeConfigError, match="spend limit"):
        run(ask(judge))
    assert len(calls) == 1


def test_logprobs_cannot_be_asked_of_anthropic():
    with pytest.raises(ValueError, match="no token probabilities"):
        AnthropicConfig(model="claude-fake", logprobs=True)
    config = AnthropicConfig(model="claude-fake").model_copy(update={"logprobs": True})
    with pytest.raises(ValueError, match="no token probabilities"):
        AnthropicJudge(config)


# -- the emulation refuses what the API refuses ----------------------------------------------

GOOD: dict[str, Any] = {
    "model": "claude-fake",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Hi"}],
}
HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
TOOL = {"name": "Claims", "input_schema": {"type": "object"}}


@pytest.mark.parametrize(
    ("headers", "body", "status", "words"),
    [
        (
            {"authorization": f"Bearer {KEY}", "anthropic-version": "2023-06-01"},
            GOOD,
            401,
            "x-api-key",
        ),
        ({"x-api-key": "sk-ant-wrong", "anthropic-version": "2023-06-01"}, GOOD, 401, "invalid"),
        ({"x-api-key": KEY}, GOOD, 400, "anthropic-version"),
        ({**HEADERS, "anthropic-version": "2024-13-01"}, GOOD, 400, "anthropic-version"),
        (HEADERS, {k: v for k, v in GOOD.items() if k != "max_tokens"}, 400, "max_tokens"),
        (HEADERS, {**GOOD, "max_tokens": 0}, 400, "max_tokens"),
        (
            HEADERS,
            {**GOOD, "messages": [{"role": "system", "content": "Be brief."}, *GOOD["messages"]]},
            400,
            "top-level `system`",
        ),
        (
            HEADERS,
            {**GOOD, "messages": [*GOOD["messages"], {"role": "user", "content": "again"}]},
            400,
            "alternate",
        ),
        (HEADERS, {**GOOD, "response_format": {"type": "json_object"}}, 400, "Extra inputs"),
        (HEADERS, {**GOOD, "seed": 42}, 400, "Extra inputs"),
        (HEADERS, {**GOOD, "temperature": 1.5}, 400, "temperature"),
        (HEADERS, {**GOOD, "messages": [{"role": "user", "content": ""}]}, 400, "non-empty"),
        (HEADERS, {**GOOD, "tools": [{**TOOL, "name": "bad name"}]}, 400, "pattern"),
        (HEADERS, {**GOOD, "tools": [{"name": "Claims"}]}, 400, "input_schema"),
        (
            HEADERS,
            {**GOOD, "tools": [TOOL], "tool_choice": {"type": "tool", "name": "Other"}},
            400,
            "tool_choice",
        ),
        (HEADERS, {**GOOD, "tool_choice": {"type": "auto"}}, 400, "tools"),
        (
            HEADERS,
            {
                **GOOD,
                "tools": [TOOL],
                "messages": [
                    *GOOD["messages"],
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "tool_use", "id": "t1", "name": "Claims", "input": {}}
                        ],
                    },
                    {"role": "user", "content": "what now?"},
                ],
            },
            400,
            "without tool_result",
        ),
        (HEADERS, {**GOOD, "stream": True}, 400, "stream"),
    ],
)
def test_the_emulation_refuses_what_the_api_refuses(headers, body, status, words):
    with FakeAnthropicServer(responder=claims_responder, api_key=KEY) as server:
        server.inject(Fault.server_error())  # consumed only by requests past the header checks
        response = httpx.post(f"{server.base_url}/v1/messages", json=body, headers=headers)
        if response.status_code == 500:  # the fault went first: the body is checked next time
            response = httpx.post(f"{server.base_url}/v1/messages", json=body, headers=headers)
        assert response.status_code == status, response.text
        error = response.json()
        assert error["type"] == "error"
        expected = "authentication_error" if status == 401 else "invalid_request_error"
        assert error["error"]["type"] == expected
        assert words in error["error"]["message"]
        assert KEY not in json.dumps([r.headers for r in server.requests])


def test_the_emulation_answers_a_good_request_as_the_api_does():
    with FakeAnthropicServer(responder=claims_responder, api_key=KEY) as server:
        response = httpx.post(
            f"{server.base_url}/v1/messages",
            json={**GOOD, "system": "Be brief.", "tools": [TOOL]},
            headers=HEADERS,
        )
        assert response.status_code == 200, response.text
        message = response.json()
        assert (message["type"], message["role"], message["stop_reason"]) == (
            "message",
            "assistant",
            "tool_use",
        )
        (block,) = message["content"]
        assert block["type"] == "tool_use" and block["input"] == ANSWER
        assert message["usage"]["output_tokens"] == len(tokenize(json.dumps(ANSWER)))
        server.inject(Fault.rate_limit(retry_after_s=3), Fault.http_error(529))
        limited = httpx.post(f"{server.base_url}/v1/messages", json=GOOD, headers=HEADERS)
        assert limited.status_code == 429 and limited.headers["retry-after"] == "3"
        assert limited.json()["error"]["type"] == "rate_limit_error"
        overloaded = httpx.post(f"{server.base_url}/v1/messages", json=GOOD, headers=HEADERS)
        assert overloaded.status_code == 529
        assert overloaded.json()["error"]["type"] == "overloaded_error"


def test_deliberately_wrong_clients_get_the_apis_errors():
    """A client that sends the system prompt as a message, or the key as a bearer token (as
    an OpenAI-compatible client does), is refused: the emulation does not pass it."""

    class SystemAsMessage(AnthropicJudge):
        def _body(self, *args, **kwargs):
            body = super()._body(*args, **kwargs)
            system = {"role": "system", "content": body.pop("system")}
            return {**body, "messages": [system, *body["messages"]]}

    with FakeAnthropicServer(responder=claims_responder, api_key=KEY) as server:
        config = AnthropicConfig(model="claude-fake", base_url=server.base_url, api_key=KEY)
        with pytest.raises(JudgeConfigError, match=r'HTTP 400.*Unexpected role "system"'):
            run(ask(SystemAsMessage(config)))
        bearer = EndpointClient(
            base_url=server.base_url,
            api_key=SecretStr(KEY),
            model="claude-fake",
            timeout_s=2.0,
            max_retries=0,
            limiter=Limiter(LimitSettings(4, None, None)),
        )
        body = {**GOOD, "messages": [m.to_dict() for m in QUESTION[1:]]}
        with pytest.raises(JudgeConfigError, match="HTTP 401"):
            run(bearer.post("v1/messages", body, Usage()))
        assert [r.authorized for r in sent(server)] == [True, False]


# -- choosing the judge -----------------------------------------------------------------------


@pytest.fixture
def clean_env(monkeypatch):
    for name in (
        "RAGMETER_JUDGE_PROVIDER",
        "RAGMETER_JUDGE_MODEL",
        "RAGMETER_JUDGE_BASE_URL",
        "RAGMETER_JUDGE_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_the_environment_chooses_the_anthropic_judge(clean_env):
    clean_env.setenv("RAGMETER_JUDGE_PROVIDER", "anthropic")
    clean_env.setenv("RAGMETER_JUDGE_MODEL", "claude-haiku-4-5")
    clean_env.setenv("ANTHROPIC_API_KEY", KEY)
    clean_env.setenv("OPENAI_API_KEY", "sk-openai-not-for-anthropic")
    judge = default_judge(cache=MemoryCache())
    assert isinstance(judge, AnthropicJudge)
    assert judge.identity == "https://api.anthropic.com|claude-haiku-4-5"
    assert judge.config.api_key.get_secret_value() == KEY


def test_anthropic_api_key_goes_only_to_anthropics_own_api(clean_env):
    env = {
        "RAGMETER_JUDGE_PROVIDER": "anthropic",
        "RAGMETER_JUDGE_MODEL": "claude-haiku-4-5",
        "ANTHROPIC_API_KEY": KEY,
        "RAGMETER_JUDGE_BASE_URL": "https://gateway.example",
    }
    elsewhere = judge_config(env=env)
    assert isinstance(elsewhere, AnthropicConfig) and elsewhere.api_key is None
    own = judge_config(env={**env, "RAGMETER_JUDGE_API_KEY": "sk-gw-key"})
    assert own.api_key.get_secret_value() == "sk-gw-key"
    assert anthropic_key_for("https://api.anthropic.com/v1/", env) == KEY
    with pytest.raises(ValueError, match="RAGMETER_JUDGE_MODEL"):
        judge_config(env={"RAGMETER_JUDGE_PROVIDER": "anthropic"})


def test_cli_options_choose_the_anthropic_judge(clean_env):
    clean_env.setenv("ANTHROPIC_API_KEY", KEY)
    options = JudgeOptions(model="claude-sonnet-4-5", provider="anthropic", temperature=0.3)
    judge = options.build(CacheOptions(disabled=True))
    assert isinstance(judge, AnthropicJudge)
    assert judge.config.temperature == 0.3 and judge.config.api_key is not None
    resumed = JudgeOptions.from_record(options.to_record()).build(CacheOptions(disabled=True))
    assert isinstance(resumed, AnthropicJudge) and resumed.identity == judge.identity
    with pytest.raises(ValueError, match="no token probabilities"):
        JudgeOptions(model="claude-x", provider="anthropic", logprobs=True).build(
            CacheOptions(disabled=True)
        )


def test_a_config_file_chooses_the_anthropic_judge(tmp_path, clean_env):
    clean_env.setenv("ANTHROPIC_API_KEY", KEY)
    path = tmp_path / "ragmeter.toml"
    path.write_text(
        '[judge]\nprovider = "anthropic"\nmodel = "claude-haiku-4-5"\n'
        'api_key_env = "ANTHROPIC_API_KEY"\nmax_tokens = 2048\nrequests_per_minute = 50\n',
        encoding="utf-8",
    )
    judge = JudgeOptions(config=path).build(CacheOptions(disabled=True))
    assert isinstance(judge, AnthropicJudge)
    assert (judge.config.max_tokens, judge.config.requests_per_minute) == (2048, 50)
    assert judge.config.api_key.get_secret_value() == KEY
    # a file without api_key_env sends no key, whatever the environment holds
    path.write_text('[judge]\nprovider = "anthropic"\nmodel = "claude-haiku-4-5"\n', "utf-8")
    assert JudgeOptions(config=path).build(CacheOptions(disabled=True)).config.api_key is None


def test_judge_check_works_with_the_anthropic_judge(clean_env):
    def responder(body):
        if body["tools"][0]["name"] != BinaryVerdict.__name__:
            return {"claims": ["Paris is the capital of France."]}
        question = body["messages"][0]["content"]
        return {"verdict": int("Paris" in question or "北京" in question)}

    clean_env.setenv("RAGMETER_JUDGE_API_KEY", KEY)
    with FakeAnthropicServer(responder=responder, api_key=KEY) as server:
        args = ["judge", "check", "--judge-provider", "anthropic", "--judge-model", "claude-fake"]
        result = runner.invoke(
            app, [*args, "--judge-base-url", server.base_url], env={"COLUMNS": "200"}
        )
        assert result.exit_code == 0, result.output
        assert "PASS" in result.output and "anthropic" in result.output
        assert KEY not in result.output
        assert all(r.authorized and r.body["tool_choice"]["type"] == "tool" for r in sent(server))


def test_eval_with_the_anthropic_judge(tmp_path, clean_env):
    def responder(body):
        if body["tools"][0]["name"].startswith("ResponseAnalysis"):
            return {"claims": ["Paris is the capital of France.", "Paris has 40 million people."]}
        return {
            "support": [
                {"claim": 1, "passages": [1], "reason": "stated"},
                {"claim": 2, "passages": [], "reason": "not stated"},
            ]
        }

    data = tmp_path / "one.jsonl"
    row = {
        "id": "q1",
        "user_input": "What is the capital of France?",
        "response": "Paris. It has 40 million people.",
        "retrieved_contexts": ["Paris is the capital of France."],
    }
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    clean_env.setenv("RAGMETER_JUDGE_API_KEY", KEY)
    with FakeAnthropicServer(responder=responder, api_key=KEY) as server:
        args = ["eval", str(data), "-m", "faithfulness", "-o", str(tmp_path / "run")]
        args += ["--judge-provider", "anthropic", "--judge-model", "claude-fake"]
        args += ["--judge-base-url", server.base_url, "--cache", str(tmp_path / "cache.db")]
        result = runner.invoke(app, args, env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        assert len(sent(server)) == 2
    assert EvaluationResult.load(tmp_path / "run").scores("faithfulness") == [0.5]
