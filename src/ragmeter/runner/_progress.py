"""Live progress of a run: samples done / total, ETA, judge calls, tokens, cost, failures."""

from __future__ import annotations

import sys
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ragmeter.judge import Usage


class ProgressReporter(Protocol):
    def start(self, phase: str, total: int) -> None: ...

    def advance(self, n: int = 1, *, usage: Usage | None = None, failed: int = 0) -> None: ...

    def stop(self) -> None: ...


class QuietProgress:
    """Shows nothing (CI logs, tests, ``--quiet``)."""

    def start(self, phase: str, total: int) -> None:
        pass

    def advance(self, n: int = 1, *, usage: Usage | None = None, failed: int = 0) -> None:
        pass

    def stop(self) -> None:
        pass


class RichProgress:
    """A progress bar on stderr with the run's judge usage so far."""

    def __init__(self, console: Console | None = None, currency: str | None = None) -> None:
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[usage]}"),
            console=console or Console(stderr=True),
            transient=False,
        )
        self._task: TaskID | None = None
        self._usage = Usage()
        self._failed = 0
        self._currency = currency or ""

    def _usage_text(self) -> str:
        u = self._usage
        text = f"calls {u.calls} (+{u.cached_calls} cached) · tokens {u.total_tokens:,}"
        if u.cost:
            text += f" · cost {u.cost:.4f} {self._currency}".rstrip()
        if self._failed:
            text += f" · [red]failed {self._failed}[/red]"
        return text

    def start(self, phase: str, total: int) -> None:
        if self._task is None:
            self._progress.start()
        else:
            self._progress.stop_task(self._task)
        self._task = self._progress.add_task(phase, total=total, usage=self._usage_text())

    def advance(self, n: int = 1, *, usage: Usage | None = None, failed: int = 0) -> None:
        if usage is not None:
            self._usage = self._usage + usage
        self._failed += failed
        if self._task is not None:
            self._progress.update(self._task, advance=n, usage=self._usage_text())

    def stop(self) -> None:
        if self._task is not None:
            self._progress.stop()
            self._task = None


def make_progress(show: bool | None) -> ProgressReporter:
    """``show=None`` shows progress when stderr is a terminal."""
    if show is None:
        show = sys.stderr.isatty()
    return RichProgress() if show else QuietProgress()
