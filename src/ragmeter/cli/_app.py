"""The ``ragmeter`` command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragmeter._version import __version__
from ragmeter.dataset import InvalidRow
from ragmeter.diagnosis import Finding
from ragmeter.metrics import Direction
from ragmeter.results import EvaluationResult

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


def _load_run(run_dir: Path) -> EvaluationResult:
    try:
        return EvaluationResult.load(run_dir)
    except (FileNotFoundError, ValueError) as error:
        _fail(str(error))


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


def main() -> None:
    app()
