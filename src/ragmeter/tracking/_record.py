"""What a run logs to an experiment tracker, the same for MLflow and W&B: its numbers as one
flat dict, its settings as nested config (flattened into parameters for MLflow), its tags and
its files. Everything comes from the run's own record (``result.config``), which holds no
secret: judges and embeddings describe themselves without their keys."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.metrics import Status
from ragmeter.results import EvaluationResult

if TYPE_CHECKING:
    from ragmeter.experiments import ExperimentResult

#: Bootstrap resamples of the logged confidence intervals: as ``ragmeter show`` and the
#: reports draw them (BCa, seed 0), so the tracker shows the very numbers the report does.
CI_RESAMPLES = 2_000

#: Top-level names of ragmeter's own settings in the config; a user parameter may not take one.
OWN_SECTIONS = ("ragmeter", "dataset", "metrics", "judge", "embeddings", "experiment")

#: Judge usage counters logged as ``judge/NAME`` (cost only when a price made it count).
USAGE_COUNTS = (
    "calls",
    "cached_calls",
    "prompt_tokens",
    "completion_tokens",
    "retries",
    "latency_s",
)

#: Aggregate fields logged per metric as ``NAME/FIELD``.
AGGREGATE_COUNTS = ("coverage", "n_ok", "n_total", "n_failed", "n_not_applicable", "n_not_started")

#: Per-sample table: the sample's own columns, then per metric its score, status and reason.
SAMPLE_COLUMNS = ("id", "row", "question", "response", "reference")

#: Files of the run, as logged: the HTML report, per-sample results, summary and run record.
REPORT_FILE = "report.html"
RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.json"
PIPELINE_FILE = "pipeline.jsonl"


@dataclass(frozen=True)
class TrackedRun:
    """Where a run was logged: the tracker's run id, its web page when it has one (``None``
    for a local store or an offline run), and the experiment (MLflow) or project (W&B)."""

    tracker: str
    run_id: str
    url: str | None
    experiment: str | None


@dataclass(frozen=True)
class RunRecord:
    """What both trackers log of one run."""

    evaluation: EvaluationResult
    experiment: ExperimentResult | None
    metrics: dict[str, float]
    config: dict[str, Any]
    tags: dict[str, str]
    name: str | None


def evaluation_of(result: EvaluationResult | ExperimentResult) -> EvaluationResult:
    """The evaluation of ``result`` (an experiment's own, or the result itself)."""
    if isinstance(result, EvaluationResult):
        return result
    evaluation = getattr(result, "result", None)
    if isinstance(evaluation, EvaluationResult):
        return evaluation
    raise TypeError(
        f"expected an EvaluationResult (from ragmeter.evaluate or EvaluationResult.load) or an "
        f"ExperimentResult, got {type(result).__name__}"
    )


def run_record(
    result: EvaluationResult | ExperimentResult,
    *,
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, str] | Iterable[str] | None = None,
    run_name: str | None = None,
) -> RunRecord:
    """The record of ``result`` with the system's own ``params`` (top_k, model...) and
    ``tags`` (names, or name -> value)."""
    evaluation = evaluation_of(result)
    experiment = None if isinstance(result, EvaluationResult) else result
    user_params = dict(params or {})
    name = run_name
    if experiment is not None:
        user_params = {**experiment.params, **user_params}
        name = name or experiment.name
    clash = sorted(k for k in user_params if k.split(".", 1)[0] in OWN_SECTIONS)
    if clash:
        raise ValueError(
            f"parameter(s) {clash} would overwrite ragmeter's own settings (the names "
            f"{', '.join(OWN_SECTIONS)} are ragmeter's): rename them, e.g. system.{clash[0]}"
        )
    metrics = metric_values(evaluation)
    config = run_config(evaluation)
    if experiment is not None:
        metrics.update(pipeline_values(experiment))
        config["experiment"] = {"name": experiment.name}
        if experiment.run is not None:
            config["experiment"]["run_id"] = experiment.run.id
    return RunRecord(
        evaluation,
        experiment,
        metrics,
        {**config, **user_params},
        tag_values(tags),
        name,
    )


