"""Judge configuration from arguments, the environment or a config file. Secrets stay secret."""

from __future__ import annotations

import logging
import os
import re
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from ragmeter._services import (
    DEFAULT_MAX_RETRY_WAIT_S,
    OPENAI_BASE_URL,
    azure_key_for,
    azure_request_model,
    check_base_url,
    check_ca_bundle,
    check_extra_headers,
    check_proxy,
    network_description,
    network_from_env,
    openai_key_for,
    read_table,
    redact_url,
    resolve_azure,
)

StructuredOutput = Literal["auto", "json_schema", "json_object", "text"]

logger = logging.getLogger("ragmeter.judge")


#: Known OpenAI-compatible providers: API root and the structured-output mode that works there
#: (so no probe request is spent finding out). Local servers use their default ports. Every
#: one takes the key as ``Authorization: Bearer``. Azure OpenAI has no fixed root: give
#: ``azure_endpoint`` (and ``azure_deployment``) instead.
PROVIDERS: dict[str, tuple[str, StructuredOutput]] = {
    "openai": (OPENAI_BASE_URL, "json_schema"),
    # Google's OpenAI-compatible endpoint takes response_format json_schema
    "gemini": ("https://generativelanguage.googleapis.com/v1beta/openai", "json_schema"),
    # json_schema only for the models that support it; json_object (schema in the prompt)
    # works whichever model the request is routed to
    "openrouter": ("https://openrouter.ai/api/v1", "json_object"),
    "deepseek": ("https://api.deepseek.com/v1", "json_object"),
    "qwen": ("https://dashscope.aliyuncs.com/compatible-mode/v1", "json_object"),
    "moonshot": ("https://api.moonshot.cn/v1", "json_object"),
    "zhipu": ("https://open.bigmodel.cn/api/paas/v4", "json_object"),
    "siliconflow": ("https://api.siliconflow.cn/v1", "json_object"),
    # Volcengine Ark (火山方舟); the model is a model ID or an endpoint ID (ep-...)
    "volcengine": ("https://ark.cn-beijing.volces.com/api/v3", "json_object"),
    # Baidu Qianfan (千帆) ModelBuilder, the OpenAI-compatible v2 API
    "qianfan": ("https://qianfan.baidubce.com/v2", "json_object"),
    "ollama": ("http://127.0.0.1:11434/v1", "json_schema"),
    "vllm": ("http://127.0.0.1:8000/v1", "json_schema"),
    "llama.cpp": ("http://127.0.0.1:8080/v1", "json_object"),
}

