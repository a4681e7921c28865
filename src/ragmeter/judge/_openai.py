"""A judge on any OpenAI-compatible chat-completions endpoint (OpenAI, DeepSeek, Qwen,
Moonshot, Zhipu, Ollama, vLLM, the llama.cpp server)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from ragmeter._services import (
    Cache,
    JudgeError,
    Message,
    StatusRejected,
    Usage,
    UsageLedger,
    endpoint_client,
    estimate_tokens,
)
from ragmeter.judge._base import Judge
from ragmeter.judge._config import JudgeConfig
from ragmeter.judge._errors import JudgeOutputError, JudgeTruncatedError
from ragmeter.judge._parse import (
    enum_distribution,
    parse_output,
    repair_request,
    schema_instruction,
    schema_of,
    verdict_probabilities,
)
from ragmeter.judge._prices import PriceTable
from ragmeter.judge._types import Judgment, OutputT

MAX_TOKEN_BUDGET = 16384
#: Endpoints found to reject / accept json_schema, remembered for the life of the process.
_NO_JSON_SCHEMA: set[str] = set()
_JSON_SCHEMA_OK: set[str] = set()


#: What an endpoint says when it does not take ``response_format: json_schema``: llama.cpp's
#: server ('response_format type must be one of "text" or "json_object"'), vLLM, Ollama and
#: OpenAI-compatible gateways all name the parameter or the schema.
_SCHEMA_REJECTION_WORDS = ("response_format", "json_schema", "schema", "structured output")


def rejects_response_format(status: int, detail: str) -> bool:
    """Whether an error answer says the endpoint does not support json_schema output (then
    the endpoint gets json_object from now on). A 500 or a 400 saying anything else is not
    taken for that: one transient failure must not change how every later call is asked."""
    text = detail.lower()
    return status in (400, 422, 500, 501) and any(w in text for w in _SCHEMA_REJECTION_WORDS)


def _check_chat_shape(data: dict[str, Any]) -> None:
    if not isinstance(data["choices"][0]["message"], dict):
        raise TypeError("message is not an object")


def _with_instruction(messages: list[dict[str, str]], instruction: str) -> list[dict[str, str]]:
    rendered = list(messages)
    if rendered and rendered[0]["role"] == "system":
        rendered[0] = {"role": "system", "content": f"{rendered[0]['content']}\n\n{instruction}"}
    else:
        rendered.insert(0, {"role": "system", "content": instruction})
    return rendered


class OpenAIJudge(Judge):
    """Structured generation on an OpenAI-compatible endpoint.

    Structured output by capability: ``json_schema`` where supported, else ``json_object``
    with the schema in the prompt (found out once per endpoint, or set by ``provider`` /
    ``structured_output``; ``"text"`` asks in plain text). JSON is extracted tolerantly from
    any answer (fences, prose around it) and always validated; an invalid one gets one
    repair re-ask, and a truncated one (``finish_reason == "length"``) is retried with a
    doubled token budget.
    """

    def __init__(
        self,
        config: JudgeConfig,
        *,
        cache: Cache | None = None,
        ledger: UsageLedger | None = None,
        prices: PriceTable | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(cache=cache, ledger=ledger)
        self.config = config
        self.price = config.price or (prices or PriceTable()).price_of(config.model)
        self.http = endpoint_client(config, transport=transport)
        self.limiter = self.http.limiter

    # -- identity -------------------------------------------------------------------------
    @property
    def identity(self) -> str:
        return self.config.identity

    def generation_params(self) -> dict[str, Any]:
        return self.config.generation_params()

    def describe(self) -> dict[str, Any]:
        described = {"kind": "openai-compatible", **self.config.describe()}
        described["price"] = (
            self.price.model_dump()
            if self.price
            else "unknown: cost not counted (set price= in the judge config)"
        )
        return described

    async def aclose(self) -> None:
        await self.http.aclose()

    async def release_loop_resources(self) -> None:
        await self.http.aclose_current_loop()

    async def _post(
        self, body: dict[str, Any], usage: Usage, *, probing_schema: bool = False
    ) -> dict[str, Any]:
        """One chat completion. While ``probing_schema``, an answer rejecting the request's
        ``response_format`` (:func:`rejects_response_format`) raises :class:`StatusRejected`
        at once; any other error is handled as usual (a 500 is retried, a 400 reported)."""
        estimated = sum(estimate_tokens(m["content"]) for m in body["messages"])
        estimated += body.get("max_tokens", 0) // 4
        data = await self.http.post(
            "chat/completions",
            body,
            usage,
            estimated_tokens=estimated,
            validate=_check_chat_shape,
            reject=rejects_response_format if probing_schema else None,
        )
        self._count_tokens(data, body, usage, estimated)
        return data

    def _count_tokens(
        self, data: dict[str, Any], body: dict[str, Any], usage: Usage, estimated: int
    ) -> None:
        reported = data.get("usage") or {}
        prompt = reported.get("prompt_tokens")
        completion = reported.get("completion_tokens")
        if prompt is None or completion is None:
            usage.estimated_calls += 1
            content = data["choices"][0]["message"].get("content") or ""
            prompt = sum(estimate_tokens(m["content"]) for m in body["messages"])
            completion = estimate_tokens(content)
        usage.prompt_tokens += int(prompt)
        usage.completion_tokens += int(completion)
        if self.price is not None:
            usage.cost += self.price.cost(int(prompt), int(completion))
        self.limiter.settle_tokens(estimated, int(prompt) + int(completion))

    # -- structured generation ------------------------------------------------------------
    @property
    def structured_output_mode(self) -> str:
        """The structured-output mode this endpoint gets now (after any fallback)."""
        return self._mode()

    def _mode(self) -> str:
        mode = self.config.structured_output
        if mode == "auto":
            return "json_object" if self.identity in _NO_JSON_SCHEMA else "json_schema"
        return mode

    def _body(
        self, messages: list[dict[str, str]], schema: dict[str, Any], mode: str, max_tokens: int
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": max_tokens,
        }
        if self.config.seed is not None:
            body["seed"] = self.config.seed
        if mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.get("title", "answer"), "schema": schema},
            }
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        if self.config.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = 5
        body.update(self.config.extra_body)
        return body

    async def _complete(
        self, messages: list[dict[str, str]], schema: dict[str, Any], usage: Usage
    ) -> tuple[str, list[dict[str, Any]] | None]:
        """The answer text, retried with a larger budget while it is cut off by the limit."""
        max_tokens = self.config.max_tokens
        while True:
            mode = self._mode()
            rendered = (
                messages
                if mode == "json_schema"
                else _with_instruction(messages, schema_instruction(schema))
            )
            body = self._body(rendered, schema, mode, max_tokens)
            probing = (
                mode == "json_schema"
                and self.config.structured_output == "auto"
                and self.identity not in _JSON_SCHEMA_OK
            )
            try:
                data = await self._post(body, usage, probing_schema=probing)
            except StatusRejected:
                _NO_JSON_SCHEMA.add(self.identity)
                continue
            if probing:
                _JSON_SCHEMA_OK.add(self.identity)
            choice = data["choices"][0]
            content = choice["message"].get("content") or ""
            if not content and choice["message"].get("tool_calls"):
                content = choice["message"]["tool_calls"][0]["function"]["arguments"]
            if choice.get("finish_reason") == "length":
                if max_tokens >= MAX_TOKEN_BUDGET:
                    raise JudgeTruncatedError(
                        f"answer cut off at {max_tokens} tokens (finish_reason=length)", raw=content
                    )
                max_tokens = min(MAX_TOKEN_BUDGET, max_tokens * 2)
                continue
            logprobs = (choice.get("logprobs") or {}).get("content")
            return content, logprobs

    async def _call(self, messages: Sequence[Message], schema: type[OutputT]) -> Judgment[OutputT]:
        usage = self._call_usage()
        try:
            return await self._answer(messages, schema, usage)
        except JudgeError as error:
            error.usage = usage  # what was sent before it failed is billed all the same
            raise

    async def _answer(
        self, messages: Sequence[Message], schema: type[OutputT], usage: Usage
    ) -> Judgment[OutputT]:
        schema_json = schema_of(schema)
        conversation = [m.to_dict() for m in messages]
        content, logprobs = await self._complete(conversation, schema_json, usage)
        try:
            output = parse_output(content, schema)
        except JudgeOutputError as first_error:
            repair = repair_request(conversation, content, first_error, schema_json)
            content, logprobs = await self._complete(repair, schema_json, usage)
            try:
                output = parse_output(content, schema)
            except JudgeOutputError as error:
                raise JudgeOutputError(
                    f"{error} (after one repair re-ask)", raw=self.http.redact(content)
                ) from None
        probabilities = verdict_probabilities(logprobs) if self.config.logprobs else None
        distribution = enum_distribution(logprobs, schema_json) if self.config.logprobs else None
        return Judgment(output, usage, False, probabilities, distribution)