def tag_values(tags: Mapping[str, str] | Iterable[str] | None) -> dict[str, str]:
    """Tags as name -> value: a plain name (``--tag nightly``) gets the value ``"true"``.

    >>> tag_values(["nightly"]), tag_values({"team": "search"})
    ({'nightly': 'true'}, {'team': 'search'})
    """
    if tags is None:
        return {}
    if isinstance(tags, Mapping):
        return {str(k): str(v) for k, v in tags.items()}
    if isinstance(tags, str):
        raise TypeError(f"tags must be a list of names or a dict, got the string {tags!r}")
    return {str(t): "true" for t in tags}


# -- numbers -----------------------------------------------------------------------------------
def key_part(text: str) -> str:
    """``text`` as one segment of a ``/``-separated metric name: a slash in a tag value
    (``docs/a.md``) must not add a level.

    >>> key_part("docs/a.md"), key_part(""), key_part("..")
    ('docs_a.md', '_', '_')
    """
    part = text.replace("/", "_").strip()
    return "_" if part in ("", ".", "..") else part


def metric_values(result: EvaluationResult) -> dict[str, float]:
    """Per metric: mean, CI bounds, median, coverage and counts; per tag value the means;
    judge and embedding usage; sample counts. A value that does not exist (no sample
    scored, fewer than 2 for a CI, cost without a price) is left out, never logged as 0."""
    from ragmeter.stats import estimate_means

    estimates = estimate_means(result, n_resamples=CI_RESAMPLES)
    out: dict[str, float] = {}
    for metric in result.metrics:
        name = key_part(metric.name)
        agg = result.aggregates[metric.name]
        if agg.mean is not None:
            out[name] = agg.mean
        ci = estimates[metric.name].ci
        if ci is not None:
            out[f"{name}/ci_low"] = ci.low
            out[f"{name}/ci_high"] = ci.high
        if agg.median is not None:
            out[f"{name}/median"] = agg.median
        for count in AGGREGATE_COUNTS:
            out[f"{name}/{count}"] = getattr(agg, count)
    for tag, groups in result.breakdowns().items():
        for group in groups:
            prefix = f"by_{key_part(tag)}/{key_part(group.value)}"
            out[f"{prefix}/n_samples"] = group.n_samples
            for metric_name, agg in group.aggregates.items():
                if agg.mean is not None:
                    out[f"{prefix}/{key_part(metric_name)}"] = agg.mean
    out.update(usage_values("judge", result.config.get("usage")))
    out.update(usage_values("embeddings", result.config.get("embedding_usage")))
    out["n_samples"] = len(result)
    out["n_skipped"] = len(result.skipped)
    return out


