"""``ragmeter eval``: score a dataset; the options a run records and ``--resume`` reads back."""

import datetime as dt
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, cast

import typer
from rich.markup import escape

from ragmeter.cli._app import (
    AllowJudgeChangeOption,
    BaselineOption,
    GateOption,
    JunitOption,
    MarkdownOption,
    MinCoverageOption,
    RunStoreOption,
    _fail,
    _print_problems,
    app,
    apply_gate,
    console,
    errors,
    open_run_store,
    parse_params,
    print_error,
    print_run,
    print_warnings,
    record_run,
)
from ragmeter.cli._backend import BackendGroup, BackendOptions
from ragmeter.cli._budget import (
    DryRunOption,
    LimitOption,
    MaxCostOption,
    SampleOption,
    SeedOption,
    StratifyOption,
    SubsetOptions,
    budget_stopped,
)
from ragmeter.cli._defaults import announce_defaults
from ragmeter.cli._exit import (
    ExitCode,
    FailureGroup,
    FailurePolicy,
    Outcome,
    fail_io,
    interrupted,
    io_message,
)
from ragmeter.cli._groups import option_groups
from ragmeter.cli._judging import (
    CacheGroup,
    CacheOptions,
    ConcurrencyOption,
    JudgeGroup,
    JudgeLanguageOption,
    JudgeOptions,
    whole_paragraphs,
)
from ragmeter.cli._tracking import TrackingGroup, TrackingOptions
from ragmeter.cli._trust import Trust, stored_trust

# ragmeter.runner._defaults: imports nothing
from ragmeter.runner import DEFAULT_CONCURRENCY, DEFAULT_INTERRUPT_WAIT_S

if TYPE_CHECKING:
    from ragmeter.judge import VerdictCalibration
    from ragmeter.prompts import Language
    from ragmeter.results import EvaluationResult
    from ragmeter.store import Store

LANGUAGES = (None, "en", "zh")


