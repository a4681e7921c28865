"""The LiteLLM judge (extra ``[litellm]``): the judge contract with LiteLLM's own mock
responses (``mock_response``) and, through LiteLLM's real HTTP path, against the project's
fake OpenAI-compatible server (model ``openai/...``, ``base_url`` the server). Never the
network.

Skipped when LiteLLM is not installed, unless ``RAGMETER_REQUIRE_LITELLM=1`` (as in the CI
job that installs ``.[dev,litellm]``); the configuration tests need no LiteLLM.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
import warnings

import pytest
from pydantic import BaseModel

from ragmeter.judge import (
    BinaryVerdict,
    EndpointUnavailableError,
    JudgeConfig,
    JudgeConfigError,
    JudgeOutputError,
    JudgeTransientError,
    JudgeTruncatedError,
    LiteLLMConfig,
    LiteLLMJudge,
    Message,
    Price,
    SQLiteCache,
    default_judge,
    judge_config,
)
from ragmeter.judge import _endpoint as endpoint_module
from ragmeter.judge import _litellm as litellm_module
from ragmeter.testing import FakeOpenAIServer, Fault, ScriptedReply, tokenize

KEY = "sk-fake-0123456789abcdef-secret"
AWS_SECRET = "aws-secret-0123456789abcdef"
QUESTION = [Message("system", "You check claims."), Message("user", "Is the sky blue?")]
ANSWER = {"claims": ["the sky is blue"]}


class Claims(BaseModel):
    claims: list[str]


def claims_responder(body):
    return ANSWER


def run(coro):
    return asyncio.run(coro)


async def ask(judge, schema=Claims, messages=QUESTION, version="test@1"):
    try:
        return await judge.generate(messages, schema, prompt_version=version)
    finally:
        await judge.aclose()


def chat_requests(server):
    return [r for r in server.requests if r.path.endswith("/chat/completions")]


@pytest.fixture(autouse=True)
def _fresh_endpoint_knowledge(monkeypatch):
    """What endpoints refused is remembered per process: each test starts knowing nothing."""
    monkeypatch.setattr(endpoint_module, "_CAPABILITIES", {})


@pytest.fixture(scope="module")
def litellm():
    """LiteLLM, or a skip that says how to get it (a failure where CI requires it)."""
    try:
        return litellm_module.load_litellm()
    except ImportError:
        reason = "LiteLLM is not installed (pip install 'ragmeter[litellm]')"
        if os.environ.get("RAGMETER_REQUIRE_LITELLM") == "1":
            pytest.fail(f"RAGMETER_REQUIRE_LITELLM=1 but {reason}")
        pytest.skip(reason)


def on_server(server, model="openai/judge-model", **overrides):
    settings = {
        "base_url": server.base_url,
        "api_key": KEY,
        "timeout_s": 2.0,
        "max_retries": 3,
        **overrides,
    }
    return LiteLLMJudge(LiteLLMConfig(model=model, **settings))


def mocked(response, model="openai/gpt-4o-mini", **settings):
    """A judge whose every request LiteLLM answers itself with ``response``."""
    return LiteLLMJudge(model, mock_response=response, **settings)


# -- configuration (no LiteLLM needed) -----------------------------------------------------


def test_config_never_shows_a_secret():
    config = LiteLLMConfig(
        model="bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0",
        base_url="https://user:pw-secret@gateway.example/v1",
        api_key=KEY,
        litellm_params={"aws_region_name": "us-east-1", "aws_secret_access_key": AWS_SECRET},
    )
    shown = repr(config) + json.dumps(config.describe()) + json.dumps(config.generation_params())
    shown += config.identity
    for secret in (KEY, AWS_SECRET, "pw-secret"):
        assert secret not in shown
    assert config.describe()["litellm_params"]["aws_region_name"] == "us-east-1"
    assert config.describe()["api_key_set"] is True


def test_config_refuses_what_ragmeter_sets_itself():
    with pytest.raises(ValueError, match="api_key"):
        LiteLLMConfig(model="bedrock/x", litellm_params={"api_key": KEY})
    with pytest.raises(ValueError, match="base_url"):
        LiteLLMConfig(model="bedrock/x", base_url="bedrock.example")


def test_provider_litellm_chooses_it_from_file_env_and_option(tmp_path, monkeypatch):
    monkeypatch.setenv("BEDROCK_GATEWAY_KEY", KEY)
    path = tmp_path / "judge.toml"
    path.write_text(
        textwrap.dedent(
            """
            [judge]
            provider = "litellm"
            model = "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0"
            api_key_env = "BEDROCK_GATEWAY_KEY"
            max_concurrency = 4

            [judge.litellm_params]
            aws_region_name = "eu-central-1"
            """
        ),
        encoding="utf-8",
    )
    config = judge_config(path)
    assert isinstance(config, LiteLLMConfig)
    assert config.max_concurrency == 4 and config.api_key is not None
    assert config.litellm_params == {"aws_region_name": "eu-central-1"}
    assert judge_config(path, model="bedrock/other").model == "bedrock/other"

    env = {
        "RAGMETER_JUDGE_PROVIDER": "litellm",
        "RAGMETER_JUDGE_MODEL": "vertex_ai/gemini-2.5-flash",
    }
    from_env = judge_config(env=env)
    assert isinstance(from_env, LiteLLMConfig) and from_env.model == "vertex_ai/gemini-2.5-flash"
    option = judge_config(provider="litellm", model="azure/my-deployment", env={})
    assert isinstance(option, LiteLLMConfig) and option.model == "azure/my-deployment"
    # OPENAI_API_KEY is LiteLLM's to read for OpenAI's own API: ragmeter never takes it here
    assert judge_config(env={**env, "OPENAI_API_KEY": KEY}).api_key is None
    with pytest.raises(ValueError, match="RAGMETER_JUDGE_MODEL"):
        judge_config(provider="litellm", env={})
    # other providers are unchanged
    assert isinstance(judge_config(provider="deepseek", model="deepseek-chat", env={}), JudgeConfig)


def test_a_literal_secret_in_a_file_is_used_with_a_warning(tmp_path):
    path = tmp_path / "judge.json"
    path.write_text(
        json.dumps(
            {
                "judge": {
                    "provider": "litellm",
                    "model": "bedrock/x",
                    "litellm_params": {"aws_secret_access_key": AWS_SECRET},
                }
            }
        ),
        encoding="utf-8",
    )
    with pytest.warns(UserWarning, match="aws_secret_access_key"):
        config = judge_config(path)
    assert config.litellm_params["aws_secret_access_key"] == AWS_SECRET
    assert AWS_SECRET not in json.dumps(config.describe())


def test_importing_ragmeter_judge_does_not_import_litellm():
    code = "import sys, ragmeter.judge; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]


def test_without_litellm_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "litellm", None)  # as if not installed
    with pytest.raises(ImportError, match=r"ragmeter\[litellm\]"):
        LiteLLMJudge("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0")


# -- LiteLLM's own mock responses ----------------------------------------------------------


def test_mock_structured_output_usage_and_cost_from_litellm(litellm):
    judge = mocked(json.dumps(ANSWER))
    assert judge.structured_output_mode == "json_schema"  # LiteLLM says gpt-4o-mini has it
    judgment = run(ask(judge))
    assert judgment.output.claims == ["the sky is blue"] and not judgment.cached
    usage = judgment.usage
    assert (usage.calls, usage.retries, usage.estimated_calls) == (1, 0, 0)
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    info = litellm.get_model_info("openai/gpt-4o-mini")
    expected = (
        usage.prompt_tokens * info["input_cost_per_token"]
        + usage.completion_tokens * info["output_cost_per_token"]
    )
    assert usage.cost == pytest.approx(expected) and usage.cost > 0
    price = judge.describe()["price"]
    assert price["source"] == "litellm"
    assert price["input_per_million"] == pytest.approx(info["input_cost_per_token"] * 1e6)


def test_mock_cost_unknown_counts_none_and_says_so(litellm):
    judge = mocked(json.dumps(ANSWER), model="openai/judge-model")
    judgment = run(ask(judge))
    assert judgment.usage.cost == 0.0 and judgment.usage.prompt_tokens > 0
    assert judge.describe()["price"].startswith("unknown")
    priced = mocked(
        json.dumps(ANSWER),
        model="openai/judge-model",
        price=Price(input_per_million=1.0, output_per_million=2.0),
    )
    usage = run(ask(priced)).usage
    assert usage.cost == pytest.approx((usage.prompt_tokens + 2 * usage.completion_tokens) / 1e6)


@pytest.mark.parametrize("error", ["litellm.RateLimitError", "litellm.InternalServerError"])
def test_mock_transient_errors_are_retried_then_reported(litellm, error):
    judge = mocked(error, max_retries=1)
    with pytest.raises(JudgeTransientError, match="gave up after 2 attempts") as caught:
        run(ask(judge))
    assert caught.value.usage is not None and caught.value.usage.calls == 2
    assert caught.value.usage.retries == 1
    assert judge.ledger.total.calls == 2  # the failed call is counted


def test_mock_authentication_error_is_a_config_error(litellm):
    rejected = litellm.AuthenticationError(
        message="invalid x-api-key", llm_provider="bedrock", model="x"
    )
    judge = mocked(rejected, model="bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0")
    with pytest.raises(JudgeConfigError, match="HTTP 401") as caught:
        run(ask(judge))
    assert caught.value.usage is not None and caught.value.usage.calls == 1


def test_mock_truncation_doubles_the_budget_then_gives_up(litellm):
    cut = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "length",
                "message": {"role": "assistant", "content": '{"claims": ["the sky'},
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 4096, "total_tokens": 4108},
        "model": "gpt-4o-mini",
    }
    judge = mocked(cut, max_tokens=4096)
    with pytest.raises(JudgeTruncatedError, match="16384 tokens") as caught:
        run(ask(judge))
    usage = caught.value.usage
    assert usage is not None and usage.calls == 3  # 4096, 8192, 16384
    assert usage.completion_tokens == 3 * 4096 and usage.cost > 0
    assert judge.ledger.total.calls == 3 and judge.ledger.total.cost == pytest.approx(usage.cost)


def test_no_network_at_import_or_call_time():
    """In a fresh process whose every non-loopback connection and DNS lookup fails (and is
    recorded): importing, a mocked call and a Bedrock judge's set-up try none."""
    code = textwrap.dedent(
        """
        import asyncio, json, socket
        attempts = []
        LOCAL = ("127.0.0.1", "::1", "localhost")
        real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

        def connect(self, address):
            if not (isinstance(address, tuple) and address[0] in LOCAL):
                attempts.append(["connect", str(address)])
                raise OSError("network refused by the test")
            return real_connect(self, address)

        def getaddrinfo(host, *args, **kwargs):
            if host not in LOCAL:
                attempts.append(["dns", str(host)])
                raise socket.gaierror("network refused by the test")
            return real_getaddrinfo(host, *args, **kwargs)

        socket.socket.connect, socket.getaddrinfo = connect, getaddrinfo

        from pydantic import BaseModel
        from ragmeter.judge import BinaryVerdict, LiteLLMJudge, Message
        judge = LiteLLMJudge("openai/gpt-4o-mini", mock_response='{"verdict": 1}')

        async def main():
            try:
                return await judge.generate([Message("user", "ok?")], BinaryVerdict,
                                            prompt_version="v")
            finally:
                await judge.aclose()

        verdict = asyncio.run(main()).output.verdict
        bedrock = LiteLLMJudge("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0",
                               aws_region_name="us-east-1")
        before = list(attempts)
        try:
            socket.getaddrinfo("example.com", 443)  # the guard itself works
        except OSError:
            pass
        print(json.dumps([verdict, bedrock.structured_output_mode, before, attempts]))
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM_")}
    try:
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("LiteLLM hung without network")
    if out.returncode and "needs LiteLLM" in out.stderr:
        if os.environ.get("RAGMETER_REQUIRE_LITELLM") == "1":
            pytest.fail("RAGMETER_REQUIRE_LITELLM=1 but LiteLLM is not installed")
        pytest.skip("LiteLLM is not installed (pip install 'ragmeter[litellm]')")
    assert out.returncode == 0, out.stderr[-2000:]
    verdict, mode, before, attempts = json.loads(out.stdout.strip().splitlines()[-1])
    assert (verdict, mode) == (1, "json_schema")
    assert before == []
    assert attempts == [["dns", "example.com"]]


# -- LiteLLM's HTTP path against the fake server -------------------------------------------


def test_json_schema_where_litellm_says_so_else_json_object_with_the_schema(litellm):
    with FakeOpenAIServer(responder=claims_responder, api_key=KEY) as server:
        judgment = run(ask(on_server(server, model="openai/gpt-4o-mini")))
        assert judgment.output.claims == ["the sky is blue"]
        run(ask(on_server(server)))  # judge-model: LiteLLM knows nothing of it
        first, second = chat_requests(server)
        assert first.authorized and second.authorized
        assert first.body["response_format"]["type"] == "json_schema"
        assert first.body["temperature"] == 0.0 and first.body["seed"] == 42
        assert first.body["model"] == "gpt-4o-mini"
        assert second.body["response_format"] == {"type": "json_object"}
        system = second.body["messages"][0]
        assert system["role"] == "system" and '"claims"' in system["content"]


def test_an_endpoint_rejecting_json_schema_gets_json_object_from_then_on(litellm):
    with FakeOpenAIServer(responder=claims_responder, supports_json_schema=False) as server:
        base = server.base_url
        judge = on_server(server, model="openai/gpt-4o-mini")
        run(ask(judge))
        run(ask(judge, messages=[Message("user", "another question")]))
        kinds = [r.body["response_format"]["type"] for r in chat_requests(server)]
        assert kinds == ["json_schema", "json_object", "json_object"]
        assert judge.structured_output_mode == "json_object" and base in judge.identity


def test_retries_recover_from_429_500_timeouts_and_drops(litellm, monkeypatch):
    monkeypatch.setattr("ragmeter._services._http.MAX_BACKOFF_S", 0.05)
    with FakeOpenAIServer(responder=claims_responder) as server:
        server.inject(
            Fault.rate_limit(retry_after_s=0.05),
            Fault.server_error(),
            Fault.timeout(delay_s=3.0),
            Fault.connection_drop(),
        )
        judge = on_server(server, timeout_s=0.5, max_retries=5, structured_output="json_object")
        judgment = run(ask(judge))
        assert judgment.output.claims == ["the sky is blue"]
        assert judgment.usage.retries == 4
        # ragmeter's retries only: neither LiteLLM nor its OpenAI client retried on its own
        assert judgment.usage.calls == 5 == len(chat_requests(server))


def test_retries_give_up_with_an_error_value(litellm):
    with FakeOpenAIServer(responder=claims_responder) as server:
        server.inject(*[Fault.server_error() for _ in range(3)])
        judge = on_server(server, max_retries=2)
        with pytest.raises(JudgeTransientError, match="gave up after 3 attempts") as caught:
            run(ask(judge))
        assert KEY not in str(caught.value)
        assert len(chat_requests(server)) == 3 == judge.ledger.total.calls


def test_retry_after_is_honoured_up_to_max_retry_wait_s(litellm):
    with FakeOpenAIServer(responder=claims_responder) as server:
        server.inject(Fault.rate_limit(retry_after_s=1.0))
        started = time.monotonic()
        run(ask(on_server(server)))
        assert time.monotonic() - started >= 0.95

        # Past the cap: the endpoint's breaker opens (issue 37): no wait, and no call more.
        server.inject(Fault.rate_limit(retry_after_s=3600))
        started = time.monotonic()
        with pytest.raises(JudgeTransientError, match="asks to wait 3600 s"):
            run(ask(on_server(server, max_retry_wait_s=0.2), messages=[Message("user", "again")]))
        sent = len(chat_requests(server))
        with pytest.raises(EndpointUnavailableError, match="rate limited"):
            run(ask(on_server(server), messages=[Message("user", "once more")]))
        assert time.monotonic() - started < 5
        assert len(chat_requests(server)) == sent


def test_wrong_key_fails_fast_and_never_shows_the_key(litellm):
    with FakeOpenAIServer(responder=claims_responder, api_key="the-right-key") as server:
        with pytest.raises(JudgeConfigError, match="HTTP 401") as caught:
            run(ask(on_server(server)))
        assert KEY not in str(caught.value) and KEY not in repr(caught.value)
        assert len(chat_requests(server)) == 1
        assert caught.value.usage is not None and caught.value.usage.calls == 1


@pytest.mark.parametrize(
    ("fault", "hint"),
    [(Fault.not_found(), "model string"), (Fault.bad_request("no such parameter"), "no such")],
)
def test_client_errors_fail_fast(litellm, fault, hint):
    with FakeOpenAIServer(responder=claims_responder) as server:
        server.inject(fault)
        with pytest.raises(JudgeConfigError, match=hint):
            run(ask(on_server(server)))
        assert len(chat_requests(server)) == 1


def test_openai_key_in_the_environment_is_not_sent_to_another_base_url(litellm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with FakeOpenAIServer(responder=claims_responder, api_key=KEY) as server:
        judge = LiteLLMJudge(LiteLLMConfig(model="openai/judge-model", base_url=server.base_url))
        with pytest.raises(JudgeConfigError, match="HTTP 401"):
            run(ask(judge))
        assert [r.authorized for r in chat_requests(server)] == [False]
        # where OPENAI_BASE_URL says the key belongs, it is sent
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        run(ask(LiteLLMJudge(LiteLLMConfig(model="openai/judge-model", base_url=server.base_url))))
        assert chat_requests(server)[-1].authorized


def test_malformed_answer_gets_one_repair_re_ask(litellm):
    with FakeOpenAIServer(responder=claims_responder) as server:
        server.inject(Fault.malformed_json())
        judgment = run(ask(on_server(server)))
        assert judgment.output.claims == ["the sky is blue"]
        requests = chat_requests(server)
        assert len(requests) == 2 and judgment.usage.calls == 2
        assert "invalid" in requests[1].body["messages"][-1]["content"]


def test_an_answer_still_invalid_after_repair_is_reported_and_counted(litellm):
    with FakeOpenAIServer(responder=lambda body: "I refuse to answer in JSON.") as server:
        judge = on_server(server)
        with pytest.raises(JudgeOutputError, match="after one repair re-ask") as caught:
            run(ask(judge))
        assert caught.value.usage is not None and caught.value.usage.calls == 2
        assert judge.ledger.total.calls == 2 == len(chat_requests(server))


def test_truncated_answer_is_retried_with_a_larger_budget(litellm):
    with FakeOpenAIServer(responder=claims_responder) as server:
        server.inject(Fault.truncated())
        judgment = run(ask(on_server(server, max_tokens=100)))
        assert judgment.output.claims == ["the sky is blue"]
        assert [r.body["max_tokens"] for r in chat_requests(server)] == [100, 200]


def test_cache_hits_make_no_call_and_other_settings_miss(litellm, tmp_path):
    with FakeOpenAIServer(responder=claims_responder) as server:
        cache_path = tmp_path / "judge.db"

        def judge(model="openai/judge-model", **overrides):
            config = LiteLLMConfig(model=model, base_url=server.base_url, api_key=KEY, **overrides)
            return LiteLLMJudge(config, cache=SQLiteCache(cache_path))

        first = run(ask(judge()))
        assert not first.cached
        again = run(ask(judge()))  # a new judge, same cache file: a re-run
        assert again.cached and again.usage.calls == 0 and again.usage.cached_calls == 1
        assert len(chat_requests(server)) == 1
        run(ask(judge(model="openai/other-model")))
        run(ask(judge(temperature=0.7)))
        run(ask(judge(litellm_params={"top_p": 0.5})))
        run(ask(judge(), version="test@2"))
        assert len(chat_requests(server)) == 5
        assert KEY not in cache_path.read_bytes().decode("utf-8", "replace")


def test_identical_concurrent_requests_share_one_call(litellm):
    with FakeOpenAIServer(responder=claims_responder, latency_s=0.2) as server:
        judge = on_server(server)

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


def test_concurrency_limit_holds_at_the_server(litellm):
    with FakeOpenAIServer(responder=claims_responder, latency_s=0.15) as server:
        judge = on_server(server, max_concurrency=4)

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


def test_usage_from_the_answers_and_cost_from_litellm(litellm):
    with FakeOpenAIServer(responder=claims_responder) as server:
        judge = on_server(server, model="openai/gpt-4o-mini")

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
        assert (total.calls, total.cached_calls, total.estimated_calls) == (3, 1, 0)
        requests = chat_requests(server)
        prompt = sum(len(tokenize(m["content"])) for r in requests for m in r.body["messages"])
        completion = len(tokenize(json.dumps(ANSWER))) * len(requests)
        assert (total.prompt_tokens, total.completion_tokens) == (prompt, completion)
        info = litellm.get_model_info("openai/gpt-4o-mini")
        expected = (
            prompt * info["input_cost_per_token"] + completion * info["output_cost_per_token"]
        )
        assert total.cost == pytest.approx(expected)


def test_tokens_are_estimated_when_the_answer_reports_none(litellm):
    with FakeOpenAIServer(responder=claims_responder, report_usage=False) as server:
        judgment = run(ask(on_server(server)))
        usage = judgment.usage
        assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
        assert usage.estimated_calls == 1


def test_probabilistic_verdicts_from_logprobs(litellm):
    def responder(body):
        return ScriptedReply(content='{"verdict": 1}', p_yes=0.8)

    with FakeOpenAIServer(responder=responder) as server:
        judgment = run(ask(on_server(server, logprobs=True), schema=BinaryVerdict))
        assert judgment.output.verdict == 1
        assert judgment.probabilities == pytest.approx([0.8])
        request = chat_requests(server)[0]
        assert request.body["logprobs"] is True and request.body["top_logprobs"] == 5


def test_describe_never_holds_a_secret(litellm):
    with FakeOpenAIServer() as server:
        judge = on_server(server, litellm_params={"aws_secret_access_key": AWS_SECRET})
        described = json.dumps(judge.describe())
        assert KEY not in described and AWS_SECRET not in described
        assert judge.describe()["api_key_set"] is True
        assert judge.describe()["kind"] == "litellm" and judge.describe()["provider"] == "openai"


def test_default_judge_builds_it_from_the_environment(litellm, monkeypatch):
    monkeypatch.setenv("RAGMETER_JUDGE_PROVIDER", "litellm")
    monkeypatch.setenv("RAGMETER_JUDGE_MODEL", "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0")
    judge = default_judge()
    assert isinstance(judge, LiteLLMJudge)
    assert judge.provider == "bedrock" and judge.structured_output_mode == "json_schema"
    with pytest.raises(ValueError, match="provider first"):
        LiteLLMJudge("judge-model-without-provider")


def test_a_sync_run_after_another_keeps_working_quietly(litellm, caplog):
    """Each sync ``score()`` runs its own event loop: the judge works in the next one, and
    LiteLLM's logging tasks of the last one are finished before it closes."""
    with FakeOpenAIServer(responder=claims_responder) as server:
        judge = on_server(server)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for i in range(3):
                run(ask(judge, messages=[Message("user", f"question {i}")]))
        assert len(chat_requests(server)) == 3
        assert "event loop changed" not in caplog.text
