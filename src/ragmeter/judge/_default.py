"""Choosing the judge: a configured endpoint if there is one, else the embedded offline judge."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ragmeter._services import Cache, NullCache, SQLiteCache, UsageLedger
from ragmeter.judge._anthropic import AnthropicConfig, AnthropicJudge, file_provider
from ragmeter.judge._base import Judge
from ragmeter.judge._config import JudgeConfig
from ragmeter.judge._litellm import LITELLM_PROVIDER, LiteLLMConfig, LiteLLMJudge
from ragmeter.judge._openai import OpenAIJudge

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
    if path is not None:
        chosen = provider or file_provider(path)
        if chosen == "anthropic":
            return AnthropicConfig.from_file(path, model=model, base_url=base_url)
        if chosen == LITELLM_PROVIDER:
            return LiteLLMConfig.from_file(path, model=model, base_url=base_url)
        return JudgeConfig.from_file(path, model=model, base_url=base_url)
    environ = os.environ if env is None else env
    if (provider or environ.get("RAGMETER_JUDGE_PROVIDER")) == "anthropic":
        return AnthropicConfig.from_env(environ, model=model, base_url=base_url)
    if (provider or environ.get("RAGMETER_JUDGE_PROVIDER")) == LITELLM_PROVIDER:
        return LiteLLMConfig.from_env(environ, model=model, base_url=base_url)
    return JudgeConfig.from_env(environ, model=model, base_url=base_url, provider=provider)


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
    if isinstance(config, AnthropicConfig):
        return AnthropicJudge(config, cache=cache, ledger=ledger)
    if isinstance(config, LiteLLMConfig):
        return LiteLLMJudge(config, cache=cache, ledger=ledger)
    if config is not None:
        return OpenAIJudge(config, cache=cache, ledger=ledger)
    from ragmeter.judge._local import LocalJudge
    from ragmeter.judge._models import DEFAULT_MODEL

    model = os.environ.get("RAGMETER_LOCAL_MODEL") or DEFAULT_MODEL
    return LocalJudge(model, cache=cache, ledger=ledger)
