"""Choosing the judge: a configured endpoint if there is one, else the embedded offline judge."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ragmeter._services import Cache, NullCache, SQLiteCache, UsageLedger

# the provider modules register themselves (ragmeter.judge._providers) when imported
from ragmeter.judge._anthropic import AnthropicConfig, file_provider
from ragmeter.judge._base import Judge
from ragmeter.judge._config import JudgeConfig
from ragmeter.judge._litellm import LiteLLMConfig
from ragmeter.judge._openai import OpenAIJudge  # noqa: F401  (registers the default provider)
from ragmeter.judge._providers import provider_named, provider_of

DEFAULT_CACHE_PATH = Path(".ragmeter") / "cache.db"


def make_cache(
    path: str | Path | None = None, *, enabled: bool = True, refresh: bool = False
) -> Cache:
    """The judge cache: ``path``, else ``$RAGMETER_CACHE``, else ``.ragmeter/cache.db``.

    ``enabled=False`` is ``--no-cache``; ``refresh=True`` is ``--refresh-cache``.
    """
    if not enabled:
        return NullCache()
    location = Path(path or os.environ.get("RAGMETER_CACHE") or DEFAULT_CACHE_PATH)
    return SQLiteCache(location, refresh=refresh)


def judge_config(
    path: str | Path | None = None,
    *,
    model: str | None = None,
    base_url: str | None = None,
    provider: str | None = None,
    env: Mapping[str, str] | None = None,
) -> JudgeConfig | AnthropicConfig | LiteLLMConfig | None:
    """The judge settings a config file (``path``) or, without one, the environment
    chooses, ``model``/``base_url``/``provider`` (the ``--judge-*`` options) winning:
    an :class:`AnthropicConfig` for ``provider = "anthropic"`` (in the file, the option or
    ``RAGMETER_JUDGE_PROVIDER``), a :class:`LiteLLMConfig` for ``provider = "litellm"``
    (the model a LiteLLM model string, e.g. ``bedrock/...``), else a :class:`JudgeConfig`
    (``None``: no endpoint is configured, the embedded judge is meant)."""
    config: JudgeConfig | AnthropicConfig | LiteLLMConfig | None
    if path is not None:
        chosen = provider_named(provider or file_provider(path))
        config = chosen.config.from_file(path, model=model, base_url=base_url)
        return config
    environ = os.environ if env is None else env
    chosen = provider_named(provider or environ.get("RAGMETER_JUDGE_PROVIDER"))
    # the OpenAI-compatible config takes the provider (a preset); the others ignore it
    config = chosen.config.from_env(environ, model=model, base_url=base_url, provider=provider)
    return config


def default_judge(
    config: JudgeConfig | AnthropicConfig | LiteLLMConfig | None = None,
    *,
    cache: Cache | None = None,
    ledger: UsageLedger | None = None,
) -> Judge:
    """The judge to use: ``config``, else the ``RAGMETER_JUDGE_*`` / ``OPENAI_*`` environment
    (``RAGMETER_JUDGE_PROVIDER=anthropic``: Anthropic's Messages API; ``litellm``: any
    LiteLLM model string, extra ``[litellm]``), else the embedded
    offline judge (extra ``[local]``; ``$RAGMETER_LOCAL_MODEL`` names another bundled model,
    e.g. ``qwen2.5-coder-1.5b-instruct-q4_k_m`` from ``[local-large]``)."""
    config = config or judge_config()
    cache = cache if cache is not None else make_cache()
    if config is not None:
        return provider_of(config).make(config, cache=cache, ledger=ledger)
    from ragmeter.judge._local import LocalJudge
    from ragmeter.judge._models import DEFAULT_MODEL

    model = os.environ.get("RAGMETER_LOCAL_MODEL") or DEFAULT_MODEL
    return LocalJudge(model, cache=cache, ledger=ledger)