@dataclass(frozen=True)
class EvalOptions:
    """What ``ragmeter eval`` scores and how: the run records it (``to_record``, the
    ``invocation`` of ``config.json``) and ``--resume`` reads it back (``from_record``)."""

    data: Path | None = None
    metrics: str | None = None
    column_map: tuple[str, ...] = ()  # YOUR_NAME=ragmeter_name pairs, as given
    format: str | None = None
    skip_invalid: bool = False
    language: str | None = None
    judge: JudgeOptions = field(default_factory=JudgeOptions)
    repeats: int = 1
    subset: SubsetOptions = field(default_factory=SubsetOptions)  # --limit, --sample...
    tags: tuple[str, ...] | None = None  # --tags: metadata fields to break results down by
    # The run's name, tags and KEY=VALUE parameters in the run store (--name, --tag,
    # --param): a resumed run is recorded under them too.
    name: str | None = None
    run_tags: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    # --calibration NAME, NAME@vN or a .json file; --force-calibration for another judge.
    calibration: str | None = None
    force_calibration: bool = False

    def to_record(self) -> dict[str, Any]:
        return {
            "data": str(self.data),
            "metrics": self.metrics,
            "column_map": list(self.column_map),
            "format": self.format,
            "skip_invalid": self.skip_invalid,
            "language": self.language,
            "judge": self.judge.to_record(),
            "repeats": self.repeats,
            **self.subset.to_record(),
            **({} if self.tags is None else {"tags": list(self.tags)}),
            **({} if self.name is None else {"name": self.name}),
            **({"run_tags": list(self.run_tags)} if self.run_tags else {}),
            **({"params": list(self.params)} if self.params else {}),
            **({"calibration": self.calibration} if self.calibration else {}),
            **({"force_calibration": True} if self.force_calibration else {}),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "EvalOptions":
        data = record.get("data")
        return cls(
            data=Path(data) if data else None,
            metrics=record.get("metrics"),
            column_map=tuple(record.get("column_map") or ()),
            format=record.get("format"),
            skip_invalid=bool(record.get("skip_invalid")),
            language=record.get("language"),
            judge=JudgeOptions.from_record(record.get("judge") or {}),
            repeats=int(record.get("repeats") or 1),
            subset=SubsetOptions.from_record(record),
            tags=None if record.get("tags") is None else tuple(record["tags"]),
            name=record.get("name"),
            run_tags=tuple(record.get("run_tags") or ()),
            params=tuple(record.get("params") or ()),
            calibration=record.get("calibration"),
            force_calibration=bool(record.get("force_calibration")),
        )

    def or_recorded(self, recorded: "EvalOptions") -> "EvalOptions":
        """These options, each one not given taken from ``recorded``; the larger repeats."""
        given = {f.name: getattr(self, f.name) or getattr(recorded, f.name) for f in fields(self)}
        return EvalOptions(
            **{
                **given,
                "judge": self.judge.or_recorded(recorded.judge),
                "repeats": max(self.repeats, recorded.repeats),
                "subset": self.subset.or_recorded(recorded.subset),
                "tags": self.tags if self.tags is not None else recorded.tags,
            }
        )

    def loaded_calibration(self) -> "VerdictCalibration | None":
        """The --calibration named (a usage error listing those saved when not found)."""
        from ragmeter.judge import load_calibration

        return None if self.calibration is None else load_calibration(self.calibration)

    def require_data(self) -> Path:
        """The data file; a usage error when the data or the metrics are missing."""
        if self.data is None or not self.metrics:
            raise ValueError("give a DATA file and --metrics, or --resume RUN_DIR")
        return self.data

    def column_mapping(self) -> dict[str, str]:
        """``column_map`` as a dict; a pair without ``=`` is a usage error."""
        mapping = {}
        for pair in self.column_map:
            source, sep, target = pair.partition("=")
            if not sep or not source or not target:
                raise typer.BadParameter(
                    f"expected YOUR_NAME=ragmeter_name, got {pair!r}", param_hint="--column-map"
                )
            mapping[source.strip()] = target.strip()
        return mapping


def recorded_options(run_dir: Path) -> EvalOptions:
    """The options a run directory was started with by ``ragmeter eval``."""
    from ragmeter.results import STORE_FILE, RunDatabase

    if not (run_dir / STORE_FILE).exists():
        raise FileNotFoundError(f"nothing to resume: {str(run_dir)!r} holds no {STORE_FILE}")
    database = RunDatabase.in_dir(run_dir)
    try:
        record = database.get_record()
    finally:
        database.close()
    if not record:
        raise ValueError(
            f"{str(run_dir)!r} was not started by `ragmeter eval`: resume it from Python with "
            "evaluate(..., run_dir=..., resume=True)"
        )
    return EvalOptions.from_record(record)


def default_run_dir(data: Path) -> Path:
    return Path("runs") / f"{data.stem}-{dt.datetime.now():%Y%m%d-%H%M%S}"


def _dry_run(
    options: EvalOptions, resume: Path | None, cache: CacheOptions, max_cost: float | None
) -> None:
    """``--dry-run``: print what the run would ask its judge (with ``--resume``, only what
    the run directory lacks); no judge call, nothing written."""
    from ragmeter.cli._budget import print_estimate
    from ragmeter.metrics import resolve_metrics
    from ragmeter.runner import estimate

    metrics = resolve_metrics(cast(str, options.metrics))
    if options.language not in LANGUAGES:
        raise ValueError(f"--language must be en or zh, got {options.language!r}")
    found = estimate(
        options.require_data(),
        metrics,
        column_map=options.column_mapping(),
        skip_invalid=options.skip_invalid,
        format=options.format,
        judge=options.judge.build_if_needed(metrics, cache),
        language=cast("Language | None", options.language),
        run_dir=resume,
        resume=resume is not None,
        repeats=options.repeats,
        **options.subset.arguments(),
    )
    print_estimate(found, max_cost=max_cost)


def _judge_refused(result: "EvaluationResult", run_dir: Path) -> str | None:
    """When the judge refused the run's requests for a reason retrying cannot fix (a rejected
    key, a model that does not exist: HTTP 400/401/403/404), the run stopped at once: print
    the endpoint's error and return the reason for exit 2, with what was kept and how to go
    on; else ``None``."""
    from ragmeter._services import redact_secrets

    judge_error = result.config.get("judge_error")
    if not judge_error:
        return None
    print_error(redact_secrets(str(judge_error)))
    computed, total = _counts(result)
    return (
        f"the judge refused its configuration, so the run stopped: {computed} of {total} "
        f"results were computed and are kept in {run_dir}; fix the judge settings, then "
        f"run ragmeter eval --resume {run_dir}"
    )


def _endpoint_down(result: "EvaluationResult", run_dir: Path) -> str | None:
    """When an endpoint could not answer (its breaker opened: a long ``Retry-After``, or
    calls failing with no answer), the run stopped starting samples: the endpoint's state,
    what was kept and how to go on (the reason for exit 3); else ``None``."""
    from ragmeter._services import redact_secrets

    reason = result.config.get("endpoint_down")
    if not reason:
        return None
    computed, total = _counts(result)
    return (
        f"the run stopped: {redact_secrets(str(reason))}; {computed} of {total} results were "
        f"computed and are kept in {run_dir}; once the endpoint answers, run ragmeter eval "
        f"--resume {run_dir}"
    )


def _failed_results(
    result: "EvaluationResult", run_dir: Path, policy: FailurePolicy
) -> tuple[ExitCode, str] | None:
    """What the run's failed results mean for the exit code (``--max-failed-share``,
    ``--allow-failures``), with the most common error and what to do. A metric that does
    not apply to a sample (n/a) is a result, not a failure."""
    from ragmeter._services import redact_secrets
    from ragmeter.metrics import Status

    aggregates = result.aggregates.values()
    n_failed = sum(a.n_failed for a in aggregates)
    if not n_failed:
        return None
    errors_seen: Counter[str] = Counter()
    for sample in result:
        for outcome in sample.scores.values():
            if outcome.status is Status.FAILED:
                said = (outcome.error or outcome.reason or "no error recorded").strip()
                errors_seen[(said.splitlines() or [""])[0][:300]] += 1
    message, count = errors_seen.most_common(1)[0]
    example = (
        f"most common error ({count}x): {redact_secrets(message)}; compute them again with "
        f"ragmeter eval --resume {run_dir}, or accept them with --allow-failures"
    )
    return policy.check(n_failed, sum(a.n_total for a in aggregates), "results", example)


def _counts(result: "EvaluationResult") -> tuple[int, int]:
    """(results computed, n/a included; results in all)."""
    aggregates = result.aggregates.values()
    computed = sum(a.n_ok + a.n_not_applicable for a in aggregates)
    return computed, sum(a.n_total for a in aggregates)


def _computed(result: "EvaluationResult") -> str:
    """``all 40 results computed (3 n/a)``, or ``28 of 40 results computed``."""
    aggregates = result.aggregates.values()
    computed, total = _counts(result)
    n_na = sum(a.n_not_applicable for a in aggregates)
    done = f"all {total}" if computed == total else f"{computed} of {total}"
    return f"{done} results computed" + (f" ({n_na} n/a)" if n_na else "")


def _not_started(result: "EvaluationResult", run_dir: Path) -> tuple[ExitCode, str] | None:
    """Exit 3 for results the run never started that neither its budget nor a refused
    judge explains (they are not failures, yet the run is not complete); else ``None``."""
    aggregates = result.aggregates.values()
    n_not_started = sum(a.n_not_started for a in aggregates)
    if not n_not_started:
        return None
    total = sum(a.n_total for a in aggregates)
    return (
        ExitCode.RESULTS_FAILED,
        f"{n_not_started} of {total} results were not started (the run stopped before "
        f"them); compute them with ragmeter eval --resume {run_dir}",
    )


def _stopped_by_storage(error: OSError, run_dir: Path | None) -> NoReturn:
    """Exit 4: the file that failed and why, what is kept and how to go on."""
    from ragmeter.results import STORE_FILE

    if run_dir is not None and (run_dir / STORE_FILE).exists():
        kept = (
            f"the run stopped; what was computed before is kept in {run_dir}: fix the cause "
            f"(free space, a writable folder), then run ragmeter eval --resume {run_dir}"
        )
    else:
        kept = "nothing was computed"
    if error.filename is None and error.errno is not None and run_dir is not None:
        # A write that names no file (results.jsonl being written, say): name the folder.
        error = OSError(error.errno, error.strerror or os.strerror(error.errno), str(run_dir))
    fail_io(error, kept=kept)


def _report_written(result: "EvaluationResult", report: Path) -> bool:
    """Write the HTML report; a file that cannot be written is said on stderr (False)."""
    from ragmeter.diagnosis import diagnose
    from ragmeter.report import write_report

    try:
        write_report(result, report, findings=diagnose(result))
    except OSError as error:
        print_error(io_message(error))
        return False
    console.print(f"report: {report}", highlight=False)
    return True


def _print_notes(result: "EvaluationResult", run_dir: Path) -> None:
    """The rows skipped, the column warnings and where the results are (also with -q)."""
    if result.skipped:
        errors.print(f"[yellow]skipped {len(result.skipped)} invalid row(s):[/yellow]")
        _print_problems(result.skipped)
    print_warnings(result.config.get("column_warnings") or [])  # e.g. a misspelt field name
    console.print(f"per-sample results: {run_dir / 'results.jsonl'}", highlight=False)


def _print_summary(
    result: "EvaluationResult",
    quiet: bool,
    run_dir: Path,
    opened: "Store | None",
    store: str | None,
) -> Trust:
    """The run's summary, with each judged metric's validation on the labels kept in the
    run store (none read with --no-store); returns them for the gate."""
    trust = Trust() if opened is None else stored_trust(result, store, opened)
    print_run(
        result,
        quiet=quiet,
        run=str(run_dir),
        labelled=trust.labelled,
        validations=trust.validations,
    )
    return trust


@app.command("eval")
@whole_paragraphs
@option_groups
def eval_command(
    data: Annotated[
        Path | None,
        typer.Argument(help="Dataset file: .jsonl, .json, .csv or .parquet."),
    ] = None,
    metrics: Annotated[
        str | None,
        typer.Option("--metrics", "-m", help="Comma-separated metric names, e.g. mrr,ndcg@10."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Run directory for results (default runs/NAME-TIME)."),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            help="Finish a stopped run: compute only its missing or failed results.",
        ),
    ] = None,
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Evaluate the valid rows and list the others.")
    ] = False,
    column_map: Annotated[
        list[str] | None,
        typer.Option("--column-map", help="Rename a column: YOUR_NAME=ragmeter_name (repeatable)."),
    ] = None,
    format: Annotated[
        str | None,
        typer.Option("--format", help="jsonl, json, csv or parquet (default: from extension)."),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="No progress display and no per-tag breakdowns (ragmeter show prints them); "
            "the summary, diagnosis, notes, where the results are and the exit line stay.",
        ),
    ] = False,
    judge: JudgeGroup = JudgeOptions(),
    language: JudgeLanguageOption = None,
    concurrency: ConcurrencyOption = DEFAULT_CONCURRENCY,
    cache: CacheGroup = CacheOptions(),
    refresh_cache: Annotated[
        bool, typer.Option("--refresh-cache", help="Ignore cached answers; store new ones.")
    ] = False,
    report: Annotated[
        Path | None, typer.Option("--report", help="Also write the HTML report to this file.")
    ] = None,
    repeats: Annotated[
        int,
        typer.Option(
            "--repeats",
            min=1,
            help="Judge each sample R times to measure judge noise (use a temperature > 0).",
        ),
    ] = 1,
    judge_temperature: Annotated[
        float | None, typer.Option("--judge-temperature", help="The judge's temperature.")
    ] = None,
    gate: GateOption = None,
    baseline: BaselineOption = None,
    allow_judge_change: AllowJudgeChangeOption = False,
    junit: JunitOption = None,
    markdown: MarkdownOption = None,
    min_coverage: MinCoverageOption = 1.0,
    store: RunStoreOption = None,
    no_store: Annotated[
        bool, typer.Option("--no-store", help="Do not record the run in the run store.")
    ] = False,
    name: Annotated[str | None, typer.Option("--name", help="The run's name in the store.")] = None,
    run_tag: Annotated[
        list[str] | None, typer.Option("--tag", help="A tag for the run (repeatable).")
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", help="A parameter of the system, KEY=VALUE (repeatable)."),
    ] = None,
    failures: FailureGroup = FailurePolicy(),
    limit: LimitOption = None,
    sample: SampleOption = None,
    seed: SeedOption = None,
    stratify: StratifyOption = None,
    dry_run: DryRunOption = False,
    max_cost: MaxCostOption = None,
    tags: Annotated[
        str | None,
        typer.Option(
            "--tags",
            help="Break results down by these metadata fields, comma-separated (default: "
            "text fields with few values; not scores, numbers, free text or ids).",
        ),
    ] = None,
    calibration: Annotated[
        str | None,
        typer.Option(
            "--calibration",
            help="Decide verdicts on P(yes) calibrated by a calibration fitted on your labels "
            "(ragmeter calibrate fit): NAME (its latest version), NAME@vN or a .json file.",
        ),
    ] = None,
    force_calibration: Annotated[
        bool,
        typer.Option(
            "--force-calibration",
            help="Use --calibration even though it was fitted for another judge.",
        ),
    ] = False,
    tracking: TrackingGroup = TrackingOptions(),
    backend: BackendGroup = BackendOptions(),
    interrupt_wait: Annotated[
        float,
        typer.Option(
            "--interrupt-wait",
            min=0.0,
            help="Seconds the first Ctrl-C (or SIGTERM) waits for the samples in flight, so "
            "their answers are kept and not paid again by --resume; a second one stops at once.",
        ),
    ] = DEFAULT_INTERRUPT_WAIT_S,
) -> None:
    """Score a dataset with the given metrics; results are saved as they are computed.

    LLM metrics use the judge given by the --judge-* options, else the RAGMETER_JUDGE_* (or
    OPENAI_*) environment, else the embedded offline judge. The API key is read from the
    environment only. A stopped run (killed, interrupted, judge down) continues with
    `ragmeter eval --resume RUN_DIR`; nothing already computed is computed again.

    Exit code 0 when every result was computed (n/a counts as computed), 1 when the gate
    failed, 2 for a usage or judge configuration error (e.g. a rejected key: the run stops,
    what was computed is kept), 3 when more results failed than --max-failed-share allows
    (default 0; --allow-failures accepts any) or --max-cost stopped the run before every
    sample was judged (what was judged is kept: --resume with a higher --max-cost goes on),
    or when a gate rule's metric has fewer results scored than --min-coverage (default 1:
    all, n/a aside; a rule's min_coverage overrides it), 4 when a file, the run store or a
    tracker (--mlflow, --wandb) could not be read or written, 130 when interrupted. The last
    line says which and why. A run that a tracker did not take is kept in its directory.
    """
    from ragmeter.dataset import DatasetError
    from ragmeter.judge import JudgeError
    from ragmeter.metrics import UnknownMetricError, resolve_metrics
    from ragmeter.runner import RayBackendError, evaluate

    given = EvalOptions(
        data=data,
        metrics=metrics,
        column_map=tuple(column_map or ()),
        format=format,
        skip_invalid=skip_invalid,
        language=language,
        judge=replace(judge, temperature=judge_temperature),
        repeats=repeats,
        subset=SubsetOptions(limit, sample, seed, stratify),
        tags=None if tags is None else tuple(t.strip() for t in tags.split(",") if t.strip()),
        name=name,
        run_tags=tuple(run_tag or ()),
        params=tuple(param or ()),
        calibration=calibration,
        force_calibration=force_calibration,
    )
    cache = replace(cache, refresh=refresh_cache)
    run_dir: Path | None = resume or output
    try:
        options = given if resume is None else given.or_recorded(recorded_options(resume))
        data = options.require_data()
        if dry_run:  # nothing is called, nothing written
            _dry_run(options, resume, cache, max_cost)
            raise typer.Exit(ExitCode.OK)
        run_params = parse_params(list(options.params))
        name, run_tag = options.name, list(options.run_tags)
        tracking.check()  # a tracker not installed fails now, before the run
        run_dir = run_dir or default_run_dir(data)
        # A store that cannot be used fails now, before the run pays for any judge call.
        opened = None if no_store else open_run_store(store, hint="; or pass --no-store")
        # A calibration that cannot be found fails now, listing those there are.
        chosen_backend, calibrated = backend.checked(), options.loaded_calibration()
        resolved = resolve_metrics(cast(str, options.metrics))
        built = announce_defaults(options.judge.build_if_needed(resolved, cache), resolved)
        if options.language not in LANGUAGES:
            raise ValueError(f"--language must be en or zh, got {options.language!r}")
        result = evaluate(  # recording the options with the run, for --resume
            data,
            resolved,
            column_map=options.column_mapping(),
            skip_invalid=options.skip_invalid,
            format=options.format,
            judge=built,
            language=cast("Language | None", options.language),
            concurrency=concurrency,
            run_dir=run_dir,
            resume=resume is not None,
            progress=not quiet,
            record=options.to_record(),
            repeats=options.repeats,
            max_cost=max_cost,
            **options.subset.arguments(),
            tags=options.tags,
            backend=chosen_backend,
            interrupt_wait_s=interrupt_wait,
            calibration=calibrated,
            force_calibration=options.force_calibration,
        )
    except KeyboardInterrupt:
        interrupted(f"what was computed is saved; continue with ragmeter eval --resume {run_dir}")
    except (
        UnknownMetricError,
        DatasetError,
        FileNotFoundError,
        FileExistsError,
        ValueError,
        ImportError,
        JudgeError,
        RayBackendError,
    ) as error:
        _fail(str(error))
    except OSError as error:  # disk full, read-only media, a corrupt run.db: one line, exit 4
        _stopped_by_storage(error, run_dir)
    if not len(result):
        _fail(f"no valid row to evaluate in {data}", result.skipped)

    outcome = Outcome()
    trust = _print_summary(result, quiet, run_dir, opened, store)
    if opened is not None:  # a store that fails says why on stderr
        recorded = record_run(result, opened, name=name, tags=run_tag or [], params=run_params)
        if recorded is None:
            outcome.add(ExitCode.IO_ERROR, "the run was not recorded in the run store")
        else:
            console.print(f"recorded as run {recorded.id[:8]} ({escape(recorded.name)})")
    for problem in tracking.log(result, name=name, tags=run_tag or [], params=run_params):
        outcome.add(*problem)
    if report is not None and not _report_written(result, report):
        outcome.add(ExitCode.IO_ERROR, f"the report {report} was not written")
    refused = _judge_refused(result, run_dir)
    stopped = budget_stopped(result, run_dir) or _endpoint_down(result, run_dir)
    if stopped is not None:
        outcome.add(ExitCode.RESULTS_FAILED, stopped)
    if refused is not None:
        outcome.add(ExitCode.USAGE, refused)
    _print_notes(result, run_dir)
    if refused is None and stopped is None:  # results the run did not reach are not failures
        # What it left undone: more failed results than allowed, then samples never started.
        for left in (_failed_results(result, run_dir, failures), _not_started(result, run_dir)):
            if left is not None:
                outcome.add(*left)
        if gate is not None:
            outcome.add(
                *apply_gate(
                    result,
                    gate,
                    baseline,
                    candidate_name=str(run_dir),
                    junit=junit,
                    markdown=markdown,
                    allow_judge_change=allow_judge_change,
                    min_coverage=min_coverage,
                    store=store,
                    validations=trust.validations if opened is not None else None,
                )
            )
    if result.store is not None:
        result.store.close()  # its journal goes into run.db: the folder is complete and can move
    outcome.exit(_computed(result))
