from typing import Any

from ragmeter._text import normalize
from ragmeter.metrics._base import MetricResult
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.text._base import TextMetric


@builtin_metric(
    "string_presence",
    family="answer",
    rank=320,
    summary="reference appears in response",
    aliases=("string_present",),
)
class StringPresence(TextMetric):
    """1 when the reference appears inside the response, else 0.

    >>> StringPresence().compare("答案是 1991 年。", "1991 年").score
    1.0
    """

    name = "string_presence"

    def __init__(self, *, normalize: bool = True) -> None:
        self.normalize = normalize

    def params(self) -> dict[str, Any]:
        return {"normalize": self.normalize}

    def compare(self, response: str, reference: str) -> MetricResult:
        if self.normalize:
            response, reference = normalize(response), normalize(reference)
        return MetricResult.ok(float(reference in response))
