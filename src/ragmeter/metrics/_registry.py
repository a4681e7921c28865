"""Metrics by name, as the CLI and ``evaluate(metrics=["precision@5", ...])`` take them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ragmeter.metrics._base import Metric
from ragmeter.metrics.context import (
    IDContextPrecision,
    IDContextRecall,
    StringContextPrecision,
    StringContextRecall,
)
from ragmeter.metrics.llm import (
    AnswerCorrectness,
    AnswerRelevancy,
    ContextEntityRecall,
    ContextPrecision,
    ContextRecall,
    ContextRelevance,
    ContextUtilization,
    FactualCorrectness,
    Faithfulness,
    NoiseSensitivity,
    SemanticSimilarity,
)
from ragmeter.metrics.retrieval import (
    MAP,
    MRR,
    NDCG,
    F1AtK,
    HitAtK,
    PrecisionAtK,
    RecallAtK,
    RPrecision,
)
from ragmeter.metrics.text import BLEU, ChrF, ExactMatch, Rouge, StringPresence

#: Whether a metric's name takes ``@K``: it must, it may, or it takes none.
Cutoff = Literal["required", "optional", "none"]


@dataclass(frozen=True)
class MetricSpec:
    """How to build a metric from its name: ``name`` or ``name@K``."""

    name: str
    build: Callable[[int | None], Metric]
    cutoff: Cutoff
    family: str
    summary: str
    aliases: tuple[str, ...] = ()

    def example(self) -> Metric:
        return self.build(5 if self.cutoff == "required" else None)


def _no_k(factory: Callable[[], Metric]) -> Callable[[int | None], Metric]:
    return lambda k: factory()


def _k(factory: Callable[[int], Metric]) -> Callable[[int | None], Metric]:
    return lambda k: factory(k)  # type: ignore[arg-type]  # the parser guarantees k


SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "faithfulness",
        _no_k(Faithfulness),
        "none",
        "llm",
        "share of the response's claims the contexts support",
    ),
    MetricSpec(
        "answer_relevancy",
        _no_k(AnswerRelevancy),
        "none",
        "llm",
        "similarity of questions generated from the response to the question",
        ("response_relevancy",),
    ),
    MetricSpec(
        "answer_correctness",
        _no_k(AnswerCorrectness),
        "none",
        "llm",
        "0.75 x claim F1 vs reference + 0.25 x embedding similarity",
    ),
    MetricSpec(
        "context_precision",
        _no_k(ContextPrecision),
        "none",
        "llm",
        "rank-weighted share of contexts useful for the reference (AP)",
        ("llm_context_precision_with_reference",),
    ),
    MetricSpec(
        "context_utilization",
        _no_k(ContextUtilization),
        "none",
        "llm",
        "rank-weighted share of contexts the response used (AP)",
    ),
    MetricSpec(
        "context_recall",
        _no_k(ContextRecall),
        "none",
        "llm",
        "share of reference statements the contexts support",
        ("llm_context_recall",),
    ),
    MetricSpec(
        "context_relevance",
        _no_k(ContextRelevance),
        "none",
        "llm",
        "share of contexts relevant to the question (no reference, no response)",
    ),
    MetricSpec(
        "context_entity_recall",
        _no_k(ContextEntityRecall),
        "none",
        "llm",
        "share of reference entities present in the contexts",
    ),
    MetricSpec(
        "noise_sensitivity_relevant",
        _no_k(NoiseSensitivity),
        "none",
        "llm",
        "share of claims wrong and drawn from relevant contexts (lower is better)",
        ("noise_sensitivity",),
    ),
    MetricSpec(
        "noise_sensitivity_irrelevant",
        _no_k(lambda: NoiseSensitivity("irrelevant")),
        "none",
        "llm",
        "share of claims wrong and drawn from irrelevant contexts (lower is better)",
    ),
    MetricSpec(
        "factual_correctness",
        _no_k(FactualCorrectness),
        "none",
        "llm",
        "claim F1 of response vs reference",
    ),
    MetricSpec(
        "semantic_similarity",
        _no_k(SemanticSimilarity),
        "none",
        "embedding",
        "cosine of response and reference embeddings",
        ("answer_similarity",),
    ),
    MetricSpec(
        "precision",
        _k(PrecisionAtK),
        "required",
        "retrieval",
        "share of the top K that is relevant",
    ),
    MetricSpec(
        "recall", _k(RecallAtK), "required", "retrieval", "share of the relevant found in the top K"
    ),
    MetricSpec("f1", _k(F1AtK), "required", "retrieval", "harmonic mean of precision@K, recall@K"),
    MetricSpec(
        "hit",
        _k(HitAtK),
        "required",
        "retrieval",
        "1 if anything relevant is in the top K",
        ("hit_rate", "success"),
    ),
    MetricSpec(
        "mrr",
        MRR,
        "optional",
        "retrieval",
        "1 / rank of the first relevant context",
        ("reciprocal_rank",),
    ),
    MetricSpec(
        "map",
        MAP,
        "optional",
        "retrieval",
        "average precision (trec_eval map / map_cut)",
        ("ap", "average_precision"),
    ),
    MetricSpec("ndcg", NDCG, "optional", "retrieval", "NDCG, linear gain (trec_eval ndcg_cut)"),
    MetricSpec(
        "ndcg_exp",
        lambda k: NDCG(k, gain="exponential"),
        "optional",
        "retrieval",
        "NDCG, exponential gain 2^rel - 1",
    ),
    MetricSpec(
        "r_precision",
        _no_k(RPrecision),
        "none",
        "retrieval",
        "precision at R = number relevant",
        ("rprec",),
    ),
    MetricSpec(
        "id_context_precision",
        _no_k(IDContextPrecision),
        "none",
        "context",
        "rank-weighted precision of retrieved ids (AP)",
        ("id_based_context_precision",),
    ),
    MetricSpec(
        "id_context_recall",
        _no_k(IDContextRecall),
        "none",
        "context",
        "share of reference ids retrieved",
        ("id_based_context_recall",),
    ),
    MetricSpec(
        "string_context_precision",
        _no_k(StringContextPrecision),
        "none",
        "context",
        "rank-weighted precision by string similarity",
        ("non_llm_context_precision_with_reference",),
    ),
    MetricSpec(
        "string_context_recall",
        _no_k(StringContextRecall),
        "none",
        "context",
        "share of reference contexts matched by string similarity",
        ("non_llm_context_recall",),
    ),
    MetricSpec(
        "exact_match", _no_k(ExactMatch), "none", "answer", "response equals reference", ("em",)
    ),
    MetricSpec(
        "string_presence", _no_k(StringPresence), "none", "answer", "reference appears in response"
    ),
    MetricSpec(
        "rouge_l",
        _no_k(Rouge),
        "none",
        "answer",
        "ROUGE-L F1 (longest common subsequence)",
        ("rouge", "rougeL"),
    ),
    MetricSpec(
        "rouge_1",
        _no_k(lambda: Rouge("rouge_1")),
        "none",
        "answer",
        "ROUGE-1 F1 (unigrams)",
        ("rouge1",),
    ),
    MetricSpec(
        "rouge_2",
        _no_k(lambda: Rouge("rouge_2")),
        "none",
        "answer",
        "ROUGE-2 F1 (bigrams)",
        ("rouge2",),
    ),
    MetricSpec("bleu", _no_k(BLEU), "none", "answer", "sentence BLEU (sacrebleu), 0-1"),
    MetricSpec("chrf", _no_k(ChrF), "none", "answer", "character n-gram F-score (sacrebleu), 0-1"),
    MetricSpec(
        "chrf++",
        _no_k(lambda: ChrF(word_order=2)),
        "none",
        "answer",
        "chrF with word bigrams",
        ("chrfpp",),
    ),
)

_BY_NAME: dict[str, MetricSpec] = {
    key.lower(): spec for spec in SPECS for key in (spec.name, *spec.aliases)
}
_NAME = re.compile(r"^(?P<base>[A-Za-z0-9_+\-]+?)(?:@(?P<k>[^@]*))?$")


class UnknownMetricError(ValueError):
    pass


def get_metric(name: str) -> Metric:
    """Build a metric from its name, with ``@K`` for a cutoff.

    >>> get_metric("ndcg@10").name, get_metric("mrr").name, get_metric("average_precision@3").name
    ('ndcg@10', 'mrr', 'map@3')
    """
    match = _NAME.match(name.strip())
    base = match.group("base").lower() if match else name
    spec = _BY_NAME.get(base) if match else None
    if spec is None:
        known = ", ".join(s.name + ("@K" if s.cutoff == "required" else "") for s in SPECS)
        raise UnknownMetricError(f"unknown metric {name!r}; known metrics: {known}")
    raw_k = match.group("k") if match else None
    k: int | None = None
    if raw_k is not None:
        if spec.cutoff == "none":
            raise UnknownMetricError(f"metric {spec.name!r} takes no @K cutoff (got {name!r})")
        if not raw_k.isdigit() or int(raw_k) < 1:
            raise UnknownMetricError(
                f"the cutoff in {name!r} must be a positive integer, e.g. {spec.name}@5"
            )
        k = int(raw_k)
    elif spec.cutoff == "required":
        raise UnknownMetricError(f"metric {spec.name!r} needs a cutoff, e.g. {spec.name}@5")
    return spec.build(k)


METRIC_FILE_SUFFIXES = (".toml", ".yaml", ".yml", ".json")


def _named_or_file(name: str) -> Metric:
    if name.lower().endswith(METRIC_FILE_SUFFIXES):
        from pathlib import Path

        from ragmeter.metrics.custom._prompt import load_metric

        if not Path(name).is_file():
            raise UnknownMetricError(f"no metric file {name!r}")
        return load_metric(name)
    return get_metric(name)


def resolve_metrics(metrics: list[Metric | str] | tuple[Metric | str, ...] | str) -> list[Metric]:
    """Metric objects from objects, names, or files defining prompt metrics (``.toml``,
    ``.yaml``, ``.yml``, ``.json``); a comma-separated string is split."""
    if isinstance(metrics, str):
        metrics = [m for m in (part.strip() for part in metrics.split(",")) if m]
    resolved = [m if isinstance(m, Metric) else _named_or_file(m) for m in metrics]
    names = [m.name for m in resolved]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"metric(s) given twice: {', '.join(duplicates)}")
    if not resolved:
        raise ValueError("no metrics given")
    return resolved
