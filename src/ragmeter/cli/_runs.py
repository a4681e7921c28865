"""``ragmeter runs``: the run store from the command line (list, show, compare, annotate,
export)."""

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ragmeter.cli._app import (
    AllowJudgeChangeOption,
    CommandGroup,
    RunStoreOption,
    _fail,
    app,
    console,
    open_run_store,
    print_comparability,
    print_comparison,
    print_run,
    run_folder,
)
from ragmeter.cli._exit import fail_io
from ragmeter.cli._run_commands import JsonOption, print_json

if TYPE_CHECKING:
    from ragmeter.results import EvaluationResult
    from ragmeter.store import RunInfo, Store

runs_app = typer.Typer(
    help="Runs recorded in the run store.", no_args_is_help=True, cls=CommandGroup
)
app.add_typer(runs_app, name="runs")


def _get(store: "Store", ref: str) -> "RunInfo":
    from ragmeter.store import RunNotFoundError

    try:
        return store.get(ref)
    except RunNotFoundError as error:
        _fail(str(error))


def _params(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items())) or "—"


def info_dict(info: "RunInfo") -> dict[str, Any]:
    """A stored run's record as JSON values (``created_at`` in ISO 8601, UTC)."""
    record = dataclasses.asdict(info)
    record["created_at"] = info.created_at.isoformat()
    return record


#: Below this many columns, ``runs list`` leaves out params, tags and git unless --wide.
WIDE_COLUMNS = 120
#: How many metric columns ``runs list`` shows without --metrics.
HEADLINE_METRICS = 4


def headline_metrics(found: "list[RunInfo]", limit: int | None = HEADLINE_METRICS) -> list[str]:
    """The metrics ``runs list`` shows by default: those of the newest runs first (the
    newest run's in its order, then the next run's new ones...), at most ``limit``
    (``None``: all of them).

    >>> from types import SimpleNamespace as Run
    >>> runs = [Run(metrics=[{"name": n} for n in names]) for names in
    ...         (["mrr", "recall@5"], ["faithfulness", "mrr"], ["a", "b", "c"])]
    >>> headline_metrics(runs), headline_metrics(runs, 2)
    (['mrr', 'recall@5', 'faithfulness', 'a'], ['mrr', 'recall@5'])
    """
    every = dict.fromkeys(m["name"] for info in found for m in info.metrics)
    return list(every)[:limit]


@runs_app.command("list")
def list_command(
    name: Annotated[str | None, typer.Option("--name", help="Only runs with this name.")] = None,
    tag: Annotated[str | None, typer.Option("--tag", help="Only runs with this tag.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Most runs to show.")] = 20,
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help=f"Also params, tags and git (shown anyway at {WIDE_COLUMNS}+ columns).",
        ),
    ] = False,
    metrics: Annotated[
        str | None,
        typer.Option(
            "--metrics",
            "-m",
            help=f"The metric columns (comma-separated), or 'all' (default: the newest runs' "
            f"metrics, at most {HEADLINE_METRICS}).",
        ),
    ] = None,
    as_json: JsonOption = False,
    store: RunStoreOption = None,
) -> None:
    """Recorded runs, newest first, with the means of a few metrics (--metrics for others;
    --json has every metric)."""
    found = open_run_store(store).list(name=name, tag=tag, limit=limit)
    if as_json:
        print_json({"runs": [info_dict(info) for info in found]})
        return
    if not found:
        console.print("no run recorded yet: ragmeter eval records every run it makes")
        return
    every = headline_metrics(found, limit=None)
    if metrics is None:
        shown = headline_metrics(found)
    elif metrics.strip() == "all":
        shown = every
    else:
        shown = [m.strip() for m in metrics.split(",") if m.strip()]
        unknown = [m for m in shown if m not in every]
        if unknown:
            _fail(
                f"--metrics: no listed run has {', '.join(map(repr, unknown))}; these runs "
                f"have {', '.join(every)}"
            )
    wide = wide or console.width >= WIDE_COLUMNS
    hidden = len(every) - len(shown)
    caption = (
        f"{len(shown)} of {len(every)} metrics: others with --metrics NAME,... or "
        "--metrics all; every metric: --json"
        if hidden
        else None
    )
    table = Table(
        title=f"{len(found)} run(s)",
        title_justify="left",
        caption=caption,
        caption_justify="left",
    )
    table.add_column("id", no_wrap=True, min_width=8)
    table.add_column("name", min_width=4)
    table.add_column("when (UTC)", no_wrap=True)
    table.add_column("samples", justify="right")
    for metric in shown:
        table.add_column(escape(metric), justify="right")
    if wide:
        for column in ("params", "tags", "git"):
            table.add_column(column)
    for info in found:
        means = [info.mean(m) for m in shown]
        git = (
            "—"
            if info.git_commit is None
            else info.git_commit[:8] + ("*" if info.git_dirty else "")
        )
        table.add_row(
            info.id[:8],
            escape(info.name),
            f"{info.created_at:%Y-%m-%d %H:%M}",
            f"{info.n_samples}"
            + ("" if info.status == "complete" else " [yellow]partial[/yellow]"),
            *("—" if v is None else f"{v:.3f}" for v in means),
            *(
                (escape(_params(info.params)), escape(", ".join(info.tags)) or "—", git)
                if wide
                else ()
            ),
        )
    console.print(table)
    if not wide:
        console.print(
            "[dim]params, tags and git: --wide; every field: --json[/dim]", highlight=False
        )


