"""Evaluation results: per sample, per metric, and how to save and read them back."""

from ragmeter.results._result import (
    Aggregate,
    EvaluationResult,
    MetricInfo,
    SampleResult,
    aggregate,
)

__all__ = ["Aggregate", "EvaluationResult", "MetricInfo", "SampleResult", "aggregate"]
