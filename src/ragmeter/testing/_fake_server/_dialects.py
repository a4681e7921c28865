"""Provider rules the fake server can follow on top of OpenAI's: Azure OpenAI's paths and
``api-key`` authentication, and OpenAI's reasoning models' refusals (``max_tokens``, a
temperature other than 1, logprobs), with their exact error bodies."""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from ragmeter.testing._fake_server._tokens import tokenize

if TYPE_CHECKING:
    from ragmeter.testing._fake_server._server import FakeOpenAIServer

#: ``openai``: OpenAI's API, every parameter accepted. ``openai-reasoning``: every model is a
#: reasoning model (o1/o3/o4-mini/gpt-5 rules). ``azure``: Azure OpenAI's paths and key header.
Dialect = Literal["openai", "openai-reasoning", "azure"]
DIALECTS: frozenset[str] = frozenset(get_args(Dialect))

_DEPLOYMENT_PATH = re.compile(r"^/openai/deployments/([^/]+)/(chat/completions|embeddings)$")
_V1_PATHS = {
    "/openai/v1/chat/completions": "/v1/chat/completions",
    "/openai/v1/embeddings": "/v1/embeddings",
    "/openai/v1/models": "/v1/models",
}
#: Azure's answer to a request without a valid key (HTTP 401).
AZURE_ACCESS_DENIED = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to "
    "provide a valid key for an active subscription and use a correct regional API endpoint "
    "for your resource."
)


class Headers(Protocol):
    """A request's headers, looked up by name (``http.server``'s message, or a mapping)."""

    def get(self, name: str, /) -> Any: ...


def azure_error(code: str, message: str) -> dict[str, Any]:
    """Azure's error body: ``{"error": {"code": ..., "message": ...}}``."""
    return {"error": {"code": code, "message": message}}


def openai_error(
    message: str, param: str | None, code: str | None, type_: str = "invalid_request_error"
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


# -- Azure OpenAI --------------------------------------------------------------------------------
def azure_authorized(owner: FakeOpenAIServer, headers: Headers) -> bool:
    """Azure's rule: the key in an ``api-key`` header (a bearer token only when it is the
    server's ``azure_ad_token``, as a Microsoft Entra ID token would be). A key sent as
    ``Authorization: Bearer`` is refused, as on the deployments API. Without a server key,
    any non-empty ``api-key`` passes, but one must be sent."""
    key = headers.get("api-key")
    if key:
        if owner.api_key is None:
            return True
        return hmac.compare_digest(key.strip().encode(), owner.api_key.encode())
    bearer = headers.get("Authorization")
    token = owner.azure_ad_token
    if bearer is None or token is None:
        return False
    return hmac.compare_digest(bearer.strip().encode(), f"Bearer {token}".encode())


def azure_route(
    owner: FakeOpenAIServer, path: str, query: Mapping[str, list[str]], body: Any
) -> tuple[str | None, tuple[int, dict[str, Any]] | None]:
    """The OpenAI path an Azure request stands for, or the error Azure answers: 404 for a
    path that is not Azure's (``/v1/...``), a deployment path without ``api-version``, or a
    deployment the server does not have (``azure_deployments``)."""
    deployment: str | None
    matched = _DEPLOYMENT_PATH.match(path)
    if matched:
        if not query.get("api-version"):
            return None, (404, azure_error("404", "Resource not found"))
        deployment, kind = matched.group(1), matched.group(2)
        canonical = f"/v1/{kind}"
    elif path in _V1_PATHS:
        canonical = _V1_PATHS[path]
        deployment = body.get("model") if isinstance(body, dict) else None
        if canonical == "/v1/models":
            return canonical, None
    else:
        return None, (404, azure_error("404", "Resource not found"))
    known = owner.azure_deployments
    if known is not None and deployment not in known:
        message = (
            "The API deployment for this resource does not exist. If you created the "
            "deployment within the last 5 minutes, please wait a moment and try again."
        )
        return None, (404, azure_error("DeploymentNotFound", message))
    return canonical, None


# -- OpenAI's reasoning models -------------------------------------------------------------------
def reasoning_refusal(owner: FakeOpenAIServer, body: dict[str, Any]) -> tuple[int, Any] | None:
    """What OpenAI answers a reasoning model's request with a parameter it does not take:
    ``max_tokens`` and ``top_p`` (400 ``unsupported_parameter``), a temperature other than 1
    (400 ``unsupported_value``), logprobs (403). ``None`` when the request is fine."""
    if not owner.is_reasoning_model(body.get("model")):
        return None
    for name in ("max_tokens", "top_p"):
        if name in body:
            use = " Use 'max_completion_tokens' instead." if name == "max_tokens" else ""
            message = f"Unsupported parameter: '{name}' is not supported with this model.{use}"
            return 400, openai_error(message, name, "unsupported_parameter")
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        message = (
            f"Unsupported value: 'temperature' does not support {temperature} with this "
            "model. Only the default (1) value is supported."
        )
        return 400, openai_error(message, "temperature", "unsupported_value")
    if body.get("logprobs"):
        return 403, openai_error(
            "You are not allowed to request logprobs from this model", None, None
        )
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in ("none", "minimal", "low", "medium", "high", "xhigh"):
        message = f"Invalid value: '{effort}'. Supported values are: 'low', 'medium', and 'high'."
        return 400, openai_error(message, "reasoning_effort", "invalid_value")
    return None


def add_reasoning(owner: FakeOpenAIServer, body: dict[str, Any], payload: dict[str, Any]) -> None:
    """A reasoning model's answer: ``reasoning_tokens`` hidden tokens spent before the
    visible ones, counted in ``completion_tokens`` (and ``completion_tokens_details``) and
    against ``max_completion_tokens``; an answer that does not fit is cut (``length``)."""
    if not owner.is_reasoning_model(body.get("model")):
        return
    reasoning = owner.reasoning_tokens
    choice = payload["choices"][0]
    message = choice["message"]
    field = "content" if message.get("content") is not None else None
    text = message.get("content") or ""
    if field is None and message.get("tool_calls"):
        text = message["tool_calls"][0]["function"]["arguments"]
    tokens = tokenize(text)
    limit = body.get("max_completion_tokens")
    if isinstance(limit, int) and reasoning + len(tokens) > limit:
        tokens = tokens[: max(0, limit - reasoning)]
        cut = "".join(tokens)
        if field is None and message.get("tool_calls"):
            message["tool_calls"][0]["function"]["arguments"] = cut
        else:
            message["content"] = cut
        choice["finish_reason"] = "length"
    usage = payload.get("usage")
    if usage is not None:
        completion = min(reasoning, limit) if isinstance(limit, int) else reasoning
        completion += len(tokens)
        usage["completion_tokens"] = completion
        usage["total_tokens"] = usage["prompt_tokens"] + completion
        usage["completion_tokens_details"] = {
            "reasoning_tokens": min(reasoning, limit) if isinstance(limit, int) else reasoning
        }
