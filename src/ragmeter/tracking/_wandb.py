"""Log a run to Weights & Biases: one W&B run with the summary metrics, config, a per-sample
table, the HTML report and the run's files as an artifact (``pip install 'ragmeter[wandb]'``)."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter._services import redact_secrets
from ragmeter.results import EvaluationResult
from ragmeter.tracking._record import (
    REPORT_FILE,
    RunRecord,
    TrackedRun,
    TrackingError,
    first_line,
    run_record,
    sample_columns,
    sample_rows,
    write_files,
)

if TYPE_CHECKING:
    from ragmeter.experiments import ExperimentResult

#: How long ``wandb.init`` and ``run.finish`` may wait for the W&B server, unless the
#: environment sets ``WANDB_INIT_TIMEOUT`` / ``WANDB_FINISH_TIMEOUT`` (W&B's own defaults:
#: 90 s to start, and no limit at all on uploading at the end).
INIT_TIMEOUT_S = 60.0
FINISH_TIMEOUT_S = 120.0

#: A W&B tag is at most 64 characters.
MAX_TAG_LENGTH = 64

_ARTIFACT_NAME = re.compile(r"[^A-Za-z0-9_.\-]")


def _import_wandb() -> Any:
    try:
        import wandb
    except ImportError:
        raise ImportError("logging to W&B needs wandb: pip install 'ragmeter[wandb]'") from None
    return wandb


def run_settings(wandb: Any, overrides: Mapping[str, Any] | None = None) -> Any:
    """Settings of our W&B run: a new run beside any you have open (``reinit``), bounded
    waits, no console capture (ragmeter's output is not the run's), no system metrics
    (nothing trains), no system metadata (it records the command line, which may carry a
    credential: ``--judge-base-url https://u:key@...``). ``overrides`` (any ``wandb.Settings``
    field) win. A setting this W&B version does not have is left out."""
    settings: dict[str, Any] = {
        "reinit": "create_new",
        "console": "off",
        "x_disable_stats": True,
        "x_disable_meta": True,
    }
    if "WANDB_INIT_TIMEOUT" not in os.environ:
        settings["init_timeout"] = INIT_TIMEOUT_S
    if "WANDB_FINISH_TIMEOUT" not in os.environ:
        settings["finish_timeout"] = FINISH_TIMEOUT_S
        settings["finish_timeout_raises"] = True
    fields = getattr(wandb.Settings, "model_fields", None)
    if isinstance(fields, Mapping):
        settings = {k: v for k, v in settings.items() if k in fields}
        if "reinit" in fields and "create_new" not in str(fields["reinit"].annotation):
            del settings["reinit"]  # a bool before W&B 0.19.10: its default applies
    settings.update(overrides or {})
    return wandb.Settings(**settings)


def log_to_wandb(
    result: EvaluationResult | ExperimentResult,
    *,
    project: str | None = None,
    entity: str | None = None,
    mode: str | None = None,
    run_name: str | None = None,
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, str] | Iterable[str] | None = None,
    dir: str | Path | None = None,
    settings: Mapping[str, Any] | None = None,
    artifacts: bool = True,
) -> TrackedRun:
    """Log ``result`` as a W&B run (``job_type="evaluation"``); returns where it went.

    Summary: the same numbers as :func:`log_to_mlflow` (``faithfulness``,
    ``faithfulness/ci_low``, ``faithfulness/coverage``, ``by_question_type/multi_hop/...``,
    ``judge/total_tokens``...; ``recall@5`` keeps its name). Config: the run's settings,
    nested (ragmeter, dataset, metrics, judge, embeddings) with ``params`` (the system's
    own) at the top. A ``samples`` table: id, question, response, reference and per metric
    its score, status and reason. The HTML report (``report``), and the files
    (report.html, results.jsonl, summary.json, config.json and the table) as an artifact of
    type ``ragmeter-evaluation``. ``tags``: W&B tags are names; a dict's values are dropped.

    ``project`` and ``entity``: default ``$WANDB_PROJECT`` / ``$WANDB_ENTITY``, W&B's own
    defaults after that. ``mode``: "online", "offline" (written under ``dir``; ``wandb sync``
    uploads it later) or "disabled"; default ``$WANDB_MODE``, else online. The run is a new
    one, never a run you have open (``reinit="create_new"``).

    Bounded: W&B may wait 60 s to start and 120 s to upload (``INIT_TIMEOUT_S``,
    ``FINISH_TIMEOUT_S``) unless ``WANDB_INIT_TIMEOUT`` / ``WANDB_FINISH_TIMEOUT`` or
    ``settings`` say otherwise; a failure is a :class:`TrackingError`, and the ragmeter run
    itself is never touched.
    """
    wandb = _import_wandb()
    # Read now: W&B reads its variables once per process (its first wandb.setup), so a
    # process that logged before would otherwise keep the values of that time.
    mode = mode or os.environ.get("WANDB_MODE") or None
    project = project or os.environ.get("WANDB_PROJECT") or None
    entity = entity or os.environ.get("WANDB_ENTITY") or None
    record = run_record(result, params=params, tags=tags, run_name=run_name)
    # W&B's own errors, and its service's (a timeout, a refused login) as plain exceptions
    failures = (wandb.errors.Error, OSError, ValueError, RuntimeError)
    try:
        run = wandb.init(
            project=project,
            entity=entity,
            mode=mode,
            name=record.name,
            dir=str(dir) if dir is not None else None,
            job_type="evaluation",
            config=record.config,
            tags=[t[:MAX_TAG_LENGTH] for t in record.tags],
            settings=run_settings(wandb, settings),
        )
    except failures as error:
        raise TrackingError(f"the W&B run did not start: {said(error)}") from error
    try:
        _log(wandb, run, record, artifacts)
    except failures as error:
        with suppress(*failures):  # finished marked failed, if W&B still answers
            run.finish(exit_code=1)
        raise TrackingError(
            f"the run was not logged to W&B (run {run.id}): {said(error)}"
        ) from error
    tracked = TrackedRun("wandb", str(run.id), run.url, run.project)
    try:
        run.finish()
    except failures as error:
        raise TrackingError(
            f"the W&B run {run.id} did not finish uploading: {said(error)}; what was "
            f"not uploaded stays under {run.dir} (wandb sync uploads it)"
        ) from error
    return tracked


def said(error: BaseException) -> str:
    """What W&B said, in one line, without a credential a URL in it may carry."""
    return redact_secrets(first_line(error))


def _log(wandb: Any, run: Any, record: RunRecord, artifacts: bool) -> None:
    result = record.evaluation
    run.summary.update(record.metrics)
    table = wandb.Table(
        columns=sample_columns(result),
        data=list(sample_rows(result)),
        allow_mixed_types=True,
    )
    if len(table.data) <= wandb.Table.MAX_ROWS:  # a larger table goes in the artifact only
        run.log({"samples": table})
    if not artifacts:
        return
    with tempfile.TemporaryDirectory(prefix="ragmeter-wandb-") as folder:
        files = write_files(record, Path(folder))
        report = Path(folder) / REPORT_FILE
        run.log({"report": wandb.Html(report.read_text(encoding="utf-8"), inject=False)})
        artifact = wandb.Artifact(
            _ARTIFACT_NAME.sub("-", f"ragmeter-{run.id}"),
            type="ragmeter-evaluation",
            description="ragmeter run: report, per-sample results, summary and run record",
        )
        for path in files:  # copied into W&B's staging folder: ours may go afterwards
            artifact.add_file(str(path), name=path.name)
        artifact.add(table, "samples")
        run.log_artifact(artifact)
