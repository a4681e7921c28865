"""Metrics by name, as the CLI and ``evaluate(metrics=["precision@5", ...])`` take them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ragmeter.metrics._base import Metric
from ragmeter.metrics.context import (
    IDContextPrecision,
    IDContextRecall,
    StringContextPrecision,
    StringContextRecall,
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


@dataclass(frozen=True)
class MetricSpec:
    """How to build a metric from its name: ``name`` or ``name@K``."""

    name: str
    build: Callable[[int | None], Metric]
    cutoff: str  # "required", "optional" or "none"
    family: str
    aliases: tuple[str, ...] = ()

    def example(self) -> Metric:
        return self.build(5 if self.cutoff == "required" else None)


def _no_k(factory: Callable[[], Metric]) -> Callable[[int | None], Metric]:
    return lambda k: factory()


SPECS: tuple[MetricSpec, ...] = (
    MetricSpec("precision", lambda k: PrecisionAtK(k), "required", "retrieval"),  # type: ignore[arg-type]
    MetricSpec("recall", lambda k: RecallAtK(k), "required", "retrieval"),  # type: ignore[arg-type]
    MetricSpec("f1", lambda k: F1AtK(k), "required", "retrieval"),  # type: ignore[arg-type]
    MetricSpec("hit", lambda k: HitAtK(k), "required", "retrieval", ("hit_rate", "success")),  # type: ignore[arg-type]
    MetricSpec("mrr", lambda k: MRR(k), "optional", "retrieval", ("reciprocal_rank",)),
    MetricSpec("map", lambda k: MAP(k), "optional", "retrieval", ("ap", "average_precision")),
    MetricSpec("ndcg", lambda k: NDCG(k), "optional", "retrieval"),
    MetricSpec("ndcg_exp", lambda k: NDCG(k, gain="exponential"), "optional", "retrieval"),
    MetricSpec("r_precision", _no_k(RPrecision), "none", "retrieval", ("rprec",)),
    MetricSpec(
        "id_context_precision",
        _no_k(IDContextPrecision),
        "none",
        "context",
        ("id_based_context_precision",),
    ),
    MetricSpec(
        "id_context_recall", _no_k(IDContextRecall), "none", "context", ("id_based_context_recall",)
    ),
    MetricSpec(
        "string_context_precision",
        _no_k(StringContextPrecision),
        "none",
        "context",
        ("non_llm_context_precision_with_reference",),
    ),
    MetricSpec(
        "string_context_recall",
        _no_k(StringContextRecall),
        "none",
        "context",
        ("non_llm_context_recall",),
    ),
    MetricSpec("exact_match", _no_k(ExactMatch), "none", "answer", ("em",)),
    MetricSpec("string_presence", _no_k(StringPresence), "none", "answer"),
    MetricSpec("rouge_l", _no_k(Rouge), "none", "answer", ("rouge", "rougeL")),
    MetricSpec("rouge_1", _no_k(lambda: Rouge("rouge_1")), "none", "answer", ("rouge1",)),
    MetricSpec("rouge_2", _no_k(lambda: Rouge("rouge_2")), "none", "answer", ("rouge2",)),
    MetricSpec("bleu", _no_k(BLEU), "none", "answer"),
    MetricSpec("chrf", _no_k(ChrF), "none", "answer"),
    MetricSpec("chrf++", _no_k(lambda: ChrF(word_order=2)), "none", "answer", ("chrfpp",)),
)

_BY_NAME: dict[str, MetricSpec] = {
    key: spec for spec in SPECS for key in (spec.name, *spec.aliases)
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


def resolve_metrics(metrics: list[Metric | str] | tuple[Metric | str, ...] | str) -> list[Metric]:
    """Metric objects from objects or names (a comma-separated string is split)."""
    if isinstance(metrics, str):
        metrics = [m for m in (part.strip() for part in metrics.split(",")) if m]
    resolved = [m if isinstance(m, Metric) else get_metric(m) for m in metrics]
    names = [m.name for m in resolved]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"metric(s) given twice: {', '.join(duplicates)}")
    if not resolved:
        raise ValueError("no metrics given")
    return resolved
