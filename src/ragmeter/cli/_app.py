"""The ``ragmeter`` command line."""

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
import typer.core
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragmeter.cli._exit import EXIT_CODES_HELP, ExitCode, fail_io, io_message

# Only typer, rich and the standard library load with the command line: `ragmeter --help`
# stays fast. Each command imports what it runs (the dataset, metrics, judge, store...).
# The command modules do without `from __future__ import annotations`: typer would compile
# and evaluate every command's annotations from strings on each run (some 30 ms); those that
# name a type imported only for type checkers are quoted.
if TYPE_CHECKING:
    from ragmeter.dataset import InvalidRow
    from ragmeter.diagnosis import Finding
    from ragmeter.results import EvaluationResult
    from ragmeter.stats import Comparability
    from ragmeter.stats import Comparison as StatsComparison
    from ragmeter.store import Store


class CommandGroup(typer.core.TyperGroup):
    """A group of commands whose ``--help`` flag reads ``False`` when not given.

    Typer (0.29) leaves the value of a group's help flag ``None`` when a subcommand is run,
    and then checks that ``None`` through a pydantic adapter: pydantic (about 0.2 s) would
    load for ``ragmeter eval --help``. A flag's default is ``False`` in any case."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False
        return option


app = typer.Typer(
    name="ragmeter",
    cls=CommandGroup,
    help="Evaluate RAG systems: is it good, where does it fail, did a change help?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    epilog=EXIT_CODES_HELP,
)
console = Console()
errors = Console(stderr=True)

EXIT_USAGE = int(ExitCode.USAGE)


def _version(value: bool) -> None:
    if value:
        from ragmeter._version import __version__

        console.print(f"ragmeter {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Evaluate RAG systems: is it good, where does it fail, did a change help?"""


def _print_problems(rows: "list[InvalidRow]") -> None:
    for invalid in rows:
        for problem in invalid.problems:
            errors.print(f"  - {problem}", highlight=False, markup=False, soft_wrap=True)


