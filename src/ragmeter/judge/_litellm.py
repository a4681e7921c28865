"""A judge on any model LiteLLM can call (extra ``[litellm]``): Bedrock, Vertex AI, Azure,
Anthropic, Gemini, Cohere, Mistral... named by a LiteLLM model string such as
``bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0`` or ``vertex_ai/gemini-2.5-flash``.

LiteLLM makes the call and reads the provider's own credentials (the AWS credential chain,
Google application default credentials, ``AZURE_API_KEY``...); ragmeter adds what every
judge has: structured output by capability, one repair re-ask, a larger budget for a
truncated answer, retries with ragmeter's backoff under the endpoint's shared limiter, the
cache, and usage with the cost from LiteLLM's price list.

LiteLLM is imported only when a :class:`LiteLLMJudge` is made (it takes seconds), and then
without network access of its own: ``LITELLM_LOCAL_MODEL_COST_MAP=True`` and
``LITELLM_OFFLINE_MODE=true`` are set unless already set, so it uses the price list it ships
instead of fetching one from GitHub.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
from pydantic import Field, field_validator

from ragmeter._record import attributes
from ragmeter._services import (
    Cache,
    EndpointLimits,
    JudgeConfigError,
    JudgeError,
    JudgeTransientError,
    Usage,
    UsageLedger,
    endpoint_limiter,
    estimate_tokens,
    openai_key_for,
    redact_secrets,
    redact_url,
    retry_after_seconds,
    send_once,
    status_error,
    with_retries,
)
from ragmeter.judge._config import Price, Sampling, StructuredOutput, env_settings
from ragmeter.judge._endpoint import (
    SAMPLING_PARAMS,
    Ask,
    ChatJudge,
    Reply,
    SchemaRejected,
)
from ragmeter.judge._providers import register_provider

#: The ``provider`` that chooses this judge (``--judge-provider litellm``,
#: ``RAGMETER_JUDGE_PROVIDER=litellm``, ``provider = "litellm"`` in a judge config file).
LITELLM_PROVIDER = "litellm"
#: What the environment gets before LiteLLM is imported, unless it says otherwise.
OFFLINE_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
#: Arguments ragmeter sets on every request itself: not accepted in ``litellm_params``.
_OWN_ARGUMENTS = SAMPLING_PARAMS | frozenset(
    {
        "model",
        "messages",
        "response_format",
        "timeout",
        "num_retries",
        "max_retries",
        "stream",
        "n",
        "api_key",
        "api_base",
        "base_url",
    }
)
#: Parameter names whose values are secrets (``aws_secret_access_key``, ``vertex_credentials``,
#: ``azure_ad_token``...): used for the call, shown nowhere, not part of any cache key.
_SECRET_WORDS = frozenset(
    {"key", "token", "secret", "password", "passwd", "credential", "credentials", "signature"}
)
#: Providers whose LiteLLM client takes ``OPENAI_API_KEY`` from the environment by itself.
_OPENAI_KEY_PROVIDERS = frozenset({"openai", "custom_openai", "text-completion-openai"})
#: Stands for "no key" where LiteLLM's OpenAI client insists on one.
_NO_KEY = "no-key"
#: What LiteLLM says (often as a 500 or a connection error) when it found no credentials.
_NO_CREDENTIALS_WORDS = (
    "missing credentials",
    "unable to locate credentials",
    "default credentials were not found",
    "could not automatically determine credentials",
    "api_key client option must be set",
)
#: What to do about each status retrying cannot fix (:func:`~ragmeter._services.status_error`).
_FIXES = {
    401: "the credentials were rejected: check the provider's key (RAGMETER_JUDGE_API_KEY "
    "or the variable api_key_env names, else the one LiteLLM reads for this provider)",
    403: "these credentials may not use this model: check their permissions (and, on "
    "Bedrock, that the model is enabled in this region)",
    404: "not found: check the LiteLLM model string (--judge-model) and base_url",
}
#: Where LiteLLM looks for a provider's credentials, for the error that says none were found.
_CREDENTIALS = {
    "bedrock": "the AWS credential chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
    "AWS_PROFILE or aws_profile_name, an instance role)",
    "vertex_ai": "Google application default credentials (GOOGLE_APPLICATION_CREDENTIALS or "
    "gcloud auth application-default login; vertex_credentials names a key file)",
    "azure": "AZURE_API_KEY (with AZURE_API_BASE and AZURE_API_VERSION)",
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
}


def _is_secret_name(name: str) -> bool:
    """Whether a parameter's value is a secret: one of its ``_``-separated words says so
    (``aws_session_token`` is, ``max_tokens`` is not).

    >>> [_is_secret_name(n) for n in ("aws_secret_access_key", "vertex_credentials",
    ...                                "aws_region_name", "max_tokens")]
    [True, True, False, False]
    """
    return any(word in _SECRET_WORDS for word in name.lower().replace("-", "_").split("_"))


class LiteLLMConfig(EndpointLimits, Sampling):
    """How to call a model through LiteLLM. Every setting but ``model`` has the meaning it has
    in :class:`~ragmeter.judge.JudgeConfig`; ``litellm_params`` go to ``litellm.acompletion``
    as they are (``aws_region_name``, ``vertex_project``, ``vertex_location``,
    ``api_version``, ``extra_headers``...).

    >>> config = LiteLLMConfig(model="bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0",
    ...                        api_key="sk-secret",
    ...                        litellm_params={"aws_region_name": "us-east-1",
    ...                                        "aws_secret_access_key": "aws-secret"})
    >>> text = repr(config) + str(config.describe()) + str(config.generation_params())
    >>> "sk-secret" in text or "aws-secret" in text
    False
    >>> config.describe()["litellm_params"]
    {'aws_region_name': 'us-east-1', 'aws_secret_access_key': '***'}
    """

    #: A LiteLLM model string, provider first: ``bedrock/...``, ``vertex_ai/...``,
    #: ``azure/<deployment>``, ``openai/...``.
    model: str = Field(min_length=1)
    #: The provider's API root, when not its default (LiteLLM's ``api_base``).
    base_url: str | None = None  # type: ignore[assignment]
    #: ``auto``: ``json_schema`` where LiteLLM says the model supports it, else
    #: ``json_object`` where it takes ``response_format``, else ``text``; the schema is in
    #: the prompt in every mode but ``json_schema``.
    structured_output: StructuredOutput = "auto"
    logprobs: bool = False
    litellm_params: dict[str, Any] = Field(default_factory=dict)
    #: Overrides LiteLLM's price list (which counts cached and reasoning tokens too).
    price: Price | None = None

    #: Shown by :meth:`public_params`, without secrets.
    _hidden = frozenset({"litellm_params"})

    @field_validator("litellm_params")
    @classmethod
    def _params_are_not_ours(cls, value: dict[str, Any]) -> dict[str, Any]:
        taken = sorted(set(value) & _OWN_ARGUMENTS)
        if taken:
            raise ValueError(
                f"litellm_params may not set {', '.join(taken)}: ragmeter sets them itself "
                "(use model, base_url, api_key_env, temperature, seed, max_tokens, timeout_s, "
                "max_retries, logprobs)"
            )
        return value

    @property
    def identity(self) -> str:
        """LiteLLM, the API root (without credentials) and the model: what cache entries and
        rate limits belong to."""
        where = redact_url(self.base_url).rstrip("/") if self.base_url else ""
        return f"litellm|{where}|{self.model}"

    def public_params(self) -> dict[str, Any]:
        """``litellm_params`` with every secret-looking value shown as ``***``."""
        return {k: "***" if _is_secret_name(k) else v for k, v in self.litellm_params.items()}

    def generation_params(self) -> dict[str, Any]:
        """Every setting that can change an answer (part of every cache key); never a secret."""
        return {
            **attributes(self, "temperature", "seed", "max_tokens", "logprobs"),
            "litellm_params": {
                k: v for k, v in self.litellm_params.items() if not _is_secret_name(k)
            },
        }

    def describe(self) -> dict[str, Any]:
        """For run records: everything but the key and secret parameters."""
        data = super().describe()
        data["litellm_params"] = self.public_params()
        return data

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            yield name, self.public_params() if name == "litellm_params" else value

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> LiteLLMConfig:
        """From ``RAGMETER_JUDGE_MODEL`` (a LiteLLM model string), ``RAGMETER_JUDGE_BASE_URL``
        and ``RAGMETER_JUDGE_API_KEY``; ``overrides`` that are not ``None`` win. No other
        key is read here: LiteLLM reads the provider's own (``AWS_*``,
        ``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_API_KEY``...)."""
        env = os.environ if env is None else env
        hint = (
            "to a LiteLLM model string, e.g. bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0 "
            "or vertex_ai/gemini-2.5-flash"
        )
        return cls(**env_settings(env, overrides, judge="LiteLLM", model_hint=hint))

    @classmethod
    def from_file(cls, path: str | Path, section: str = "judge", **overrides: Any) -> LiteLLMConfig:
        """From a TOML or JSON file's ``[judge]`` table (``provider = "litellm"``), as
        :meth:`JudgeConfig.from_file <ragmeter.judge.JudgeConfig.from_file>` reads one: the
        key only from the variable ``api_key_env`` names. Literal secrets in the file (an
        ``api_key``, a secret-looking ``litellm_params`` value) are used, with a warning."""

        def literal(data: dict[str, Any]) -> list[str]:
            params = data.get("litellm_params") or {}
            return (["api_key"] if data.get("api_key") else []) + [
                name
                for name, value in (params.items() if isinstance(params, dict) else ())
                # a credentials *file* is named, not written out
                if _is_secret_name(name) and value and not Path(str(value)).expanduser().is_file()
            ]

        data = cls.file_settings(
            Path(path),
            section,
            overrides,
            literal=literal,
            advice=" (LiteLLM reads the provider's own variables itself, e.g. "
            "AWS_SECRET_ACCESS_KEY)",
            provider=LITELLM_PROVIDER,
        )
        return cls(**data)


def load_litellm() -> Any:
    """The ``litellm`` module, imported without network access of its own (see the module
    docstring); an ``ImportError`` that names the extra when it is not installed."""
    if "litellm" not in sys.modules:
        for name, value in OFFLINE_ENV.items():
            os.environ.setdefault(name, value)
    try:
        import litellm
    except ImportError as error:
        raise ImportError(
            "the LiteLLM judge needs LiteLLM: pip install 'ragmeter[litellm]'"
        ) from error
    litellm.suppress_debug_info = True  # no "Provider List: ..." printed on every error
    return litellm


class LiteLLMJudge(ChatJudge[LiteLLMConfig]):
    """Structured generation on any model LiteLLM can call, e.g.::

        judge = LiteLLMJudge("vertex_ai/gemini-2.5-flash",
                             vertex_project="my-project", vertex_location="us-central1")

    ``config`` is a :class:`LiteLLMConfig` or a model string; with a model string, keyword
    arguments that are :class:`LiteLLMConfig` fields set those, and the others become
    ``litellm_params``. Retries are ragmeter's (LiteLLM's own are off): transient failures
    (429, 5xx, timeouts, connection errors) are retried with exponential backoff, obeying
    ``Retry-After`` up to ``max_retry_wait_s``; a rejected key, an unknown model or a bad
    request fail at once as :class:`JudgeConfigError`.
    """

    dialect = "litellm"

    def __init__(
        self,
        config: LiteLLMConfig | str,
        *,
        cache: Cache | None = None,
        ledger: UsageLedger | None = None,
        **settings: Any,
    ) -> None:
        if isinstance(config, str):
            fields = {k: v for k, v in settings.items() if k in LiteLLMConfig.model_fields}
            params = {k: v for k, v in settings.items() if k not in LiteLLMConfig.model_fields}
            fields["litellm_params"] = {**fields.get("litellm_params", {}), **params}
            config = LiteLLMConfig(model=config, **fields)
        elif settings:
            raise TypeError("settings go into the LiteLLMConfig when one is given")
        super().__init__(config, cache=cache, ledger=ledger)
        self.provider = self._provider_of(config)
        self._price_per_token = None if config.price else self._litellm_price()
        self._capable_mode = self._capability()

    #: A copy for another process imports LiteLLM there.
    _process_local = (*ChatJudge._process_local, "_litellm", "_openai_error", "_connection_error")

    def _open(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        """LiteLLM (it makes the requests: no HTTP client here) and the endpoint's limiter."""
        self._litellm = load_litellm()
        import openai  # LiteLLM's errors are OpenAI's error types

        self._openai_error: type[Exception] = openai.OpenAIError
        self._connection_error: type[Exception] = openai.APIConnectionError
        self.limiter = endpoint_limiter(self.config)

    def _provider_of(self, config: LiteLLMConfig) -> str:
        try:
            _, provider, _, _ = self._litellm.get_llm_provider(
                model=config.model, api_base=config.base_url
            )
        except self._openai_error as error:  # LiteLLM's BadRequestError: no provider prefix
            raise ValueError(
                f"LiteLLM does not know which provider {config.model!r} belongs to: write the "
                "model with its provider first, e.g. bedrock/<model id>, vertex_ai/<model>, "
                "azure/<deployment>, openai/<model>"
            ) from error
        return str(provider)

    def _litellm_price(self) -> tuple[float, float] | None:
        """LiteLLM's price per input and output token of the model, when it has one."""
        try:
            info = self._litellm.get_model_info(self.config.model)
        except (ValueError, KeyError, LookupError, TypeError, self._litellm_unmapped()):
            return None
        prompt, completion = info.get("input_cost_per_token"), info.get("output_cost_per_token")
        if prompt is None or completion is None:
            return None
        return float(prompt), float(completion)

    def _litellm_unmapped(self) -> type[Exception]:
        unmapped = getattr(self._litellm.exceptions, "ModelNotMappedError", None)
        return unmapped if isinstance(unmapped, type) else ValueError

    def _capability(self) -> str:
        """The structured-output mode LiteLLM says the model supports."""
        litellm = self._litellm
        try:
            if litellm.supports_response_schema(model=self.config.model):
                return "json_schema"
            params = litellm.get_supported_openai_params(model=self.config.model) or []
        except (ValueError, KeyError, LookupError, TypeError, self._litellm_unmapped()):
            return "json_object"
        return "json_object" if "response_format" in params else "text"

    # -- identity -------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        described = {"kind": "litellm", "provider": self.provider, **self.config.describe()}
        described["litellm_version"] = _version_of(self._litellm)
        if self.config.price is not None:
            described["price"] = self.config.price.model_dump()
        elif self._price_per_token is not None:
            prompt, completion = self._price_per_token
            described["price"] = {
                "source": "litellm",
                "input_per_million": prompt * 1e6,
                "output_per_million": completion * 1e6,
                "currency": "USD",
            }
        else:
            described["price"] = (
                "unknown: LiteLLM has no price for this model, cost not counted "
                "(set price= in the judge config)"
            )
        return described

    def _mode(self) -> str:
        mode = self.config.structured_output
        if mode != "auto":
            return mode
        if self._capable_mode == "json_schema" and self.capabilities.no_json_schema:
            return "json_object"
        return self._capable_mode

    async def aclose(self) -> None:
        await self.release_loop_resources()

    async def release_loop_resources(self) -> None:
        """Let LiteLLM's logging tasks of this event loop finish while it still runs (else
        LiteLLM carries them to the next loop with a warning)."""
        worker_module = sys.modules.get("litellm.litellm_core_utils.logging_worker")
        worker = getattr(worker_module, "GLOBAL_LOGGING_WORKER", None)
        flush = getattr(worker, "flush", None)
        if flush is None:
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(flush(), timeout=5.0)

    def redact(self, text: str) -> str:
        """``text`` without the key, secret parameters or URL credentials."""
        secrets = [self.config.api_key.get_secret_value()] if self.config.api_key else []
        secrets += [
            str(v) for k, v in self.config.litellm_params.items() if _is_secret_name(k) and v
        ]
        for secret in secrets:
            if len(secret) >= 4:
                text = text.replace(secret, "***")
        return redact_secrets(text, *([self.config.base_url] if self.config.base_url else []))

    # -- one request ----------------------------------------------------------------------
    def _api_key(self) -> str | None:
        """The key to send: the configured one. Without one, LiteLLM finds the provider's
        own, except ``OPENAI_API_KEY`` for another API root than the one it belongs to (it
        would send it anywhere ``base_url`` points)."""
        if self.config.api_key is not None:
            return self.config.api_key.get_secret_value()
        if self.config.base_url and self.provider in _OPENAI_KEY_PROVIDERS:
            return openai_key_for(self.config.base_url, os.environ) or _NO_KEY
        return None

    def _request(self, ask: Ask) -> dict[str, Any]:
        config = self.config
        request: dict[str, Any] = {
            **config.litellm_params,
            "model": config.model,
            "messages": ask.messages,
            "temperature": config.temperature,
            "max_tokens": ask.max_tokens,
            "timeout": config.timeout_s,
            "num_retries": 0,  # ragmeter retries, under its limiter and backoff
            "max_retries": 0,  # nor the OpenAI client's own
            "drop_params": True,  # e.g. seed or logprobs where a provider has none
        }
        optional = {
            "seed": config.seed,
            "api_base": config.base_url or None,
            "api_key": self._api_key(),
            "response_format": ask.response_format,
        }
        request.update({name: value for name, value in optional.items() if value is not None})
        if config.logprobs:
            request["logprobs"] = True
            request["top_logprobs"] = 5
        return request

    def _error_for(self, error: Exception, ask: Ask) -> JudgeError:
        """Ragmeter's error for one of LiteLLM's (all of them OpenAI error types): what only
        LiteLLM says (no credentials, a missing package) here, the rest as every endpoint's
        (:func:`~ragmeter._services.status_error`)."""
        status = getattr(error, "status_code", None)
        status = status if isinstance(status, int) else None
        detail = " ".join(self.redact(str(getattr(error, "message", None) or error)).split())
        detail = detail[:300]
        where = f"{self.provider} via LiteLLM (model {self.config.model!r})"
        lowered = detail.lower()
        if status is not None and ask.refuses_schema(status, detail):
            return SchemaRejected(detail)
        if any(word in lowered for word in _NO_CREDENTIALS_WORDS):
            where_from = _CREDENTIALS.get(self.provider, "the provider's key variable")
            return JudgeConfigError(
                f"{where}: no credentials found: LiteLLM reads them from {where_from}; or set "
                f"RAGMETER_JUDGE_API_KEY / api_key_env. LiteLLM said: {detail}"
            )
        if "no module named" in lowered:
            return JudgeConfigError(
                f"{where}: LiteLLM needs a package this provider uses that is not installed "
                f"(Vertex AI: pip install google-auth). LiteLLM said: {detail}"
            )
        unanswered = isinstance(error, self._connection_error)
        shown = f"HTTP {status}" if status is not None else type(error).__name__
        return status_error(
            status,
            where,
            detail,
            fixes=_FIXES,
            retry_after=_retry_after(error),
            transient=True if unanswered else None,
            shown="no answer" if unanswered else shown,
            rejected="the request was rejected",
            said="LiteLLM said",
        )

    async def _call_litellm(self, request: dict[str, Any], usage: Usage, ask: Ask) -> Any:
        """One completion, retried while the failure is transient (the shared policy)."""
        estimated = self._prompt_estimate(request["messages"])
        estimated += int(request.get("max_tokens", 0)) // 4

        async def complete() -> Any:
            try:
                return await self._litellm.acompletion(**request)
            except self._openai_error as error:
                raise self._error_for(error, ask) from None

        async def attempt() -> Any:
            async with self.limiter.slot(estimated):
                response = await send_once(
                    complete,
                    usage,
                    where=f"{self.provider} via LiteLLM",
                    timeout_s=self.config.timeout_s,
                    failures=((asyncio.TimeoutError,), (httpx.TransportError,)),
                    redact=self.redact,
                )
                if not _has_a_message(response):
                    raise JudgeTransientError(
                        f"malformed response from {self.provider} via LiteLLM"
                    )
                self._count_tokens(response, request, usage, estimated)
                return response

        return await with_retries(
            attempt,
            usage,
            max_retries=self.config.max_retries,
            max_retry_wait_s=self.config.max_retry_wait_s,
            where=self.identity,
            breaker=self.limiter.breaker,
        )

    def _count_tokens(
        self, response: Any, request: dict[str, Any], usage: Usage, estimated: int
    ) -> None:
        reported = getattr(response, "usage", None)
        prompt = getattr(reported, "prompt_tokens", None)
        completion = getattr(reported, "completion_tokens", None)
        if prompt is None or completion is None or (not prompt and not completion):
            # none reported (LiteLLM then says 0 and 0): estimated
            usage.estimated_calls += 1
            prompt = self._prompt_estimate(request["messages"])
            completion = estimate_tokens(_content_of(response))
        prompt, completion = int(prompt), int(completion)
        self._settle(usage, estimated, prompt, completion, self._cost(response, prompt, completion))

    def _cost(self, response: Any, prompt: int, completion: int) -> float:
        """The configured price, else LiteLLM's for this response (cached and reasoning
        tokens included), else none."""
        if self.config.price is not None:
            return self.config.price.cost(prompt, completion)
        if self._price_per_token is None:
            return 0.0
        try:
            cost = self._litellm.completion_cost(completion_response=response)
        except (ValueError, KeyError, LookupError, TypeError, self._litellm_unmapped()):
            cost = None
        if isinstance(cost, (int, float)) and math.isfinite(cost):
            return float(cost)
        return prompt * self._price_per_token[0] + completion * self._price_per_token[1]

    # -- structured generation ------------------------------------------------------------
    async def _send(self, ask: Ask, usage: Usage) -> Reply | None:
        request = self._request(ask)
        response = await self._call_litellm(request, usage, ask)
        choice = response.choices[0]
        return self._reply(_content_of(response), choice.finish_reason, _logprobs_of(choice))


