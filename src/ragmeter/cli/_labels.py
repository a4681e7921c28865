"""``ragmeter labels``: people's labels in the run store (import, export, list), the metric's
agreement with them, and what to label next."""

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ragmeter.cli._app import (
    CommandGroup,
    RunStoreOption,
    _fail,
    app,
    console,
    open_run_store,
    resolve_run,
)
from ragmeter.cli._exit import fail_io
from ragmeter.cli._judging import whole_paragraphs
from ragmeter.cli._run_commands import JsonOption, RunArgument, print_json

if TYPE_CHECKING:
    from ragmeter.align import LabelAgreement
    from ragmeter.results import EvaluationResult
    from ragmeter.store import Label, Store

labels_app = typer.Typer(
    help="People's labels of what the metrics judged: import, export, list, agreement, queue.",
    no_args_is_help=True,
    cls=CommandGroup,
)
app.add_typer(labels_app, name="labels")

MetricOption = Annotated[
    str | None, typer.Option("--metric", "-m", help="Only the labels of this metric.")
]
VersusOption = Annotated[
    str | None,
    typer.Option(
        "--versus",
        help="Another run (directory, id or name): preferences between its answers and RUN's "
        "to the same questions.",
        show_default=False,
    ),
]


@labels_app.command("import")
@whole_paragraphs
def import_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="A labels file (JSONL, one label record a line), or a labelling file from "
            "ragmeter mine whose label column people filled (then --metric and --labeller).",
            show_default=False,
        ),
    ],
    metric: Annotated[
        str | None,
        typer.Option("--metric", "-m", help="The metric a ragmeter mine file's labels are about."),
    ] = None,
    labeller: Annotated[
        str | None,
        typer.Option("--labeller", help="Who labelled (fills records that do not say)."),
    ] = None,
    store: RunStoreOption = None,
) -> None:
    """Keep the labels of FILE in the run store. The file is checked whole first: a problem
    is named by its line, its field and the fix, and then nothing is imported. A label
    already kept (same item, labeller and value) is not added twice.

    Exit code 0 when the labels were kept, 2 for a file with problems, 4 when the file or
    the store cannot be read or written."""
    from ragmeter.align import read_labels
    from ragmeter.dataset import DatasetError

    if not file.is_file():
        _fail(f"no such labels file: {str(file)!r}")
    unlabelled: list[int] = []
    try:
        found = read_labels(file, metric=metric, labeller=labeller, unlabelled=unlabelled)
    except DatasetError as error:
        _fail(str(error))
    except OSError as error:
        fail_io(error, kept="nothing was imported")
    opened = open_run_store(store)
    added = opened.add_labels(found)
    console.print(
        f"{added} new label(s) kept, {len(found) - added} already there "
        f"({len(found)} in {escape(str(file))})",
        highlight=False,
    )
    if unlabelled:
        shown = ", ".join(map(str, unlabelled[:10])) + (", ..." if len(unlabelled) > 10 else "")
        console.print(
            f"{len(unlabelled)} queue item(s) not labelled yet (value empty) were skipped: "
            f"line(s) {shown}",
            highlight=False,
        )


@labels_app.command("export")
@whole_paragraphs
def export_command(
    file: Annotated[Path, typer.Argument(help="The JSONL file to write.", show_default=False)],
    metric: MetricOption = None,
    store: RunStoreOption = None,
) -> None:
    """Write the labels kept in the run store as JSONL, one label record a line (oldest
    first), the format ragmeter labels import reads."""
    from ragmeter.align import write_labels

    found = open_run_store(store).labels(metric=metric)
    try:
        write_labels(found, file)
    except OSError as error:
        fail_io(error, kept="no labels file was written")
    console.print(f"{len(found)} label(s) written to {escape(str(file))}", highlight=False)


def label_counts(labels: "list[Label]") -> list[dict[str, object]]:
    """How many labels each (metric, level, labeller) has, with the items they cover."""
    counts = Counter((k.metric, k.level, k.labeller) for k in labels)
    items = Counter((k.metric, k.level, k.labeller, k.sample_key, str(k.item)) for k in labels)
    covered = Counter(key[:3] for key in items)
    return [
        {"metric": m, "level": lv, "labeller": who, "labels": n, "items": covered[(m, lv, who)]}
        for (m, lv, who), n in sorted(counts.items())
    ]


