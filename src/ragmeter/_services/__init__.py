"""The services that the judge, the embeddings and the rest of ragmeter share: the cache,
the usage ledger, the HTTP client of OpenAI-compatible endpoints and its limits, the shared
value types and errors, and :func:`run_sync`. Private to ragmeter: other packages import
these names from here, users from :mod:`ragmeter.judge` / :mod:`ragmeter.embed`."""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter._services._cache import Cache, MemoryCache, NullCache, SQLiteCache, cache_key
    from ragmeter._services._config import (
        OPENAI_BASE_URL,
        azure_key_for,
        azure_request_model,
        check_ca_bundle,
        check_extra_headers,
        check_proxy,
        network_description,
        network_from_env,
        openai_key_for,
        preset_named,
        read_table,
        resolve_azure,
    )
    from ragmeter._services._endpoint import EndpointConfig, EndpointLimits, OpenAICompatible
    from ragmeter._services._errors import JudgeConfigError, JudgeError, JudgeTransientError
    from ragmeter._services._gc import fewer_collections
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
        with_retries,
    )
    from ragmeter._services._limits import Limiter, LimitSettings, limiter_for, share_limits
    from ragmeter._services._portable import Portable
    from ragmeter._services._sync import run_sync
    from ragmeter._services._types import Message, Role, Usage
    from ragmeter._services._usage import UsageLedger, estimate_tokens

__all__ = [
    "DEFAULT_MAX_RETRY_WAIT_S",
    "OPENAI_BASE_URL",
    "Cache",
    "EndpointClient",
    "EndpointConfig",
    "EndpointLimits",
    "EndpointSettings",
    "JudgeConfigError",
    "JudgeError",
    "JudgeTransientError",
    "LimitSettings",
    "Limiter",
    "MemoryCache",
    "Message",
    "NullCache",
    "OpenAICompatible",
    "Portable",
    "Role",
    "SQLiteCache",
    "StatusRejected",
    "Usage",
    "UsageLedger",
    "azure_key_for",
    "azure_request_model",
    "cache_key",
    "check_base_url",
    "check_ca_bundle",
    "check_extra_headers",
    "check_proxy",
    "endpoint_client",
    "estimate_tokens",
    "fewer_collections",
    "limiter_for",
    "network_description",
    "network_from_env",
    "openai_key_for",
    "preset_named",
    "read_table",
    "redact_secrets",
    "redact_url",
    "resolve_azure",
    "retry_after_seconds",
    "retry_wait",
    "run_sync",
    "share_limits",
    "with_retries",
]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter._services._cache": (
            "Cache",
            "MemoryCache",
            "NullCache",
            "SQLiteCache",
            "cache_key",
        ),
        "ragmeter._services._config": (
            "OPENAI_BASE_URL",
            "azure_key_for",
            "azure_request_model",
            "check_ca_bundle",
            "check_extra_headers",
            "check_proxy",
            "network_description",
            "network_from_env",
            "openai_key_for",
            "preset_named",
            "read_table",
            "resolve_azure",
        ),
        "ragmeter._services._endpoint": ("EndpointConfig", "EndpointLimits", "OpenAICompatible"),
        "ragmeter._services._errors": ("JudgeConfigError", "JudgeError", "JudgeTransientError"),
        "ragmeter._services._gc": ("fewer_collections",),
        "ragmeter._services._http": (
            "DEFAULT_MAX_RETRY_WAIT_S",
            "EndpointClient",
            "EndpointSettings",
            "StatusRejected",
            "check_base_url",
            "endpoint_client",
            "redact_secrets",
            "redact_url",
            "retry_after_seconds",
            "retry_wait",
            "with_retries",
        ),
        "ragmeter._services._limits": ("Limiter", "LimitSettings", "limiter_for", "share_limits"),
        "ragmeter._services._portable": ("Portable",),
        "ragmeter._services._sync": ("run_sync",),
        "ragmeter._services._types": ("Message", "Role", "Usage"),
        "ragmeter._services._usage": ("UsageLedger", "estimate_tokens"),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
