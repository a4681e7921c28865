"""Judge configuration from arguments, the environment or a config file. Secrets stay secret."""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from ragmeter._services import (
    DEFAULT_MAX_RETRY_WAIT_S,
    OPENAI_BASE_URL,
    check_base_url,
    openai_key_for,
    redact_url,
)

StructuredOutput = Literal["auto", "json_schema", "json_object", "text"]


#: Known OpenAI-compatible providers: API root and the structured-output mode that works there
#: (so no probe request is spent finding out). Local servers use their default ports.
PROVIDERS: dict[str, tuple[str, StructuredOutput]] = {
    "openai": (OPENAI_BASE_URL, "json_schema"),
    "deepseek": ("https://api.deepseek.com/v1", "json_object"),
    "qwen": ("https://dashscope.aliyuncs.com/compatible-mode/v1", "json_object"),
    "moonshot": ("https://api.moonshot.cn/v1", "json_object"),
    "zhipu": ("https://open.bigmodel.cn/api/paas/v4", "json_object"),
    "ollama": ("http://127.0.0.1:11434/v1", "json_schema"),
    "vllm": ("http://127.0.0.1:8000/v1", "json_schema"),
    "llama.cpp": ("http://127.0.0.1:8080/v1", "json_object"),
}


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

    @field_validator("base_url")
    @classmethod
    def _base_url_is_a_url(cls, value: str) -> str:
        return check_base_url(value)

    @property
    def identity(self) -> str:
        """The endpoint (without credentials) and model: what cache entries and rate limits
        belong to."""
        return f"{redact_url(self.base_url).rstrip('/')}|{self.model}"

    def generation_params(self) -> dict[str, Any]:
        """Every setting that can change an answer (part of every cache key)."""
        return {
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "logprobs": self.logprobs,
            "extra_body": self.extra_body,
        }

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
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> JudgeConfig | None:
        """From ``RAGMETER_JUDGE_*`` (falling back to ``OPENAI_*``); ``None`` when no model or
        endpoint is configured, so the caller can choose the embedded judge.

        The key: ``RAGMETER_JUDGE_API_KEY``, sent to the endpoint these settings choose;
        without it ``OPENAI_API_KEY``, but only when the endpoint is the one that key belongs
        to (``OPENAI_BASE_URL``, or OpenAI's API when that is unset), never to a provider
        preset or base URL elsewhere."""
        env = os.environ if env is None else env

        def pick(name: str) -> str | None:
            return env.get(f"RAGMETER_JUDGE_{name}") or env.get(f"OPENAI_{name}") or None

        provider = overrides.get("provider") or env.get("RAGMETER_JUDGE_PROVIDER")
        values: dict[str, Any] = {
            "model": pick("MODEL"),
            # a provider preset beats a generic OPENAI_BASE_URL, not RAGMETER_JUDGE_BASE_URL
            "base_url": env.get("RAGMETER_JUDGE_BASE_URL")
            or (None if provider else env.get("OPENAI_BASE_URL")),
            "api_key": env.get("RAGMETER_JUDGE_API_KEY") or None,
            "provider": provider,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        values = {k: v for k, v in values.items() if v is not None}
        values = _apply_provider(values)
        if "model" not in values:
            # Only ragmeter's own settings ask for an endpoint; OPENAI_* alone may belong to
            # another tool, and then the embedded judge is used.
            if (
                overrides.get("base_url")
                or provider
                or any(env.get(f"RAGMETER_JUDGE_{name}") for name in ("BASE_URL", "API_KEY"))
            ):
                raise ValueError(
                    "a judge endpoint is configured but no model: set RAGMETER_JUDGE_MODEL "
                    "(e.g. gpt-4o-mini, deepseek-chat, qwen-plus)"
                )
            return None
        if "api_key" not in values:
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
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            if sys.version_info >= (3, 11):
                import tomllib
            else:  # pragma: no cover
                import tomli as tomllib
            data = tomllib.loads(text)
        data = dict(data.get(section, data))
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


def _apply_provider(values: dict[str, Any]) -> dict[str, Any]:
    """``provider`` fills in the base URL and structured-output mode unless they are given."""
    values = dict(values)
    provider = values.pop("provider", None)
    if provider is None:
        return values
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; known: {', '.join(PROVIDERS)}")
    base_url, mode = PROVIDERS[provider]
    values.setdefault("base_url", base_url)
    values.setdefault("structured_output", mode)
    return values
