"""``ragmeter calibrate``: fit a verdict calibration on your labels, list and show them."""

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ragmeter.cli._app import (
    RunStoreOption,
    _fail,
    app,
    console,
    open_run_store,
    print_warnings,
    resolve_run,
)
from ragmeter.cli._exit import fail_io
from ragmeter.cli._run_commands import JsonOption, print_json

if TYPE_CHECKING:
    from ragmeter.store import Label

calibrate_app = typer.Typer(
    help="Calibrate the judge's verdicts on your labels: fit, list, show.",
    no_args_is_help=True,
)
app.add_typer(calibrate_app, name="calibrate")


def _labels_of(labels: Path | None, store: str | None) -> "list[Label]":
    """The labels of ``labels`` (a labels JSONL file, read as ``ragmeter labels import``
    reads it: a bad line is a usage error naming the line, the field and the fix), else
    those kept in the run store ``store``."""
    from ragmeter.align import read_labels
    from ragmeter.dataset import DatasetError

    if labels is None:
        return open_run_store(store).labels()
    if not labels.is_file():
        _fail(f"no labels file {str(labels)!r}")
    try:
        return read_labels(labels)
    except DatasetError as error:  # each bad line, as labels import names it
        hint = "No calibration was fitted: fix these lines and fit again."
        _fail(str(DatasetError(error.problems, hint=hint)))
    except OSError as error:
        fail_io(error, kept="no calibration was fitted")


def _cell(figures: Mapping[str, Any], name: str) -> str:
    ci = figures.get(f"{name}_ci")
    value = f"{figures[name]:.3f}"
    return f"{value} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else value


def cv_table(cv: Mapping[str, Any]) -> Table:
    """The cross-validated figures per task: before (the judge's P as given) and after
    (each fold calibrated by a fit on the others), with 95% bootstrap CIs over verdicts."""
    table = Table(
        "task",
        "n",
        "groups",
        "folds",
        "accuracy before",
        "accuracy after",
        "gain",
        "log-loss before → after",
        "Brier before → after",
        title=f"cross-validated ({cv.get('method')}), 95% CIs",
        title_justify="left",
    )
    for task, row in sorted((cv.get("tasks") or {}).items()):
        before, after = row["before"], row["after"]
        gain_ci = row.get("accuracy_gain_ci")
        gain = f"{row['accuracy_gain']:+.3f}" + (
            f" [{gain_ci[0]:+.2f}, {gain_ci[1]:+.2f}]" if gain_ci else ""
        )
        table.add_row(
            escape(task),
            str(row["n"]),
            str(row["groups"]),
            str(row["folds"]),
            _cell(before, "accuracy"),
            _cell(after, "accuracy"),
            gain,
            f"{before['log_loss']:.3f} → {after['log_loss']:.3f}",
            f"{before['brier']:.3f} → {after['brier']:.3f}",
        )
    return table