@labels_app.command("list")
@whole_paragraphs
def list_command(
    metric: MetricOption = None,
    as_json: JsonOption = False,
    store: RunStoreOption = None,
) -> None:
    """How many labels the run store keeps, per metric, level and labeller."""
    found = open_run_store(store).labels(metric=metric)
    rows = label_counts(found)
    if as_json:
        print_json({"n_labels": len(found), "counts": rows})
        return
    if not rows:
        console.print("no labels kept yet: ragmeter labels import FILE", highlight=False)
        return
    table = Table("metric", "level", "labeller", "labels", "items")
    for row in rows:
        table.add_row(
            *(escape(str(row[k])) for k in ("metric", "level", "labeller")),
            str(row["labels"]),
            str(row["items"]),
        )
    console.print(table)
    console.print(f"{len(found)} label(s)", highlight=False)


def labelled_metrics(
    result: "EvaluationResult", labels: "list[Label]", metric: str | None
) -> list[str]:
    """``metric`` (refused when the run lacks it), else the run's metrics that have labels."""
    names = [m.name for m in result.metrics]
    if metric is not None:
        if metric not in names:
            _fail(f"the run has no metric {metric!r} (it has {', '.join(names) or 'none'})")
        return [metric]
    found = [name for name in names if any(k.metric == name for k in labels)]
    if not found:
        kept = sorted({k.metric for k in labels})
        _fail(
            f"no label of the run's metrics ({', '.join(names) or 'none'}) in the run store"
            + (f"; it has labels of {', '.join(kept)}" if kept else "")
            + ": ragmeter labels import FILE, or ragmeter labels queue RUN to make one"
        )
    return found


def agreements(
    run: str,
    store: "Store",
    store_url: str | None,
    metric: str | None,
    versus: str | None = None,
) -> "list[LabelAgreement]":
    """The agreement of each labelled metric of ``run`` with the labels kept in ``store``:
    what ``ragmeter labels agreement`` and ``ragmeter align --run`` print. ``versus``: another
    run whose samples preference labels may compare with this run's."""
    from ragmeter.align import agreement_on_labels

    result = resolve_run(run, store_url)
    other = None if versus is None else resolve_run(versus, store_url)
    labels = store.labels(metric=metric)
    try:
        return [
            agreement_on_labels(result, labels, name, versus=other)
            for name in labelled_metrics(result, labels, metric)
        ]
    except ValueError as error:  # the other run lacks the metric
        _fail(f"--versus {versus}: {error}")


def print_agreements(found: "list[LabelAgreement]", *, as_json: bool, top: int = 10) -> None:
    if as_json:
        print_json({"metrics": [a.to_dict() for a in found]})
        return
    for position, agreement in enumerate(found):
        if position:
            console.print()
        for line in agreement.summary(top=top).splitlines():
            console.print(escape(line), highlight=False, soft_wrap=True)


@labels_app.command("agreement")
@whole_paragraphs
def agreement_command(
    run: RunArgument,
    metric: Annotated[
        str | None,
        typer.Option("--metric", "-m", help="Only this metric (default: every labelled one)."),
    ] = None,
    top: Annotated[
        int, typer.Option("--top", min=0, help="Disagreements to print per level (all in --json).")
    ] = 10,
    versus: VersusOption = None,
    as_json: JsonOption = False,
    store: RunStoreOption = None,
) -> None:
    """How far the run's metrics agree with the labels kept in the run store, per level
    (sample, claim, context, preference), from the run's stored verdicts (the judge is not
    called): Cohen's kappa, accuracy, Spearman and pairwise agreement with 95% bootstrap CIs
    (preference agreement for preferences), the confusion matrix, the worst disagreements with
    the judge's reasons, the labelled items the run did not score, and the agreement between
    labellers. With --versus OTHER, preferences between this run's answers and OTHER's."""
    found = agreements(run, open_run_store(store), store, metric, versus)
    print_agreements(found, as_json=as_json, top=top)


