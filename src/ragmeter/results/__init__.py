"""Evaluation results: per sample, per metric, and how to save and read them back."""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.results._conversations import (
        ConversationAggregate,
        ConversationMetric,
        ConversationResult,
        conversation_scales,
        worst_conversations,
    )
    from ragmeter.results._result import (
        Aggregate,
        EvaluationResult,
        Group,
        MetricInfo,
        SampleResult,
        aggregate,
    )
    from ragmeter.results._store import (
        STORE_FILE,
        RunDatabase,
        RunStorageError,
        sqlite_code,
        storage_error,
        tags_of,
    )

__all__ = [
    "STORE_FILE",
    "Aggregate",
    "ConversationAggregate",
    "ConversationMetric",
    "ConversationResult",
    "EvaluationResult",
    "Group",
    "MetricInfo",
    "RunDatabase",
    "RunStorageError",
    "SampleResult",
    "aggregate",
    "conversation_scales",
    "sqlite_code",
    "storage_error",
    "tags_of",
    "worst_conversations",
]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter.results._conversations": (
            "ConversationAggregate",
            "ConversationMetric",
            "ConversationResult",
            "conversation_scales",
            "worst_conversations",
        ),
        "ragmeter.results._result": (
            "Aggregate",
            "EvaluationResult",
            "Group",
            "MetricInfo",
            "SampleResult",
            "aggregate",
        ),
        "ragmeter.results._store": (
            "STORE_FILE",
            "RunDatabase",
            "RunStorageError",
            "sqlite_code",
            "storage_error",
            "tags_of",
        ),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