def usage_values(prefix: str, usage: Mapping[str, Any] | None) -> dict[str, float]:
    """``judge/calls``, ``judge/total_tokens``... from a usage record; ``judge/cost`` only
    when a price was known (a currency is recorded), since an unpriced run counts 0.

    >>> usage_values("judge", {"calls": 3, "prompt_tokens": 10, "completion_tokens": 2,
    ...                        "cost": 0.0, "currency": None})
    {'judge/calls': 3, 'judge/prompt_tokens': 10, 'judge/completion_tokens': 2, \
'judge/total_tokens': 12}
    """
    if not usage:
        return {}
    out = {f"{prefix}/{k}": usage[k] for k in USAGE_COUNTS if _number(usage.get(k))}
    if _number(usage.get("prompt_tokens")) and _number(usage.get("completion_tokens")):
        out[f"{prefix}/total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    if usage.get("currency") and _number(usage.get("cost")):
        out[f"{prefix}/cost"] = usage["cost"]
    return out


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def pipeline_values(experiment: ExperimentResult) -> dict[str, float]:
    """An experiment's pipeline: failed samples and latency (seconds) of the calls that
    succeeded."""
    out: dict[str, float] = {"pipeline/n_failed": len(experiment.failed)}
    for stat, value in experiment.latency.items():
        if stat != "n" and value is not None:
            out[f"pipeline/latency_{stat}_s"] = value
    return out


# -- settings ----------------------------------------------------------------------------------
def run_config(result: EvaluationResult) -> dict[str, Any]:
    """The run's settings, nested: ragmeter version, dataset identity, metrics and their
    settings, judge and embeddings (one description when every metric shares it, else per
    metric), prompt versions."""
    config = result.config
    invocation = config.get("invocation") or {}
    ragmeter: dict[str, Any] = {
        "version": config.get("ragmeter_version"),
        "created_at": config.get("created_at"),
        "metrics": ",".join(m.name for m in result.metrics),
        "repeats": config.get("repeats") or 1,
    }
    if config.get("prompt_versions"):
        ragmeter["prompt_versions"] = ",".join(config["prompt_versions"])
    if invocation.get("language"):
        ragmeter["language"] = invocation["language"]
    if config.get("currency"):
        ragmeter["currency"] = config["currency"]
    dataset = dict(config.get("dataset") or {})
    metrics = {
        m.name: {"direction": m.direction.value, "kind": m.kind, **m.params} for m in result.metrics
    }
    out: dict[str, Any] = {"ragmeter": ragmeter, "dataset": dataset, "metrics": metrics}
    for section in ("judges", "embeddings"):
        described = shared(config.get(section) or {})
        if described:
            out["judge" if section == "judges" else "embeddings"] = described
    return out


def shared(per_metric: Mapping[str, Any]) -> dict[str, Any]:
    """One description when every metric's is the same, else metric -> description.

    >>> shared({"a": {"model": "m"}, "b": {"model": "m"}})
    {'model': 'm'}
    >>> shared({"a": {"model": "m"}, "b": {"model": "n"}})
    {'a': {'model': 'm'}, 'b': {'model': 'n'}}
    """
    distinct = {json.dumps(d, sort_keys=True, default=str) for d in per_metric.values()}
    return dict(next(iter(per_metric.values()))) if len(distinct) == 1 else dict(per_metric)


def flat_params(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested config as ``a.b.c -> text`` parameters: lists and other values as JSON, strings
    as they are; ``None`` left out (it says nothing).

    >>> flat_params({"judge": {"model": "m", "price": None, "stop": ["x"]}, "top_k": 5})
    {'judge.model': 'm', 'judge.stop': '["x"]', 'top_k': '5'}
    """
    out: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flat_params(value, f"{name}."))
        elif value is None:
            continue
        elif isinstance(value, str):
            out[name] = value
        else:
            out[name] = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return out


# -- samples and files -------------------------------------------------------------------------
def sample_columns(result: EvaluationResult) -> list[str]:
    columns = list(SAMPLE_COLUMNS)
    for m in result.metrics:
        columns += [m.name, f"{m.name}/status", f"{m.name}/reason"]
    return columns


def sample_rows(result: EvaluationResult) -> Iterator[list[Any]]:
    """One row per sample, in :func:`sample_columns` order; a score only where it is ok."""
    for s in result:
        row: list[Any] = [
            s.sample_id,
            s.row,
            s.sample.user_input,
            s.sample.response,
            s.sample.reference,
        ]
        for m in result.metrics:
            outcome = s.scores[m.name]
            ok = outcome.status is Status.OK
            row += [
                outcome.score if ok else None,
                outcome.status.value,
                outcome.reason or outcome.error,
            ]
        yield row


def write_files(record: RunRecord, folder: Path) -> list[Path]:
    """The run's files in ``folder``: the HTML report, results.jsonl, summary.json,
    config.json (the run's own record) and, for an experiment, pipeline.jsonl."""
    from ragmeter.diagnosis import diagnose
    from ragmeter.report import write_report

    result = record.evaluation
    folder.mkdir(parents=True, exist_ok=True)
    written = [
        write_report(result, folder / REPORT_FILE, findings=diagnose(result)),
        result.to_jsonl(folder / RESULTS_FILE),
    ]
    for name, data in ((SUMMARY_FILE, result.summary()), (CONFIG_FILE, result.config)):
        path = folder / name
        path.write_text(json.dumps(data, ensure_ascii=False, indent=2, default=str), "utf-8")
        written.append(path)
    if record.experiment is not None:
        path = folder / PIPELINE_FILE
        lines = (json.dumps(r, ensure_ascii=False, default=str) for r in record.experiment.pipeline)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        written.append(path)
    return written


def first_line(error: BaseException) -> str:
    """An error as one line: its type and the first line of what it says."""
    said = str(error).strip().splitlines()
    return f"{type(error).__name__}: {said[0]}" if said else type(error).__name__


class TrackingError(RuntimeError):
    """A run could not be logged to a tracker (server down, store not writable, login
    missing); the run itself is untouched: log it again later from its run directory."""
