"""The judge layer: every LLM call in ragmeter goes through here."""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter._services import (
        Cache,
        JudgeConfigError,
        JudgeError,
        JudgeTransientError,
        Limiter,
        LimitSettings,
        MemoryCache,
        Message,
        NullCache,
        SQLiteCache,
        Usage,
        UsageLedger,
        cache_key,
        estimate_tokens,
        limiter_for,
    )
    from ragmeter.judge._anthropic import (
        ANTHROPIC_PRICES,
        AnthropicConfig,
        AnthropicJudge,
        anthropic_key_for,
    )
    from ragmeter.judge._base import Judge
    from ragmeter.judge._config import PROVIDERS, JudgeConfig, Price
    from ragmeter.judge._default import default_judge, judge_config, make_cache
    from ragmeter.judge._errors import JudgeOutputError, JudgeTruncatedError
    from ragmeter.judge._litellm import LiteLLMConfig, LiteLLMJudge
    from ragmeter.judge._local import LocalJudge
    from ragmeter.judge._openai import OpenAIJudge
    from ragmeter.judge._parse import extract_json, parse_output, verdict_probabilities
    from ragmeter.judge._prices import DEFAULT_PRICES, PriceTable
    from ragmeter.judge._types import BinaryVerdict, Judgment, OutputT, TextLikelihood

__all__ = [
    "ANTHROPIC_PRICES",
    "DEFAULT_PRICES",
    "PROVIDERS",
    "AnthropicConfig",
    "AnthropicJudge",
    "BinaryVerdict",
    "Cache",
    "Judge",
    "JudgeConfig",
    "JudgeConfigError",
    "JudgeError",
    "JudgeOutputError",
    "JudgeTransientError",
    "JudgeTruncatedError",
    "Judgment",
    "LimitSettings",
    "Limiter",
    "LiteLLMConfig",
    "LiteLLMJudge",
    "LocalJudge",
    "MemoryCache",
    "Message",
    "NullCache",
    "OpenAIJudge",
    "OutputT",
    "Price",
    "PriceTable",
    "SQLiteCache",
    "TextLikelihood",
    "Usage",
    "UsageLedger",
    "anthropic_key_for",
    "cache_key",
    "default_judge",
    "estimate_tokens",
    "extract_json",
    "judge_config",
    "limiter_for",
    "make_cache",
    "parse_output",
    "verdict_probabilities",
]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter._services": (
            "Cache",
            "JudgeConfigError",
            "JudgeError",
            "JudgeTransientError",
            "Limiter",
            "LimitSettings",
            "MemoryCache",
            "Message",
            "NullCache",
            "SQLiteCache",
            "Usage",
            "UsageLedger",
            "cache_key",
            "estimate_tokens",
            "limiter_for",
        ),
        "ragmeter.judge._anthropic": (
            "ANTHROPIC_PRICES",
            "AnthropicConfig",
            "AnthropicJudge",
            "anthropic_key_for",
        ),
        "ragmeter.judge._base": ("Judge",),
        "ragmeter.judge._config": ("PROVIDERS", "JudgeConfig", "Price"),
        "ragmeter.judge._default": ("default_judge", "judge_config", "make_cache"),
        "ragmeter.judge._errors": ("JudgeOutputError", "JudgeTruncatedError"),
        "ragmeter.judge._litellm": ("LiteLLMConfig", "LiteLLMJudge"),
        "ragmeter.judge._local": ("LocalJudge",),
        "ragmeter.judge._openai": ("OpenAIJudge",),
        "ragmeter.judge._parse": ("extract_json", "parse_output", "verdict_probabilities"),
        "ragmeter.judge._prices": ("DEFAULT_PRICES", "PriceTable"),
        "ragmeter.judge._types": ("BinaryVerdict", "Judgment", "OutputT", "TextLikelihood"),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
