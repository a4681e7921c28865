"""Embeddings endpoint configuration from arguments or the environment. Secrets stay secret."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from ragmeter._services import (
    PROVIDER_URLS,
    EndpointConfig,
    EndpointLimits,
    OpenAICompatible,
    preset_named,
)

ENV_PREFIX = "RAGMETER_EMBEDDINGS"

#: Known OpenAI-compatible ``/embeddings`` endpoints: API root and the settings that work
#: there (a batch size within the provider's limit). Azure OpenAI: give ``azure_endpoint``
#: and ``azure_deployment`` instead. Models, e.g.: ``text-embedding-3-small`` (openai),
#: ``gemini-embedding-001`` (gemini), ``text-embedding-v3`` (qwen, at most 10 texts a
#: request), ``BAAI/bge-m3`` (siliconflow).
EMBEDDING_PROVIDERS: dict[str, tuple[str, dict[str, Any]]] = {
    name: (PROVIDER_URLS[name], settings)
    for name, settings in {
        "openai": {},
        "gemini": {},
        "qwen": {"batch_size": 10},
        "siliconflow": {"batch_size": 32},
        "ollama": {},
        "vllm": {},
    }.items()
}


class _EmbeddingOptions(EndpointConfig):
    """The embeddings' own settings (after the limits, before the Azure and network ones)."""

    batch_size: int = Field(default=64, gt=0)
    query_prefix: str = ""
    passage_prefix: str = ""
    #: Output size for models that can shorten their vectors (``text-embedding-3-*``).
    dimensions: int | None = Field(default=None, gt=0)
    #: The preset the base URL and batch size came from (see ``EMBEDDING_PROVIDERS``).
    provider: str | None = None


class EmbeddingsConfig(OpenAICompatible, _EmbeddingOptions, EndpointLimits):
    """How to reach an OpenAI-compatible ``/embeddings`` endpoint and how to call it.

    ``query_prefix`` / ``passage_prefix`` are put before each text of that kind (e.g.
    ``"query: "`` / ``"passage: "`` for e5 models served by vLLM or TEI).

    >>> config = EmbeddingsConfig(model="text-embedding-3-small", api_key="sk-secret")
    >>> "sk-secret" in repr(config) or "sk-secret" in str(config.describe())
    False
    >>> config.identity
    'https://api.openai.com/v1|text-embedding-3-small'
    """

    model: str = Field(min_length=1)
    max_concurrency: int = Field(default=4, gt=0)

    @classmethod
    def _preset(cls, values: dict[str, Any]) -> dict[str, Any]:
        return _apply_provider(values)

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
        own = cls.env_reader(env, ENV_PREFIX)

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
        }
        values = cls.env_values(values, env, ENV_PREFIX, azure, overrides)
        if "model" not in values:
            if any(own(name) for name in ("BASE_URL", "API_KEY", "PROVIDER", "AZURE_ENDPOINT")):
                raise ValueError(
                    f"an embeddings endpoint is configured but no model: set {ENV_PREFIX}_MODEL "
                    "(e.g. text-embedding-3-small, text-embedding-v3, bge-m3), or unset "
                    f"{ENV_PREFIX}_BASE_URL/_API_KEY/_PROVIDER/_AZURE_ENDPOINT to use the "
                    "embedded offline model"
                )
            return None
        return cls(**cls.with_env_key(values, env))


def _apply_provider(values: dict[str, Any]) -> dict[str, Any]:
    """``provider`` fills in the base URL and the provider's settings unless given."""
    values = dict(values)
    provider = preset_named(values, EMBEDDING_PROVIDERS, ENV_PREFIX, kind="embeddings provider")
    if provider is not None:
        base_url, settings = EMBEDDING_PROVIDERS[provider]
        values.setdefault("base_url", base_url)
        for name, value in settings.items():
            values.setdefault(name, value)
    return values
