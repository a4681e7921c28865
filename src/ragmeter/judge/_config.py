"""Judge configuration from arguments, the environment or a config file. Secrets stay secret."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)

from ragmeter._services import (
    PROVIDER_URLS,
    EndpointConfig,
    EndpointLimits,
    OpenAICompatible,
    preset_named,
)

StructuredOutput = Literal["auto", "json_schema", "json_object", "text"]

logger = logging.getLogger("ragmeter.judge")


#: The providers whose OpenAI-compatible endpoint takes ``response_format: json_schema``:
#: OpenAI, Google's (Gemini), Ollama and vLLM. The others get ``json_object`` with the schema
#: in the prompt (OpenRouter: json_schema only for the models that support it; json_object
#: works whichever model the request is routed to).
_JSON_SCHEMA_PROVIDERS = frozenset({"openai", "gemini", "ollama", "vllm"})

#: Known OpenAI-compatible providers: API root and the structured-output mode that works there
#: (so no probe request is spent finding out). Azure OpenAI has no fixed root: give
#: ``azure_endpoint`` (and ``azure_deployment``) instead.
PROVIDERS: dict[str, tuple[str, StructuredOutput]] = {
    name: (url, "json_schema" if name in _JSON_SCHEMA_PROVIDERS else "json_object")
    for name, url in PROVIDER_URLS.items()
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


class Sampling(EndpointConfig):
    """The sampling settings of a chat-completions judge (OpenAI-compatible, LiteLLM)."""

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    seed: int | None = 42
    max_tokens: int = Field(default=1024, gt=0)


class _JudgeOptions(EndpointConfig):
    """The OpenAI-compatible judge's own settings (between the limits and the Azure and
    network settings)."""

    structured_output: StructuredOutput = "auto"
    logprobs: bool = False
    extra_body: dict[str, Any] = Field(default_factory=dict)
    price: Price | None = None
    #: The preset the base URL and structured-output mode came from (see ``PROVIDERS``).
    provider: str | None = None
    #: ``reasoning_effort`` for reasoning models (``"low"``, ``"medium"``, ``"high"``...);
    #: sent only when set.
    reasoning_effort: str | None = Field(default=None, min_length=1)


class JudgeConfig(OpenAICompatible, _JudgeOptions, EndpointLimits, Sampling):
    """How to reach an OpenAI-compatible judge and how to call it.

    >>> config = JudgeConfig(model="deepseek-chat", base_url="https://api.deepseek.com/v1",
    ...                      api_key="sk-secret")
    >>> "sk-secret" in repr(config) or "sk-secret" in str(config.describe())
    False

    Credentials in the base URL (``https://user:pw@host/v1?key=...``) are used for the
    requests but shown nowhere: ``describe()``, ``identity`` and ``repr`` redact them.
    The connection, Azure and network settings are :class:`EndpointConfig`'s.
    """

    @classmethod
    def _preset(cls, values: dict[str, Any]) -> dict[str, Any]:
        return _apply_provider(values)

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
        own = cls.env_reader(env, "RAGMETER_JUDGE")

        provider = overrides.get("provider") or own("PROVIDER")
        azure = overrides.get("azure_endpoint") or own("AZURE_ENDPOINT")
        values: dict[str, Any] = {
            "model": own("MODEL") or env.get("OPENAI_MODEL") or None,
            # a provider preset or Azure endpoint beats a generic OPENAI_BASE_URL, not
            # RAGMETER_JUDGE_BASE_URL
            "base_url": own("BASE_URL")
            or (None if provider or azure else env.get("OPENAI_BASE_URL")),
            "api_key": own("API_KEY"),
            "provider": provider,
            "reasoning_effort": own("REASONING_EFFORT"),
        }
        values = cls.env_values(values, env, "RAGMETER_JUDGE", azure, overrides)
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
        return cls(**cls.with_env_key(values, env))

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
        data = cls.file_settings(Path(path), section, overrides)
        return cls(**_apply_provider(data))

    @classmethod
    def for_provider(cls, provider: str, model: str, **settings: Any) -> JudgeConfig:
        """A config for a known provider (see ``PROVIDERS``), e.g.
        ``JudgeConfig.for_provider("deepseek", "deepseek-chat", api_key=...)``."""
        return cls(**_apply_provider({"provider": provider, "model": model, **settings}))


def env_settings(
    env: Mapping[str, str], overrides: Mapping[str, Any], *, judge: str, model_hint: str
) -> dict[str, Any]:
    """The settings of a judge chosen by its ``provider`` (Anthropic, LiteLLM) from
    ``RAGMETER_JUDGE_MODEL``, ``_BASE_URL`` and ``_API_KEY``, ``overrides`` that are not
    ``None`` winning (``provider`` is left out: it chose this judge); settings that are
    ``None`` left out. Without a model, a ``ValueError`` naming the variable, ``judge``
    and, as ``model_hint``, what a model name looks like."""
    values: dict[str, Any] = {
        "model": env.get("RAGMETER_JUDGE_MODEL") or None,
        "base_url": env.get("RAGMETER_JUDGE_BASE_URL") or None,
        "api_key": env.get("RAGMETER_JUDGE_API_KEY") or None,
    }
    values.update({k: v for k, v in overrides.items() if v is not None and k != "provider"})
    values = {k: v for k, v in values.items() if v is not None}
    if "model" not in values:
        raise ValueError(
            f"the {judge} judge needs a model: set RAGMETER_JUDGE_MODEL or --judge-model "
            f"{model_hint}"
        )
    return values


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
    provider = preset_named(values, PROVIDERS, "RAGMETER_JUDGE")
    if provider is not None:
        base_url, mode = PROVIDERS[provider]
        values.setdefault("base_url", base_url)
        values.setdefault("structured_output", mode)
    return values
