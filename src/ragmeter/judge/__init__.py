"""The judge layer: every LLM call in ragmeter goes through here."""

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
