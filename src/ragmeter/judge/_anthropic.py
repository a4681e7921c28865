"""A judge on Anthropic's Messages API, natively (``POST {base}/v1/messages``).

What differs from an OpenAI-compatible endpoint: the key goes in ``x-api-key`` (never as a
bearer token), every request names the API version (``anthropic-version: 2023-06-01``) and
its ``max_tokens``, the system prompt is the top-level ``system`` (no "system" message),
user and assistant turns alternate, and structured output comes from a forced tool: the
answer is the ``input`` of a ``tool_use`` block, an object validated against the schema the
tool declares. There are no token probabilities.

Anthropic also offers native JSON outputs (``output_config.format``, formerly the
``output_format`` beta) and strict tools, on its newer models only; a forced tool works on
every Claude model and on Messages-compatible gateways, so it is what this judge asks for.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import Field, field_validator

from ragmeter._services import (
    EndpointClient,
    EndpointConfig,
    EndpointLimits,
    Message,
    StatusRejected,
    Usage,
    endpoint_client,
    error_of,
    estimate_tokens,
    read_table,
)
from ragmeter.judge._config import Price, env_settings
from ragmeter.judge._endpoint import EndpointJudge, Reply
from ragmeter.judge._errors import JudgeOutputError, output_error
from ragmeter.judge._parse import schema_instruction
from ragmeter.judge._providers import register_provider

#: Anthropic's API root (requests go to ``{root}/v1/messages``).
ANTHROPIC_BASE_URL = "https://api.anthropic.com"
#: The Messages API version every request names.
ANTHROPIC_VERSION = "2023-06-01"

#: How the answer's structure is asked for: ``tool`` forces a tool whose input schema is
#: the output schema; ``tool_auto`` offers that tool and asks for it in the system prompt
#: (for models that refuse forced tool use, e.g. with extended thinking); ``json`` puts the
#: schema in the system prompt and parses the text; ``auto`` starts with ``tool`` and falls
#: back once per endpoint and model when the API refuses it.
AnthropicStructuredOutput = Literal["auto", "tool", "tool_auto", "json"]

#: USD per million tokens (base input / output), from Anthropic's published prices; prices
#: change, so ``price=`` in the config wins. Dated snapshots (``-20250929``) and ``-latest``
#: aliases share their model's price; a model not listed has no price (cost not counted).
ANTHROPIC_PRICES: dict[str, Price] = {
    model: Price(input_per_million=base_input, output_per_million=output)
    for (base_input, output), models in (
        ((5.0, 25.0), ("claude-opus-4-7", "claude-opus-4-6", "claude-opus-4-5")),
        ((15.0, 75.0), ("claude-opus-4-1", "claude-opus-4-0", "claude-opus-4")),
        (
            (3.0, 15.0),
            ("claude-sonnet-4-6", "claude-sonnet-4-5", "claude-sonnet-4-0", "claude-sonnet-4"),
        ),
        ((1.0, 5.0), ("claude-haiku-4-5",)),
        ((0.80, 4.0), ("claude-3-5-haiku",)),
        ((0.25, 1.25), ("claude-3-haiku",)),
    )
    for model in models
}
#: What prompt-cache tokens cost, relative to base input (5-minute cache writes; reads).
_CACHE_WRITE_FACTOR = 1.25
_CACHE_READ_FACTOR = 0.1

logger = logging.getLogger("ragmeter.judge")

_SNAPSHOT = re.compile(r"-(?:\d{8}|latest)$")
_NOT_A_TOOL_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def anthropic_price(model: str) -> Price | None:
    """The known price of ``model`` (:data:`ANTHROPIC_PRICES`), or ``None``.

    >>> anthropic_price("claude-sonnet-4-5-20250929").output_per_million
    15.0
    >>> anthropic_price("claude-opus-4-5").input_per_million, anthropic_price("claude-x") is None
    (5.0, True)
    """
    return ANTHROPIC_PRICES.get(model) or ANTHROPIC_PRICES.get(_SNAPSHOT.sub("", model))


def anthropic_key_for(base_url: str, env: Mapping[str, str]) -> str | None:
    """``ANTHROPIC_API_KEY`` when ``base_url`` is Anthropic's own API
    (``https://api.anthropic.com``, with or without ``/v1``); ``None`` for any other
    endpoint, which gets a key only from ``RAGMETER_JUDGE_API_KEY`` or a config file's
    ``api_key_env``.

    >>> env = {"ANTHROPIC_API_KEY": "sk-ant-x"}
    >>> anthropic_key_for("https://api.anthropic.com", env), anthropic_key_for("http://gw", env)
    ('sk-ant-x', None)
    """
    key = env.get("ANTHROPIC_API_KEY")
    root = base_url.strip().rstrip("/").lower()
    root = root[: -len("/v1")] if root.endswith("/v1") else root
    return key if key and root == ANTHROPIC_BASE_URL else None


def file_provider(path: str | Path, section: str = "judge") -> str | None:
    """The ``provider`` a judge config file names (``None`` when it names none)."""
    provider = read_table(Path(path), section).get("provider")
    return None if provider is None else str(provider)


class _AnthropicSampling(EndpointConfig):
    """The Messages API's version and sampling settings (after the key, before the limits)."""

    anthropic_version: str = ANTHROPIC_VERSION
    #: 0-1 on this API; ``None`` sends none (the model's default).
    temperature: float | None = Field(default=0.0, ge=0.0, le=1.0)
    max_tokens: int = Field(default=1024, gt=0)


class AnthropicConfig(EndpointLimits, _AnthropicSampling):
    """How to reach Anthropic's Messages API (or a gateway speaking it) and how to call it.

    >>> config = AnthropicConfig(model="claude-haiku-4-5", api_key="sk-ant-secret")
    >>> config.identity
    'https://api.anthropic.com|claude-haiku-4-5'
    >>> "sk-ant-secret" in repr(config) or "sk-ant-secret" in str(config.describe())
    False
    """

    #: The API root, as Anthropic's SDKs take it (``https://api.anthropic.com``); a root
    #: ending in ``/v1`` is taken too.
    base_url: str = ANTHROPIC_BASE_URL
    structured_output: AnthropicStructuredOutput = "auto"
    #: Always ``False``: the Messages API returns no token probabilities.
    logprobs: bool = False
    extra_body: dict[str, Any] = Field(default_factory=dict)
    price: Price | None = None

    @field_validator("logprobs")
    @classmethod
    def _no_logprobs(cls, value: bool) -> bool:
        if value:
            raise ValueError(_NO_LOGPROBS)
        return value

    @property
    def messages_path(self) -> str:
        """The Messages endpoint, relative to ``base_url``."""
        return "messages" if self.base_url.rstrip("/").lower().endswith("/v1") else "v1/messages"

    def generation_params(self) -> dict[str, Any]:
        """Every setting that can change an answer (part of every cache key)."""
        return {
            "api": "anthropic-messages",
            "anthropic_version": self.anthropic_version,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "structured_output": self.structured_output,
            "extra_body": self.extra_body,
        }

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> AnthropicConfig:
        """From ``RAGMETER_JUDGE_MODEL`` and ``RAGMETER_JUDGE_BASE_URL`` (default Anthropic's
        API); ``overrides`` that are not ``None`` win (``provider`` is ignored: this is the
        ``anthropic`` one).

        The key: ``RAGMETER_JUDGE_API_KEY``, sent to the endpoint these settings choose;
        without it ``ANTHROPIC_API_KEY``, but only to Anthropic's own API, never to another
        base URL."""
        env = os.environ if env is None else env
        values = env_settings(
            env,
            overrides,
            judge="anthropic",
            model_hint="(e.g. claude-haiku-4-5, claude-sonnet-4-5)",
        )
        if "api_key" not in values:
            key = anthropic_key_for(values.get("base_url", ANTHROPIC_BASE_URL), env)
            if key:
                values["api_key"] = key
        return cls(**values)

    @classmethod
    def from_file(
        cls, path: str | Path, section: str = "judge", **overrides: Any
    ) -> AnthropicConfig:
        """From a TOML or JSON file's ``[judge]`` section (or the whole file), which names
        ``provider = "anthropic"``; ``overrides`` that are not ``None`` win.

        As for every judge config file, the key comes only from the variable its
        ``api_key_env = "NAME"`` names (``"ANTHROPIC_API_KEY"``, say; an error when it is
        unset); without ``api_key_env`` no key is sent. A literal ``api_key`` is used, with
        a warning."""
        return cls(**cls.file_settings(Path(path), section, overrides, provider="anthropic"))


#: A conversation as the Messages API takes it: the system prompt, the turns, the tool's name.
Conversation = tuple[str, list[dict[str, Any]], str]

_NO_LOGPROBS = (
    "Anthropic's Messages API returns no token probabilities: drop --logprobs / logprobs "
    "for the anthropic judge"
)
#: Where the key comes from, for the 401 messages.
_KEY_SOURCES = (
    "RAGMETER_JUDGE_API_KEY, else ANTHROPIC_API_KEY (sent only to https://api.anthropic.com); "
    "with a config file, the variable its api_key_env names"
)


class MessagesClient(EndpointClient):
    """The shared HTTP client (limits, deadline, retries honouring ``retry-after``, error
    mapping, redaction) with Anthropic's headers: ``x-api-key`` instead of a bearer token,
    and ``anthropic-version``. 529 (overloaded), like 429 and every 5xx, is retried."""

    def __init__(self, *, anthropic_version: str, **settings: Any) -> None:
        super().__init__(**settings)
        self.anthropic_version = anthropic_version

    def _headers(self) -> dict[str, str]:
        headers = super()._headers()
        headers.pop("Authorization", None)  # never sent as a bearer token
        if self._api_key is not None:
            headers["x-api-key"] = self._api_key.get_secret_value()
        headers["anthropic-version"] = self.anthropic_version
        return headers

    def fixes(self, response: httpx.Response) -> dict[int, str]:
        """Anthropic's own advice: where its key comes from, what its base URL is, and a
        spend limit (a 429 that retrying cannot help)."""
        fixes = {
            401: f"the API key was rejected: check {_KEY_SOURCES}"
            if self._api_key is not None
            else f"no API key was sent: set {_KEY_SOURCES}",
            404: "not found: check the model name (e.g. claude-haiku-4-5) and that the base URL "
            "is the API root (https://api.anthropic.com, without /v1/messages)",
        }
        if response.status_code == 429 and _spend_limit_reached(response):
            fixes[429] = (
                "the organization's spend limit is reached: retrying cannot help until it is raised"
            )
        return {**super().fixes(response), **fixes}


def _spend_limit_reached(response: httpx.Response) -> bool:
    error = error_of(response)
    details = error.get("details") if isinstance(error, dict) else None
    return isinstance(details, dict) and details.get("error_code") == "enforced_spend_limit_reached"


# -- requests and answers -----------------------------------------------------------------


def _check_message_shape(data: dict[str, Any]) -> None:
    content = data["content"]
    if not isinstance(content, list):
        raise TypeError("content is not a list")
    for block in content:
        if not isinstance(block, dict):
            raise TypeError("a content block is not an object")
        if block.get("type") == "tool_use" and not (
            isinstance(block.get("id"), str) and isinstance(block.get("input"), dict)
        ):
            raise TypeError("a tool_use block without an id or an input object")


def _tool_name(schema: dict[str, Any]) -> str:
    name = _NOT_A_TOOL_NAME.sub("_", str(schema.get("title") or "answer"))[:64]
    return name or "answer"


def _turns(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    """The system prompt (every system message, in order) and the user/assistant turns,
    consecutive turns of one role joined."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        if turns and turns[-1]["role"] == message.role:
            turns[-1] = {
                "role": message.role,
                "content": f"{turns[-1]['content']}\n\n{message.content}",
            }
        else:
            turns.append({"role": message.role, "content": message.content})
    if not turns:  # only instructions: they become the question
        return "", [{"role": "user", "content": system}]
    return system, turns


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text_of(block) for block in value)
    if isinstance(value, dict):
        if value.get("type") == "tool_use":
            return json.dumps(value.get("input"), ensure_ascii=False)
        if value.get("type") == "tool_result":
            return _text_of(value.get("content"))
        return str(value.get("text", ""))
    return ""


def _prompt_estimate(body: dict[str, Any]) -> int:
    text = _text_of(body.get("system")) + "".join(
        _text_of(m.get("content")) for m in body["messages"]
    )
    if body.get("tools"):
        text += json.dumps(body["tools"], ensure_ascii=False)
    return estimate_tokens(text)


def _answer_text(data: dict[str, Any], tool: str) -> str:
    """The answer as text: the tool's input as JSON, else the text blocks (thinking left
    out)."""
    for block in data["content"]:
        if block.get("type") == "tool_use" and block.get("name") == tool:
            return json.dumps(block["input"], ensure_ascii=False)
    return "".join(b.get("text", "") for b in data["content"] if b.get("type") == "text")


def _fallback(body: dict[str, Any], detail: str, *, auto: bool) -> str | None:
    """What to change when the API refuses ``body`` saying ``detail`` (a 400): drop the
    temperature, or ask for the structure less strictly (``tool_auto``, ``json``)."""
    text = detail.lower()
    sent = body.get("temperature")
    if "temperature" in text and isinstance(sent, int | float) and 0.0 <= sent <= 1.0:
        return "temperature"  # a model that takes none (not a value out of range)
    if not auto or "tools" not in body:
        return None
    forced = (body.get("tool_choice") or {}).get("type") in ("tool", "any")
    if forced and any(word in text for word in ("tool_choice", "thinking", "forc")):
        return "tool_auto"
    if "tool" in text:
        return "json"
    return None


class AnthropicJudge(EndpointJudge[AnthropicConfig]):
    """Structured generation on Anthropic's Messages API.

    The output schema is the input schema of a tool the model is made to call
    (``tool_choice: {"type": "tool"}``); a model that refuses forced tool use (extended
    thinking) is offered the tool instead, and one that refuses tools gets the schema in
    its system prompt (``structured_output``; found out once per endpoint and model). An
    invalid answer gets one repair re-ask (the tool's result says what was wrong), an answer
    cut off by ``max_tokens`` is retried with a doubled budget (up to 16384), a refusal
    (``stop_reason: refusal``) is reported as it is. No token probabilities.
    """

    supports_batched_verdicts = True
    #: Per endpoint and model, for the life of the process (:attr:`capabilities`): the
    #: structured-output mode the API left us with (``auto`` only), and whether it refused
    #: ``temperature`` (newer models take no sampling settings other than their default).
    dialect = "anthropic"

    def _known_price(self, model: str) -> Price | None:
        return anthropic_price(model)

    def _open(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        if self.config.logprobs:  # a copy made with model_copy(update=...) skips validation
            raise ValueError(_NO_LOGPROBS)
        self.http = endpoint_client(
            self.config,
            transport=transport,
            kind=MessagesClient,
            anthropic_version=self.config.anthropic_version,
            key_header="bearer",  # (MessagesClient sends it as x-api-key)
        )
        self.limiter = self.http.limiter

    # -- identity -------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        described = {"kind": "anthropic", **self.config.describe()}
        if self.capabilities.no_temperature:
            described["temperature_sent"] = None  # the model refused it: its default is used
        described["price"] = self._price_shown()
        return described

    @property
    def structured_output_mode(self) -> str:
        """How structure is asked for now (after any fallback): tool, tool_auto or json."""
        if self.config.structured_output != "auto":
            return self.config.structured_output
        return self.capabilities.mode or "tool"

    # -- one request ----------------------------------------------------------------------
    def _body(
        self, conversation: Conversation, schema: dict[str, Any], max_tokens: int
    ) -> dict[str, Any]:
        system, turns, tool = conversation
        mode = self.structured_output_mode
        if mode == "tool_auto":
            system = f"{system}\n\n" if system else ""
            system += (
                f"Answer by calling the tool {tool} once: its input is your whole answer. If "
                "you cannot call it, answer with that input as one JSON object only."
            )
        elif mode == "json":
            system = (
                f"{system}\n\n{schema_instruction(schema)}"
                if system
                else schema_instruction(schema)
            )
        body: dict[str, Any] = {
            "model": self.config.model,
            "max_tokens": max_tokens,
            "messages": turns,
        }
        if system:
            body["system"] = system
        if self.config.temperature is not None and not self.capabilities.no_temperature:
            body["temperature"] = self.config.temperature
        if mode in ("tool", "tool_auto"):
            input_schema = {**schema, "type": "object"}
            body["tools"] = [
                {
                    "name": tool,
                    "description": "Record your answer: the input is the complete answer, "
                    "valid against this schema.",
                    "input_schema": input_schema,
                }
            ]
            body["tool_choice"] = (
                {"type": "tool", "name": tool} if mode == "tool" else {"type": "auto"}
            )
        body.update(self.config.extra_body)
        return body

    async def _post(self, body: dict[str, Any], usage: Usage) -> dict[str, Any]:
        estimated = _prompt_estimate(body) + body["max_tokens"] // 4
        auto = self.config.structured_output == "auto"
        data = await self.http.post(
            self.config.messages_path,
            body,
            usage,
            estimated_tokens=estimated,
            validate=_check_message_shape,
            reject=lambda status, detail: (
                status == 400 and _fallback(body, detail, auto=auto) is not None
            ),
        )
        self._count_tokens(data, body, usage, estimated)
        return data

    def _count_tokens(
        self, data: dict[str, Any], body: dict[str, Any], usage: Usage, estimated: int
    ) -> None:
        reported = data.get("usage") or {}
        fresh, output = reported.get("input_tokens"), reported.get("output_tokens")
        written = int(reported.get("cache_creation_input_tokens") or 0)
        read = int(reported.get("cache_read_input_tokens") or 0)
        if fresh is None or output is None:
            usage.estimated_calls += 1
            fresh, written, read = _prompt_estimate(body), 0, 0
            output = estimate_tokens(_text_of(data["content"]))
        cost = 0.0
        if self.price is not None:
            cached = written * _CACHE_WRITE_FACTOR + read * _CACHE_READ_FACTOR
            cost = (
                (int(fresh) + cached) * self.price.input_per_million
                + int(output) * self.price.output_per_million
            ) / 1_000_000
        self._settle(usage, estimated, int(fresh) + written + read, int(output), cost)

    # -- structured generation ------------------------------------------------------------
    def _conversation(self, messages: Sequence[Message], schema: dict[str, Any]) -> Conversation:
        system, turns = _turns(messages)
        return system, turns, _tool_name(schema)

    def _repair(
        self,
        conversation: Conversation,
        reply: Reply,
        error: JudgeOutputError,
        schema: dict[str, Any],
    ) -> Conversation:
        system, turns, tool = conversation
        return system, [*turns, *self._repair_turns(reply.data, tool, error, schema)], tool

    async def _exchange(
        self,
        conversation: Conversation,
        schema: dict[str, Any],
        max_tokens: int,
        usage: Usage,
    ) -> Reply | None:
        """One answer; ``None`` when the API refused how it was asked (then asked again,
        once per change); an error for a refusal or a full context window."""
        body = self._body(conversation, schema, max_tokens)
        try:
            data = await self._post(body, usage)
        except StatusRejected as rejected:
            auto = self.config.structured_output == "auto"
            change = _fallback(body, rejected.detail, auto=auto) or "json"
            if change == "temperature":
                self.capabilities.no_temperature = True
                logger.warning(
                    "%s refuses temperature=%s: its default is used (%s)",
                    self.identity,
                    self.config.temperature,
                    rejected.detail,
                )
            else:
                self.capabilities.mode = change
                logger.info(
                    "%s: structured output by %s (%s)", self.identity, change, rejected.detail
                )
            return None
        stop = data.get("stop_reason")
        text = _answer_text(data, conversation[2])
        if stop == "max_tokens":
            return Reply(text, cut_off="stop_reason=max_tokens", data=data)
        if stop == "model_context_window_exceeded":
            raise output_error(
                "answer cut off: the prompt and answer fill the model's context window "
                "(stop_reason=model_context_window_exceeded)",
                text,
                self.redact,
                truncated=True,
            )
        if stop == "refusal":
            raise output_error(
                f"{self.http.where} (model {self.config.model!r}) declined to answer "
                "(stop_reason=refusal)",
                text,
                self.redact,
            )
        return Reply(text, data=data)

    def _repair_turns(
        self, data: dict[str, Any], tool: str, error: JudgeOutputError, schema: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """The invalid answer (as the API returned it: thinking blocks must come back
        unchanged) and what was wrong with it: as the tool's error result when it was a
        tool call, else as the user's reply."""
        blocks = [b for b in data["content"] if not (b.get("type") == "text" and not b.get("text"))]
        answer: dict[str, Any] = {"role": "assistant", "content": blocks or "(no answer)"}
        calls = [b for b in blocks if b.get("type") == "tool_use"]
        if calls:
            problem = (
                f"That input is invalid ({error}). Call {tool} again with an input valid "
                "against its schema."
            )
            results = [
                {
                    "type": "tool_result",
                    "tool_use_id": b["id"],
                    "is_error": True,
                    "content": problem,
                }
                for b in calls
            ]
            return [answer, {"role": "user", "content": results}]
        if self.structured_output_mode == "json":
            ask = schema_instruction(schema)
        else:
            ask = f"Answer by calling the tool {tool} with your whole answer as its input."
        return [answer, {"role": "user", "content": f"That answer is invalid ({error}). {ask}"}]


register_provider("anthropic", AnthropicConfig, AnthropicJudge)
