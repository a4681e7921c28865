"""Custom metrics: from a prompt (:class:`PromptMetric`, or a TOML / YAML / JSON file with
:func:`load_metric`), from a function (``@metric``), from steps (subclass
:class:`~ragmeter.metrics.SampleMetric`), and the shipped examples."""

from ragmeter.metrics.custom._function import AsyncFunctionMetric, FunctionMetric, metric
from ragmeter.metrics.custom._prompt import (
    Level,
    PromptMetric,
    PromptSpec,
    load_metric,
    metric_from_dict,
)
from ragmeter.metrics.custom.multihop_completeness import MultiHopCompleteness
from ragmeter.metrics.custom.sql_equivalence import SQLEquivalence, SQLExecution
from ragmeter.metrics.custom.sql_judge import sql_equivalence_judge
from ragmeter.metrics.custom.tone import tone_rubric_zh

__all__ = [
    "AsyncFunctionMetric",
    "FunctionMetric",
    "Level",
    "MultiHopCompleteness",
    "PromptMetric",
    "PromptSpec",
    "SQLEquivalence",
    "SQLExecution",
    "load_metric",
    "metric",
    "metric_from_dict",
    "sql_equivalence_judge",
    "tone_rubric_zh",
]
