"""``@experiment``: run a RAG pipeline over a dataset, evaluate what it returned, store the run.

Unlike RAGAS's ``@experiment``, calls run under a concurrency limit with a timeout and
retries, results come back in dataset order (not completion order), and a sample whose
pipeline failed is kept and scored as failed, so an average never quietly covers only the
samples that worked.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, ParamSpec, TypeVar

from ragmeter._services import run_sync
from ragmeter._version import __version__
from ragmeter.dataset import Dataset, Sample, load_dataset
from ragmeter.embed import Embeddings
from ragmeter.experiments._adapters import as_pipeline
from ragmeter.experiments._calls import Caller, CallPolicy, PipelineCall
from ragmeter.experiments._outputs import OUTPUT_FIELDS, without_outputs
from ragmeter.experiments._result import ExperimentResult
from ragmeter.judge import Judge
from ragmeter.metrics import Metric, MetricResult, resolve_metrics
from ragmeter.results import EvaluationResult, MetricInfo, SampleResult
from ragmeter.runner import ProgressReporter, aevaluate, check_inputs, make_progress
from ragmeter.store import Store

P = ParamSpec("P")
R = TypeVar("R")

#: Options for loading the dataset.
LOAD_OPTIONS = frozenset({"column_map", "format", "skip_invalid"})
#: Options passed on to :func:`ragmeter.aevaluate` for scoring the outputs.
SCORE_OPTIONS = frozenset({"language", "batch_size", "repeats"})
#: Parameter defaults of these types are recorded as the experiment's parameters.
_PLAIN = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class Settings:
    """An experiment's settings, fixed when it is declared."""

    dataset: Any
    metrics: list[Metric]
    name: str | None
    params: dict[str, Any]
    tags: tuple[str, ...]
    notes: str | None
    policy: CallPolicy
    store: Store | str | bool | None
    judge: Judge | None
    embeddings: Embeddings | None
    progress: bool | ProgressReporter | None
    options: dict[str, Any]


def _signature(fn: Callable[..., Any]) -> tuple[set[str] | None, dict[str, Any]]:
    """The keyword arguments ``fn`` takes after the sample (``None``: any, it has
    ``**kwargs``) and the plain defaults among them."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # some builtins and C callables have no signature
        return set(), {}
    named = [
        p
        for p in parameters[1:]
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    defaults = {
        p.name: p.default
        for p in named
        if p.default is not inspect.Parameter.empty and isinstance(p.default, _PLAIN)
    }
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None, defaults
    return {p.name for p in named}, defaults


def _source_dir(fn: Callable[..., Any]) -> Path | None:
    """The pipeline's source directory: the git commit recorded is the pipeline's own."""
    try:
        source = inspect.getsourcefile(inspect.unwrap(fn))
    except TypeError:
        return None
    return Path(source).parent if source else None


def _merged(config: dict[str, Any], part: Mapping[str, Any]) -> None:
    """Fold the config of one evaluation into the experiment's (judges, usage...)."""
    for key in ("judges", "embeddings"):
        if part.get(key):
            config.setdefault(key, {}).update(part[key])
    if part.get("prompt_versions"):
        config["prompt_versions"] = sorted(
            {*config.get("prompt_versions", []), *part["prompt_versions"]}
        )
    for key in ("usage", "embedding_usage"):
        if part.get(key):
            total = dict(config.get(key) or {})
            for name, value in part[key].items():
                before = total.get(name)
                if isinstance(value, (int, float)) and isinstance(before, (int, float)):
                    total[name] = before + value
                elif before is None:
                    total[name] = value
            config[key] = total
    for key in ("currency", "judge_error"):
        if part.get(key) and not config.get(key):
            config[key] = part[key]


async def _score(
    data: Dataset,
    calls: Sequence[PipelineCall],
    settings: Settings,
    reporter: ProgressReporter,
) -> tuple[list[SampleResult], dict[str, Any]]:
    """Every sample's results, in dataset order, and the judges' config and usage.

    The samples whose pipeline succeeded are evaluated together, less the metrics a sample
    lacks a field for (the pipeline did not return it), which fail for that sample with the
    field named; every metric of a sample whose pipeline failed fails with its error.
    """
    metrics = settings.metrics
    evaluated: list[Sample] = []
    scores: list[dict[str, MetricResult]] = [{} for _ in calls]
    usage: list[dict[str, Any] | None] = [None] * len(calls)
    groups: dict[tuple[str, ...], list[int]] = {}
    for index, (sample, call) in enumerate(zip(data.samples, calls)):
        if call.outputs is None:
            evaluated.append(without_outputs(sample))
            scores[index] = {m.name: MetricResult.failed(call.failure) for m in metrics}
            continue
        merged = call.outputs.sample
        evaluated.append(merged)
        usable = tuple(m.name for m in metrics if not m.missing_fields(merged))
        groups.setdefault(usable, []).append(index)
        for m in metrics:
            if m.name not in usable:
                missing = ", ".join(m.missing_fields(merged))
                scores[index][m.name] = MetricResult.failed(
                    f"missing field(s): {missing} (the pipeline did not return it)"
                )
    config: dict[str, Any] = {}
    for names, indices in groups.items():
        chosen = [m for m in metrics if m.name in names]
        if not chosen:
            continue
        part = await aevaluate(
            Dataset(
                [evaluated[i] for i in indices],
                source=data.source,
                rows=[data.rows[i] for i in indices],
            ),
            chosen,
            judge=settings.judge,
            embeddings=settings.embeddings,
            progress=reporter,
            **{k: v for k, v in settings.options.items() if k in SCORE_OPTIONS},
        )
        _merged(config, part.config)
        for index, result in zip(indices, part.samples):
            scores[index].update(result.scores)
            usage[index] = result.usage
    samples = [
        SampleResult(
            index,
            data.rows[index],
            data.ids[index],
            evaluated[index],
            {m.name: scores[index][m.name] for m in metrics},
            usage[index],
        )
        for index in range(len(calls))
    ]
    return samples, config


