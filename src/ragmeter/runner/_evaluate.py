"""``evaluate()``: a dataset and metrics in, complete results out."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter._version import __version__
from ragmeter.dataset import Dataset, DatasetError, Problem, load_dataset
from ragmeter.embed import Embeddings
from ragmeter.judge import Judge, Usage
from ragmeter.metrics import BatchContext, Metric, MetricResult, resolve_metrics
from ragmeter.metrics.llm import JudgedMetric, run_sync
from ragmeter.prompts import Language
from ragmeter.results import EvaluationResult, MetricInfo, SampleResult
from ragmeter.runner._judged import score_all, setup

DEFAULT_BATCH_SIZE = 4096
DEFAULT_CONCURRENCY = 16


def check_inputs(
    dataset: Dataset,
    metrics: Sequence[Metric],
    *,
    skip_invalid: bool,
    load_problems: Sequence[Problem] = (),
) -> Dataset:
    """The dataset less the rows that are invalid or lack a field some metric needs.

    Unless ``skip_invalid``, every such problem (from loading and from the metrics' needs)
    is raised at once in one :class:`DatasetError`.
    """
    problems = dataset.problems_for({m.name: m.requires for m in metrics})
    if (problems or load_problems) and not skip_invalid:
        raise DatasetError(
            sorted([*load_problems, *problems], key=lambda p: p.row),
            hint="Fix these rows (or choose other metrics), or pass skip_invalid=True "
            "(--skip-invalid) to evaluate the valid rows only.",
        )
    return dataset.without_rows(problems) if problems else dataset


def _score_batch(metric: Metric, batch: Sequence[Any], context: BatchContext) -> list[MetricResult]:
    try:
        return metric.score_batch(batch, context)
    except Exception as error:  # noqa: BLE001 - one metric's bug must not lose the rest of the run
        message = f"{type(error).__name__}: {error}"
        return [MetricResult.failed(message) for _ in batch]


def evaluate(
    dataset: Dataset | str | Any,
    metrics: Sequence[Metric | str] | str,
    *,
    column_map: Mapping[str, str] | None = None,
    skip_invalid: bool = False,
    format: str | None = None,
    judge: Judge | None = None,
    embeddings: Embeddings | None = None,
    language: Language | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> EvaluationResult:
    """Score every sample of ``dataset`` with every metric.

    ``dataset`` is a :class:`Dataset`, a path (JSONL, JSON, CSV, Parquet), a list of dicts, a
    pandas DataFrame or a Hugging Face dataset; ``metrics`` are metric objects or names such
    as ``"precision@5"`` or ``"faithfulness"``. Every problem in the input is reported before
    anything is scored; with ``skip_invalid`` the valid rows are scored and the others listed
    in ``result.skipped``.

    Judged metrics use their own judge / embeddings if they have one, else ``judge`` /
    ``embeddings``, else the configured endpoint or the embedded offline defaults; within a
    sample they share every judge call, and ``concurrency`` samples are judged at once.
    ``language`` ("en" / "zh") overrides per-sample language detection.

    >>> result = evaluate(
    ...     [{"retrieved_context_ids": ["a", "b"], "reference_context_ids": ["b"]}],
    ...     ["mrr", "hit@1"],
    ... )
    >>> {name: a.mean for name, a in result.aggregates.items()}
    {'mrr': 0.5, 'hit@1': 0.0}
    """
    resolved = resolve_metrics(metrics if isinstance(metrics, str) else list(metrics))
    if isinstance(dataset, Dataset):
        data, load_problems = dataset, []
    else:
        data = load_dataset(dataset, column_map=column_map, skip_invalid=True, format=format)
        load_problems = [p for row in data.invalid for p in row.problems]
    data = check_inputs(data, resolved, skip_invalid=skip_invalid, load_problems=load_problems)

    judged = [m for m in resolved if isinstance(m, JudgedMetric)]
    plain = [m for m in resolved if not isinstance(m, JudgedMetric)]
    scores: list[dict[str, MetricResult]] = [{} for _ in range(len(data))]
    for start in range(0, len(data), batch_size):
        batch = data.samples[start : start + batch_size]
        context = BatchContext()
        for metric in plain:
            for offset, result in enumerate(_score_batch(metric, batch, context)):
                scores[start + offset][metric.name] = result
    usage = Usage()
    sample_usage: list[dict[str, Any] | None] = [None] * len(data)
    prompt_versions: set[str] = set()
    plan = None
    if judged:
        plan = setup(judged, judge, embeddings)
        outcomes = run_sync(
            score_all(data.samples, data.ids, plan, language=language, concurrency=concurrency)
        )
        for index, (results, used, versions) in enumerate(outcomes):
            scores[index].update(results)
            usage = usage + used
            sample_usage[index] = used.to_dict()
            prompt_versions |= versions
    scores = [{m.name: row[m.name] for m in resolved} for row in scores]

    samples = [
        SampleResult(index, row, sample_id, sample, scores[index], sample_usage[index])
        for index, (sample, row, sample_id) in enumerate(zip(data.samples, data.rows, data.ids))
    ]
    infos = [
        MetricInfo(m.name, m.direction, m.params(), f"{type(m).__module__}.{type(m).__qualname__}")
        for m in resolved
    ]
    config = {
        "ragmeter_version": __version__,
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "dataset": {
            "source": data.source,
            "fingerprint": data.fingerprint(),
            "n_samples": len(data),
            "n_skipped": len(data.invalid),
        },
    }
    if plan is not None:
        config["judges"] = {
            name: judge.describe() for name, judge in plan.judges.items() if judge is not None
        }
        config["embeddings"] = {
            name: vectors.describe() for name, vectors in plan.embeddings.items() if vectors
        }
        config["prompt_versions"] = sorted(prompt_versions)
        config["usage"] = usage.to_dict()
        currencies = {
            j.price.currency for j in plan.judges.values() if getattr(j, "price", None) is not None
        }
        config["usage"]["currency"] = currencies.pop() if len(currencies) == 1 else None
        vectors = {id(e): e for e in plan.embeddings.values() if e is not None}
        if vectors:
            total = Usage()
            for embedding in vectors.values():
                total = total + embedding.ledger.total
            config["embedding_usage"] = total.to_dict()
        if plan.configuration_error:
            config["judge_error"] = plan.configuration_error
    return EvaluationResult(samples, infos, config, list(data.invalid))
