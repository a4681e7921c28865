"""Evaluation results: per sample, per metric, and how to save and read them back."""

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
    "EvaluationResult",
    "Group",
    "MetricInfo",
    "RunDatabase",
    "RunStorageError",
    "SampleResult",
    "aggregate",
    "sqlite_code",
    "storage_error",
    "tags_of",
]
