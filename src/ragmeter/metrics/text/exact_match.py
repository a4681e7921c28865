from typing import Any

from ragmeter._text import normalize
from ragmeter.metrics._base import MetricResult
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.text._base import TextMetric


@builtin_metric(
    "exact_match", family="answer", rank=310, summary="response equals reference", aliases=("em",)
)
class ExactMatch(TextMetric):
    """1 when the response equals the reference, else 0.

    With ``normalize`` (default) both sides are NFKC-normalised, case folded and their
    whitespace collapsed first; ``normalize=False`` compares the raw strings.

    >>> ExactMatch().compare("  Paris ", "paris").score
    1.0
    >>> ExactMatch(normalize=False).compare("Paris", "paris").score
    0.0
    """

    name = "exact_match"

    def __init__(self, *, normalize: bool = True) -> None:
        self.normalize = normalize

    def params(self) -> dict[str, Any]:
        return {"normalize": self.normalize}

    def compare(self, response: str, reference: str) -> MetricResult:
        if self.normalize:
            response, reference = normalize(response), normalize(reference)
        return MetricResult.ok(float(response == reference))
