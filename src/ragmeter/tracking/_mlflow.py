"""Log a run to MLflow: one MLflow run with the metrics, parameters, tags, dataset and files
of a ragmeter run (``pip install 'ragmeter[mlflow]'``)."""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter._services import redact_secrets, redact_url
from ragmeter.results import EvaluationResult
from ragmeter.tracking._record import (
    RunRecord,
    TrackedRun,
    TrackingError,
    first_line,
    flat_params,
    run_record,
    write_files,
)

if TYPE_CHECKING:
    from ragmeter.experiments import ExperimentResult

#: MLflow's HTTP client waits 120 s per request and retries 7 times with backoff (minutes
#: against a server that is down); ours, unless the environment sets them, fails in seconds
#: for a refused connection and in about a minute for a server that never answers.
HTTP_BOUNDS = {"MLFLOW_HTTP_REQUEST_TIMEOUT": "20", "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2"}

#: MLflow's limits: entities per ``log_batch`` call, and a parameter's / a tag's length.
MAX_METRICS_PER_BATCH = 1000
MAX_PARAMS_TAGS_PER_BATCH = 100
MAX_PARAM_LENGTH = 6000
MAX_TAG_LENGTH = 8000

_INVALID = re.compile(r"[^/\w.\- ]")


def mlflow_key(name: str) -> str:
    """``name`` as an MLflow metric, parameter or tag name (letters, digits, ``_ - . /``
    and spaces): ``@k`` becomes ``_at_k`` as in MLflow's own metrics, anything else ``_``.

    >>> mlflow_key("recall@5/ci_low"), mlflow_key("by_lang/中文/mrr"), mlflow_key("a:b")
    ('recall_at_5/ci_low', 'by_lang/中文/mrr', 'a_b')
    """
    return _INVALID.sub("_", name.replace("@", "_at_"))


def _keyed(values: Mapping[str, Any], what: str) -> dict[str, Any]:
    """``values`` under MLflow names; two names that become one are an error, not a loss."""
    out: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for name, value in values.items():
        key = mlflow_key(name)
        if key in origin and origin[key] != name:
            raise ValueError(
                f"{what} {origin[key]!r} and {name!r} would both be logged to MLflow as "
                f"{key!r}; rename one of them"
            )
        origin[key] = name
        out[key] = value
    return out


@contextmanager
def bounded_requests() -> Iterator[None]:
    """MLflow's HTTP timeout and retries set to :data:`HTTP_BOUNDS` for the duration, where
    the environment does not set them (MLflow reads them at each request)."""
    added = [name for name in HTTP_BOUNDS if name not in os.environ]
    for name in added:
        os.environ[name] = HTTP_BOUNDS[name]
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def log_to_mlflow(
    result: EvaluationResult | ExperimentResult,
    *,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    run_name: str | None = None,
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, str] | Iterable[str] | None = None,
    run_id: str | None = None,
    artifacts: bool = True,
) -> TrackedRun:
    """Log ``result`` as an MLflow run; returns where it went.

    Metrics: per metric its mean (``faithfulness``), ``/ci_low`` and ``/ci_high`` (95%
    bootstrap, as the report shows them), ``/median``, ``/coverage`` and the counts
    ``/n_ok``, ``/n_total``, ``/n_failed``, ``/n_not_applicable``, ``/n_not_started``; per
    tag value the means (``by_question_type/multi_hop/faithfulness``); judge usage
    (``judge/calls``, ``judge/total_tokens``, ``judge/cost`` when priced). ``recall@5`` is logged as
    ``recall_at_5`` (MLflow names allow no ``@``). Parameters: the ragmeter version,
    dataset source, fingerprint and size, each metric's settings, the judge and embedding
    models as described in the run record, prompt versions, repeats, and ``params`` (the
    system's own: top_k, model...). Tags: ``tags`` and the markdown summary as the run's
    description. Files (``artifacts=True``): report.html, results.jsonl, summary.json and
    config.json. The dataset is logged as the run's input (name and fingerprint).

    ``tracking_uri``: default ``$MLFLOW_TRACKING_URI``, else MLflow's default (a local
    ``mlflow.db``). ``experiment``: a name, created when missing; default
    ``$MLFLOW_EXPERIMENT_NAME``, else MLflow's Default experiment. ``run_id``: log into
    that existing run (yours: it is left running) instead of creating one.

    Nothing secret is logged: the values come from the run record, which never holds a key.
    A server that does not answer fails within about a minute (``HTTP_BOUNDS``, unless
    ``MLFLOW_HTTP_REQUEST_TIMEOUT`` / ``MLFLOW_HTTP_REQUEST_MAX_RETRIES`` are set) with a
    :class:`TrackingError`; the ragmeter run itself is never touched.
    """
    try:
        import mlflow
    except ImportError:
        raise ImportError(
            "logging to MLflow needs mlflow (or mlflow-skinny): pip install 'ragmeter[mlflow]'"
        ) from None
    record = run_record(result, params=params, tags=tags, run_name=run_name)
    uri = tracking_uri or mlflow.get_tracking_uri()
    where = redact_url(str(uri))
    from mlflow.exceptions import MlflowException

    with bounded_requests():
        try:
            client = mlflow.MlflowClient(tracking_uri=uri)
            return _log(mlflow, client, record, str(uri), experiment, run_id, artifacts)
        except (MlflowException, OSError, ValueError) as error:
            said = redact_secrets(first_line(error), str(uri))
            raise TrackingError(f"the run was not logged to MLflow at {where}: {said}") from error


