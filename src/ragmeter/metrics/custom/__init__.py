"""Custom metrics: from a function (``@metric``), from steps (subclass
:class:`~ragmeter.metrics.llm.JudgedMetric`), and the shipped examples."""

from ragmeter.metrics.custom._function import AsyncFunctionMetric, FunctionMetric, metric
from ragmeter.metrics.custom.multihop_completeness import MultiHopCompleteness
from ragmeter.metrics.custom.sql_equivalence import SQLEquivalence

__all__ = [
    "AsyncFunctionMetric",
    "FunctionMetric",
    "MultiHopCompleteness",
    "SQLEquivalence",
    "metric",
]
