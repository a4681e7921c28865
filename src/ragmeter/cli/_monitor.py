"""``ragmeter monitor``: live quality on production traffic, in windows, against a baseline."""

import signal
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.markup import escape

from ragmeter.cli._app import (
    RunStoreOption,
    _fail,
    app,
    console,
    errors,
    open_run_store,
    print_warnings,
    resolve_run,
)
from ragmeter.cli._exit import ExitCode, fail_io
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
from ragmeter.runner import DEFAULT_CONCURRENCY  # ragmeter.runner._defaults: imports nothing

if TYPE_CHECKING:
    from ragmeter.monitor import Monitor, PollReport, Window
    from ragmeter.prompts import Language

#: The most bad rows listed per poll (all are counted).
SHOWN_PROBLEMS = 20


def _print_report(report: "PollReport", *, quiet: bool) -> None:
    """What a poll did: bad rows and notes, each closed window, each alert (on stderr)."""
    for note in report.notes:
        errors.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False, soft_wrap=True)
    if report.bad:
        rows = len({(p.source, p.row) for p in report.bad})
        errors.print(f"[yellow]skipped {rows} invalid row(s):[/yellow]")
        for problem in report.bad[:SHOWN_PROBLEMS]:
            errors.print(f"  - {escape(str(problem))}", highlight=False, soft_wrap=True)
        if len(report.bad) > SHOWN_PROBLEMS:
            errors.print(f"  … and {len(report.bad) - SHOWN_PROBLEMS} more", highlight=False)
    if report.late:
        errors.print(
            f"[yellow]{report.late} late sample(s) skipped:[/yellow] their time window had "
            "already closed (a larger --grace waits longer)",
            highlight=False,
        )
    if not quiet and report.lines:  # following, most polls find nothing: they say nothing
        console.print(
            f"read {report.lines} new line(s): {report.samples} sample(s) placed in windows",
            highlight=False,
        )
    for window in report.windows:
        _print_window(window)
    for alert in report.alerts:
        low, high = (alert["difference_ci"] + [None, None])[:2]
        ci = "" if low is None else f" (95% CI {low:+.3f} to {high:+.3f})"
        errors.print(
            f"[bold red]ALERT[/bold red] window {alert['window']} ({alert['window_start']}): "
            f"{escape(alert['metric'])} {alert['baseline_mean']:.3f} → "
            f"{alert['window_mean']:.3f}, {alert['difference']:+.3f}{ci}, "
            f"p = {alert['p_value']:.2g} (Holm {alert['p_adjusted']:.2g}); worst samples: "
            f"{escape(', '.join(alert['worst_sample_ids']))}",
            highlight=False,
            soft_wrap=True,
        )
    print_warnings([*report.unscored, *report.webhook_failures])


def _print_window(window: "Window") -> None:
    stored = f"run {window.run_id[:8]}" if window.run_id else "not stored"
    role = " (baseline)" if window.baseline else ""
    console.print(
        f"window {window.index}{role}: {window.start} to {window.end}, {window.n_samples} "
        f"samples, {stored} ({escape(window.run_name)})",
        highlight=False,
        soft_wrap=True,
    )
    for m in window.metrics:
        line = f"  {m.metric} " + ("—" if m.mean is None else f"{m.mean:.3f}")
        if m.ci is not None:
            line += f" (95% CI {m.ci[0]:.3f} to {m.ci[1]:.3f})"
        if m.difference is not None and m.baseline_mean is not None:
            line += f"; baseline {m.baseline_mean:.3f}, {m.difference:+.3f}"
            if m.difference_ci is not None:
                line += f" ({m.difference_ci[0]:+.3f} to {m.difference_ci[1]:+.3f})"
            line += f", p = {m.p_value:.2g}, Holm {m.p_adjusted:.2g}"
            line += ": DROP" if m.drop else ""
        console.print(escape(line), highlight=False, soft_wrap=True)


def _follow(
    monitor: "Monitor", *, interval: float, once: bool, flush: bool, quiet: bool
) -> tuple[int, bool, int]:
    """Poll until stopped (Ctrl-C, SIGTERM) or, with ``once``, one pass; the alerts fired,
    whether it was stopped, and how many windows the last pass could not score."""
    stop = monitor.stopping  # also ends a webhook delivery in progress

    def on_term(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous: Any = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, on_term)
    alerts = unscored = 0
    try:
        while True:
            report = monitor.poll(flush=flush and once)
            alerts += len(report.alerts)
            unscored = len(report.unscored)
            _print_report(report, quiet=quiet)
            if once or stop.wait(interval):
                return alerts, stop.is_set(), unscored
    except KeyboardInterrupt:
        return alerts, True, unscored
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