#: OpenAI's reasoning models by name (an ``openai/`` or other routing prefix allowed): they
#: take ``max_completion_tokens`` (not ``max_tokens``), only the default temperature, and no
#: logprobs. Other models that turn out to refuse a parameter are found out at their first
#: refusal (see ``OpenAIJudge``).
REASONING_MODEL = re.compile(r"^(?:[\w.-]+/)?(?:o[134](?:$|[-.])|gpt-5(?:$|[-.]))", re.IGNORECASE)
#: A reasoning model's default token budget: its hidden reasoning counts against it.
REASONING_MAX_TOKENS = 4096


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` is one of OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...).

    >>> [is_reasoning_model(m) for m in ("o3-mini", "gpt-5.1", "openai/o4-mini", "gpt-4o")]
    [True, True, True, False]
    """
    return REASONING_MODEL.match(model.strip()) is not None


class Price(BaseModel):
    """Price per million tokens."""

    model_config = ConfigDict(frozen=True)

    input_per_million: float = Field(ge=0)
    output_per_million: float = Field(ge=0)
    currency: str = "USD"

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million
        ) / 1_000_000


class JudgeConfig(BaseModel):
    """How to reach an OpenAI-compatible judge and how to call it.

    >>> config = JudgeConfig(model="deepseek-chat", base_url="https://api.deepseek.com/v1",
    ...                      api_key="sk-secret")
    >>> "sk-secret" in repr(config) or "sk-secret" in str(config.describe())
    False

    Credentials in the base URL (``https://user:pw@host/v1?key=...``) are used for the
    requests but shown nowhere: ``describe()``, ``identity`` and ``repr`` redact them.
    """

    # hide_input_in_errors: a rejected value (a URL, a key) may hold a secret
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    model: str
    base_url: str = OPENAI_BASE_URL
    api_key: SecretStr | None = None
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    seed: int | None = 42
    max_tokens: int = Field(default=1024, gt=0)
    #: Seconds for one request, all of it: connecting, sending and the whole answer.
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=5, ge=0)
    #: The longest wait a ``Retry-After`` answer is obeyed for before the next attempt.
    max_retry_wait_s: float = Field(default=DEFAULT_MAX_RETRY_WAIT_S, ge=0)
    max_concurrency: int = Field(default=16, gt=0)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    structured_output: StructuredOutput = "auto"
    logprobs: bool = False
    extra_body: dict[str, Any] = Field(default_factory=dict)
    price: Price | None = None
    #: The preset the base URL and structured-output mode came from (see ``PROVIDERS``).
    provider: str | None = None
    #: ``reasoning_effort`` for reasoning models (``"low"``, ``"medium"``, ``"high"``...);
    #: sent only when set.
    reasoning_effort: str | None = Field(default=None, min_length=1)
    #: Azure OpenAI: the resource (``https://NAME.openai.azure.com``) and deployment. Without
    #: ``api_version`` the v1 API (``{endpoint}/openai/v1``, the deployment as the model);
    #: with a dated one (``2024-10-21``), ``{endpoint}/openai/deployments/{deployment}``.
    #: The key goes in an ``api-key`` header.
    azure_endpoint: str | None = None
    azure_deployment: str | None = None
    api_version: str | None = None
    #: The variable holding a Microsoft Entra ID token, sent as ``Authorization: Bearer``.
    azure_ad_token_env: str | None = None
    #: An HTTP(S) proxy for this endpoint only (``http://user:pw@proxy:3128``).
    proxy: str | None = None
    #: A PEM file of CA certificates to verify the endpoint with (a corporate CA).
    ca_bundle: str | None = None
    #: Whether HTTPS_PROXY / ALL_PROXY / NO_PROXY and SSL_CERT_FILE apply: off by default, so
    #: a proxy set for other tools does not carry judge traffic unless asked.
    trust_env: bool = False
    #: Sent with every request; the values are secrets (never shown, only the names).
    extra_headers: dict[str, SecretStr] = Field(default_factory=dict)
    extra_query: dict[str, SecretStr] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _presets(cls, data: Any) -> Any:
        """A ``provider`` fills in the base URL and structured-output mode; an
        ``azure_endpoint`` the base URL (and the model, from the deployment)."""
        if isinstance(data, dict):
            data = resolve_azure(_apply_provider(data))
        return data

    @field_validator("base_url")
    @classmethod
    def _base_url_is_a_url(cls, value: str) -> str:
        return check_base_url(value)

    @field_validator("proxy")
    @classmethod
    def _proxy_is_a_url(cls, value: str | None) -> str | None:
        return check_proxy(value)

    @field_validator("ca_bundle")
    @classmethod
    def _ca_bundle_is_a_file(cls, value: str | None) -> str | None:
        return check_ca_bundle(value)

    @field_validator("extra_headers")
    @classmethod
    def _headers_can_be_sent(cls, value: dict[str, SecretStr]) -> dict[str, SecretStr]:
        return check_extra_headers(value)

    @property
    def identity(self) -> str:
        """The endpoint (without credentials) and model: what cache entries and rate limits
        belong to; on Azure the deployment too, when its name is not the model's."""
        identity = f"{redact_url(self.base_url).rstrip('/')}|{self.model}"
        if self.azure_deployment and self.azure_deployment != self.model:
            identity += f"|{self.azure_deployment}"
        return identity

    @property
    def request_model(self) -> str:
        """The ``model`` a request names: on Azure's v1 API the deployment, else ``model``."""
        return azure_request_model(
            self.model, self.azure_endpoint, self.azure_deployment, self.api_version
        )

    @property
    def reasoning_model(self) -> bool:
        """Whether the model is a reasoning model by its name (``is_reasoning_model``)."""
        return is_reasoning_model(self.model)

    @property
    def token_budget(self) -> int:
        """The first request's token limit: ``max_tokens`` when set, else 1024, or
        ``REASONING_MAX_TOKENS`` for a reasoning model (whose reasoning counts against it)."""
        return self.budget_for()

    def budget_for(self, refused: Mapping[str, str | None] | None = None) -> int:
        """:attr:`token_budget`, for a model that ``refused`` ``max_tokens`` for
        ``max_completion_tokens`` too (a reasoning model known by its answer, not its name)."""
        reasoning = self.reasoning_model or (refused or {}).get("max_tokens") == (
            "max_completion_tokens"
        )
        if "max_tokens" in self.model_fields_set or not reasoning:
            return self.max_tokens
        return max(self.max_tokens, REASONING_MAX_TOKENS)

    def request_params(
        self, refused: Mapping[str, str | None] | None = None, *, budget: int | None = None
    ) -> dict[str, Any]:
        """The sampling parameters a request carries: temperature, seed, the token limit
        (``budget``, else ``token_budget``), logprobs and reasoning effort, shaped for a
        reasoning model (by name) and by what the endpoint ``refused`` (parameter -> the
        name it is sent as instead, ``None``: not sent)."""
        refused = dict(refused or {})
        if self.reasoning_model:
            refused.setdefault("max_tokens", "max_completion_tokens")
            for name in ("temperature", "logprobs", "top_logprobs"):
                refused.setdefault(name, None)
        wanted: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.budget_for(refused) if budget is None else budget,
        }
        if self.seed is not None:
            wanted["seed"] = self.seed
        if self.logprobs:
            wanted["logprobs"] = True
            wanted["top_logprobs"] = 5
        if self.reasoning_effort is not None:
            wanted["reasoning_effort"] = self.reasoning_effort
        if refused.get("logprobs", "") is None or refused.get("top_logprobs", "") is None:
            wanted.pop("logprobs", None)  # one without the other is refused as well
            wanted.pop("top_logprobs", None)
        params: dict[str, Any] = {}
        for name, value in wanted.items():
            sent_as = refused.get(name, name)
            if sent_as is not None and sent_as not in refused:
                params[sent_as] = value
        return params

    def generation_params(self, refused: Mapping[str, str | None] | None = None) -> dict[str, Any]:
        """Every setting that can change an answer (part of every cache key), as sent: a
        parameter the endpoint does not take (``refused``) is recorded as not sent, a
        reasoning model's budget as ``max_completion_tokens``. For a model that refuses
        nothing, the same keys as ever (cache entries stay valid)."""
        sent = self.request_params(refused)
        params: dict[str, Any] = {
            "temperature": sent.get("temperature"),
            "seed": sent.get("seed"),
        }
        for name in ("max_tokens", "max_completion_tokens"):
            if name in sent:
                params[name] = sent[name]
        params["logprobs"] = bool(sent.get("logprobs"))
        params["extra_body"] = self.extra_body
        if "reasoning_effort" in sent:
            params["reasoning_effort"] = sent["reasoning_effort"]
        return params

    def describe(self) -> dict[str, Any]:
        """For run records and reports: everything but the key, the base URL and proxy
        without credentials, and only the names of the extra headers and query parameters."""
        data = self.model_dump(exclude={"api_key"}, mode="json")
        data["base_url"] = redact_url(self.base_url)
        data["api_key_set"] = self.api_key is not None
        data.update(
            network_description(
                proxy=self.proxy,
                ca_bundle=self.ca_bundle,
                trust_env=self.trust_env,
                extra_headers=self.extra_headers,
                extra_query=self.extra_query,
            )
        )
        if self.azure_endpoint is not None:
            data["azure_endpoint"] = redact_url(self.azure_endpoint)
        return data

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            if name in ("base_url", "proxy", "azure_endpoint") and isinstance(value, str):
                yield name, redact_url(value)
            elif name in ("extra_headers", "extra_query") and isinstance(value, dict):
                yield name, sorted(value)
            else:
                yield name, value

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> JudgeConfig | None:
        """From ``RAGMETER_JUDGE_*`` (falling back to ``OPENAI_*``); ``None`` when nothing
        names a judge endpoint, so the caller can choose the embedded judge.

        An endpoint without a model is an error that names ``RAGMETER_JUDGE_MODEL``: a base
        URL (``RAGMETER_JUDGE_BASE_URL`` or ``OPENAI_BASE_URL``), a provider, an Azure
        endpoint or ``RAGMETER_JUDGE_API_KEY``. ``OPENAI_API_KEY`` alone is not (other tools
        use it): then the embedded judge, with a one-line notice naming the variable.

        The key: ``RAGMETER_JUDGE_API_KEY``, sent to the endpoint these settings choose;
        without it ``OPENAI_API_KEY``, but only when the endpoint is the one that key belongs
        to (``OPENAI_BASE_URL``, or OpenAI's API when that is unset), never to a provider
        preset or base URL elsewhere; on Azure ``AZURE_OPENAI_API_KEY``, only for the
        resource ``AZURE_OPENAI_ENDPOINT`` names."""
        env = os.environ if env is None else env

        def own(name: str) -> str | None:
            return env.get(f"RAGMETER_JUDGE_{name}") or None

        def pick(name: str) -> str | None:
            return own(name) or env.get(f"OPENAI_{name}") or None

        provider = overrides.get("provider") or own("PROVIDER")
        azure = overrides.get("azure_endpoint") or own("AZURE_ENDPOINT")
        values: dict[str, Any] = {
            "model": pick("MODEL"),
            # a provider preset or Azure endpoint beats a generic OPENAI_BASE_URL, not
            # RAGMETER_JUDGE_BASE_URL
            "base_url": own("BASE_URL")
            or (None if provider or azure else env.get("OPENAI_BASE_URL")),
            "api_key": own("API_KEY"),
            "provider": provider,
            "reasoning_effort": own("REASONING_EFFORT"),
            "azure_endpoint": azure,
            "azure_deployment": own("AZURE_DEPLOYMENT"),
            "api_version": own("API_VERSION"),
            "azure_ad_token_env": own("AZURE_AD_TOKEN_ENV"),
            **network_from_env(env, "RAGMETER_JUDGE"),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        values = {k: v for k, v in values.items() if v is not None}
        values = _apply_provider(values)
        if values.get("azure_endpoint") and not values.get("model"):
            values["model"] = values.get("azure_deployment")
            values = {k: v for k, v in values.items() if v is not None}
        if "model" not in values:
            configured = [
                f"RAGMETER_JUDGE_{name}"
                for name in ("BASE_URL", "API_KEY", "PROVIDER", "AZURE_ENDPOINT")
                if own(name)
            ]
            if env.get("OPENAI_BASE_URL"):
                configured.append("OPENAI_BASE_URL")
            if overrides.get("base_url") or overrides.get("provider"):
                configured.append("--judge-base-url/--judge-provider")
            if configured:
                raise ValueError(
                    f"a judge endpoint is configured ({', '.join(configured)}) but no model: "
                    "set RAGMETER_JUDGE_MODEL (or --judge-model), e.g. gpt-4o-mini, "
                    "deepseek-chat, qwen-plus; or unset those variables to use the embedded "
                    "offline judge"
                )
            if env.get("OPENAI_API_KEY"):
                _notice_embedded_judge()
            return None
        if "api_key" not in values:
            if values.get("azure_endpoint"):
                key = azure_key_for(values["azure_endpoint"], env)
            else:
                key = openai_key_for(values.get("base_url", OPENAI_BASE_URL), env)
            if key:
                values["api_key"] = key
        return cls(**values)

    @classmethod
    def from_file(cls, path: str | Path, section: str = "judge", **overrides: Any) -> JudgeConfig:
        """From a TOML or JSON file's ``[judge]`` section (or the whole file); ``overrides``
        that are not ``None`` win.

        The key comes only from the variable the file's ``api_key_env = "NAME"`` names (an
        error when it is unset). Without ``api_key_env`` no key is sent: a file chooses the
        endpoint, and ``RAGMETER_JUDGE_API_KEY`` / ``OPENAI_API_KEY`` belong to the endpoints
        the environment names, so a file (someone else's, say) cannot have them sent to its
        server. A literal ``api_key`` in the file is used, with a warning: keys in files end
        up in version control and backups."""
        path = Path(path)
        data = read_table(path, section)
        if data.get("api_key"):
            warnings.warn(
                f"{path} holds a literal api_key: keys in files end up in version control and "
                "backups; put the key in an environment variable and name it with api_key_env",
                UserWarning,
                stacklevel=2,
            )
        data.update({k: v for k, v in overrides.items() if v is not None})
        key_env = data.pop("api_key_env", None)
        if key_env:
            if not os.environ.get(key_env):
                raise ValueError(f"{path}: api_key_env names {key_env!r}, which is not set")
            data["api_key"] = os.environ[key_env]
        return cls(**_apply_provider(data))

    @classmethod
    def for_provider(cls, provider: str, model: str, **settings: Any) -> JudgeConfig:
        """A config for a known provider (see ``PROVIDERS``), e.g.
        ``JudgeConfig.for_provider("deepseek", "deepseek-chat", api_key=...)``."""
        return cls(**_apply_provider({"provider": provider, "model": model, **settings}))


_NOTICED: set[str] = set()


def _notice_embedded_judge() -> None:
    """Say once per process why an ``OPENAI_API_KEY`` in the environment did not make the
    judge OpenAI's: ragmeter never guesses a model to spend the key on."""
    if "openai-key" in _NOTICED:
        return
    _NOTICED.add("openai-key")
    logger.warning(
        "OPENAI_API_KEY is set but no judge model is: using the embedded offline judge. "
        "Set RAGMETER_JUDGE_MODEL (e.g. gpt-4o-mini) to judge with OpenAI."
    )


def _apply_provider(values: dict[str, Any]) -> dict[str, Any]:
    """``provider`` fills in the base URL and structured-output mode unless they are given
    (``"azure"``: the Azure fields say where; it only checks that they do)."""
    values = dict(values)
    provider = values.get("provider")
    if provider is None:
        return values
    if provider == "azure":
        if not values.get("azure_endpoint"):
            raise ValueError(
                "provider 'azure' needs azure_endpoint (https://NAME.openai.azure.com) and "
                "azure_deployment (RAGMETER_JUDGE_AZURE_ENDPOINT, RAGMETER_JUDGE_AZURE_DEPLOYMENT)"
            )
        return values
    if provider not in PROVIDERS:
        known = ", ".join([*PROVIDERS, "azure"])
        raise ValueError(f"unknown provider {provider!r}; known: {known}")
    if values.get("azure_endpoint"):
        raise ValueError(f"provider {provider!r} and azure_endpoint name two different endpoints")
    base_url, mode = PROVIDERS[provider]
    values.setdefault("base_url", base_url)
    values.setdefault("structured_output", mode)
    return values