def _fail(message: str, rows: "list[InvalidRow] | None" = None) -> NoReturn:
    from ragmeter._services import redact_secrets

    message = redact_secrets(message)  # a URL quoted by an error shows no credentials
    errors.print(f"[bold red]error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True)
    _print_problems(rows or [])
    raise typer.Exit(EXIT_USAGE)


def _format(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def summary_table(result: "EvaluationResult") -> Table:
    """Per metric: mean with its 95% bootstrap interval, coverage and counts (the median and
    the rest are in summary.json and the report)."""
    from ragmeter.metrics import Direction
    from ragmeter.stats import estimate_means

    # Resampling costs samples x resamples: above 20,000 samples fewer resamples (at least
    # 200) keep it at 4e7 draws per metric. The interval of so many samples is a few
    # thousandths wide, about the 2 decimals shown (summary.json and the report keep theirs).
    n_resamples = max(200, min(2_000, 40_000_000 // max(1, len(result))))
    estimates = estimate_means(result, n_resamples=n_resamples)
    # Results the run stopped before (its budget, a refused judge) get a column of their
    # own: they are not failures, and a resumed run computes them.
    unstarted = any(a.n_not_started for a in result.aggregates.values())
    table = Table(title=f"{len(result)} samples", title_justify="left")
    table.add_column("metric", no_wrap=True)
    table.add_column("mean", justify="right")
    table.add_column("95% CI", justify="right", no_wrap=True)
    table.add_column("scored", justify="right")
    table.add_column("n/a", justify="right")
    table.add_column("failed", justify="right")
    if unstarted:
        table.add_column("not started", justify="right")
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
            *(
                [f"[yellow]{agg.n_not_started}[/yellow]" if agg.n_not_started else "0"]
                if unstarted
                else []
            ),
            "↑" if agg.direction is Direction.HIGHER_IS_BETTER else "↓",
        )
    return table


def print_judge_noise(result: "EvaluationResult") -> None:
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


def print_findings(findings: "list[Finding]") -> None:
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
        for figure in f.figures:
            console.print(f"  {escape(figure.text())}", highlight=False)
        console.print(f"  e.g. {escape(', '.join(f.sample_ids[:5]))}", highlight=False)
        for tip in f.advice:
            console.print(f"  → {escape(tip)}", highlight=False)


def breakdown_tables(result: "EvaluationResult") -> list[Table]:
    """Per tag, each metric's mean per tag value (columns, with their sample counts), each
    mean with the samples it covers: ``0.50 n=1/2`` is a mean over 1 scored of 2."""
    tables = []
    for tag, groups in result.breakdowns().items():
        table = Table(title=f"by {tag}", title_justify="left")
        table.add_column("metric", no_wrap=True)
        for group in groups:
            table.add_column(
                f"{escape(group.value)}\n[dim]{group.n_samples} samples[/dim]", justify="right"
            )
        for m in result.metrics:
            cells = [
                f"{_format(agg.mean, 2)} [dim]{agg.scored_of_total()}[/dim]"
                for agg in (group.aggregates[m.name] for group in groups)
            ]
            table.add_row(m.name, *cells)
        tables.append(table)
    return tables


def usage_line(result: "EvaluationResult") -> str | None:
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


def print_run(result: "EvaluationResult", *, breakdowns: bool = True) -> "list[Finding]":
    """Summary table, breakdowns, usage and diagnosis of a run."""
    from ragmeter.diagnosis import diagnose

    console.print(summary_table(result))
    unstarted = sum(a.n_not_started for a in result.aggregates.values())
    if unstarted:
        console.print(
            f"[yellow]not started:[/yellow] {unstarted} results the run stopped before "
            "(its budget, a refused judge, a kill): not failures; ragmeter eval --resume RUN_DIR "
            "computes them",
            highlight=False,
        )
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


def open_run_store(url: str | None, *, hint: str = "") -> "Store":
    """The run store, or the end of the command: exit 2 for a URL or driver problem, exit 4
    for a store that cannot be reached, read or written (one line each, ``hint`` after it)."""
    from sqlalchemy.exc import SQLAlchemyError

    from ragmeter._services import redact_secrets
    from ragmeter.store import Store, store_url

    try:
        return Store(url)
    except (ImportError, ValueError) as error:
        _fail(redact_secrets(str(error), store_url(url)) + hint)
    except SQLAlchemyError as error:
        said = redact_secrets(f"the run store cannot be opened: {error}", store_url(url))
        fail_io(OSError(said.splitlines()[0] + hint))
    except OSError as error:
        fail_io(OSError(redact_secrets(io_message(error), store_url(url)) + hint))


def record_run(
    result: "EvaluationResult",
    url: "str | Store | None",
    *,
    name: str | None,
    tags: list[str],
    params: dict[str, Any],
) -> Any:
    """Record a run in the run store (``url`` or an opened one); the run's own directory has
    everything, so a store that fails is one error line and ``None``, never a lost run."""
    from sqlalchemy.exc import SQLAlchemyError

    from ragmeter._services import redact_secrets
    from ragmeter.store import Store, store_url

    where = url.url if isinstance(url, Store) else store_url(url)
    try:
        store = url if isinstance(url, Store) else Store(url)
        return store.record(result, name=name, tags=tags, params=params)
    except (SQLAlchemyError, ImportError, OSError, ValueError) as error:
        said = (
            io_message(error) if isinstance(error, OSError) else f"{type(error).__name__}: {error}"
        )
        said = redact_secrets(said.splitlines()[0] if said else said, where)
        errors.print(
            f"[bold red]error:[/bold red] the run was not recorded in the run store "
            f"({escape(said)}); its results are in the run directory",
            highlight=False,
            soft_wrap=True,
        )
        return None


def run_folder(ref: str | Path) -> Path | None:
    """``ref`` as a run directory: a folder holding ``run.db`` or ``summary.json``."""
    from ragmeter.results import STORE_FILE

    path = Path(ref)
    if path.is_dir() and ((path / STORE_FILE).is_file() or (path / "summary.json").is_file()):
        return path
    return None


def resolve_run(ref: str | Path) -> "EvaluationResult":
    """A run named any of three ways: a run directory (``ragmeter eval -o``), a run id or a
    unique id prefix in the run store ($RAGMETER_STORE_URL), or a run name (its latest run).
    Exit 2 when nothing matches (saying what was tried) or a prefix fits several runs, exit 4
    when the run or the store cannot be read (also on read-only media)."""
    from ragmeter._services import redact_url
    from ragmeter.results import EvaluationResult
    from ragmeter.store import AmbiguousRunError, RunNotFoundError, store_exists, store_url

    folder = run_folder(ref)
    if folder is not None:
        try:
            return EvaluationResult.load(folder)
        except (FileNotFoundError, ValueError) as error:
            _fail(str(error))
        except OSError as error:
            fail_io(error, kept=f"the run {folder} could not be read")
    text = str(ref)
    where = redact_url(store_url(None))
    if store_exists(None):
        store = open_run_store(None)
        try:
            return store.load(store.get(text).id)
        except AmbiguousRunError as error:
            _fail(str(error))
        except RunNotFoundError:
            pass
    else:
        where += " (no run recorded there yet)"
    _fail(
        f"no run {text!r}: it is not a ragmeter run directory (no folder {text} holding "
        f"run.db or summary.json), nor a run id, id prefix (4+ characters) or run name in the "
        f"run store {where}; ragmeter runs list shows the recorded runs"
    )


def apply_gate(
    candidate: "EvaluationResult",
    gate_file: Path,
    baseline_dir: Path | None,
    *,
    candidate_name: str,
    junit: Path | None = None,
    markdown: Path | None = None,
    allow_judge_change: bool = False,
    min_coverage: float = 1.0,
) -> tuple[ExitCode, str]:
    """Run the gate, print and write its report; the exit code and why (0 pass, 1 a rule
    failed, 2 usage, 3 a rule's metric has fewer results scored than its floor,
    ``min_coverage`` unless the rule sets one; 4 a report file could not be written).
    Regression rules across a changed judge or embedding model are refused (exit 2, both
    named) unless ``allow_judge_change``; every way the runs were measured differently is
    printed as a warning."""
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
        baseline = resolve_run(baseline_dir) if baseline_dir is not None else None
        report = run_gate(
            candidate,
            rules,
            baseline,
            candidate_name=candidate_name,
            baseline_name=None if baseline_dir is None else str(baseline_dir),
            allow_judge_change=allow_judge_change,
            min_coverage=min_coverage,
        )
    except (GateFileError, GateUsageError, FileNotFoundError, ImportError) as error:
        errors.print(
            f"[bold red]error:[/bold red] {escape(str(error))}", highlight=False, soft_wrap=True
        )
        return ExitCode.USAGE, "the gate could not be applied"
    print_differences(report.differences)
    table = Table(title="gate", title_justify="left")
    table.add_column("")
    table.add_column("rule")
    table.add_column("figures")
    for outcome in report.outcomes:
        mark = "[green]pass[/green]" if outcome.passed else "[bold red]FAIL[/bold red]"
        table.add_row(mark, escape(outcome.rule), escape(outcome.message))
    console.print(table)
    summary = to_markdown(report)
    written = True
    try:
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
    except OSError as error:
        written = False
        errors.print(
            f"[bold red]error:[/bold red] the gate's report was not written: "
            f"{escape(io_message(error))}",
            highlight=False,
            soft_wrap=True,
        )
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
    short = report.coverage_reason()
    if not written:
        return ExitCode.IO_ERROR, "the gate's report was not written"
    if short is not None:
        return ExitCode.RESULTS_FAILED, f"the gate failed: {short}"
    if not report.passed:
        return ExitCode.GATE_FAILED, "the gate failed"
    return ExitCode.OK, "the gate passed"


#: The colour of a comparison's mark, by its change: green or red only when significant.
CHANGE_COLOURS = {"better": "green", "worse": "red", "not comparable": "yellow"}


def print_comparison(found: "StatsComparison") -> None:
    """One metric's comparison: its change in words ("better" and "worse" only when it is
    significant, else "no significant change"; :attr:`Comparison.change`), then its verdict."""
    change = found.change
    colour = CHANGE_COLOURS.get(change, "white")
    word = "" if change == "not comparable" else f"{change}: "  # the verdict says it
    console.print(f"[{colour}]● {word}[/{colour}]{escape(found.verdict())}", highlight=False)


def print_differences(lines: Iterable[str]) -> None:
    """How two runs were measured differently, as warnings (on stderr)."""
    for line in lines:
        errors.print(f"[yellow]warning:[/yellow] {escape(line)}", highlight=False, soft_wrap=True)


def print_comparability(checked: "Comparability", *, allowed: bool) -> None:
    """Before a comparison: each judge or embedding model that changed (its metrics get no
    verdict unless ``allowed``), then the other differences and unknowns, as warnings."""
    refused = checked.lines(refusing=True)
    if refused and not allowed:
        for line in refused:
            console.print(
                f"[bold red]not comparable:[/bold red] {escape(line)}",
                highlight=False,
                soft_wrap=True,
            )
        console.print(
            "[dim]no verdict for these metrics: the judge must stay fixed across a "
            "comparison (re-run one side with the other's judge, or pass "
            "--allow-judge-change to compare anyway)[/dim]",
            highlight=False,
        )
    print_differences(checked.lines(refusing=False) if not allowed else checked.lines())


AllowJudgeChangeOption = Annotated[
    bool,
    typer.Option(
        "--allow-judge-change",
        help="Compare runs judged by different models or settings (or with different "
        "embedding models) anyway; the differences are still printed.",
    ),
]
RunStoreOption = Annotated[
    str | None,
    typer.Option(
        "--store", help="Run store URL (default $RAGMETER_STORE_URL or .ragmeter/runs.db)."
    ),
]
GateOption = Annotated[
    Path | None, typer.Option("--gate", help="Gate file (TOML or YAML) to apply to the run.")
]
BaselineOption = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        help="Baseline run for regression rules: a run directory, run id (or prefix) or name.",
    ),
]
JunitOption = Annotated[
    Path | None, typer.Option("--junit", help="Write the gate's verdicts as JUnit XML.")
]
MarkdownOption = Annotated[
    Path | None, typer.Option("--markdown", help="Write the gate's summary as markdown.")
]
MinCoverageOption = Annotated[
    float,
    typer.Option(
        "--min-coverage",
        min=0.0,
        max=1.0,
        help="The gate exits 3 when a rule's metric has fewer than this share of its results "
        "scored (n/a not counted; default 1: all). A rule's own min_coverage overrides it.",
    ),
]


def main() -> None:
    try:
        app()
    except OSError as error:
        from ragmeter._services import redact_secrets

        # A file or store failure no command caught: one line and exit 4, never a traceback.
        errors.print(
            f"[bold red]error:[/bold red] {escape(redact_secrets(io_message(error)))}",
            highlight=False,
            soft_wrap=True,
        )
        raise SystemExit(int(ExitCode.IO_ERROR)) from None
