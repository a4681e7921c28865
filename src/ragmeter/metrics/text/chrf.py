from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ragmeter.metrics._base import MetricResult
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.text._base import TextMetric

if TYPE_CHECKING:
    from sacrebleu.metrics.chrf import CHRF as SacreCHRF


@lru_cache(maxsize=8)
def _scorer(word_order: int) -> "SacreCHRF":
    from sacrebleu.metrics.chrf import CHRF as SacreCHRF  # loaded when first scored

    return SacreCHRF(word_order=word_order)


@builtin_metric(
    "chrf",
    family="answer",
    rank=370,
    summary="character n-gram F-score (sacrebleu), 0-1",
    aliases=("chrf_score",),
)
@builtin_metric(
    "chrf++",
    family="answer",
    rank=380,
    summary="chrF with word bigrams",
    aliases=("chrfpp",),
    params={"word_order": 2},
)
class ChrF(TextMetric):
    """Character n-gram F-score (sacrebleu chrF; chrF++ with ``word_order=2``), in [0, 1].

    Works on characters, so it needs no tokenizer for Chinese.

    >>> ChrF().compare("检索增强生成", "检索增强生成").score
    1.0
    """

    def __init__(self, *, word_order: int = 0) -> None:
        self.word_order = word_order
        self.name = "chrf" if word_order == 0 else "chrf++"

    def params(self) -> dict[str, Any]:
        return {"word_order": self.word_order}

    def compare(self, response: str, reference: str) -> MetricResult:
        score = _scorer(self.word_order).sentence_score(response, [reference]).score / 100.0
        return MetricResult.ok(min(1.0, score))
