"""A judge on any OpenAI-compatible chat-completions endpoint (OpenAI and its reasoning
models, Azure OpenAI, Gemini, OpenRouter, DeepSeek, Qwen, Moonshot, Zhipu, SiliconFlow,
Volcengine Ark, Baidu Qianfan, Ollama, vLLM, the llama.cpp server)."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from ragmeter._services import (
    StatusRejected,
    Usage,
    endpoint_client,
    estimate_tokens,
)
from ragmeter.judge._config import JudgeConfig, Price
from ragmeter.judge._endpoint import (
    SAMPLING_PARAMS,
    Ask,
    ChatJudge,
    Reply,
    SchemaRejected,
)
from ragmeter.judge._parse import schema_for_key
from ragmeter.judge._prices import PriceTable
from ragmeter.judge._providers import DEFAULT_PROVIDER, register_provider
from ragmeter.judge._types import OutputT

if TYPE_CHECKING:  # only for an explicit transport: aiohttp does the requests otherwise
    import httpx

#: What a refused parameter becomes: a token limit is renamed, anything else left out.
_RENAMED = {"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens"}
#: The parameters the judge may reshape on its own; anything else (``extra_body``, the
#: messages) is the user's, and a refusal of it is reported.
_ADAPTABLE = SAMPLING_PARAMS | {"reasoning_effort"}
#: OpenAI's error codes for a parameter a model does not take (``param`` names it).
_REFUSAL_CODES = frozenset({"unsupported_parameter", "unsupported_value"})
#: OpenAI's wording of the same, as gateways pass it on without the code.
_REFUSAL_TEXT = re.compile(r"unsupported (?:parameter|value): '(\w+)'", re.IGNORECASE)
#: A temperature refused in words (Kimi: "invalid temperature: only 1 is allowed for this
#: model"): left out, the endpoint's default applies.
_TEMPERATURE_TEXT = re.compile(
    r"temperature.*(?:only|not supported|unsupported|invalid|illegal|非法)"
    r"|(?:only|not supported|unsupported|invalid|illegal).*temperature",
    re.IGNORECASE | re.DOTALL,
)
#: OpenAI's refusal of logprobs for reasoning models (HTTP 403, no code, no param).
_LOGPROBS_TEXT = re.compile(r"not allowed to request logprobs", re.IGNORECASE)

logger = logging.getLogger("ragmeter.judge")


def refused_param(status: int, detail: str, code: str | None, param: str | None) -> str | None:
    """The request parameter an error answer says the model does not take, when it is one
    the judge can rename or leave out (:data:`_ADAPTABLE`); ``None`` for any other error.

    >>> refused_param(400, "Unsupported parameter: 'max_tokens' ...", "unsupported_parameter",
    ...               "max_tokens")
    'max_tokens'
    >>> refused_param(400, "invalid temperature: only 1 is allowed for this model", None, None)
    'temperature'
    >>> refused_param(400, "model 'x' is not enabled", None, None) is None
    True
    """
    if status == 403:
        return "logprobs" if _LOGPROBS_TEXT.search(detail) else None
    if status not in (400, 422):
        return None
    if code in _REFUSAL_CODES and param in _ADAPTABLE:
        return param
    named = _REFUSAL_TEXT.search(detail)
    if named and named.group(1) in _ADAPTABLE:
        return named.group(1)
    if param in (None, "temperature") and _TEMPERATURE_TEXT.search(detail):
        return "temperature"
    return None


def _check_chat_shape(data: dict[str, Any]) -> None:
    if not isinstance(data["choices"][0]["message"], dict):
        raise TypeError("message is not an object")


class OpenAIJudge(ChatJudge[JudgeConfig]):
    """Structured generation on an OpenAI-compatible endpoint.

    Structured output by capability: ``json_schema`` where supported, else ``json_object``
    with the schema in the prompt (found out once per endpoint, or set by ``provider`` /
    ``structured_output``; ``"text"`` asks in plain text). JSON is extracted tolerantly from
    any answer (fences, prose around it) and always validated; an invalid one gets one
    repair re-ask, and a truncated one (``finish_reason == "length"``) is retried with a
    doubled token budget.

    What the endpoint was found to refuse (json_schema, parameters) is remembered per
    endpoint for the life of the process (:attr:`capabilities`).
    """

    dialect = "openai"

    #: Completion tokens the model spent reasoning (``completion_tokens_details``), of the
    #: completion tokens counted (and billed) in the usage.
    reasoning_tokens = 0

    def _known_price(self, model: str) -> Price | None:
        return PriceTable().price_of(model)

    def _open(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.http = endpoint_client(self.config, transport=transport)
        self.limiter = self.http.limiter

    # -- identity -------------------------------------------------------------------------
    @property
    def refused_params(self) -> dict[str, str | None]:
        """The parameters this endpoint refused so far (this process): parameter -> the
        name it is sent as now, ``None`` when it is left out."""
        return dict(self.capabilities.refused_params)

    def generation_params(self) -> dict[str, Any]:
        """As sent: after what the endpoint refused (``refused_params``). Asked three times
        per call: computed again only when the config or what was refused changes."""
        refused = self.capabilities.refused_params
        marker = (self.config, tuple(refused.items()))
        cached = self.__dict__.get("_generation_params")
        if cached is None or cached[0][0] is not marker[0] or cached[0][1] != marker[1]:
            cached = (marker, self.config.generation_params(dict(refused)))
            self.__dict__["_generation_params"] = cached
        return dict(cached[1])

    def describe(self) -> dict[str, Any]:
        described = {"kind": "openai-compatible", **self.config.describe()}
        # the sampling settings as they are sent (a reasoning model gets no temperature)
        sent = self.generation_params()
        described["temperature"] = sent["temperature"]
        described["seed"] = sent["seed"]
        described["max_tokens"] = sent.get("max_tokens", sent.get("max_completion_tokens"))
        described["logprobs"] = sent["logprobs"]
        if self.refused_params:
            described["refused_params"] = self.refused_params
        described["price"] = self._price_shown()
        return described

    async def _post(self, body: dict[str, Any], usage: Usage, ask: Ask) -> dict[str, Any]:
        """One chat completion. While ``ask`` probes json_schema, an answer rejecting the
        request's ``response_format`` (:meth:`Ask.refuses_schema`) raises
        :class:`StatusRejected` at once; any other error is handled as usual (a 500 is
        retried, a 400 reported)."""
        estimated = self._prompt_estimate(body["messages"])
        estimated += body.get("max_tokens", body.get("max_completion_tokens", 0)) // 4

        def reject(status: int, detail: str) -> bool:
            # a refused parameter (told apart by the caller), or json_schema while probing
            return status in (400, 403, 422) or ask.refuses_schema(status, detail)

        data = await self.http.post(
            "chat/completions",
            body,
            usage,
            estimated_tokens=estimated,
            validate=_check_chat_shape,
            reject=reject,
        )
        self._count_tokens(data, body, usage, estimated)
        return data

    def _learn(self, rejected: StatusRejected, body: dict[str, Any]) -> bool:
        """Whether ``rejected`` refused a parameter this request carried that the judge can
        rename or leave out; then it is, for this endpoint, from now on (and the request is
        to be sent again at once)."""
        param = refused_param(rejected.status, rejected.detail, rejected.code, rejected.param)
        if param is None or param not in body:
            return False
        refused = self.capabilities.refused_params
        if param not in refused:
            renamed = _RENAMED.get(param)
            refused[param] = None if renamed is None or renamed in refused else renamed
            if param in ("logprobs", "top_logprobs"):
                refused["logprobs"] = refused["top_logprobs"] = None
            logger.warning(
                "%s (model %r) does not take %r: %s from now on",
                self.http.where,
                self.config.model,
                param,
                "left out" if refused[param] is None else f"sent as {refused[param]!r}",
            )
        return param not in self.config.request_params(refused)

    def _count_tokens(
        self, data: dict[str, Any], body: dict[str, Any], usage: Usage, estimated: int
    ) -> None:
        reported = data.get("usage") or {}
        prompt = reported.get("prompt_tokens")
        completion = reported.get("completion_tokens")
        if prompt is None or completion is None:
            usage.estimated_calls += 1
            content = data["choices"][0]["message"].get("content") or ""
            prompt = self._prompt_estimate(body["messages"])
            completion = estimate_tokens(content)
        details = reported.get("completion_tokens_details") or {}
        reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
        if isinstance(reasoning, int) and reasoning > 0:
            self.reasoning_tokens += reasoning  # already among the completion tokens
        prompt, completion = int(prompt), int(completion)
        cost = self.price.cost(prompt, completion) if self.price is not None else 0.0
        self._settle(usage, estimated, prompt, completion, cost)

    # -- structured generation ------------------------------------------------------------
    def _mode(self) -> str:
        mode = self.config.structured_output
        if mode == "auto":
            return "json_object" if self.capabilities.no_json_schema else "json_schema"
        return mode

    def _body(self, ask: Ask) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.config.request_model, "messages": ask.messages}
        # temperature, seed, the token limit, logprobs, reasoning effort: as this endpoint
        # takes them (a reasoning model gets max_completion_tokens and no temperature)
        body.update(self.config.request_params(self.refused_params, budget=ask.max_tokens))
        structure = ask.response_format
        if structure is not None:
            body["response_format"] = structure
        body.update(self.config.extra_body)
        return body

    def _first_budget(self) -> int:
        return self.config.budget_for(self.refused_params)

    def _budget_after_refusal(self, max_tokens: int) -> int:
        # e.g. max_tokens refused for max_completion_tokens: a reasoning model, whose
        # reasoning counts against the budget
        return max(max_tokens, self.config.budget_for(self.refused_params))

    def _schema_json(self, schema: type[OutputT]) -> dict[str, Any]:
        # read, never modified: the shared schema (a deep copy per call cost 0.25 ms)
        return dict(schema_for_key(schema))

    async def _send(self, ask: Ask, usage: Usage) -> Reply | None:
        body = self._body(ask)
        try:
            data = await self._post(body, usage, ask)
        except StatusRejected as rejected:
            if self._learn(rejected, body):
                return None
            if ask.refuses_schema(rejected.status, rejected.detail):
                raise SchemaRejected(rejected.detail) from None
            raise (rejected.error or rejected) from None
        choice = data["choices"][0]
        content = choice["message"].get("content") or ""
        if not content and choice["message"].get("tool_calls"):
            content = choice["message"]["tool_calls"][0]["function"]["arguments"]
        logprobs = (choice.get("logprobs") or {}).get("content")
        return self._reply(content, choice.get("finish_reason"), logprobs)


register_provider(DEFAULT_PROVIDER, JudgeConfig, OpenAIJudge)
