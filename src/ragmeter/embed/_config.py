"""Embeddings endpoint configuration from arguments or the environment. Secrets stay secret."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from ragmeter._services import (
    DEFAULT_MAX_RETRY_WAIT_S,
    OPENAI_BASE_URL,
    check_base_url,
    openai_key_for,
    redact_url,
)

ENV_PREFIX = "RAGMETER_EMBEDDINGS"


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

    @field_validator("base_url")
    @classmethod
    def _base_url_is_a_url(cls, value: str) -> str:
        return check_base_url(value)

    @property
    def identity(self) -> str:
        """The endpoint (without credentials) and model: what cached vectors and rate limits
        belong to."""
        return f"{redact_url(self.base_url).rstrip('/')}|{self.model}"

    def describe(self) -> dict[str, Any]:
        """For run records and reports: everything but the key, and the base URL without
        credentials."""
        data = self.model_dump(exclude={"api_key"}, mode="json")
        data["base_url"] = redact_url(self.base_url)
        data["api_key_set"] = self.api_key is not None
        return data

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            yield name, redact_url(value) if name == "base_url" else value

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

        values: dict[str, Any] = {
            "model": own("MODEL"),
            "base_url": own("BASE_URL") or env.get("OPENAI_BASE_URL") or None,
            "api_key": own("API_KEY"),
            "batch_size": own("BATCH_SIZE"),
            "query_prefix": env.get(f"{ENV_PREFIX}_QUERY_PREFIX"),
            "passage_prefix": env.get(f"{ENV_PREFIX}_PASSAGE_PREFIX"),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        values = {k: v for k, v in values.items() if v is not None}
        if "model" not in values:
            if own("BASE_URL") or own("API_KEY"):
                raise ValueError(
                    f"an embeddings endpoint is configured but no model: set {ENV_PREFIX}_MODEL "
                    "(e.g. text-embedding-3-small, text-embedding-v3, bge-m3), or unset "
                    f"{ENV_PREFIX}_BASE_URL/_API_KEY to use the embedded offline model"
                )
            return None
        if "api_key" not in values:
            key = openai_key_for(values.get("base_url", OPENAI_BASE_URL), env)
            if key:
                values["api_key"] = key
        return cls(**values)
