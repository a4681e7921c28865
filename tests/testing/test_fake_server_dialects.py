"""The fake server's provider dialects: OpenAI's reasoning models (their refusals, with
OpenAI's exact error bodies, and their hidden reasoning tokens) and Azure OpenAI (its paths,
``api-version`` and ``api-key``)."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from ragmeter.testing import FakeOpenAIServer

MESSAGES = [{"role": "user", "content": "Is it yes?"}]


def post(
    server: FakeOpenAIServer, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection(*server.address, timeout=5)
    try:
        conn.request(
            "POST", path, json.dumps(body), {"Content-Type": "application/json", **(headers or {})}
        )
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


# -- OpenAI's reasoning models -------------------------------------------------------------------
def test_a_reasoning_model_refuses_max_tokens_with_openais_error_body() -> None:
    with FakeOpenAIServer(dialect="openai-reasoning") as server:
        status, answer = post(
            server, "/v1/chat/completions", {"model": "o3", "messages": MESSAGES, "max_tokens": 50}
        )
    assert status == 400
    assert answer == {
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    }


def test_a_reasoning_model_takes_only_the_default_temperature() -> None:
    with FakeOpenAIServer(dialect="openai-reasoning") as server:
        body = {"model": "o3", "messages": MESSAGES, "temperature": 0.0}
        status, answer = post(server, "/v1/chat/completions", body)
        assert status == 400
        assert answer["error"]["param"] == "temperature"
        assert answer["error"]["code"] == "unsupported_value"
        assert "Only the default (1) value is supported" in answer["error"]["message"]
        status, _ = post(server, "/v1/chat/completions", {**body, "temperature": 1})
        assert status == 200


def test_a_reasoning_model_refuses_logprobs_with_a_403() -> None:
    with FakeOpenAIServer(dialect="openai-reasoning") as server:
        body = {"model": "o4-mini", "messages": MESSAGES, "logprobs": True, "top_logprobs": 5}
        status, answer = post(server, "/v1/chat/completions", body)
    assert status == 403
    assert answer["error"]["message"] == "You are not allowed to request logprobs from this model"


def test_reasoning_tokens_are_counted_and_spent_from_max_completion_tokens() -> None:
    reply = '{"verdict": "yes"}'  # 9 tokens for the fake server
    with FakeOpenAIServer(
        responder=lambda body: reply, dialect="openai-reasoning", reasoning_tokens=20
    ) as server:
        body = {"model": "o3", "messages": MESSAGES, "max_completion_tokens": 1000}
        status, answer = post(server, "/v1/chat/completions", body)
        assert status == 200
        usage = answer["usage"]
        assert usage["completion_tokens"] == 20 + 9
        assert usage["completion_tokens_details"] == {"reasoning_tokens": 20}
        assert usage["total_tokens"] == usage["prompt_tokens"] + 29
        assert answer["choices"][0]["message"]["content"] == reply

        # the reasoning is spent first: a budget of 24 leaves 4 tokens of the answer
        status, answer = post(server, "/v1/chat/completions", {**body, "max_completion_tokens": 24})
        assert status == 200
        assert answer["choices"][0]["finish_reason"] == "length"
        assert answer["choices"][0]["message"]["content"] == '{"verdict"'
        assert answer["usage"]["completion_tokens"] == 24


def test_reasoning_rules_apply_to_the_named_models_only() -> None:
    with FakeOpenAIServer(reasoning_models={"my-reasoner"}) as server:
        body = {"messages": MESSAGES, "max_tokens": 50, "temperature": 0}
        assert post(server, "/v1/chat/completions", {**body, "model": "my-reasoner"})[0] == 400
        status, answer = post(server, "/v1/chat/completions", {**body, "model": "gpt-4o"})
        assert status == 200 and "completion_tokens_details" not in answer["usage"]
        # and the default dialect takes every parameter, for every model
        assert not server.is_reasoning_model("o3")
        assert (
            post(server, "/v1/chat/completions", {**body, "model": "o3", "logprobs": True})[0]
            == 200
        )


def test_an_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown dialect"):
        FakeOpenAIServer(dialect="bedrock")  # type: ignore[arg-type]


# -- Azure OpenAI ------------------------------------------------------------------------------
KEY = "azure-key-0123456789"


def test_azure_serves_deployments_with_an_api_version_and_the_key_in_api_key() -> None:
    with FakeOpenAIServer(dialect="azure", api_key=KEY, azure_deployments={"judge"}) as server:
        path = "/openai/deployments/judge/chat/completions?api-version=2024-10-21"
        status, answer = post(server, path, {"messages": MESSAGES}, {"api-key": KEY})
        assert status == 200 and answer["object"] == "chat.completion"
        (request,) = server.requests
        assert request.authorized and request.path == "/openai/deployments/judge/chat/completions"
        assert "api-key" not in request.headers  # credentials are never recorded


def test_azure_refuses_a_key_sent_as_a_bearer_token() -> None:
    with FakeOpenAIServer(dialect="azure", api_key=KEY) as server:
        path = "/openai/deployments/judge/chat/completions?api-version=2024-10-21"
        status, answer = post(
            server, path, {"messages": MESSAGES}, {"Authorization": f"Bearer {KEY}"}
        )
    assert status == 401
    assert answer["error"]["code"] == "401"
    assert "invalid subscription key or wrong API endpoint" in answer["error"]["message"]


def test_azure_accepts_an_entra_id_token_as_a_bearer_token() -> None:
    with FakeOpenAIServer(dialect="azure", api_key=KEY, azure_ad_token="entra-token") as server:
        path = "/openai/v1/chat/completions"
        body = {"model": "judge", "messages": MESSAGES}
        assert post(server, path, body, {"Authorization": "Bearer entra-token"})[0] == 200
        assert post(server, path, body, {"Authorization": "Bearer other-token"})[0] == 401


def test_azure_answers_404_without_api_version_or_for_an_unknown_deployment() -> None:
    with FakeOpenAIServer(dialect="azure", api_key=KEY, azure_deployments={"judge"}) as server:
        headers = {"api-key": KEY}
        status, answer = post(server, "/openai/deployments/judge/chat/completions", {}, headers)
        assert (status, answer) == (
            404,
            {"error": {"code": "404", "message": "Resource not found"}},
        )
        path = "/openai/deployments/other/chat/completions?api-version=2024-10-21"
        status, answer = post(server, path, {"messages": MESSAGES}, headers)
        assert status == 404 and answer["error"]["code"] == "DeploymentNotFound"
        body = {"model": "other", "messages": MESSAGES}
        assert post(server, "/openai/v1/chat/completions", body, headers)[0] == 404
        assert post(server, "/v1/chat/completions", {"messages": MESSAGES}, headers)[0] == 404


def test_azure_v1_api_takes_the_deployment_as_the_model_for_chat_and_embeddings() -> None:
    with FakeOpenAIServer(
        dialect="azure", api_key=KEY, azure_deployments={"judge", "vec"}
    ) as server:
        headers = {"api-key": KEY}
        body = {"model": "judge", "messages": MESSAGES}
        assert post(server, "/openai/v1/chat/completions", body, headers)[0] == 200
        status, answer = post(
            server, "/openai/v1/embeddings", {"model": "vec", "input": ["a"]}, headers
        )
        assert status == 200 and len(answer["data"]) == 1
        path = "/openai/deployments/vec/embeddings?api-version=2024-10-21"
        assert post(server, path, {"input": "a"}, headers)[0] == 200
