"""The services that the judge, the embeddings and the rest of ragmeter share: the cache,
the usage ledger, the HTTP client of OpenAI-compatible endpoints and its limits, the shared
value types and errors, and :func:`run_sync`. Private to ragmeter: other packages import
these names from here, users from :mod:`ragmeter.judge` / :mod:`ragmeter.embed`."""

from ragmeter._services._cache import Cache, MemoryCache, NullCache, SQLiteCache, cache_key
from ragmeter._services._config import OPENAI_BASE_URL, openai_key_for
from ragmeter._services._errors import JudgeConfigError, JudgeError, JudgeTransientError
from ragmeter._services._http import (
    DEFAULT_MAX_RETRY_WAIT_S,
    EndpointClient,
    EndpointSettings,
    StatusRejected,
    check_base_url,
    endpoint_client,
    redact_secrets,
    redact_url,
    retry_after_seconds,
    retry_wait,
)
from ragmeter._services._limits import Limiter, LimitSettings, limiter_for
from ragmeter._services._sync import run_sync
from ragmeter._services._types import Message, Role, Usage
from ragmeter._services._usage import UsageLedger, estimate_tokens

__all__ = [
    "DEFAULT_MAX_RETRY_WAIT_S",
    "OPENAI_BASE_URL",
    "Cache",
    "EndpointClient",
    "EndpointSettings",
    "JudgeConfigError",
    "JudgeError",
    "JudgeTransientError",
    "LimitSettings",
    "Limiter",
    "MemoryCache",
    "Message",
    "NullCache",
    "Role",
    "SQLiteCache",
    "StatusRejected",
    "Usage",
    "UsageLedger",
    "cache_key",
    "check_base_url",
    "endpoint_client",
    "estimate_tokens",
    "limiter_for",
    "openai_key_for",
    "redact_secrets",
    "redact_url",
    "retry_after_seconds",
    "retry_wait",
    "run_sync",
]