@runs_app.command("show")
def show_command(
    run: Annotated[str, typer.Argument(help="Run id, id prefix or name (latest of that name).")],
    as_json: JsonOption = False,
    store: RunStoreOption = None,
) -> None:
    """One run: its record (params, tags, notes, git, dataset) and its results."""
    from ragmeter.diagnosis import diagnose

    opened = open_run_store(store)
    info = _get(opened, run)
    if as_json:
        result = opened.load(info.id)
        print_json(
            {
                "run": info_dict(info),
                "summary": result.summary(),
                "findings": [f.to_dict() for f in diagnose(result)],
            }
        )
        return
    git = (
        "—" if info.git_commit is None else info.git_commit + (" (dirty)" if info.git_dirty else "")
    )
    for label, value in (
        ("run", f"{info.id} {info.name} ({info.status})"),
        ("when", f"{info.created_at:%Y-%m-%d %H:%M:%S} UTC"),
        ("dataset", f"{info.dataset_path or '—'} (fingerprint {info.dataset_hash or '—'})"),
        ("params", _params(info.params)),
        ("tags", ", ".join(info.tags) or "—"),
        ("git", git),
        ("ragmeter", info.ragmeter_version or "—"),
        ("notes", info.notes or "—"),
    ):
        console.print(f"[bold]{label}[/bold]: {escape(str(value))}", highlight=False)
    from ragmeter.cli._trust import stored_trust

    result = opened.load(info.id)
    trust = stored_trust(result, store, opened)
    print_run(result, run=run, labelled=trust.labelled, validations=trust.validations)


@runs_app.command("compare")
def compare_command(
    runs: Annotated[list[str], typer.Argument(help="Two or more runs; the first is the baseline.")],
    metrics: Annotated[
        str | None, typer.Option("--metrics", "-m", help="Only these metrics (comma-separated).")
    ] = None,
    top: Annotated[int, typer.Option("--top", min=0, help="Samples that changed most.")] = 5,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level.")] = 0.05,
    allow_judge_change: AllowJudgeChangeOption = False,
    store: RunStoreOption = None,
) -> None:
    """Each run against the first: parameter differences, how the runs were measured
    differently (judge, embedding model, prompt versions, metric settings), per-metric
    verdicts (paired statistics, Holm-corrected), per-tag deltas and the samples that
    changed most. A metric whose judge or embedding model changed gets no verdict unless
    --allow-judge-change."""
    from ragmeter.stats import comparability, compare
    from ragmeter.store import parameter_changes

    if len(runs) < 2:
        _fail("give at least two runs: the baseline first")
    opened = open_run_store(store)
    infos = [_get(opened, ref) for ref in runs]
    results = [opened.load(info.id) for info in infos]
    chosen = None if metrics is None else [m.strip() for m in metrics.split(",")]
    base_info, base = infos[0], results[0]
    for info, result in zip(infos[1:], results[1:], strict=True):
        console.rule(
            f"{escape(base_info.name)} {base_info.id[:8]} → {escape(info.name)} {info.id[:8]}"
        )
        for line in parameter_changes(base_info.params, info.params):
            console.print(f"param {escape(line)}", highlight=False)
        try:
            comparisons = compare(
                base, result, metrics=chosen, alpha=alpha, allow_judge_change=allow_judge_change
            )
        except (ValueError, KeyError, ImportError) as error:
            _fail(str(error))
        names = [c.metric for c in comparisons]
        print_comparability(comparability(base, result, metrics=names), allowed=allow_judge_change)
        for c in comparisons:
            print_comparison(c)
        for table in tag_delta_tables(base, result, names, alpha, allow_judge_change):
            console.print(table)
        if top:
            console.print(most_changed_table(base, result, names, top))


#: Tags with more values than this get no per-value statistics (one test per value).
MAX_TAG_VALUES = 10


