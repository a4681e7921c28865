"""The ``ragmeter`` command line."""

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
import typer.core
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragmeter.cli._coerce import install as _install_light_coercion
from ragmeter.cli._exit import EXIT_CODES_HELP, ExitCode, fail_io, io_message

_install_light_coercion()  # typer reads plain values without loading pydantic

# Only typer, rich and the standard library load with the command line: `ragmeter --help`
# stays fast. Each command imports what it runs (the dataset, metrics, judge, store...).
# The command modules do without `from __future__ import annotations`: typer would compile
# and evaluate every command's annotations from strings on each run (some 30 ms); those that
# name a type imported only for type checkers are quoted.
if TYPE_CHECKING:
    from ragmeter.dataset import InvalidRow
    from ragmeter.diagnosis import Finding
    from ragmeter.results import EvaluationResult
    from ragmeter.stats import Comparability, LabelledPairs, Validation
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


#: A problem as a run records it (``str(Problem)``): read back to be grouped with its kind.
_RECORDED_PROBLEM = re.compile(
    r"^(?:(?P<source>.+), )?row (?P<row>\d+)(?:, turn (?P<turn>\d+))?(?:, id '(?P<id>[^']*)')?"
    r"(?:, field '(?P<field>[^']*)')?: (?P<message>.*)\. Fix: (?P<fix>.*)$",
    re.DOTALL,
)


def _print_problems(rows: "list[InvalidRow]") -> None:
    from ragmeter.dataset import Problem, grouped_problems

    problems = []
    for invalid in rows:
        for problem in invalid.problems:
            found = None if problem.fix else _RECORDED_PROBLEM.match(str(problem))
            if found is not None:  # a run's record of it: its parts again
                turn = found["turn"]
                problem = Problem(
                    int(found["row"]),
                    found["field"],
                    found["message"],
                    found["fix"],
                    source=found["source"],
                    sample_id=found["id"],
                    turn=None if turn is None else int(turn),
                )
            problems.append(problem)
    # one line per kind of problem, not one per row (a column missing in 1,000 rows)
    for line in grouped_problems(problems):
        errors.print(f"  - {line}", highlight=False, markup=False, soft_wrap=True)