@app.command("monitor")
@whole_paragraphs
@option_groups
def monitor_command(
    source: Annotated[
        Path, typer.Argument(help="A growing JSONL file, or a folder of JSONL files.")
    ],
    metrics: Annotated[
        str | None,
        typer.Option(
            "--metrics",
            "-m",
            help="Reference-free metrics or prompt-metric files, comma-separated (default "
            "faithfulness, answer_relevancy, context_utilization).",
        ),
    ] = None,
    window: Annotated[
        str,
        typer.Option("--window", help="N samples (100) or a time span (30m, 1h, 1d)."),
    ] = "100",
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help="A run (directory, id or name in the run store) to compare each window with.",
        ),
    ] = None,
    baseline_windows: Annotated[
        int,
        typer.Option(
            "--baseline-windows", min=1, help="Without --baseline: the first K windows make it."
        ),
    ] = 1,
    alpha: Annotated[
        float, typer.Option("--alpha", help="Significance level (Holm across metrics).")
    ] = 0.05,
    min_drop: Annotated[
        float, typer.Option("--min-drop", min=0.0, help="Smallest drop (absolute) that alerts.")
    ] = 0.05,
    grace: Annotated[
        float,
        typer.Option("--grace", min=0.0, help="Seconds a time window waits for late samples."),
    ] = 300.0,
    name: Annotated[
        str | None, typer.Option("--name", help="The monitor's name (default: SOURCE's).")
    ] = None,
    state: Annotated[
        Path | None,
        typer.Option("--state", help="State folder (default .ragmeter/monitor/NAME)."),
    ] = None,
    log: Annotated[
        Path | None, typer.Option("--log", help="Append each alert here as a JSON line.")
    ] = None,
    webhook: Annotated[
        str | None,
        typer.Option("--webhook", help="POST each alert as JSON to this URL (10 s, 3 tries)."),
    ] = None,
    interval: Annotated[
        float, typer.Option("--interval", min=0.1, help="Seconds between polls.")
    ] = 60.0,
    once: Annotated[
        bool, typer.Option("--once", help="Process what is there, then exit (tests, cron).")
    ] = False,
    flush: Annotated[
        bool,
        typer.Option("--flush", help="With --once: also close the windows not yet full."),
    ] = False,
    store: RunStoreOption = None,
    no_store: Annotated[
        bool, typer.Option("--no-store", help="Do not record the windows in the run store.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only windows.")] = False,
    judge: JudgeGroup = JudgeOptions(),
    language: JudgeLanguageOption = None,
    concurrency: ConcurrencyOption = DEFAULT_CONCURRENCY,
    cache: CacheGroup = CacheOptions(),
) -> None:
    """Score new production samples in windows and alert when a metric drops.

    Reads the lines appended to SOURCE since the last pass (a last line without its newline
    waits for the next), or the new files of a folder in name order; a truncated or rotated
    file is read again from its start, and said. Rows that are not valid samples are
    listed with their file, line, field and fix, and skipped. Each window (N samples, or a
    time span by metadata.timestamp, else by arrival) is scored, stored in the run store
    as monitor:NAME:window-START (tag monitor), and each metric's mean given with a
    bootstrap CI. It is compared with --baseline (or the first --baseline-windows windows)
    by an unpaired permutation test, Holm-corrected across metrics: a drop is worse in the
    metric's direction, significant at --alpha and larger than --min-drop. Each drop is an
    alert: on stderr, in --log, and POSTed to --webhook.

    The state folder keeps the file offsets, the open windows and the closed ones: a
    restart loses nothing and scores nothing twice. Without --once it polls every
    --interval seconds until Ctrl-C or SIGTERM.

    Exit 0 when no alert fired, 1 when one did, 2 for a usage error (a metric that needs a
    reference, a bad --window or --webhook), 3 when the last pass could not score a window
    (the judge was down: it is kept open and scored on the next run), 4 when a file or the
    run store could not be read or written.
    """
    from ragmeter.dataset import DatasetError
    from ragmeter.judge import JudgeError
    from ragmeter.metrics import UnknownMetricError, resolve_metrics
    from ragmeter.monitor import DEFAULT_METRICS, Monitor

    if language not in (None, "en", "zh"):
        _fail(f"--language must be en or zh, got {language!r}")
    try:
        resolved = resolve_metrics(metrics or ",".join(DEFAULT_METRICS))
        built_judge = judge.build_if_needed(resolved, cache)
        opened = None if no_store else open_run_store(store, hint="; or pass --no-store")
        reference = None if baseline is None else resolve_run(baseline, store)
        monitor = Monitor(
            source,
            resolved,
            name=name,
            window=window,
            grace_s=grace,
            baseline=reference,
            baseline_windows=baseline_windows,
            alpha=alpha,
            min_drop=min_drop,
            state_dir=state,
            store=opened,
            record_runs=opened is not None,
            log=log,
            webhook=webhook,
            judge=built_judge,
            language=cast("Language | None", language),  # checked above
            concurrency=concurrency,
        )
        alerts, stopped, unscored = _follow(
            monitor, interval=interval, once=once, flush=flush, quiet=quiet
        )
    except (UnknownMetricError, DatasetError, FileNotFoundError, ValueError, JudgeError) as error:
        _fail(str(error))
    except OSError as error:
        fail_io(error, kept="what was read and scored before is kept in the state folder")
    if stopped:
        console.print("stopped: the state folder has everything; run again to go on")
    if unscored:  # the judge could not answer: exit 3 decides over an alert (exit 1)
        errors.print(
            f"[bold red]exit 3: {unscored} window(s) could not be scored (their results "
            "failed); they are kept open: run again to score them[/bold red]"
            + (f" (also: {alerts} alert(s) fired)" if alerts else ""),
            highlight=False,
        )
        raise typer.Exit(int(ExitCode.RESULTS_FAILED))
    if alerts:
        errors.print(f"[bold red]exit 1: {alerts} alert(s) fired[/bold red]", highlight=False)
        raise typer.Exit(int(ExitCode.GATE_FAILED))
    windows = len(monitor.windows)
    console.print(
        f"[green]exit 0: no alert ({windows} window(s) closed so far)[/green]", highlight=False
    )