def tag_delta_tables(
    base: "EvaluationResult",
    other: "EvaluationResult",
    metrics: list[str],
    alpha: float = 0.05,
    allow_judge_change: bool = False,
) -> list[Table]:
    """Per tag shared by both runs: each metric's mean per tag value, before → after, with
    the paired test on that group's samples (Holm-corrected over the metrics; none for a
    metric whose judge changed, unless ``allow_judge_change``)."""
    from ragmeter.stats import compare

    tables = []
    before, after = base.breakdowns(), other.breakdowns()
    for tag in sorted(set(before) & set(after)):
        groups_after = {g.value: g for g in after[tag]}
        shared = [g for g in before[tag] if g.value in groups_after]
        if not shared or len(shared) > MAX_TAG_VALUES:
            continue
        table = Table(title=f"by {tag}", title_justify="left")
        table.add_column("metric", no_wrap=True)
        verdicts: dict[str, dict[str, Any]] = {}
        for group in shared:
            table.add_column(escape(group.value), justify="right")
            try:
                found = compare(
                    base, other, metrics=metrics, tag=tag, value=group.value, alpha=alpha,
                    n_resamples=2000, allow_judge_change=allow_judge_change,
                )  # fmt: skip
            except ValueError:
                found = []
            verdicts[group.value] = {c.metric: c for c in found}
        for metric in metrics:
            cells = []
            for group in shared:
                a = group.aggregates[metric].mean
                b = groups_after[group.value].aggregates[metric].mean
                if a is None or b is None:
                    cells.append("—")
                    continue
                c = verdicts[group.value].get(metric)
                mark = ""
                if c is not None and c.p_adjusted is not None:
                    colour = {"better": "green", "worse": "red"}.get(c.change, "dim")
                    mark = f" [{colour}]p={c.p_adjusted:.2g}[/{colour}]"
                cells.append(f"{a:.2f} → {b:.2f} ({b - a:+.2f}){mark}")
            table.add_row(metric, *cells)
        tables.append(table)
    return tables


def most_changed(
    base: "EvaluationResult", other: "EvaluationResult", metric: str, top: int
) -> list[tuple[str, float, float]]:
    """The samples (by id, in both runs) whose ``metric`` score moved most:
    ``(sample_id, before, after)``, largest change first."""
    before = {s.sample_id: s.scores[metric].score for s in base if metric in s.scores}
    changes = []
    for sample in other:
        result = sample.scores.get(metric)
        was = before.get(sample.sample_id)
        if result is not None and result.score is not None and was is not None:
            changes.append((sample.sample_id, was, result.score))
    changes.sort(key=lambda c: (-abs(c[2] - c[1]), c[0]))
    return [c for c in changes[:top] if c[2] != c[1]]


def most_changed_table(
    base: "EvaluationResult", other: "EvaluationResult", metrics: list[str], top: int
) -> Table:
    table = Table(title="samples that changed most", title_justify="left")
    for column in ("metric", "sample", "before", "after", "change"):
        table.add_column(
            column, justify="right" if column in ("before", "after", "change") else "left"
        )
    for metric in metrics:
        for sample_id, was, now in most_changed(base, other, metric, top):
            table.add_row(
                metric, escape(sample_id), f"{was:.3f}", f"{now:.3f}", f"{now - was:+.3f}"
            )
    return table


@runs_app.command("annotate")
def annotate_command(
    run: Annotated[str, typer.Argument(help="Run id, id prefix or name.")],
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Add a tag (repeatable).")] = None,
    notes: Annotated[str | None, typer.Option("--notes", help="Replace the notes.")] = None,
    store: RunStoreOption = None,
) -> None:
    """Add tags or notes to a recorded run."""
    opened = open_run_store(store)
    info = opened.annotate(_get(opened, run).id, tags=tag or (), notes=notes)
    console.print(f"{info.id[:8]} {escape(info.name)}: tags {escape(', '.join(info.tags) or '—')}")


@runs_app.command("export")
def export_command(
    run: Annotated[str, typer.Argument(help="Run id, id prefix or name (latest of that name).")],
    directory: Annotated[
        Path, typer.Argument(help="Folder to write (results.jsonl and summary.json).")
    ],
    store: RunStoreOption = None,
) -> None:
    """Write a stored run as a run directory (results.jsonl and summary.json), which
    ragmeter show, report, gate and compare read like one written by ragmeter eval."""
    opened = open_run_store(store)
    info = _get(opened, run)
    if run_folder(directory) is not None:
        _fail(f"{directory} already holds a run: give a new or empty folder")
    result = opened.load(info.id)
    try:
        result.save(directory)
    except OSError as error:
        fail_io(error, kept=f"the run {info.id[:8]} was not exported; the store is unchanged")
    console.print(
        f"exported run {info.id[:8]} ({escape(info.name)}) to {escape(str(directory))}",
        highlight=False,
    )
