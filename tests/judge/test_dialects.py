"""One judge contract, four dialects of the fake server: OpenAI, OpenAI's reasoning models,
Azure OpenAI's deployments API and its v1 API. Structured output, the repair re-ask, retries,
usage and cost, logprobs where offered; and the rules a reasoning model teaches with its first
refusal, remembered for the endpoint so the next call is sent right at once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel, SecretStr

from ragmeter.embed import EmbeddingsConfig, OpenAIEmbeddings
from ragmeter.judge import (
    BinaryVerdict,
    JudgeConfig,
    JudgeConfigError,
    MemoryCache,
    Message,
    OpenAIJudge,
    Price,
)
from ragmeter.judge import _endpoint as endpoint_module
from ragmeter.testing import FakeOpenAIServer, Fault, ScriptedReply, tokenize

KEY = "sk-dialect-0123456789-secret"
QUESTION = [Message("system", "You check claims."), Message("user", "Is the sky blue?")]
ANSWER = {"claims": ["the sky is blue"]}


class Claims(BaseModel):
    claims: list[str]


@pytest.fixture(autouse=True)
def _fresh_endpoint_knowledge(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """What endpoints refused is remembered per process: each test starts knowing nothing."""
    monkeypatch.setattr(endpoint_module, "_CAPABILITIES", {})
    monkeypatch.setattr("ragmeter._services._http.MAX_BACKOFF_S", 0.0)
    yield


@dataclass(frozen=True)
class Dialect:
    name: str
    server: dict[str, Any]
    #: the judge's settings, given the server
    settings: Any
    chat_path: str
    reasoning: bool = False


DIALECTS = [
    Dialect(
        "openai",
        {},
        lambda s: {"model": "judge-model", "base_url": s.base_url},
        "/v1/chat/completions",
    ),
    Dialect(
        "openai-reasoning",
        {"dialect": "openai-reasoning", "reasoning_tokens": 16},
        lambda s: {"model": "o4-mini", "base_url": s.base_url},
        "/v1/chat/completions",
        reasoning=True,
    ),
    Dialect(
        "azure-deployments",
        {"dialect": "azure", "azure_deployments": {"judge-dep"}},
        lambda s: {
            "azure_endpoint": s.root_url,
            "azure_deployment": "judge-dep",
            "api_version": "2024-10-21",
        },
        "/openai/deployments/judge-dep/chat/completions",
    ),
    Dialect(
        "azure-v1",
        {"dialect": "azure", "azure_deployments": {"judge-dep"}},
        lambda s: {"azure_endpoint": s.root_url, "azure_deployment": "judge-dep"},
        "/openai/v1/chat/completions",
    ),
]


@pytest.fixture(params=DIALECTS, ids=[d.name for d in DIALECTS])
def dialect(request: pytest.FixtureRequest) -> Dialect:
    return request.param  # type: ignore[no-any-return]


def serve(dialect: Dialect, **settings: Any) -> FakeOpenAIServer:
    return FakeOpenAIServer(api_key=KEY, **{**dialect.server, **settings})


def make_judge(dialect: Dialect, server: FakeOpenAIServer, **overrides: Any) -> OpenAIJudge:
    settings = {
        **dialect.settings(server),
        "api_key": KEY,
        "timeout_s": 2.0,
        "max_retries": 3,
        **overrides,
    }
    return OpenAIJudge(JudgeConfig(**settings), cache=MemoryCache())


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def ask(judge: OpenAIJudge, schema: type[BaseModel] = Claims, messages=QUESTION) -> Any:
    try:
        return await judge.generate(messages, schema, prompt_version="dialects@1")
    finally:
        await judge.aclose()


def chats(server: FakeOpenAIServer) -> list[Any]:
    return [r for r in server.requests if r.path.endswith("/chat/completions")]


# -- the contract, in every dialect ------------------------------------------------------------
def test_structured_output_on_the_dialects_own_path_and_auth(dialect: Dialect) -> None:
    with serve(dialect, responder=lambda body: ANSWER) as server:
        judgment = run(ask(make_judge(dialect, server)))
        assert judgment.output.claims == ["the sky is blue"]
        (request,) = chats(server)
        assert request.path == dialect.chat_path and request.authorized
        assert request.body["response_format"]["type"] == "json_schema"
        if dialect.name == "azure-v1":
            assert request.body["model"] == "judge-dep"  # v1 routes by the deployment name
        if dialect.reasoning:
            assert "max_tokens" not in request.body and "temperature" not in request.body
            assert request.body["max_completion_tokens"] == 4096
        else:
            assert request.body["max_tokens"] == 1024 and request.body["temperature"] == 0.0


def test_an_invalid_answer_gets_one_repair_re_ask(dialect: Dialect) -> None:
    with serve(dialect, responder=lambda body: ANSWER) as server:
        server.inject(Fault.malformed_json())
        judgment = run(ask(make_judge(dialect, server)))
        assert judgment.output.claims == ["the sky is blue"]
        requests = chats(server)
        assert len(requests) == 2
        assert "invalid" in requests[1].body["messages"][-1]["content"]


def test_429_and_500_are_retried(dialect: Dialect) -> None:
    with serve(dialect, responder=lambda body: ANSWER) as server:
        server.inject(Fault.rate_limit(retry_after_s=0.05), Fault.server_error())
        judgment = run(ask(make_judge(dialect, server)))
        assert judgment.output.claims == ["the sky is blue"]
        assert judgment.usage.retries == 2 and judgment.usage.calls == 3 == len(chats(server))


def test_usage_and_cost_count_what_the_endpoint_reported(dialect: Dialect) -> None:
    with serve(dialect, responder=lambda body: ANSWER) as server:
        price = Price(input_per_million=1.0, output_per_million=4.0)
        judge = make_judge(dialect, server, price=price)
        judgment = run(ask(judge))
        (request,) = chats(server)
        prompt = sum(len(tokenize(m["content"])) for m in request.body["messages"])
        completion = len(tokenize(json.dumps(ANSWER)))
        hidden = 16 if dialect.reasoning else 0  # reasoning is billed as completion tokens
        usage = judgment.usage
        assert (usage.prompt_tokens, usage.completion_tokens) == (prompt, completion + hidden)
        assert usage.cost == pytest.approx((prompt * 1.0 + (completion + hidden) * 4.0) / 1e6)
        assert judge.reasoning_tokens == hidden and usage.estimated_calls == 0


def test_logprobs_where_the_model_offers_them(dialect: Dialect) -> None:
    def responder(body: dict[str, Any]) -> ScriptedReply:
        return ScriptedReply('{"verdict": 1}', p_yes=0.8)

    with serve(dialect, responder=responder) as server:
        judgment = run(ask(make_judge(dialect, server, logprobs=True), schema=BinaryVerdict))
        assert judgment.output.verdict == 1
        (request,) = chats(server)  # a reasoning model is never asked for them
        if dialect.reasoning:
            assert "logprobs" not in request.body and judgment.probabilities is None
        else:
            assert request.body["logprobs"] is True
            assert judgment.probabilities == pytest.approx([0.8])


def test_describe_names_the_endpoint_and_never_the_key(dialect: Dialect) -> None:
    with serve(dialect) as server:
        judge = make_judge(dialect, server)
        described = judge.describe()
        assert KEY not in json.dumps(described) and KEY not in repr(judge.config)
        assert described["api_key_set"] is True
        if dialect.name.startswith("azure"):
            assert described["azure_deployment"] == "judge-dep"
            assert "judge-dep" in judge.identity
        if dialect.reasoning:
            assert described["temperature"] is None and described["max_tokens"] == 4096


# -- what a reasoning model teaches with its first refusal ---------------------------------------
def test_a_refused_parameter_is_learned_from_the_first_400_and_remembered() -> None:
    """A model not known by name as a reasoning model: its first call is refused twice
    (max_tokens, then temperature 0), each retried at once; every later call is sent right."""
    with FakeOpenAIServer(
        responder=lambda body: ANSWER, reasoning_models={"my-reasoner"}
    ) as server:
        judge = OpenAIJudge(
            JudgeConfig(model="my-reasoner", base_url=server.base_url), cache=MemoryCache()
        )

        async def main() -> list[Any]:
            try:
                return [
                    await judge.generate([Message("user", q)], Claims, prompt_version="v")
                    for q in ("first?", "second?", "third?")
                ]
            finally:
                await judge.aclose()

        first, second, third = run(main())
        bodies = [r.body for r in chats(server)]
        assert len(bodies) == 3 + 1 + 1
        assert "max_tokens" in bodies[0] and bodies[0]["temperature"] == 0.0
        assert "max_tokens" not in bodies[1] and bodies[1]["temperature"] == 0.0
        for body in bodies[2:]:
            assert "max_tokens" not in body and "temperature" not in body
            assert body["max_completion_tokens"] == 4096  # a reasoning model's budget
        assert first.usage.calls == 3 and second.usage.calls == third.usage.calls == 1
        assert judge.refused_params == {"max_tokens": "max_completion_tokens", "temperature": None}


def test_what_an_endpoint_refused_is_shared_by_every_judge_of_that_endpoint() -> None:
    with FakeOpenAIServer(
        responder=lambda body: ANSWER, reasoning_models={"my-reasoner"}
    ) as server:
        config = JudgeConfig(model="my-reasoner", base_url=server.base_url)
        run(ask(OpenAIJudge(config, cache=MemoryCache())))
        server.reset_stats()
        run(ask(OpenAIJudge(config, cache=MemoryCache())))  # a new judge, same process
        (request,) = chats(server)
        assert "max_completion_tokens" in request.body and "temperature" not in request.body
        other = JudgeConfig(model="gpt-4o", base_url=server.base_url)  # another model
        server.reset_stats()
        run(ask(OpenAIJudge(other, cache=MemoryCache())))
        (request,) = chats(server)
        assert request.body["max_tokens"] == 1024 and request.body["temperature"] == 0.0


def test_a_logprobs_refusal_is_learned_and_the_verdict_still_comes() -> None:
    with FakeOpenAIServer(
        responder=lambda body: {"verdict": 1}, reasoning_models={"my-reasoner"}
    ) as server:
        config = JudgeConfig(
            model="my-reasoner", base_url=server.base_url, temperature=1.0, max_tokens=500
        )
        judgment = run(ask(OpenAIJudge(config, cache=MemoryCache()), schema=BinaryVerdict))
        judge = OpenAIJudge(config.model_copy(update={"logprobs": True}), cache=MemoryCache())
        server.reset_stats()
        judgment = run(ask(judge, schema=BinaryVerdict))
        assert judgment.output.verdict == 1 and judgment.probabilities is None
        bodies = [r.body for r in chats(server)]
        assert [("logprobs" in b) for b in bodies] == [True, False]
        assert bodies[1]["max_completion_tokens"] == 500  # a max_tokens set is kept


def test_the_cache_key_holds_what_was_sent() -> None:
    """A call that learned a refusal is filed under what it finally sent, which is how every
    later call asks: a fresh judge (same process, same cache) finds it with no request."""
    cache = MemoryCache()
    with FakeOpenAIServer(
        responder=lambda body: ANSWER, reasoning_models={"my-reasoner"}
    ) as server:
        config = JudgeConfig(model="my-reasoner", base_url=server.base_url)
        judge = OpenAIJudge(config, cache=cache)
        assert judge.generation_params() == config.generation_params()
        run(ask(judge))
        params = judge.generation_params()
        assert params["temperature"] is None and params["max_completion_tokens"] == 4096
        assert "max_tokens" not in params
        sent = len(chats(server))
        again = run(ask(OpenAIJudge(config, cache=cache)))
        assert again.cached and len(chats(server)) == sent


def test_a_known_reasoning_model_is_asked_right_from_the_start() -> None:
    with FakeOpenAIServer(responder=lambda body: ANSWER, dialect="openai-reasoning") as server:
        config = JudgeConfig(model="gpt-5-mini", base_url=server.base_url, reasoning_effort="low")
        judge = OpenAIJudge(config, cache=MemoryCache())
        run(ask(judge))
        (request,) = chats(server)
        assert request.body["reasoning_effort"] == "low"
        assert request.body["max_completion_tokens"] == 4096 and "temperature" not in request.body
        assert judge.generation_params()["reasoning_effort"] == "low"
        assert judge.refused_params == {}


def test_a_refusal_of_anything_else_is_reported_not_learned() -> None:
    with FakeOpenAIServer(responder=lambda body: ANSWER) as server:
        server.inject(Fault.bad_request("Unsupported parameter: 'stop' is not supported"))
        judge = OpenAIJudge(
            JudgeConfig(model="m", base_url=server.base_url, structured_output="json_object"),
            cache=MemoryCache(),
        )
        with pytest.raises(JudgeConfigError, match="'stop' is not supported"):
            run(ask(judge))
        assert len(chats(server)) == 1 and judge.refused_params == {}


# -- Azure specifics ---------------------------------------------------------------------------
def test_azure_refuses_the_key_as_a_bearer_token_and_the_judge_says_so() -> None:
    with FakeOpenAIServer(dialect="azure", api_key=KEY) as server:
        # a gateway URL that does not look like Azure's: the key goes as a bearer token
        config = JudgeConfig(
            model="judge-dep",
            base_url=f"{server.root_url}/openai/deployments/judge-dep?api-version=2024-10-21",
            api_key=SecretStr(KEY),
            max_retries=0,
        )
        with pytest.raises(JudgeConfigError, match="HTTP 401") as raised:
            run(ask(OpenAIJudge(config, cache=MemoryCache())))
        assert KEY not in str(raised.value)
        assert not chats(server)[0].authorized


def test_azure_without_api_version_on_the_deployments_path_is_a_404() -> None:
    with FakeOpenAIServer(dialect="azure", api_key=KEY) as server:
        config = JudgeConfig(
            model="judge-dep",
            base_url=f"{server.root_url}/openai/deployments/judge-dep",
            api_key=SecretStr(KEY),
            max_retries=0,
        )
        with pytest.raises(JudgeConfigError, match="HTTP 404"):
            run(ask(OpenAIJudge(config, cache=MemoryCache())))


def test_azure_with_an_entra_id_token_from_the_named_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_ENTRA_TOKEN", "entra-token-0123456789")
    with FakeOpenAIServer(
        dialect="azure", api_key=KEY, azure_ad_token="entra-token-0123456789"
    ) as server:
        config = JudgeConfig(  # type: ignore[call-arg]  # model: the Azure deployment
            azure_endpoint=server.root_url,
            azure_deployment="judge-dep",
            azure_ad_token_env="MY_ENTRA_TOKEN",
        )
        judge = OpenAIJudge(config, cache=MemoryCache())
        server.responder = lambda body: ANSWER
        assert run(ask(judge)).output.claims == ["the sky is blue"]
        assert chats(server)[0].authorized
        assert "entra-token" not in json.dumps(judge.describe())


def test_azure_entra_id_token_variable_unset_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MY_ENTRA_TOKEN", raising=False)
    config = JudgeConfig(  # type: ignore[call-arg]  # model: the Azure deployment
        azure_endpoint="https://res.openai.azure.com",
        azure_deployment="d",
        azure_ad_token_env="MY_ENTRA_TOKEN",
    )
    with pytest.raises(JudgeConfigError, match="MY_ENTRA_TOKEN is not set"):
        run(ask(OpenAIJudge(config, cache=MemoryCache())))


@pytest.mark.parametrize("api_version", ["2024-10-21", None])
def test_azure_embeddings(api_version: str | None) -> None:
    with FakeOpenAIServer(
        dialect="azure", api_key=KEY, azure_deployments={"vec-dep"}, embedding_dimensions=4
    ) as server:
        config = EmbeddingsConfig(  # type: ignore[call-arg]  # model: the Azure deployment
            azure_endpoint=server.root_url,
            azure_deployment="vec-dep",
            api_version=api_version,
            api_key=SecretStr(KEY),
        )
        embeddings = OpenAIEmbeddings(config)
        vectors = embeddings.embed_sync(["a text", "another"], kind="passage")
        assert vectors.shape == (2, 4)
        (request,) = server.requests
        assert request.authorized
        if api_version:
            assert request.path == "/openai/deployments/vec-dep/embeddings"
        else:
            assert request.path == "/openai/v1/embeddings" and request.body["model"] == "vec-dep"
        assert "vec-dep" in config.identity and KEY not in json.dumps(embeddings.describe())
