"""The shipped Chinese customer-service tone rubric (``examples/tone_zh.toml``)."""

from __future__ import annotations

from importlib import resources
from typing import Any

from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.custom._prompt import PromptMetric, load_metric


@builtin_metric(
    "tone_zh",
    family="custom",
    rank=430,
    summary="Chinese customer-service tone and attitude, a judged 1-5 rubric",
)
def tone_rubric_zh(**judged: Any) -> PromptMetric:
    """A 1-5 rubric of a customer-service answer's tone and attitude, in Chinese (with an
    English instruction for English samples); ``judged`` are ``judge=``, ``language=``...

    >>> metric = tone_rubric_zh()
    >>> metric.name, metric.kind, [lv.score for lv in metric.spec.levels]
    ('tone_zh', 'rubric', [1, 2, 3, 4, 5])
    """
    source = resources.files("ragmeter.metrics.custom") / "examples" / "tone_zh.toml"
    with resources.as_file(source) as path:
        return load_metric(path, **judged)
