"""``ragmeter show``, ``report``, ``compare``, ``gate`` and ``metrics``: what a run found."""

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

import typer
from rich.markup import escape
from rich.table import Table

from ragmeter.cli._app import (
    AllowJudgeChangeOption,
    BaselineOption,
    JunitOption,
    MarkdownOption,
    MinCoverageOption,
    RunStoreOption,
    _fail,
    app,
    apply_gate,
    console,
    print_comparability,
    print_comparison,
    print_run,
    resolve_run,
    run_folder,
)
from ragmeter.cli._exit import ExitCode, Outcome, fail_io
from ragmeter.cli._judging import whole_paragraphs

if TYPE_CHECKING:
    from ragmeter.results import EvaluationResult

ReportFormat = Literal["html", "markdown"]

#: How a run may be named on the command line.
RUN_HELP = (
    "a run directory (ragmeter eval -o), a run id or unique id prefix from the run store, "
    "or a run name (its latest run)"
)
RunArgument = Annotated[str, typer.Argument(help=f"The run: {RUN_HELP}.", show_default=False)]
JsonOption = Annotated[
    bool,
    typer.Option("--json", help="Print one JSON document on stdout instead of the tables."),
]


def _strict(value: Any) -> Any:
    """``value`` as strict JSON values: NaN and infinities become null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    return value


def print_json(document: Any) -> None:
    """``document`` as one strict JSON document on stdout (no NaN, nothing else printed)."""
    text = json.dumps(_strict(document), ensure_ascii=False, indent=2, allow_nan=False, default=str)
    typer.echo(text)


def run_label(ref: str, result: "EvaluationResult") -> str:
    """How a run is named in output: its directory, or its stored id and name."""
    stored = result.config.get("store_run_id")
    if run_folder(ref) is None and stored:
        return f"{stored[:8]} ({result.config.get('name') or '?'})"
    return ref


@app.command("show")
def show_command(
    run: RunArgument,
    as_json: JsonOption = False,
    store: RunStoreOption = None,
) -> None:
    """Print a run's summary, tag breakdowns, usage and diagnosis again, and per judged
    metric whether it was validated on the labels kept in the run store (with the mean's
    interval with judge error when labels line up with the run's verdicts)."""
    from ragmeter.cli._trust import stored_trust
    from ragmeter.diagnosis import diagnose

    result = resolve_run(run, store)
    label = run_label(run, result)
    trust = stored_trust(result, store)
    if as_json:
        print_json(
            {
                "run": label,
                "store_run_id": result.config.get("store_run_id"),
                **result.summary(),
                "validation": {m: v.to_dict() for m, v in trust.validations.items()},
                "findings": [f.to_dict() for f in diagnose(result)],
            }
        )
        return
    config = result.config
    dataset = config.get("dataset") or {}
    console.print(
        f"run {label} · ragmeter {config.get('ragmeter_version', '?')} · "
        f"{config.get('created_at', '?')} · dataset {dataset.get('source')} "
        f"({dataset.get('fingerprint')})",
        highlight=False,
    )
    print_run(result, run=run, labelled=trust.labelled, validations=trust.validations)


@app.command("report")
@whole_paragraphs
def report_command(
    run: RunArgument,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Report file to write (default: report.html, or report.md, in the run "
            "directory; ./report-ID.html for a run from the store).",
            show_default=False,
        ),
    ] = None,
    compare: Annotated[
        str | None,
        typer.Option("--compare", help=f"Another run to compare with: {RUN_HELP}."),
    ] = None,
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="html (one self-contained file) or markdown (default: markdown for an "
            "--output ending in .md or .markdown, else html).",
            show_default=False,
        ),
    ] = None,
    allow_judge_change: AllowJudgeChangeOption = False,
    store: RunStoreOption = None,
) -> None:
    """Write a run's report: one offline HTML file, or markdown for CI step summaries.

    With --compare, a banner lists how the runs were measured differently (judge, embedding
    model, prompt versions, settings); metrics whose judge changed get no significance
    verdict unless --allow-judge-change. Each judged metric says whether it was validated on
    the labels kept in the run store, with its interval with judge error when they line up
    with the run's verdicts."""
    from ragmeter.cli._trust import stored_trust
    from ragmeter.diagnosis import diagnose
    from ragmeter.report import write_report
    from ragmeter.stats import comparability

    if format is None:
        markdown = output is not None and output.suffix.lower() in (".md", ".markdown")
        format = "markdown" if markdown else "html"
    if format not in ("html", "markdown"):
        _fail(f"--format must be html or markdown, got {format!r}")
    result = resolve_run(run, store)
    other = resolve_run(compare, store) if compare is not None else None
    if output is None:
        output = default_report_path(run, result, "html" if format == "html" else "md")
    if other is not None:
        print_comparability(comparability(other, result), allowed=allow_judge_change)
    trust = stored_trust(result, store)
    try:
        path = write_report(
            result,
            output,
            compare=other,
            findings=diagnose(result),
            format=cast(ReportFormat, format),
            allow_judge_change=allow_judge_change,
            labelled=trust.labelled,
            validations=trust.validations,
        )
    except OSError as error:
        fail_io(
            error,
            kept=f"the report was not written (choose another file with -o); the run "
            f"{run_label(run, result)} is unchanged",
        )
    console.print(f"report: {path}", highlight=False)