def print_error(message: str) -> None:
    """``error: message`` on stderr, in one line (``message`` is text, not markup)."""
    errors.print(f"[bold red]error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True)


def _fail(message: str, rows: "list[InvalidRow] | None" = None) -> NoReturn:
    from ragmeter._services import redact_secrets

    print_error(redact_secrets(message))  # a URL quoted by an error shows no credentials
    _print_problems(rows or [])
    raise typer.Exit(int(ExitCode.USAGE))


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
    for column in ("scored", "n/a", "failed", *(["not started"] if unstarted else [])):
        table.add_column(column, justify="right")
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


#: Per metric, its labelled (judge score, human label) pairs, or a :class:`LabelledPairs`.
Labelled = Mapping[str, "Sequence[Sequence[Any]] | LabelledPairs"]


def print_validations(validations: "Mapping[str, Validation]", run: str) -> None:
    """Per judged metric, whether it was checked against the team's labels: "validated on
    120 of your labels: kappa 0.71 [0.58, 0.83]" or "not validated on your data"."""
    if not validations:
        return
    console.print("[bold]on your labels[/bold]")
    for metric, validation in validations.items():
        console.print(f"  {escape(metric)}: {escape(validation.describe())}", highlight=False)
    if not all(v.n_labels for v in validations.values()):
        console.print(
            f"[dim]  label what the judge said: ragmeter labels queue {escape(run)} -o "
            "queue.jsonl, fill value, then ragmeter labels import queue.jsonl[/dim]",
            highlight=False,
            soft_wrap=True,
        )


def print_judge_error(result: "EvaluationResult", labelled: Labelled) -> None:
    """Per metric with labelled (judge score, human label) pairs: its mean with the
    sampling-only interval and the one with the judge's measured error
    (:func:`ragmeter.stats.with_judge_error`), or why that could not be computed. Bad pairs
    or an unknown metric: an error naming the row, exit 2."""
    from ragmeter.stats import with_judge_error

    n_resamples = max(200, min(2_000, 40_000_000 // max(1, len(result))))  # as the summary
    lines = []
    for metric, pairs in labelled.items():
        try:
            estimate = with_judge_error(result, metric, pairs, n_resamples=n_resamples)
        except (KeyError, ValueError) as error:
            _fail(f"judge error of {metric}: {error.args[0] if error.args else error}")
        basis = f" [dim]({escape(estimate.basis)})[/dim]" if estimate.basis else ""
        lines.append(f"  {escape(metric)}: {escape(estimate.sentence())}{basis}")
    if lines:
        console.print("[bold]with judge error[/bold]")
        for line in lines:
            console.print(line, highlight=False)


def print_run(
    result: "EvaluationResult",
    *,
    quiet: bool = False,
    run: str = "RUN",
    labelled: Labelled | None = None,
    validations: "Mapping[str, Validation] | None" = None,
) -> "list[Finding]":
    """Summary table, breakdowns, usage and diagnosis of a run; ``quiet`` (``eval -q``)
    prints, instead of the per-tag breakdowns, one line saying ``ragmeter show run`` has
    them. ``validations`` (metric -> its validation on the team's labels) and ``labelled``
    (metric -> labelled pairs: each such metric's interval with the judge's error,
    :func:`print_judge_error`) come from the run store's labels (``cli._trust``)."""
    from ragmeter.diagnosis import diagnose

    console.print(summary_table(result))
    print_validations(validations or {}, run)
    if labelled:
        print_judge_error(result, labelled)
    unstarted = sum(a.n_not_started for a in result.aggregates.values())
    if unstarted:
        console.print(
            f"[yellow]not started:[/yellow] {unstarted} results the run stopped before "
            "(its budget, a refused judge, a kill): not failures; ragmeter eval --resume RUN_DIR "
            "computes them",
            highlight=False,
        )
    print_judge_noise(result)
    tags = list(result.breakdowns()) if quiet else []
    if tags:
        console.print(
            f"[dim]breakdowns by {escape(', '.join(tags))}: ragmeter show {escape(run)}[/dim]",
            highlight=False,
        )
    elif not quiet:
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


def resolve_run(ref: str | Path, store: str | None = None) -> "EvaluationResult":
    """A run named any of three ways: a run directory (``ragmeter eval -o``), a run id or a
    unique id prefix in the run store (``store``, else $RAGMETER_STORE_URL, else the SQLite
    default: the command's ``--store``), or a run name (its latest run).
    Exit 2 when nothing matches (saying what was tried) or a prefix fits several runs, exit 4
    when the run or the store cannot be read (also on read-only media)."""
    from ragmeter.results import EvaluationResult

    folder = run_folder(ref)
    if folder is not None:  # read as it is: the run store (SQLAlchemy) is not opened
        try:
            return EvaluationResult.load(folder)
        except (FileNotFoundError, ValueError) as error:
            _fail(str(error))
        except OSError as error:
            fail_io(error, kept=f"the run {folder} could not be read")
    from ragmeter._services import redact_url
    from ragmeter.store import AmbiguousRunError, RunNotFoundError, store_exists, store_url

    text = str(ref)
    where = redact_url(store_url(store))
    if store_exists(store):
        opened = open_run_store(store)
        try:
            return opened.load(text)
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
    store: str | None = None,
    validations: "Mapping[str, Validation] | None" = None,
) -> tuple[ExitCode, str]:
    """Run the gate, print and write its report; the exit code and why (0 pass, 1 a rule
    failed, 2 usage, 3 a rule's metric has fewer results scored than its floor,
    ``min_coverage`` unless the rule sets one; 4 a report file could not be written).
    Regression rules across a changed judge or embedding model are refused (exit 2, both
    named) unless ``allow_judge_change``; every way the runs were measured differently is
    printed as a warning. A baseline named by id or name is looked up in ``store``, and so
    are the labels of ``min_agreement`` rules (their ``validations``, unless given)."""
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
        baseline = resolve_run(baseline_dir, store) if baseline_dir is not None else None
        if rules.agreements and validations is None:
            from ragmeter.cli._trust import stored_trust

            validations = stored_trust(candidate, store).validations
        report = run_gate(
            candidate,
            rules,
            baseline,
            candidate_name=candidate_name,
            baseline_name=None if baseline_dir is None else str(baseline_dir),
            allow_judge_change=allow_judge_change,
            min_coverage=min_coverage,
            validations=validations,
        )
    except (GateFileError, GateUsageError, FileNotFoundError, ImportError) as error:
        print_error(str(error))
        return ExitCode.USAGE, "the gate could not be applied"
    print_warnings(report.differences)
    table = Table("", "rule", "figures", title="gate", title_justify="left")
    for outcome in report.outcomes:
        mark = "[green]pass[/green]" if outcome.passed else "[bold red]FAIL[/bold red]"
        table.add_row(mark, escape(outcome.rule), escape(outcome.message))
    console.print(table)
    summary = to_markdown(report)
    written = True
    try:
        for path, render in ((junit, to_junit), (markdown, to_markdown)):
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(render(report), encoding="utf-8")
        step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if step_summary:
            with open(step_summary, "a", encoding="utf-8") as handle:
                handle.write(summary)
    except OSError as error:
        written = False
        print_error(f"the gate's report was not written: {io_message(error)}")
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


def print_warnings(lines: Iterable[str]) -> None:
    """Each line as a warning, on stderr (e.g. how two runs were measured differently)."""
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
    print_warnings(checked.lines(refusing=False) if not allowed else checked.lines())


AllowJudgeChangeOption = Annotated[
    bool,
    typer.Option(
        "--allow-judge-change",
        help="Compare runs judged by different models or settings (or with different "
        "embedding models) anyway; the differences are still printed.",
    ),
]
#: ``--store``: every command that records a run or names one (by id, id prefix or name)
#: takes it, so a run recorded with ``eval --store URL`` is found with ``show ID --store URL``.
RunStoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Run store URL: where runs named by id or name are looked up (default "
        "$RAGMETER_STORE_URL or sqlite .ragmeter/runs.db).",
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
        print_error(redact_secrets(io_message(error)))
        raise SystemExit(int(ExitCode.IO_ERROR)) from None
