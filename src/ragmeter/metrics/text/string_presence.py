from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.text._base import StringMatchMetric


@builtin_metric(
    "string_presence",
    family="answer",
    rank=320,
    summary="reference appears in response",
    aliases=("string_present",),
)
class StringPresence(StringMatchMetric):
    """1 when the reference appears inside the response, else 0.

    >>> StringPresence().compare("答案是 1991 年。", "1991 年").score
    1.0
    """

    name = "string_presence"

    def matches(self, response: str, reference: str) -> bool:
        return reference in response