class Experiment(Generic[P, R]):
    """A RAG pipeline declared as an experiment: still callable on one sample as before,
    and :meth:`run` / :meth:`arun` run it over the dataset, evaluate and store the run."""

    def __init__(self, fn: Callable[P, R], settings: Settings) -> None:
        self.fn = fn
        self.settings = settings
        self._accepts, self._defaults = _signature(fn)
        functools.update_wrapper(self, fn)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<experiment {self.name!r} of {getattr(self.fn, '__qualname__', self.fn)!r}>"

    @property
    def name(self) -> str:
        return self.settings.name or str(getattr(self.fn, "__name__", "experiment"))

    def params(self, **overrides: Any) -> dict[str, Any]:
        """The parameters a run with ``overrides`` records: the pipeline's plain keyword
        defaults, then the declared ``params``, then the overrides."""
        known = set(self._defaults) | set(self.settings.params)
        if self._accepts is not None:
            known |= self._accepts
        unknown = sorted(set(overrides) - known) if self._accepts is not None else []
        if unknown:
            raise TypeError(
                f"experiment {self.name!r} has no parameter {', '.join(map(repr, unknown))}: "
                f"declare it in params= or as a keyword argument of the pipeline "
                f"(known: {sorted(known)})"
            )
        return {**self._defaults, **self.settings.params, **overrides}

    def run(self, **overrides: Any) -> ExperimentResult:
        """Run the pipeline over the dataset with ``overrides`` of its parameters (e.g.
        ``top_k=8``), evaluate, store the run and return the results in dataset order."""
        return run_sync(self.arun(**overrides))

    async def arun(self, **overrides: Any) -> ExperimentResult:
        """:meth:`run` for async code."""
        settings = self.settings
        params = self.params(**overrides)
        passed = {k: v for k, v in params.items() if self._accepts is None or k in self._accepts}
        load = {k: v for k, v in settings.options.items() if k in LOAD_OPTIONS}
        data = await asyncio.to_thread(load_dataset, settings.dataset, **load)
        # The rows lacking an input some metric needs, checked before any pipeline call: a
        # missing reference is not worth finding after an hour of calls. Fields the pipeline
        # returns are checked on its outputs instead.
        data = check_inputs(
            data,
            settings.metrics,
            skip_invalid=bool(load.get("skip_invalid")),
            given_later=OUTPUT_FIELDS,
            hint="Fix these rows (or choose other metrics), or pass skip_invalid=True to run "
            "the experiment on the valid rows only.",
        )
        store = await asyncio.to_thread(self._open_store)
        progress = settings.progress
        reporter = progress if not isinstance(progress, bool | None) else make_progress(progress)
        started = dt.datetime.now(dt.timezone.utc)
        try:
            reporter.start(f"pipeline {self.name}", len(data))
            caller = Caller(
                self.fn,
                settings.policy,
                passed,
                on_done=lambda call: reporter.advance(1, failed=0 if call.ok else 1),
            )
            calls = await caller.call_all(data.samples, data.ids)
            samples, judged = await _score(data, calls, settings, reporter)
        finally:
            reporter.stop()
        result = EvaluationResult(
            samples,
            [
                MetricInfo(
                    m.name,
                    m.direction,
                    m.params(),
                    f"{type(m).__module__}.{type(m).__qualname__}",
                )
                for m in settings.metrics
            ],
            self._config(data, params, started, judged),
            data.invalid,
        )
        pipeline = [call.to_dict() for call in calls]
        run = None
        if store is not None:
            run = await asyncio.to_thread(
                store.record,
                result,
                name=self.name,
                params=params,
                tags=settings.tags,
                notes=settings.notes,
                pipeline=pipeline,
                project_dir=_source_dir(self.fn),
            )
        return ExperimentResult(result, run, pipeline, self.name, params)

    def _open_store(self) -> Store | None:
        chosen = self.settings.store
        if chosen is False:
            return None
        if isinstance(chosen, Store):
            return chosen
        return Store(chosen if isinstance(chosen, str) else None)

    def _config(
        self,
        data: Dataset,
        params: Mapping[str, Any],
        started: dt.datetime,
        judged: Mapping[str, Any],
    ) -> dict[str, Any]:
        """The run record. The dataset fingerprint is of the inputs, so every run of the
        experiment, whatever its parameters, is found under the same dataset."""
        policy = self.settings.policy
        return {
            "ragmeter_version": __version__,
            "created_at": started.isoformat(timespec="seconds"),
            "name": self.name,
            "dataset": {
                "source": data.source,
                "fingerprint": data.fingerprint(),
                "n_samples": len(data),
                "n_skipped": len(data.invalid),
            },
            "repeats": self.settings.options.get("repeats", 1),
            **judged,
            "experiment": {
                "pipeline": f"{getattr(self.fn, '__module__', '?')}."
                f"{getattr(self.fn, '__qualname__', '?')}",
                "params": dict(params),
                "concurrency": policy.concurrency,
                "timeout_s": policy.timeout_s,
                "retries": policy.retries,
                "backoff_s": policy.backoff_s,
            },
        }


