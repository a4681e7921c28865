"""Runs built from given scores, for the statistics tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter import MetricResult, Sample, evaluate
from ragmeter.metrics import Details, Direction
from ragmeter.results import EvaluationResult, MetricInfo, SampleResult
from tests._prepared import Prepared


def score(value: float | None) -> MetricResult:
    return MetricResult.not_applicable("none") if value is None else MetricResult.ok(value)


def run(
    columns: Mapping[str, Sequence[float | None]],
    *,
    ids: Sequence[str] | None = None,
    tags: Sequence[dict[str, Any]] | None = None,
    lower_is_better: Sequence[str] = (),
    config: dict[str, Any] | None = None,
    details: dict[str, Sequence[dict[str, Any]]] | None = None,
) -> EvaluationResult:
    """An in-memory run: per metric, one score per sample (None: not applicable)."""
    n = len(next(iter(columns.values())))
    ids = list(ids) if ids is not None else [f"s{i}" for i in range(n)]
    tags = list(tags) if tags is not None else [{}] * n
    samples = []
    for i in range(n):
        scores = {}
        for name, values in columns.items():
            result = score(values[i])
            if details and name in details:
                result = MetricResult(
                    result.score, result.status, details=Details.from_dict(details[name][i])
                )
            scores[name] = result
        samples.append(SampleResult(i, i + 1, ids[i], Sample(id=ids[i], metadata=tags[i]), scores))
    metrics = [
        MetricInfo(
            name,
            Direction.LOWER_IS_BETTER if name in lower_is_better else Direction.HIGHER_IS_BETTER,
        )
        for name in columns
    ]
    return EvaluationResult(samples=samples, metrics=metrics, config=config or {})


def evaluated(
    columns: Mapping[str, Sequence[float | None]],
    *,
    ids: Sequence[str] | None = None,
    tags: Sequence[dict[str, Any]] | None = None,
) -> EvaluationResult:
    """The same through :func:`ragmeter.evaluate` (a store-backed run)."""
    n = len(next(iter(columns.values())))
    ids = list(ids) if ids is not None else [f"s{i}" for i in range(n)]
    tags = list(tags) if tags is not None else [{}] * n
    metrics = [Prepared(name, dict(zip(ids, values))) for name, values in columns.items()]
    rows = [{"id": i, "user_input": "What is the warranty?", **t} for i, t in zip(ids, tags)]
    return evaluate(rows, metrics)


# -- runs judged by different judges ---------------------------------------------------------
def openai_judge(model: str, base_url: str, **settings: Any) -> dict[str, Any]:
    """What an OpenAI-compatible judge's ``describe()`` records (operational fields too)."""
    return {
        "kind": "openai-compatible",
        "model": model,
        "base_url": base_url,
        "temperature": 0.0,
        "seed": 42,
        "max_tokens": 1024,
        "timeout_s": 60.0,
        "max_retries": 5,
        "max_concurrency": 16,
        "requests_per_minute": None,
        "structured_output": "json_schema",
        "logprobs": False,
        "extra_body": {},
        "price": "unknown: cost not counted (set price= in the judge config)",
        "api_key_set": True,
        **settings,
    }


GPT = openai_judge("gpt-4o-mini", "https://api.openai.com/v1")
DEEPSEEK = openai_judge("deepseek-chat", "https://api.deepseek.com/v1")
#: How both judges are named in a refusal.
GPT_LABEL = "gpt-4o-mini @ api.openai.com (temperature 0)"
DEEPSEEK_LABEL = "deepseek-chat @ api.deepseek.com (temperature 0)"


def judged_config(judge: dict[str, Any] | None, metrics: Sequence[str] = ("faithfulness",)):
    """A run record whose ``metrics`` were judged by ``judge`` (None: no judge recorded at
    all, as in a run made before ragmeter recorded judges)."""
    if judge is None:
        return {}
    return {
        "judges": {m: dict(judge) for m in metrics},
        "embeddings": {},
        "prompt_versions": ["response_analysis@1/en", "verify@1/en"],
    }


def rejudge(run_dir: Any, judge: dict[str, Any] | None, metrics: Sequence[str] = ("faithfulness",)):
    """Record in a run directory that ``metrics`` were judged by ``judge`` (``None``: remove
    the judge records, as in an old run)."""
    from pathlib import Path

    from ragmeter.results import RunDatabase

    db = RunDatabase.in_dir(Path(run_dir))
    config = dict(db.get_meta("config") or {})
    for key in ("judges", "embeddings", "prompt_versions"):
        config.pop(key, None)
    config.update(judged_config(judge, metrics))
    db.set_meta("config", config)
    db.close()
