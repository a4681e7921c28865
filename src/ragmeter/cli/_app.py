"""The ``ragmeter`` command line."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragmeter._version import __version__
from ragmeter.dataset import DatasetError, InvalidRow
from ragmeter.diagnosis import Finding
from ragmeter.judge import Judge
from ragmeter.metrics import SPECS, Direction, UnknownMetricError, resolve_metrics
from ragmeter.results import EvaluationResult
from ragmeter.runner import evaluate
from ragmeter.runner._evaluate import DEFAULT_CONCURRENCY

app = typer.Typer(
    name="ragmeter",
    help="Evaluate RAG systems: is it good, where does it fail, did a change help?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
errors = Console(stderr=True)

EXIT_USAGE = 2


def _version(value: bool) -> None:
    if value:
        console.print(f"ragmeter {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Evaluate RAG systems: is it good, where does it fail, did a change help?"""


def _parse_column_map(pairs: list[str]) -> dict[str, str]:
    mapping = {}
    for pair in pairs:
        source, sep, target = pair.partition("=")
        if not sep or not source or not target:
            raise typer.BadParameter(
                f"expected YOUR_NAME=ragmeter_name, got {pair!r}", param_hint="--column-map"
            )
        mapping[source.strip()] = target.strip()
    return mapping


def _print_problems(rows: list[InvalidRow]) -> None:
    for invalid in rows:
        for problem in invalid.problems:
            errors.print(f"  - {problem}", highlight=False, markup=False, soft_wrap=True)