@labels_app.command("queue")
@whole_paragraphs
def queue_command(
    run: RunArgument,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The JSONL file to write.", show_default=False)
    ],
    metric: Annotated[
        str | None,
        typer.Option("--metric", "-m", help="The metric (needed when the run has several)."),
    ] = None,
    n: Annotated[int, typer.Option("--n", "-n", min=1, help="How many items.")] = 20,
    strategy: Annotated[
        str,
        typer.Option(
            "--strategy",
            help="uncertain (P(yes) nearest 0.5), worst (lowest scores) or random (seeded, "
            "stratified).",
        ),
    ] = "uncertain",
    by: Annotated[
        str | None,
        typer.Option("--by", help="A tag (metadata field) whose groups are taken in turn."),
    ] = None,
    level: Annotated[
        str | None,
        typer.Option(
            "--level",
            help="sample, claim or context (default: the claims and contexts the judge gave "
            "verdicts on, else the samples).",
        ),
    ] = None,
    labeller: Annotated[
        str | None, typer.Option("--labeller", help="Who will label (written in each item).")
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of --strategy random and of --versus's A/B order.")
    ] = 0,
    versus: VersusOption = None,
    store: RunStoreOption = None,
) -> None:
    """Write the items of RUN to label next, in the label format with value empty, each
    with the sample's question, answer and contexts and the judge's verdict, P(yes) and
    reason: fill value (and labeller) in an editor, then ragmeter labels import.
    Items already labelled in the run store are left out. With --versus OTHER: preference
    items instead, RUN's and OTHER's answers to the same question side by side (blind: no
    score, the order shuffled), those the metric scores closest first; value is better,
    worse or tie (response against other_response)."""
    from ragmeter.align import next_to_label, preference_pairs, write_labels

    result = resolve_run(run, store)
    names = [m.name for m in result.metrics]
    if metric is None:
        if len(names) != 1:
            _fail(f"the run has several metrics ({', '.join(names)}): choose one with --metric")
        metric = names[0]
    kept = open_run_store(store).labels(metric=metric)
    try:
        if versus is not None:
            if level not in (None, "preference") or strategy != "uncertain" or by is not None:
                _fail("--versus writes preference items: drop --level, --strategy and --by")
            records = preference_pairs(
                result,
                resolve_run(versus, store),
                metric,
                labels=kept,
                n=n,
                seed=seed,
                labeller=labeller or "",
            )
            chosen = []
        else:
            chosen = next_to_label(
                result, metric, labels=kept, n=n, strategy=strategy, by=by, level=level, seed=seed
            )
            records = [item.to_dict(labeller or "") for item in chosen]
    except ValueError as error:
        _fail(str(error))
    try:
        write_labels(records, output)
    except OSError as error:
        fail_io(error, kept="no queue file was written")
    if versus is not None:
        console.print(
            f"{len(records)} pair(s) of answers to compare written to {escape(str(output))}; "
            "fill value (better, worse or tie: response against other_response), then: "
            "ragmeter labels import " + escape(str(output)),
            highlight=False,
        )
        return
    groups = Counter(item.group for item in chosen if item.group)
    spread = f" ({', '.join(f'{g} {c}' for g, c in sorted(groups.items()))})" if groups else ""
    console.print(
        f"{len(chosen)} item(s) to label{spread} written to {escape(str(output))}; fill "
        "value, then: ragmeter labels import " + escape(str(output)),
        highlight=False,
    )


def align_on_stored_labels(
    metric: str,
    labelled: Path | None,
    run: str | None,
    store: str | None,
    *,
    top: int,
    json_out: Path | None,
) -> None:
    """``align --run``: the figures of ``ragmeter labels agreement`` (one computation)."""
    if run is None:
        _fail("give the labelled samples (LABELLED), or --run RUN to use the stored labels")
    if labelled is not None:
        _fail("give either LABELLED or --run RUN, not both")
    found = agreements(run, open_run_store(store), store, metric)
    print_agreements(found, as_json=False, top=top)
    if json_out is not None:
        document = {"metrics": [a.to_dict() for a in found]}
        try:
            json_out.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False)
            json_out.write_text(text, encoding="utf-8")
        except OSError as error:
            fail_io(error, kept="the agreement was printed, not written")
        console.print(f"report: {escape(str(json_out))}", highlight=False)