def _has_a_message(response: Any) -> bool:
    try:
        return response.choices[0].message is not None
    except (AttributeError, IndexError, TypeError):
        return False


def _content_of(response: Any) -> str:
    """The answer's text, or a forced tool call's arguments when there is no text."""
    message = response.choices[0].message
    content = getattr(message, "content", None) or ""
    if not content:
        calls = getattr(message, "tool_calls", None) or []
        if calls:
            content = getattr(calls[0].function, "arguments", None) or ""
    return str(content)


def _logprobs_of(choice: Any) -> list[dict[str, Any]] | None:
    """OpenAI-style ``logprobs.content`` entries, when the provider returned them."""
    logprobs = getattr(choice, "logprobs", None)
    if logprobs is None:
        return None
    if hasattr(logprobs, "model_dump"):
        logprobs = logprobs.model_dump()
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    return content if isinstance(content, list) and content else None


def _retry_after(error: Exception) -> float | None:
    """The wait a rate-limit answer asked for (``Retry-After``), when it said."""
    headers = getattr(error, "litellm_response_headers", None)
    if headers is None:
        response = getattr(error, "response", None)
        headers = getattr(response, "headers", None) if response is not None else None
    if headers is None:
        return None
    if not isinstance(headers, httpx.Headers):
        try:
            headers = httpx.Headers(headers)
        except (TypeError, ValueError):
            return None
    return retry_after_seconds(headers)


def _version_of(module: Any) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(module.__name__)
    except PackageNotFoundError:
        return None


register_provider(LITELLM_PROVIDER, LiteLLMConfig, LiteLLMJudge)
