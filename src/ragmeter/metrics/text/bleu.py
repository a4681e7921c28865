from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ragmeter._text import contains_cjk
from ragmeter.metrics._base import MetricResult
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.text._base import TextMetric

if TYPE_CHECKING:
    from sacrebleu.metrics.bleu import BLEU as SacreBLEU


@lru_cache(maxsize=8)
def _scorer(tokenize: str) -> "SacreBLEU":
    from sacrebleu.metrics.bleu import BLEU as SacreBLEU  # loaded when first scored

    # effective_order: sentence-level BLEU must not zero out short sentences' missing n-gram orders.
    return SacreBLEU(tokenize=tokenize, effective_order=True)


@builtin_metric(
    "bleu",
    family="answer",
    rank=360,
    summary="sentence BLEU (sacrebleu), 0-1 (RAGAS's bleu_score: corpus BLEU of the pair)",
    aliases=("bleu_score",),
)
class BLEU(TextMetric):
    """Sentence BLEU of the response against its reference (sacrebleu), scaled to [0, 1].

    ``tokenize="auto"`` uses sacrebleu's ``zh`` tokenizer when either text has CJK
    characters and ``13a`` otherwise.

    >>> BLEU().compare("the cat sat on the mat", "the cat sat on the mat").score
    1.0
    """

    name = "bleu"

    def __init__(self, *, tokenize: str = "auto") -> None:
        self.tokenize = tokenize

    def params(self) -> dict[str, Any]:
        return {"tokenize": self.tokenize}

    def compare(self, response: str, reference: str) -> MetricResult:
        tokenize = self.tokenize
        if tokenize == "auto":
            tokenize = "zh" if contains_cjk(response) or contains_cjk(reference) else "13a"
        result = _scorer(tokenize).sentence_score(response, [reference])
        # sacrebleu's float arithmetic can overshoot 100 by an ulp on a perfect match.
        return MetricResult.ok(min(1.0, result.score / 100.0), tokenize=tokenize)