@app.command("compare")
@whole_paragraphs
def compare_command(
    baseline: Annotated[
        str, typer.Argument(help=f"The earlier (baseline) run: {RUN_HELP}.", show_default=False)
    ],
    candidate: Annotated[
        str, typer.Argument(help="The later (candidate) run, named the same ways.")
    ],
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
    as_json: JsonOption = False,
    store: RunStoreOption = None,
) -> None:
    """Real change or noise? Per metric: the difference, its confidence interval, a paired
    test (Holm-corrected across metrics) and the change these samples can detect.

    First, how the runs were measured differently (judge, embedding model, prompt versions,
    metric settings): a metric whose judge or embedding model changed is "not comparable"
    (no test, no winner) unless --allow-judge-change."""
    from ragmeter.stats import comparability, compare

    before, after = resolve_run(baseline, store), resolve_run(candidate, store)
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
    if as_json:
        print_json(
            {
                "baseline": run_label(baseline, before),
                "candidate": run_label(candidate, after),
                "allow_judge_change": allow_judge_change,
                "comparability": checked.to_dict(),
                "comparisons": [c.to_dict() for c in comparisons],
            }
        )
        return
    print_comparability(checked, allowed=allow_judge_change)
    for c in comparisons:
        print_comparison(c)


@app.command("gate")
@whole_paragraphs
def gate_command(
    candidate: Annotated[
        str, typer.Argument(help=f"The run to judge: {RUN_HELP}.", show_default=False)
    ],
    gate: Annotated[Path, typer.Option("--gate", "-g", help="Gate file (TOML or YAML).")],
    baseline: BaselineOption = None,
    junit: JunitOption = None,
    markdown: MarkdownOption = None,
    allow_judge_change: AllowJudgeChangeOption = False,
    min_coverage: MinCoverageOption = 1.0,
    store: RunStoreOption = None,
) -> None:
    """Pass or fail a run: floors and ceilings per metric, and regressions against a baseline
    that are larger than allowed and significant. Exit code 0 pass, 1 fail, 2 usage error,
    3 when a rule's metric has results that failed or are missing (every result must be
    scored, n/a aside, unless --min-coverage or the rule's min_coverage lowers the floor),
    4 when a run or a report file cannot be read or written; the last line says why.

    The judge must stay fixed: regression rules against a baseline judged by another model
    or with other generation settings (or embedded by another model) are refused, exit 2,
    naming both, unless --allow-judge-change.

    On GitHub Actions the summary is appended to $GITHUB_STEP_SUMMARY and each rule becomes
    an annotation.
    """
    result = resolve_run(candidate, store)
    code, reason = apply_gate(
        result,
        gate,
        baseline,
        candidate_name=run_label(candidate, result),
        junit=junit,
        markdown=markdown,
        allow_judge_change=allow_judge_change,
        min_coverage=min_coverage,
        store=store,
    )
    outcome = Outcome()
    if code is not ExitCode.OK:
        outcome.add(code, reason)
    outcome.exit(reason)


def default_report_path(ref: str, result: "EvaluationResult", suffix: str) -> Path:
    """Where ``report`` writes without ``-o``: into the run directory, or, for a run from the
    store, ``./report-<id8>.<suffix>`` in the current folder."""
    folder = run_folder(ref)
    if folder is not None:
        return folder / f"report.{suffix}"
    stored = str(result.config.get("store_run_id") or "run")
    return Path(f"report-{stored[:8]}.{suffix}")


@app.command("metrics")
def metrics_command() -> None:
    """List every metric with the fields it needs and which direction is better."""
    from ragmeter.metrics import Direction, MetricLoadError, metric_specs

    table = Table()
    table.add_column("metric", no_wrap=True)
    table.add_column("family")
    table.add_column("needs")
    table.add_column("better", justify="center")
    table.add_column("description")
    for spec in metric_specs():
        try:
            metric = spec.example()
        except MetricLoadError as error:  # a registered or plugin metric that fails to load
            table.add_row(escape(spec.name), spec.family, "", "", escape(str(error)))
            continue
        name = spec.name + (
            "@K" if spec.cutoff == "required" else "[@K]" if spec.cutoff == "optional" else ""
        )
        needs = ", ".join(" or ".join(options) for options in metric.requires)
        arrow = "↑" if metric.direction is Direction.HIGHER_IS_BETTER else "↓"
        aliases = f" (also {', '.join(spec.aliases)})" if spec.aliases else ""
        table.add_row(escape(name), spec.family, needs, arrow, escape(spec.summary + aliases))
    console.print(table)
