"""Choosing the judge: a configured endpoint if there is one, else the embedded offline judge."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from ragmeter._services import Cache, NullCache, SQLiteCache, UsageLedger, settings_error

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
        try:
            config = chosen.config.from_file(path, model=model, base_url=base_url)
        except ValidationError as error:  # said with the file, its keys and the fixes
            where = f"{path} (judge settings, --judge-config)"
            raise settings_error(
                error, chosen.config, where=where, extra_keys=("api_key_env",)
            ) from None
        return config
    environ = os.environ if env is None else env
    _check_variables(environ)
    chosen = provider_named(provider or environ.get("RAGMETER_JUDGE_PROVIDER"))
    # the OpenAI-compatible config takes the provider (a preset); the others ignore it
    try:
        config = chosen.config.from_env(environ, model=model, base_url=base_url, provider=provider)
    except ValidationError as error:  # said with the variables that set them
        raise settings_error(
            error, chosen.config, where="the judge settings of the environment", name=_env_name
        ) from None
    return config


#: The ``RAGMETER_JUDGE_*`` variables a judge is configured by (docs/judges.md).
ENV_VARIABLES = tuple(
    f"RAGMETER_JUDGE_{name}"
    for name in (
        "MODEL",
        "BASE_URL",
        "API_KEY",
        "PROVIDER",
        "REASONING_EFFORT",
        "AZURE_ENDPOINT",
        "AZURE_DEPLOYMENT",
        "API_VERSION",
        "AZURE_AD_TOKEN_ENV",
        "PROXY",
        "CA_BUNDLE",
        "TRUST_ENV",
        "EXTRA_HEADERS",
        "EXTRA_QUERY",
    )
)


def _check_variables(env: Mapping[str, str]) -> None:
    """A ``RAGMETER_JUDGE_*`` variable ragmeter does not read is a mistake (a typo, or a
    setting only a settings file holds): refused, naming the closest variable or the file."""
    for variable in sorted(env):
        if not variable.startswith("RAGMETER_JUDGE_") or variable in ENV_VARIABLES:
            continue
        setting = variable.removeprefix("RAGMETER_JUDGE_").lower()
        close = difflib.get_close_matches(variable, ENV_VARIABLES, n=1, cutoff=0.8)
        if close:
            fix = f"did you mean {close[0]}?"
        elif setting in JudgeConfig.model_fields:
            fix = (
                f"{setting} is set in a judge settings file: a TOML file with [judge] "
                f"{setting} = ..., given with --judge-config"
            )
        else:
            fix = f"the judge variables are {', '.join(ENV_VARIABLES)}"
        raise ValueError(f"{variable} is not a variable ragmeter reads (unset it): {fix}")


#: The ``--judge-*`` options that set a judge setting along with its variable.
_OPTIONS = {
    "model": "--judge-model",
    "base_url": "--judge-base-url",
    "provider": "--judge-provider",
}


def _env_name(key: str) -> str:
    """The variable (and option) a judge setting comes from in the environment."""
    variable = f"RAGMETER_JUDGE_{key.split('.')[0].upper()}"
    return variable + (f" (or {_OPTIONS[key]})" if key in _OPTIONS else "")


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