def _experiment(client: Any, name: str | None) -> tuple[str, str]:
    """The id and name of experiment ``name`` (created when missing), of
    ``$MLFLOW_EXPERIMENT_ID``, or of MLflow's Default experiment ("0")."""
    name = name or os.environ.get("MLFLOW_EXPERIMENT_NAME")
    if not name:
        found = os.environ.get("MLFLOW_EXPERIMENT_ID")
        return (found, found) if found else ("0", "Default")
    experiment = client.get_experiment_by_name(name)
    if experiment is None:
        return str(client.create_experiment(name)), name
    if experiment.lifecycle_stage == "deleted":
        raise ValueError(
            f"MLflow experiment {name!r} is deleted: restore it (mlflow experiments restore) "
            "or give another name"
        )
    return str(experiment.experiment_id), name


def _log(
    mlflow: Any,
    client: Any,
    record: RunRecord,
    uri: str,
    experiment: str | None,
    run_id: str | None,
    artifacts: bool,
) -> TrackedRun:
    from mlflow.entities import Metric, Param, RunTag

    own_run = run_id is None
    if run_id is not None:
        experiment_id = str(client.get_run(run_id).info.experiment_id)
        experiment = str(client.get_experiment(experiment_id).name)
    else:
        experiment_id, experiment = _experiment(client, experiment)
        run_id = str(client.create_run(experiment_id, run_name=record.name).info.run_id)
    try:
        now = int(time.time() * 1000)
        metrics = [Metric(k, float(v), now, 0) for k, v in _keyed(record.metrics, "metric").items()]
        params = [
            Param(k, v[:MAX_PARAM_LENGTH])
            for k, v in _keyed(flat_params(record.config), "parameter").items()
        ]
        tags = [RunTag(k, v[:MAX_TAG_LENGTH]) for k, v in _keyed(_tags(record), "tag").items()]
        for kind, entities, size in (
            ("metrics", metrics, MAX_METRICS_PER_BATCH),
            ("params", params, MAX_PARAMS_TAGS_PER_BATCH),
            ("tags", tags, MAX_PARAMS_TAGS_PER_BATCH),
        ):
            for start in range(0, len(entities), size):
                client.log_batch(run_id, **{kind: entities[start : start + size]})
        _log_dataset(client, run_id, record.evaluation)
        if artifacts:
            with tempfile.TemporaryDirectory(prefix="ragmeter-mlflow-") as folder:
                write_files(record, Path(folder))
                client.log_artifacts(run_id, folder)
    except BaseException:
        if own_run:
            _end(client, run_id, "FAILED")
        raise
    if own_run:
        client.set_terminated(run_id, "FINISHED")
    return TrackedRun("mlflow", run_id, _run_url(uri, experiment_id, run_id), experiment)


def _end(client: Any, run_id: str, status: str) -> None:
    """Mark a run we created as ended, if the store still answers (the error that stopped
    the logging is the one worth reporting)."""
    from mlflow.exceptions import MlflowException

    with suppress(MlflowException, OSError):
        client.set_terminated(run_id, status)


def _tags(record: RunRecord) -> dict[str, str]:
    from ragmeter.report import render_markdown

    note = render_markdown(record.evaluation)
    if len(note) > MAX_TAG_LENGTH:  # cut at a line, not inside a table row
        note = note[: note.rfind("\n", 0, MAX_TAG_LENGTH)]
    kind = "experiment" if record.experiment is not None else "evaluation"
    return {"ragmeter.kind": kind, "mlflow.note.content": note, **record.tags}


def _log_dataset(client: Any, run_id: str, result: EvaluationResult) -> None:
    """The dataset as the run's input, by name and fingerprint (MLflow's Datasets column)."""
    from mlflow.entities import Dataset, DatasetInput

    dataset = result.config.get("dataset") or {}
    fingerprint = dataset.get("fingerprint")
    if not fingerprint:
        return
    source = dataset.get("source")
    source = redact_url(str(source)) if source else None
    entity = Dataset(
        name=Path(source).name if source else "dataset",
        digest=str(fingerprint),
        source_type="local" if source else "code",
        source=json.dumps({"uri": source} if source else {}),
    )
    client.log_inputs(run_id, datasets=[DatasetInput(entity)])


def _run_url(uri: str, experiment_id: str, run_id: str) -> str | None:
    """The run's page on a tracking server; ``None`` for a local store."""
    if not uri.startswith(("http://", "https://")):
        return None
    return f"{redact_url(uri).rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}"
