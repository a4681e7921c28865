"""Metrics by name, as the CLI and ``evaluate(metrics=["precision@5", ...])`` take them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragmeter.metrics._base import Metric
from ragmeter.metrics._spec import LIST_HINT, MetricSpec, UnknownMetricError, build_metric
from ragmeter.metrics._spec import no_k as _no_k
from ragmeter.metrics.context import (
    IDContextPrecision,
    IDContextRecall,
    StringContextPrecision,
    StringContextRecall,
)
from ragmeter.metrics.retrieval import RANKING_SPECS
from ragmeter.metrics.text import BLEU, ChrF, ExactMatch, Rouge, StringPresence


def _llm(name: str, *args: Any) -> Callable[[], Metric]:
    """The LLM metric class ``name`` of :mod:`ragmeter.metrics.llm`, called with ``args``;
    imported when such a metric is built, so that a run without one loads none of them (nor
    the judge's steps they are made of)."""

    def build() -> Metric:
        from ragmeter.metrics import llm

        metric: Metric = getattr(llm, name)(*args)
        return metric

    return build


SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "faithfulness",
        _no_k(_llm("Faithfulness")),
        "none",
        "llm",
        "share of the response's claims the contexts support",
    ),
    MetricSpec(
        "answer_relevancy",
        _no_k(_llm("AnswerRelevancy")),
        "none",
        "llm",
        "similarity of questions generated from the response to the question",
        ("response_relevancy",),
    ),
    MetricSpec(
        "answer_correctness",
        _no_k(_llm("AnswerCorrectness")),
        "none",
        "llm",
        "0.75 x claim F1 vs reference + 0.25 x embedding similarity",
    ),
    MetricSpec(
        "context_precision",
        _no_k(_llm("ContextPrecision")),
        "none",
        "llm",
        "rank-weighted share of contexts useful for the reference (AP)",
        ("llm_context_precision_with_reference",),
    ),
    MetricSpec(
        "context_utilization",
        _no_k(_llm("ContextUtilization")),
        "none",
        "llm",
        "rank-weighted share of contexts the response used (AP)",
    ),
    MetricSpec(
        "context_recall",
        _no_k(_llm("ContextRecall")),
        "none",
        "llm",
        "share of reference statements the contexts support",
        ("llm_context_recall",),
    ),
    MetricSpec(
        "context_relevance",
        _no_k(_llm("ContextRelevance")),
        "none",
        "llm",
        "share of contexts relevant to the question (no reference, no response)",
    ),
    MetricSpec(
        "context_entity_recall",
        _no_k(_llm("ContextEntityRecall")),
        "none",
        "llm",
        "share of reference entities present in the contexts",
    ),
    MetricSpec(
        "noise_sensitivity_relevant",
        _no_k(_llm("NoiseSensitivity")),
        "none",
        "llm",
        "share of claims wrong and drawn from relevant contexts (lower is better)",
        ("noise_sensitivity",),
    ),
    MetricSpec(
        "noise_sensitivity_irrelevant",
        _no_k(_llm("NoiseSensitivity", "irrelevant")),
        "none",
        "llm",
        "share of claims wrong and drawn from irrelevant contexts (lower is better)",
    ),
    MetricSpec(
        "factual_correctness",
        _no_k(_llm("FactualCorrectness")),
        "none",
        "llm",
        "claim F1 of response vs reference",
    ),
    MetricSpec(
        "semantic_similarity",
        _no_k(_llm("SemanticSimilarity")),
        "none",
        "embedding",
        "cosine of response and reference embeddings",
        ("answer_similarity",),
    ),
    *RANKING_SPECS,
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


def get_metric(name: str) -> Metric:
    """Build a metric from its name, with ``@K`` for a cutoff.

    >>> get_metric("ndcg@10").name, get_metric("mrr").name, get_metric("average_precision@3").name
    ('ndcg@10', 'mrr', 'map@3')
    """
    return build_metric(name, SPECS)


#: The extensions of metric files (prompt metrics, see ``ragmeter.metrics.custom.load_metric``).
METRIC_FILE_SUFFIXES = (".toml", ".yaml", ".yml", ".json")


def resolve_metric(name: str) -> Metric:
    """A built-in metric by name (``faithfulness``, ``recall@5``), or the prompt metric a
    metric file defines (``.toml``, ``.yaml``, ``.yml``, ``.json``).

    >>> resolve_metric("hit_rate@3").name
    'hit@3'
    """
    if Path(name).suffix.lower() in METRIC_FILE_SUFFIXES:
        if not Path(name).is_file():
            raise UnknownMetricError(f"no such metric file: {name!r} (no metric file at that path)")
        from ragmeter.metrics.custom import load_metric

        return load_metric(name)
    return get_metric(name)


def _unknown_message(problems: list[str]) -> str:
    """One message for every metric name not understood, with the command that lists all."""
    if len(problems) == 1:
        return f"{problems[0]} ({LIST_HINT})"
    lines = [f"{len(problems)} metric names not understood:", *(f"  - {p}" for p in problems)]
    return "\n".join([*lines, f"{LIST_HINT[0].upper()}{LIST_HINT[1:]}."])


def resolve_metrics(metrics: list[Metric | str] | tuple[Metric | str, ...] | str) -> list[Metric]:
    """Metric objects from objects, names, or files defining prompt metrics (``.toml``,
    ``.yaml``, ``.yml``, ``.json``); a comma-separated string is split."""
    if isinstance(metrics, str):
        metrics = [m for m in (part.strip() for part in metrics.split(",")) if m]
    resolved: list[Metric] = []
    unknown: list[str] = []
    for given in metrics:
        try:
            resolved.append(given if isinstance(given, Metric) else resolve_metric(given))
        except UnknownMetricError as error:  # every unknown name is reported, not the first
            unknown.append(error.short)
    if unknown:
        raise UnknownMetricError(_unknown_message(unknown))
    names = [m.name for m in resolved]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"metric(s) given twice: {', '.join(duplicates)}")
    if not resolved:
        raise ValueError("no metrics given")
    return resolved
