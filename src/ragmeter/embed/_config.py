"""Embeddings endpoint configuration from arguments or the environment. Secrets stay secret."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

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
    redact_url,
    resolve_azure,
)

ENV_PREFIX = "RAGMETER_EMBEDDINGS"

#: Known OpenAI-compatible ``/embeddings`` endpoints: API root and the settings that work
#: there (a batch size within the provider's limit). Azure OpenAI: give ``azure_endpoint``
#: and ``azure_deployment`` instead. Models, e.g.: ``text-embedding-3-small`` (openai),
#: ``gemini-embedding-001`` (gemini), ``text-embedding-v3`` (qwen, at most 10 texts a
#: request), ``BAAI/bge-m3`` (siliconflow).
EMBEDDING_PROVIDERS: dict[str, tuple[str, dict[str, Any]]] = {
    "openai": (OPENAI_BASE_URL, {}),
    "gemini": ("https://generativelanguage.googleapis.com/v1beta/openai", {}),
    "qwen": ("https://dashscope.aliyuncs.com/compatible-mode/v1", {"batch_size": 10}),
    "siliconflow": ("https://api.siliconflow.cn/v1", {"batch_size": 32}),
    "ollama": ("http://127.0.0.1:11434/v1", {}),
    "vllm": ("http://127.0.0.1:8000/v1", {}),
}


class EmbeddingsConfig(BaseModel):
    """How to reach an OpenAI-compatible ``/embeddings`` endpoint and how to call it.

    ``query_prefix`` / ``passage_prefix`` are put before each text of that kind (e.g.
    ``"query: "`` / ``"passage: "`` for e5 models served by vLLM or TEI).

    >>> config = EmbeddingsConfig(model="text-embedding-3-small", api_key="sk-secret")
    >>> "sk-secret" in repr(config) or "sk-secret" in str(config.describe())
    False
    >>> config.identity
    'https://api.openai.com/v1|text-embedding-3-small'
    """

    # hide_input_in_errors: a rejected value (a URL, a key) may hold a secret
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    model: str = Field(min_length=1)
    base_url: str = OPENAI_BASE_URL
    api_key: SecretStr | None = None
    #: Seconds for one request, all of it: connecting, sending and the whole answer.
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=5, ge=0)
    #: The longest wait a ``Retry-After`` answer is obeyed for before the next attempt.
    max_retry_wait_s: float = Field(default=DEFAULT_MAX_RETRY_WAIT_S, ge=0)
    max_concurrency: int = Field(default=4, gt=0)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    batch_size: int = Field(default=64, gt=0)
    query_prefix: str = ""
    passage_prefix: str = ""
    #: Output size for models that can shorten their vectors (``text-embedding-3-*``).
    dimensions: int | None = Field(default=None, gt=0)
    #: The preset the base URL and batch size came from (see ``EMBEDDING_PROVIDERS``).
    provider: str | None = None
    #: Azure OpenAI (see ``JudgeConfig``): the resource, the deployment, the API version
    #: (none: the v1 API) and the variable of a Microsoft Entra ID token.
    azure_endpoint: str | None = None
    azure_deployment: str | None = None
    api_version: str | None = None
    azure_ad_token_env: str | None = None
    #: Network (see ``JudgeConfig``): a proxy, a CA bundle, whether the proxy and CA
    #: variables of the environment apply, extra headers and query parameters (secrets).
    proxy: str | None = None
    ca_bundle: str | None = None
    trust_env: bool = False
    extra_headers: dict[str, SecretStr] = Field(default_factory=dict)
    extra_query: dict[str, SecretStr] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _presets(cls, data: Any) -> Any:
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

    def describe(self) -> dict[str, Any]:
        """For run records and reports: everything but the key, and the base URL without
        credentials."""
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
    def for_provider(cls, provider: str, model: str, **settings: Any) -> EmbeddingsConfig:
        """A config for a known provider (see ``EMBEDDING_PROVIDERS``), e.g.
        ``EmbeddingsConfig.for_provider("qwen", "text-embedding-v3", api_key=...)``."""
        return cls(provider=provider, model=model, **settings)

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, **overrides: Any
    ) -> EmbeddingsConfig | None:
        """From ``RAGMETER_EMBEDDINGS_MODEL``, ``_BASE_URL`` and ``_API_KEY`` (the URL and
        key falling back to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``; the model has no
        fallback), plus the optional ``_BATCH_SIZE``, ``_QUERY_PREFIX`` and
        ``_PASSAGE_PREFIX``. ``None`` when no model is configured, so the caller can choose
        the embedded model. ``OPENAI_API_KEY`` is sent only to the endpoint it belongs to
        (``OPENAI_BASE_URL``, or OpenAI's API when that is unset), never to another one.

        >>> EmbeddingsConfig.from_env({"OPENAI_API_KEY": "sk-x"}) is None
        True
        >>> EmbeddingsConfig.from_env({"RAGMETER_EMBEDDINGS_MODEL": "bge-m3",
        ...                            "OPENAI_BASE_URL": "http://localhost:8000/v1"}).identity
        'http://localhost:8000/v1|bge-m3'
        """
        env = os.environ if env is None else env

        def own(name: str) -> str | None:
            return env.get(f"{ENV_PREFIX}_{name}") or None

        provider = overrides.get("provider") or own("PROVIDER")
        azure = overrides.get("azure_endpoint") or own("AZURE_ENDPOINT")
        values: dict[str, Any] = {
            "model": own("MODEL"),
            # a provider preset or Azure endpoint beats a generic OPENAI_BASE_URL
            "base_url": own("BASE_URL")
            or (None if provider or azure else env.get("OPENAI_BASE_URL"))
            or None,
            "api_key": own("API_KEY"),
            "batch_size": own("BATCH_SIZE"),
            "query_prefix": env.get(f"{ENV_PREFIX}_QUERY_PREFIX"),
            "passage_prefix": env.get(f"{ENV_PREFIX}_PASSAGE_PREFIX"),
            "dimensions": own("DIMENSIONS"),
            "provider": provider,
            "azure_endpoint": azure,
            "azure_deployment": own("AZURE_DEPLOYMENT"),
            "api_version": own("API_VERSION"),
            "azure_ad_token_env": own("AZURE_AD_TOKEN_ENV"),
            **network_from_env(env, ENV_PREFIX),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        values = {k: v for k, v in values.items() if v is not None}
        values = _apply_provider(values)
        if values.get("azure_endpoint") and not values.get("model"):
            values["model"] = values.get("azure_deployment")
            values = {k: v for k, v in values.items() if v is not None}
        if "model" not in values:
            if any(own(name) for name in ("BASE_URL", "API_KEY", "PROVIDER", "AZURE_ENDPOINT")):
                raise ValueError(
                    f"an embeddings endpoint is configured but no model: set {ENV_PREFIX}_MODEL "
                    "(e.g. text-embedding-3-small, text-embedding-v3, bge-m3), or unset "
                    f"{ENV_PREFIX}_BASE_URL/_API_KEY/_PROVIDER/_AZURE_ENDPOINT to use the "
                    "embedded offline model"
                )
            return None
        if "api_key" not in values:
            if values.get("azure_endpoint"):
                key = azure_key_for(values["azure_endpoint"], env)
            else:
                key = openai_key_for(values.get("base_url", OPENAI_BASE_URL), env)
            if key:
                values["api_key"] = key
        return cls(**values)


def _apply_provider(values: dict[str, Any]) -> dict[str, Any]:
    """``provider`` fills in the base URL and the provider's settings unless given."""
    values = dict(values)
    provider = values.get("provider")
    if provider is None:
        return values
    if provider == "azure":
        if not values.get("azure_endpoint"):
            raise ValueError(
                "provider 'azure' needs azure_endpoint (https://NAME.openai.azure.com) and "
                f"azure_deployment ({ENV_PREFIX}_AZURE_ENDPOINT, {ENV_PREFIX}_AZURE_DEPLOYMENT)"
            )
        return values
    if provider not in EMBEDDING_PROVIDERS:
        known = ", ".join([*EMBEDDING_PROVIDERS, "azure"])
        raise ValueError(f"unknown embeddings provider {provider!r}; known: {known}")
    if values.get("azure_endpoint"):
        raise ValueError(f"provider {provider!r} and azure_endpoint name two different endpoints")
    base_url, settings = EMBEDDING_PROVIDERS[provider]
    values.setdefault("base_url", base_url)
    for name, value in settings.items():
        values.setdefault(name, value)
    return values