def experiment(
    dataset: Dataset | str | Any,
    metrics: Sequence[Metric | str] | str,
    *,
    name: str | None = None,
    params: Mapping[str, Any] | None = None,
    tags: Iterable[str] = (),
    notes: str | None = None,
    concurrency: int = 8,
    timeout_s: float | None = 60.0,
    retries: int = 2,
    backoff_s: float = 0.1,
    store: Store | str | bool | None = None,
    judge: Judge | None = None,
    embeddings: Embeddings | None = None,
    progress: bool | ProgressReporter | None = False,
    **evaluate_options: Any,
) -> Callable[[Callable[P, R]], Experiment[P, R]]:
    """Declare a RAG pipeline as an experiment over ``dataset``, scored with ``metrics``.

    The pipeline takes a :class:`~ragmeter.Sample` (and, as keyword arguments, those of the
    experiment's ``params`` its signature accepts), sync or async, and returns the response
    as a ``str`` or a dict / object with any of ``response``, ``retrieved_contexts`` and
    ``retrieved_context_ids``, or what a LangChain or LlamaIndex pipeline returns (a
    Runnable, query engine or retriever can be passed in place of the function: it is
    called with ``sample.user_input``). ``.run(**overrides)`` calls it on every sample, at most
    ``concurrency`` at once, each attempt limited to ``timeout_s`` seconds and retried up to
    ``retries`` times (waiting ``backoff_s * 2**n``); evaluates what it returned; records
    the run (params, outputs, latency, errors) in ``store`` (a :class:`Store`, its URL, or
    ``None`` for ``$RAGMETER_STORE_URL`` / ``.ragmeter/runs.db``; ``False``: not recorded);
    and returns an :class:`ExperimentResult` in dataset order. A sample whose pipeline
    failed is kept: its metrics fail with the pipeline's error.

    ``evaluate_options``: ``column_map``, ``format``, ``skip_invalid`` (loading the dataset)
    and ``language``, ``batch_size``, ``repeats`` (scoring), as :func:`ragmeter.evaluate`
    takes them.

    >>> @experiment([{"id": "q1", "user_input": "2+2?", "reference": "4"}], ["exact_match"],
    ...             store=False)
    ... def calculator(sample, precision=0):
    ...     return "4"
    >>> calculator.run().aggregates["exact_match"].mean
    1.0
    """
    unknown = sorted(set(evaluate_options) - LOAD_OPTIONS - SCORE_OPTIONS)
    if unknown:
        raise TypeError(
            f"experiment() got unexpected option(s) {', '.join(map(repr, unknown))}; it takes "
            f"{', '.join(sorted(LOAD_OPTIONS | SCORE_OPTIONS))} besides its own arguments"
        )
    settings = Settings(
        dataset=dataset,
        metrics=resolve_metrics(metrics if isinstance(metrics, str) else list(metrics)),
        name=name,
        params=dict(params or {}),
        tags=tuple(tags),
        notes=notes,
        policy=CallPolicy(concurrency, timeout_s, retries, backoff_s),
        store=store,
        judge=judge,
        embeddings=embeddings,
        progress=progress,
        options=dict(evaluate_options),
    )

    def declare(fn: Callable[P, R]) -> Experiment[P, R]:
        # A LangChain Runnable or LlamaIndex query engine is called with each question.
        pipeline: Callable[..., Any] = as_pipeline(fn) or fn
        if not callable(pipeline):
            raise TypeError(
                f"@experiment wraps a function (or a LangChain Runnable, a LlamaIndex query "
                f"engine or retriever), got {type(fn).__name__}"
            )
        return Experiment(pipeline, settings)

    return declare
