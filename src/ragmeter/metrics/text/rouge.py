from collections import Counter
from typing import Any, Literal

from rapidfuzz.distance import LCSseq

from ragmeter._text import Tokenizer, tokenize
from ragmeter.metrics._base import MetricResult
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.text._base import TextMetric

RougeVariant = Literal["rouge_l", "rouge_1", "rouge_2"]
RougeMode = Literal["fmeasure", "precision", "recall"]


def _ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(zip(*(tokens[i:] for i in range(n))))


def rouge_overlap(
    candidate: list[str], reference: list[str], variant: RougeVariant
) -> tuple[int, int, int]:
    """(matches, candidate units, reference units) for ROUGE-L (LCS) or ROUGE-N.

    >>> rouge_overlap(list("abcde"), list("axcye"), "rouge_l")
    (3, 5, 5)
    """
    if variant == "rouge_l":
        return int(LCSseq.similarity(candidate, reference)), len(candidate), len(reference)
    n = 1 if variant == "rouge_1" else 2
    cand, ref = _ngrams(candidate, n), _ngrams(reference, n)
    return sum((cand & ref).values()), sum(cand.values()), sum(ref.values())


@builtin_metric(
    "rouge_l",
    family="answer",
    rank=330,
    summary="ROUGE-L F1 (longest common subsequence)",
    aliases=("rouge", "rougeL", "rouge_score"),
)
@builtin_metric(
    "rouge_1",
    family="answer",
    rank=340,
    summary="ROUGE-1 F1 (unigrams)",
    aliases=("rouge1",),
    params={"variant": "rouge_1"},
)
@builtin_metric(
    "rouge_2",
    family="answer",
    rank=350,
    summary="ROUGE-2 F1 (bigrams)",
    aliases=("rouge2",),
    params={"variant": "rouge_2"},
)
class Rouge(TextMetric):
    """ROUGE-L (longest common subsequence), ROUGE-1 or ROUGE-2 of response vs reference.

    Tokens are words, and single characters for Chinese (``tokenizer="auto"``), so
    Chinese answers score sensibly; ``tokenizer="jieba"`` uses word segmentation.

    Here the LCS is python, guido, 发, 布: precision 4/5, recall 4/6.

    >>> round(Rouge().compare("Python 由 Guido 发布", "Python 是 Guido 发布的").score, 4)
    0.7273
    """

    def __init__(
        self,
        variant: RougeVariant = "rouge_l",
        *,
        mode: RougeMode = "fmeasure",
        tokenizer: Tokenizer = "auto",
    ) -> None:
        if variant not in ("rouge_l", "rouge_1", "rouge_2"):
            raise ValueError(f"variant must be rouge_l, rouge_1 or rouge_2, got {variant!r}")
        if mode not in ("fmeasure", "precision", "recall"):
            raise ValueError(f"mode must be fmeasure, precision or recall, got {mode!r}")
        self.variant: RougeVariant = variant
        self.name = variant
        self.mode: RougeMode = mode
        self.tokenizer: Tokenizer = tokenizer

    def params(self) -> dict[str, Any]:
        return {"mode": self.mode, "tokenizer": self.tokenizer}

    def compare(self, response: str, reference: str) -> MetricResult:
        reference_tokens = tokenize(reference, self.tokenizer)
        if not reference_tokens:
            return MetricResult.not_applicable("reference has no words")
        matches, n_candidate, n_reference = rouge_overlap(
            tokenize(response, self.tokenizer), reference_tokens, self.variant
        )
        precision = matches / n_candidate if n_candidate else 0.0
        recall = matches / n_reference if n_reference else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        value = {"precision": precision, "recall": recall}.get(self.mode, f1)
        return MetricResult.ok(value, precision=precision, recall=recall)