def _fail(message: str, rows: list[InvalidRow] | None = None) -> NoReturn:
    errors.print(f"[bold red]error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True)
    _print_problems(rows or [])
    raise typer.Exit(EXIT_USAGE)


def _format(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def summary_table(result: EvaluationResult) -> Table:
    """Per metric: mean with its 95% bootstrap interval, coverage and counts (the median and
    the rest are in summary.json and the report)."""
    from ragmeter.stats import estimate_means

    estimates = estimate_means(result, n_resamples=2_000)
    table = Table(title=f"{len(result)} samples", title_justify="left")
    table.add_column("metric", no_wrap=True)
    table.add_column("mean", justify="right")
    table.add_column("95% CI", justify="right", no_wrap=True)
    table.add_column("scored", justify="right")
    table.add_column("n/a", justify="right")
    table.add_column("failed", justify="right")
    table.add_column("", justify="center")
    for name, agg in result.aggregates.items():
        ci = estimates[name].ci
        table.add_row(
            name,
            _format(agg.mean),
            "—" if ci is None else f"{ci.low:.2f}–{ci.high:.2f}",
            f"{agg.n_ok}/{agg.n_total}",
            str(agg.n_not_applicable),
            f"[red]{agg.n_failed}[/red]" if agg.n_failed else "0",
            "↑" if agg.direction is Direction.HIGHER_IS_BETTER else "↓",
        )
    return table


def print_judge_noise(result: EvaluationResult) -> None:
    """For a run with repeats: how much of each judged metric's spread is the judge's."""
    from ragmeter.stats import judge_noise

    if int(result.config.get("repeats") or 1) < 2:
        return
    try:
        noise = judge_noise(result)
    except ValueError as error:
        console.print(f"[yellow]judge noise:[/yellow] {escape(str(error))}", highlight=False)
        return
    console.print("[bold]judge noise[/bold]")
    for estimate in noise.values():
        console.print(f"  {escape(estimate.summary())}", highlight=False)


def print_findings(findings: list[Finding]) -> None:
    """The diagnosis: what fired, on how many samples, the figures and what to try."""
    console.print("[bold]diagnosis[/bold]")
    for f in findings:
        colour = {"high": "red", "medium": "yellow"}.get(f.severity, "white")
        console.print(
            f"[{colour}]●[/{colour}] [bold]{escape(f.title)}[/bold] [dim]({f.area})[/dim]: "
            f"{f.n_matching}/{f.n_evaluated} samples ({f.share:.0%})",
            highlight=False,
        )
        console.print(f"  {escape(f.explanation)}", highlight=False, style="dim")
        figures = " · ".join(f"{name} {value:.2f}" for name, value in f.figures.items())
        console.print(f"  {escape(figures)}", highlight=False)
        console.print(f"  e.g. {escape(', '.join(f.sample_ids[:5]))}", highlight=False)
        for tip in f.advice:
            console.print(f"  → {escape(tip)}", highlight=False)


def breakdown_tables(result: EvaluationResult) -> list[Table]:
    """Per tag, each metric's mean per tag value (columns, with their sample counts)."""
    tables = []
    for tag, groups in result.breakdowns().items():
        table = Table(title=f"by {tag}", title_justify="left")
        table.add_column("metric", no_wrap=True)
        for group in groups:
            table.add_column(
                f"{escape(group.value)}\n[dim]n={group.n_samples}[/dim]", justify="right"
            )
        for m in result.metrics:
            row = [group.aggregates[m.name].mean for group in groups]
            table.add_row(m.name, *("—" if v is None else f"{v:.2f}" for v in row))
        tables.append(table)
    return tables


def usage_line(result: EvaluationResult) -> str | None:
    usage = result.usage
    if not usage:
        return None
    line = (
        f"judge: {usage.get('calls', 0)} calls (+{usage.get('cached_calls', 0)} cached), "
        f"{usage.get('prompt_tokens', 0):,} prompt + {usage.get('completion_tokens', 0):,} "
        "completion tokens"
    )
    if usage.get("cost"):
        line += f", cost {usage['cost']:.4f} {usage.get('currency') or ''}".rstrip()
    return line


def print_run(result: EvaluationResult, *, breakdowns: bool = True) -> list[Finding]:
    """Summary table, breakdowns, usage and diagnosis of a run."""
    from ragmeter.diagnosis import diagnose

    console.print(summary_table(result))
    print_judge_noise(result)
    if breakdowns:
        for table in breakdown_tables(result):
            console.print(table)
    line = usage_line(result)
    if line:
        console.print(line, highlight=False)
    findings = diagnose(result)
    if findings:
        print_findings(findings)
    judges = {
        json.dumps(j, sort_keys=True): j for j in (result.config.get("judges") or {}).values()
    }
    for judge in judges.values():
        if judge.get("quality_note"):
            console.print(
                f"[yellow]note:[/yellow] {escape(judge['quality_note'])}", highlight=False
            )
    return findings


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; values that read as JSON (numbers, booleans) keep their type.

    >>> parse_params(["top_k=5", "model=qwen-max", "rerank=true"])
    {'top_k': 5, 'model': 'qwen-max', 'rerank': True}
    """
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--param {pair!r} needs KEY=VALUE, e.g. --param top_k=5")
        try:
            params[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            params[key.strip()] = value
    return params


def record_run(
    result: EvaluationResult,
    url: str | None,
    *,
    name: str | None,
    tags: list[str],
    params: dict[str, Any],
) -> Any:
    """Record a run in the run store; a store that cannot be opened is a warning, never a
    lost run (the run directory has everything)."""
    from sqlalchemy.exc import SQLAlchemyError

    from ragmeter.store import Store

    try:
        return Store(url).record(result, name=name, tags=tags, params=params)
    except (SQLAlchemyError, ImportError, OSError) as error:
        errors.print(
            f"[yellow]warning:[/yellow] the run was not recorded in the run store "
            f"({type(error).__name__}: {error}); its results are in the run directory",
            highlight=False,
        )
        return None


def _resume_invocation(run_dir: Path) -> dict[str, Any]:
    from ragmeter.results import STORE_FILE, RunDatabase

    if not (run_dir / STORE_FILE).exists():
        raise FileNotFoundError(f"nothing to resume: {str(run_dir)!r} holds no {STORE_FILE}")
    store = RunDatabase.in_dir(run_dir)
    try:
        invocation = store.get_meta("invocation")
    finally:
        store.close()
    if not invocation:
        raise ValueError(
            f"{str(run_dir)!r} was not started by `ragmeter eval`: resume it from Python with "
            "evaluate(..., run_dir=..., resume=True)"
        )
    return dict(invocation)


@app.command("eval")
def eval_command(
    data: Annotated[
        Path | None,
        typer.Argument(help="Dataset file: .jsonl, .json, .csv or .parquet."),
    ] = None,
    metrics: Annotated[
        str | None,
        typer.Option(
            "--metrics", "-m", help="Comma-separated metric names, e.g. precision@5,ndcg@10,mrr."
        ),
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
        bool, typer.Option("--quiet", "-q", help="No progress display; print only the summary.")
    ] = False,
    judge_model: JudgeModelOption = None,
    judge_base_url: JudgeBaseUrlOption = None,
    judge_provider: JudgeProviderOption = None,
    judge_config: JudgeConfigOption = None,
    logprobs: LogprobsOption = False,
    language: Annotated[
        str | None,
        typer.Option("--language", help="Judge prompts in en or zh (default: per sample)."),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", help="Samples in flight at once.", min=1)
    ] = DEFAULT_CONCURRENCY,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
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
    junit: JunitOption = None,
    markdown: MarkdownOption = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store", help="Run store URL (default $RAGMETER_STORE_URL or .ragmeter/runs.db)."
        ),
    ] = None,
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
) -> None:
    """Score a dataset with the given metrics; results are saved as they are computed.

    LLM metrics use the judge given by the --judge-* options, else the RAGMETER_JUDGE_* (or
    OPENAI_*) environment, else the embedded offline judge. The API key is read from the
    environment only. A stopped run (killed, interrupted, judge down) continues with
    `ragmeter eval --resume RUN_DIR`; nothing already computed is computed again.
    """
    from ragmeter.judge import JudgeError
    from ragmeter.metrics.llm import JudgedMetric

    try:
        if resume is not None:
            recorded = _resume_invocation(resume)
            data = data or Path(recorded["data"])
            metrics = metrics or recorded["metrics"]
            column_map = column_map or recorded.get("column_map")
            format = format or recorded.get("format")
            skip_invalid = skip_invalid or bool(recorded.get("skip_invalid"))
            language = language or recorded.get("language")
            judge_recorded = recorded.get("judge") or {}
            judge_model = judge_model or judge_recorded.get("model")
            judge_base_url = judge_base_url or judge_recorded.get("base_url")
            judge_provider = judge_provider or judge_recorded.get("provider")
            if judge_config is None and judge_recorded.get("config"):
                judge_config = Path(judge_recorded["config"])
            logprobs = logprobs or bool(judge_recorded.get("logprobs"))
            if judge_temperature is None:
                judge_temperature = judge_recorded.get("temperature")
            repeats = max(repeats, int(recorded.get("repeats") or 1))
            output = resume
        if data is None or not metrics:
            raise ValueError("give a DATA file and --metrics, or --resume RUN_DIR")
        run_params = parse_params(param or [])
        resolved = resolve_metrics(metrics)
        judge = None
        if any(isinstance(m, JudgedMetric) and m.uses_judge for m in resolved):
            judge = _judge_from_options(
                judge_model,
                judge_base_url,
                judge_provider,
                judge_config,
                logprobs,
                cache=cache,
                no_cache=no_cache,
                refresh_cache=refresh_cache,
                temperature=judge_temperature,
            )
        if language not in (None, "en", "zh"):
            raise ValueError(f"--language must be en or zh, got {language!r}")
        run_dir = output or Path("runs") / f"{data.stem}-{dt.datetime.now():%Y%m%d-%H%M%S}"
        invocation = {
            "data": str(data),
            "metrics": metrics,
            "column_map": column_map or [],
            "format": format,
            "skip_invalid": skip_invalid,
            "language": language,
            # Never the API key: it is read from the environment on resume too.
            "judge": {
                "model": judge_model,
                "base_url": judge_base_url,
                "provider": judge_provider,
                "config": None if judge_config is None else str(judge_config),
                "logprobs": logprobs,
                "temperature": judge_temperature,
            },
            "repeats": repeats,
        }
        result = evaluate(
            data,
            resolved,
            column_map=_parse_column_map(column_map or []),
            skip_invalid=skip_invalid,
            format=format,
            judge=judge,
            language=language,  # type: ignore[arg-type]
            concurrency=concurrency,
            run_dir=run_dir,
            resume=resume is not None,
            progress=not quiet,
            invocation=invocation,
            repeats=repeats,
        )
    except KeyboardInterrupt:
        errors.print(
            f"[yellow]interrupted:[/yellow] what was computed is saved; continue with "
            f"ragmeter eval --resume {run_dir}",
            highlight=False,
        )
        raise typer.Exit(130) from None
    except (
        UnknownMetricError,
        DatasetError,
        FileNotFoundError,
        FileExistsError,
        ValueError,
        ImportError,
        JudgeError,
    ) as error:
        _fail(str(error))
    if not len(result):
        _fail(f"no valid row to evaluate in {data}", result.skipped)

    print_run(result, breakdowns=not quiet)
    if not no_store:
        recorded = record_run(result, store, name=name, tags=run_tag or [], params=run_params)
        if recorded is not None:
            console.print(f"recorded as run {recorded.id[:8]} ({escape(recorded.name)})")
    if report is not None:
        from ragmeter.diagnosis import diagnose
        from ragmeter.report import write_report

        write_report(result, report, findings=diagnose(result))
        console.print(f"report: {report}", highlight=False)
    judge_error = result.config.get("judge_error")
    if judge_error:
        _fail(
            f"the judge refused its configuration, so the judged metrics were not computed "
            f"(results so far are in {run_dir}; fix it and run ragmeter eval --resume "
            f"{run_dir}): {judge_error}"
        )
    if result.skipped:
        errors.print(f"[yellow]skipped {len(result.skipped)} invalid row(s):[/yellow]")
        _print_problems(result.skipped)
    if not quiet:
        console.print(f"per-sample results: {run_dir / 'results.jsonl'}", highlight=False)
    if gate is not None:
        code = apply_gate(
            result, gate, baseline, candidate_name=str(run_dir), junit=junit, markdown=markdown
        )
        raise typer.Exit(code)


def _load_run(run_dir: Path) -> EvaluationResult:
    try:
        return EvaluationResult.load(run_dir)
    except (FileNotFoundError, ValueError) as error:
        _fail(str(error))


@app.command("show")
def show_command(
    run_dir: Annotated[Path, typer.Argument(help="A run directory written by ragmeter eval.")],
) -> None:
    """Print a run's summary, tag breakdowns, usage and diagnosis again."""
    result = _load_run(run_dir)
    config = result.config
    dataset = config.get("dataset") or {}
    console.print(
        f"run {run_dir} · ragmeter {config.get('ragmeter_version', '?')} · "
        f"{config.get('created_at', '?')} · dataset {dataset.get('source')} "
        f"({dataset.get('fingerprint')})",
        highlight=False,
    )
    print_run(result)


@app.command("report")
def report_command(
    run_dir: Annotated[Path, typer.Argument(help="A run directory written by ragmeter eval.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Report file to write.")] = Path(
        "report.html"
    ),
    compare: Annotated[
        Path | None, typer.Option("--compare", help="Another run directory to compare with.")
    ] = None,
    format: Annotated[
        str, typer.Option("--format", help="html (one self-contained file) or markdown.")
    ] = "html",
) -> None:
    """Write a run's report: one offline HTML file, or markdown for CI step summaries."""
    from ragmeter.diagnosis import diagnose
    from ragmeter.report import write_report

    if format not in ("html", "markdown"):
        _fail(f"--format must be html or markdown, got {format!r}")
    result = _load_run(run_dir)
    other = _load_run(compare) if compare is not None else None
    path = write_report(result, output, compare=other, findings=diagnose(result), format=format)
    console.print(f"report: {path}", highlight=False)


@app.command("compare")
def compare_command(
    baseline: Annotated[Path, typer.Argument(help="The earlier (baseline) run directory.")],
    candidate: Annotated[Path, typer.Argument(help="The later (candidate) run directory.")],
    metrics: Annotated[
        str | None, typer.Option("--metrics", "-m", help="Only these metrics (comma-separated).")
    ] = None,
    tag: Annotated[
        str | None, typer.Option("--tag", help="Only the samples with this metadata tag...")
    ] = None,
    value: Annotated[str | None, typer.Option("--value", help="...set to this value.")] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level.")] = 0.05,
    test: Annotated[
        str, typer.Option("--test", help="permutation (default) or wilcoxon (paired only).")
    ] = "permutation",
) -> None:
    """Real change or noise? Per metric: the difference, its confidence interval, a paired
    test (Holm-corrected across metrics) and the change these samples can detect."""
    from ragmeter.stats import compare

    before, after = _load_run(baseline), _load_run(candidate)
    try:
        comparisons = compare(
            before,
            after,
            metrics=None if metrics is None else [m.strip() for m in metrics.split(",")],
            alpha=alpha,
            test=test,
            tag=tag,
            value=value,
        )
    except (ValueError, KeyError, ImportError) as error:
        _fail(str(error))
    for c in comparisons:
        colour = {"better": "green", "worse": "red"}.get(c.change, "white")
        console.print(f"[{colour}]●[/{colour}] {escape(c.verdict())}", highlight=False)


EXIT_GATE_FAILED = 1


def apply_gate(
    candidate: EvaluationResult,
    gate_file: Path,
    baseline_dir: Path | None,
    *,
    candidate_name: str,
    junit: Path | None = None,
    markdown: Path | None = None,
) -> int:
    """Run the gate, print and write its report; the exit code (0 pass, 1 fail, 2 usage)."""
    import os

    from ragmeter.gate import (
        GateFileError,
        GateUsageError,
        github_annotations,
        load_rules,
        run_gate,
        to_junit,
        to_markdown,
    )

    try:
        rules = load_rules(gate_file)
        baseline = _load_run(baseline_dir) if baseline_dir is not None else None
        report = run_gate(
            candidate,
            rules,
            baseline,
            candidate_name=candidate_name,
            baseline_name=None if baseline_dir is None else str(baseline_dir),
        )
    except (GateFileError, GateUsageError, FileNotFoundError, ImportError) as error:
        errors.print(f"[bold red]error:[/bold red] {escape(str(error))}", highlight=False)
        return EXIT_USAGE
    table = Table(title="gate", title_justify="left")
    table.add_column("")
    table.add_column("rule")
    table.add_column("figures")
    for outcome in report.outcomes:
        mark = "[green]pass[/green]" if outcome.passed else "[bold red]FAIL[/bold red]"
        table.add_row(mark, escape(outcome.rule), escape(outcome.message))
    console.print(table)
    summary = to_markdown(report)
    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.write_text(to_junit(report), encoding="utf-8")
    if markdown is not None:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(summary, encoding="utf-8")
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as handle:
            handle.write(summary)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for line in github_annotations(report):
            print(line)
    verdict = (
        "[green]gate passed[/green]"
        if report.passed
        else (
            f"[bold red]gate failed[/bold red]: {len(report.failures)} of "
            f"{len(report.outcomes)} rule(s)"
        )
    )
    console.print(verdict)
    return 0 if report.passed else EXIT_GATE_FAILED


GateOption = Annotated[
    Path | None, typer.Option("--gate", help="Gate file (TOML or YAML) to apply to the run.")
]
BaselineOption = Annotated[
    Path | None, typer.Option("--baseline", help="Baseline run directory for regression rules.")
]
JunitOption = Annotated[
    Path | None, typer.Option("--junit", help="Write the gate's verdicts as JUnit XML.")
]
MarkdownOption = Annotated[
    Path | None, typer.Option("--markdown", help="Write the gate's summary as markdown.")
]


@app.command("gate")
def gate_command(
    candidate: Annotated[Path, typer.Argument(help="The run directory to judge.")],
    gate: Annotated[Path, typer.Option("--gate", "-g", help="Gate file (TOML or YAML).")],
    baseline: BaselineOption = None,
    junit: JunitOption = None,
    markdown: MarkdownOption = None,
) -> None:
    """Pass or fail a run: floors and ceilings per metric, and regressions against a baseline
    that are larger than allowed and significant. Exit code 0 pass, 1 fail, 2 usage error.

    On GitHub Actions the summary is appended to $GITHUB_STEP_SUMMARY and each rule becomes
    an annotation.
    """
    result = _load_run(candidate)
    code = apply_gate(
        result, gate, baseline, candidate_name=str(candidate), junit=junit, markdown=markdown
    )
    raise typer.Exit(code)


@app.command("metrics")
def metrics_command() -> None:
    """List every metric with the fields it needs and which direction is better."""
    table = Table()
    table.add_column("metric", no_wrap=True)
    table.add_column("family")
    table.add_column("needs")
    table.add_column("better", justify="center")
    table.add_column("description")
    for spec in SPECS:
        metric = spec.example()
        name = spec.name + (
            "@K" if spec.cutoff == "required" else "[@K]" if spec.cutoff == "optional" else ""
        )
        needs = ", ".join(" or ".join(options) for options in metric.requires)
        arrow = "↑" if metric.direction is Direction.HIGHER_IS_BETTER else "↓"
        aliases = f" (also {', '.join(spec.aliases)})" if spec.aliases else ""
        table.add_row(escape(name), spec.family, needs, arrow, escape(spec.summary + aliases))
    console.print(table)


JudgeModelOption = Annotated[
    str | None, typer.Option("--judge-model", help="Judge model (else RAGMETER_JUDGE_MODEL).")
]
JudgeBaseUrlOption = Annotated[
    str | None,
    typer.Option("--judge-base-url", help="OpenAI-compatible API root, e.g. http://host/v1."),
]
JudgeProviderOption = Annotated[
    str | None,
    typer.Option(
        "--judge-provider",
        help="openai, deepseek, qwen, moonshot, zhipu, ollama, vllm or llama.cpp.",
    ),
]
JudgeConfigOption = Annotated[
    Path | None, typer.Option("--judge-config", help="TOML or JSON file with a judge table.")
]
CacheOption = Annotated[
    Path | None, typer.Option("--cache", help="Judge cache file (default .ragmeter/cache.db).")
]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Do not use the judge cache.")]
LogprobsOption = Annotated[
    bool, typer.Option("--logprobs", help="Ask for token probabilities (P(yes) verdicts).")
]


def _judge_from_options(
    model: str | None,
    base_url: str | None,
    provider: str | None,
    config_file: Path | None,
    logprobs: bool,
    *,
    cache: Path | None = None,
    no_cache: bool = False,
    refresh_cache: bool = False,
    temperature: float | None = None,
) -> Judge:
    from ragmeter.judge import JudgeConfig
    from ragmeter.judge._default import default_judge, make_cache

    if config_file is not None:
        config = JudgeConfig.from_file(config_file, model=model, base_url=base_url)
    else:
        config = JudgeConfig.from_env(model=model, base_url=base_url, provider=provider)
    if config is not None and logprobs:
        config = config.model_copy(update={"logprobs": True})
    if config is not None and temperature is not None:
        config = config.model_copy(update={"temperature": temperature})
    return default_judge(
        config, cache=make_cache(cache, enabled=not no_cache, refresh=refresh_cache)
    )


judge_app = typer.Typer(help="Check the judge configuration.", no_args_is_help=True)
app.add_typer(judge_app, name="judge")


@judge_app.command("check")
def judge_check(
    judge_model: JudgeModelOption = None,
    judge_base_url: JudgeBaseUrlOption = None,
    judge_provider: JudgeProviderOption = None,
    judge_config: JudgeConfigOption = None,
    logprobs: LogprobsOption = False,
) -> None:
    """Send one tiny verdict request to the configured judge and report how it went.

    The API key is read from RAGMETER_JUDGE_API_KEY (or OPENAI_API_KEY), never from the
    command line.
    """
    import asyncio

    from ragmeter.judge import BinaryVerdict, JudgeError, Message

    try:
        judge = _judge_from_options(
            judge_model, judge_base_url, judge_provider, judge_config, logprobs, no_cache=True
        )
        question = [
            Message("system", "You verify facts. Answer 1 for yes and 0 for no."),
            Message("user", "Is Paris the capital of France?"),
        ]
        judgment = asyncio.run(
            judge.generate(question, BinaryVerdict, prompt_version="judge-check@1")
        )
    except (JudgeError, ValueError, ImportError, OSError) as error:
        _fail(str(error))
    table = Table(show_header=False)
    for key, value in judge.describe().items():
        table.add_row(escape(str(key)), escape(str(value)))
    usage = judgment.usage
    mode = getattr(judge, "structured_output_mode", None)
    if mode is not None:
        table.add_row("structured output used", mode)
    table.add_row("verdict (expected 1)", str(judgment.output.verdict))
    table.add_row(
        "P(yes)", "—" if judgment.probabilities is None else f"{judgment.probabilities[0]:.3f}"
    )
    table.add_row("latency", f"{usage.latency_s:.2f} s over {usage.calls} request(s)")
    table.add_row("tokens", f"{usage.prompt_tokens} in, {usage.completion_tokens} out")
    console.print(table)


def main() -> None:
    app()
