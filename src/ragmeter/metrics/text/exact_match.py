from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.text._base import StringMatchMetric


@builtin_metric(
    "exact_match", family="answer", rank=310, summary="response equals reference", aliases=("em",)
)
class ExactMatch(StringMatchMetric):
    """1 when the response equals the reference, else 0.

    With ``normalize`` (default) both sides are NFKC-normalised, case folded and their
    whitespace collapsed first; ``normalize=False`` compares the raw strings.

    >>> ExactMatch().compare("  Paris ", "paris").score
    1.0
    >>> ExactMatch(normalize=False).compare("Paris", "paris").score
    0.0
    """

    name = "exact_match"

    def matches(self, response: str, reference: str) -> bool:
        return response == reference
