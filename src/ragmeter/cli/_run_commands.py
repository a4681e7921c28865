"""``ragmeter show``, ``report``, ``compare``, ``gate`` and ``metrics``: what a run found."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, cast

import typer
from rich.markup import escape
from rich.table import Table

from ragmeter.cli._app import (
    CHANGE_COLOURS,
    AllowJudgeChangeOption,
    BaselineOption,
    JunitOption,
    MarkdownOption,
    _fail,
    _load_run,
    app,
    apply_gate,
    console,
    print_comparability,
    print_run,
)
from ragmeter.cli._exit import fail_io
from ragmeter.metrics import SPECS, Direction

ReportFormat = Literal["html", "markdown"]


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
    allow_judge_change: AllowJudgeChangeOption = False,
) -> None:
    """Write a run's report: one offline HTML file, or markdown for CI step summaries.

    With --compare, a banner lists how the runs were measured differently (judge, embedding
    model, prompt versions, settings); metrics whose judge changed get no significance
    verdict unless --allow-judge-change."""
    from ragmeter.diagnosis import diagnose
    from ragmeter.report import write_report
    from ragmeter.stats import comparability

    if format not in ("html", "markdown"):
        _fail(f"--format must be html or markdown, got {format!r}")
    result = _load_run(run_dir)
    other = _load_run(compare) if compare is not None else None
    if other is not None:
        print_comparability(comparability(other, result), allowed=allow_judge_change)
    try:
        path = write_report(
            result,
            output,
            compare=other,
            findings=diagnose(result),
            format=cast(ReportFormat, format),
            allow_judge_change=allow_judge_change,
        )
    except OSError as error:
        fail_io(error, kept=f"the report was not written; the run in {run_dir} is unchanged")
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
    allow_judge_change: AllowJudgeChangeOption = False,
) -> None:
    """Real change or noise? Per metric: the difference, its confidence interval, a paired
    test (Holm-corrected across metrics) and the change these samples can detect.

    First, how the runs were measured differently (judge, embedding model, prompt versions,
    metric settings): a metric whose judge or embedding model changed is "not comparable"
    (no test, no winner) unless --allow-judge-change."""
    from ragmeter.stats import comparability, compare

    before, after = _load_run(baseline), _load_run(candidate)
    chosen = None if metrics is None else [m.strip() for m in metrics.split(",")]
    try:
        comparisons = compare(
            before,
            after,
            metrics=chosen,
            alpha=alpha,
            test=test,
            tag=tag,
            value=value,
            allow_judge_change=allow_judge_change,
        )
    except (ValueError, KeyError, ImportError) as error:
        _fail(str(error))
    checked = comparability(before, after, metrics=[c.metric for c in comparisons])
    print_comparability(checked, allowed=allow_judge_change)
    for c in comparisons:
        colour = CHANGE_COLOURS.get(c.change, "white")
        console.print(f"[{colour}]●[/{colour}] {escape(c.verdict())}", highlight=False)


@app.command("gate")
def gate_command(
    candidate: Annotated[Path, typer.Argument(help="The run directory to judge.")],
    gate: Annotated[Path, typer.Option("--gate", "-g", help="Gate file (TOML or YAML).")],
    baseline: BaselineOption = None,
    junit: JunitOption = None,
    markdown: MarkdownOption = None,
    allow_judge_change: AllowJudgeChangeOption = False,
) -> None:
    """Pass or fail a run: floors and ceilings per metric, and regressions against a baseline
    that are larger than allowed and significant. Exit code 0 pass, 1 fail, 2 usage error
    (4 when a run or a report file cannot be read or written).

    The judge must stay fixed: regression rules against a baseline judged by another model
    or with other generation settings (or embedded by another model) are refused, exit 2,
    naming both, unless --allow-judge-change.

    On GitHub Actions the summary is appended to $GITHUB_STEP_SUMMARY and each rule becomes
    an annotation.
    """
    result = _load_run(candidate)
    code = apply_gate(
        result,
        gate,
        baseline,
        candidate_name=str(candidate),
        junit=junit,
        markdown=markdown,
        allow_judge_change=allow_judge_change,
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