@calibrate_app.command("fit")
def fit_command(
    run: Annotated[str, typer.Argument(help="The run: a run directory, id or name.")],
    name: Annotated[str, typer.Option("--name", help="The calibration's name.")],
    labels: Annotated[
        Path | None,
        typer.Option(
            "--labels",
            help="Labels JSONL file (claim and context labels); default: the labels kept in "
            "the run store (--store).",
        ),
    ] = None,
    method: Annotated[
        str, typer.Option("--method", help="platt (logistic on logit P) or isotonic.")
    ] = "platt",
    metric: Annotated[
        list[str] | None,
        typer.Option("--metric", help="Only the labels of this metric (repeatable)."),
    ] = None,
    folds: Annotated[int, typer.Option("--folds", min=2, help="Cross-validation folds.")] = 5,
    store: RunStoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Fit a calibration of the run's judge verdicts on your claim / context labels (a
    labels file, else those kept in the run store), save it as the next version of NAME
    (.ragmeter/calibrations/NAME/vN.json) and print its cross-validated figures. Use it with
    ragmeter eval --calibration NAME. Exit 2 for a bad label file, labels that match no
    verdict of the run, or too few labels of a kind."""
    from ragmeter.align import calibrate_on_labels
    from ragmeter.judge import CalibrationError, list_calibrations, save_calibration

    result = resolve_run(run, store)
    source = str(labels) if labels is not None else "the run store"
    try:
        calibration, _, used = calibrate_on_labels(
            result,
            _labels_of(labels, store),
            method=method,
            folds=folds,
            metrics=metric,
            fitted_on=f"labels in {source} on run {run}",
        )
        before = list_calibrations().get(name, [])
        saved, path = save_calibration(calibration, name)
    except CalibrationError as error:
        _fail(str(error))
    except OSError as error:
        _fail(f"the calibration could not be saved: {error}")
    warnings = [
        f"{task}: on held-out folds the calibrated verdicts are less accurate than the judge's "
        f"own ({row['before']['accuracy']:.3f} -> {row['after']['accuracy']:.3f}): label more "
        "(ragmeter labels queue) before running with it"
        for task, row in sorted((saved.cv.get("tasks") or {}).items())
        if row["accuracy_gain"] < 0
    ]
    new = saved.version not in before
    if as_json:
        print_json(
            {
                "calibration": saved.to_dict(),
                "path": str(path),
                "new_version": new,
                "matched": used.matched,
                "n_labels": used.n_labels,
                "warnings": warnings,
            }
        )
        return
    console.print(
        f"{used.matched} labelled verdicts matched ({used.n_labels} claim/context labels)",
        highlight=False,
    )
    console.print(cv_table(saved.cv))
    kept = "saved" if new else "the same fit as the saved"
    console.print(f"{kept} {escape(saved.label)}: {escape(str(path))}", highlight=False)
    console.print(f"use it with: ragmeter eval ... --calibration {saved.name}", highlight=False)
    print_warnings(warnings)


@calibrate_app.command("list")
def list_command() -> None:
    """The saved calibrations (.ragmeter/calibrations): name, versions, method, labels."""
    from ragmeter.judge import CalibrationError, list_calibrations, load_calibration

    found = list_calibrations()
    if not found:
        console.print("no calibration saved yet: fit one with ragmeter calibrate fit")
        return
    table = Table("name", "versions", "latest: method", "tasks", "labels", "judge", "created")
    for name, versions in found.items():
        try:
            latest = load_calibration(f"{name}@v{versions[-1]}")
        except CalibrationError as error:
            table.add_row(escape(name), str(len(versions)), f"unreadable: {escape(str(error))}")
            continue
        table.add_row(
            escape(name),
            ", ".join(f"v{v}" for v in versions),
            latest.method,
            escape(", ".join(sorted(latest.tasks))),
            str(latest.n_labels),
            escape(latest.judge or "—"),
            latest.created_at,
        )
    console.print(table)


@calibrate_app.command("show")
def show_command(
    name: Annotated[str, typer.Argument(help="NAME (latest version), NAME@vN or a .json file.")],
    as_json: JsonOption = False,
) -> None:
    """A calibration: what it was fitted for and on, its maps and cross-validated figures."""
    from ragmeter.judge import CalibrationError, load_calibration

    try:
        found = load_calibration(name)
    except CalibrationError as error:
        _fail(str(error))
    if as_json:
        print_json(found.to_dict())
        return
    for label, value in (
        ("calibration", found.label),
        ("method", found.method),
        ("judge", found.judge or "—"),
        ("fitted on", found.fitted_on or "—"),
        ("labels", str(found.n_labels)),
        ("created", found.created_at or "—"),
    ):
        console.print(f"{label}: {escape(value)}", highlight=False)
    for task, mapped in sorted(found.tasks.items()):
        if mapped.method == "platt":
            what = f"P' = sigmoid({mapped.slope:.3f} * logit(P) {mapped.intercept:+.3f})"
        else:
            what = f"isotonic, {len(mapped.xs)} knots"
        console.print(f"  {escape(task)}: {what} (n {mapped.n})", highlight=False)
    if found.cv.get("tasks"):
        console.print(cv_table(found.cv))
