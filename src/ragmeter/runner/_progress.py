"""Live progress of a run: samples done / total, ETA, judge calls, tokens, cost, failures."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Protocol, TextIO

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
    def start(self, phase: str, total: int | None) -> None:
        """A phase of ``total`` samples begins (``None``: not known yet, e.g. while a file
        is read and scored in one pass)."""
        ...

    def advance(self, n: int = 1, *, usage: Usage | None = None, failed: int = 0) -> None: ...

    def stop(self) -> None: ...


class QuietProgress:
    """Shows nothing (tests, ``--quiet``, a library call without a terminal)."""

    def start(self, phase: str, total: int | None) -> None:
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

    def start(self, phase: str, total: int | None) -> None:
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


class PlainProgress:
    """Whole lines for logs (CI, a pipe, a file): never redrawn, cut or coloured.

    One line when a phase starts, then one at most every ``interval_s`` seconds and when the
    phase passes 25, 50, 75 and 100 %, e.g. ``judged metrics: 12/40 (30%), 1 failed,
    36 calls (+4 cached), 1.2 s/sample, ETA 34 s``.
    """

    def __init__(
        self,
        file: TextIO | None = None,
        *,
        interval_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        currency: str | None = None,
    ) -> None:
        self._file = file
        self._interval_s = interval_s
        self._clock = clock
        self._currency = currency or ""
        self._usage = Usage()
        self._failed = 0
        self._phase: str | None = None
        self._total: int | None = 0
        self._done = 0
        self._started = 0.0
        self._last_line = 0.0
        self._last_done = 0

    def _print(self, line: str) -> None:
        print(line, file=self._file or sys.stderr, flush=True)
        self._last_line = self._clock()
        self._last_done = self._done

    def _status(self) -> str:
        done, total = self._done, self._total
        share = f" ({done * 100 // total}%)" if total else ""
        parts = [
            f"{self._phase}: " + (f"{done} done" if total is None else f"{done}/{total}{share}")
        ]
        if self._failed:
            parts.append(f"{self._failed} failed")
        u = self._usage
        if u.calls or u.cached_calls:
            parts.append(f"{u.calls} calls (+{u.cached_calls} cached)")
        if u.cost:
            parts.append(f"cost {u.cost:.4f} {self._currency}".rstrip())
        elapsed = self._clock() - self._started
        if done:
            per_sample = elapsed / done
            if per_sample >= 0.1:
                parts.append(f"{per_sample:.1f} s/sample")
            elif per_sample > 0:
                parts.append(f"{1 / per_sample:.0f} samples/s")
            if total is not None and done < total:
                parts.append(f"ETA {_duration(per_sample * (total - done))}")
            elif total is not None:
                parts.append(f"took {_duration(elapsed)}")
        return ", ".join(parts)

    def start(self, phase: str, total: int | None) -> None:
        self._finish_phase()
        self._phase, self._total, self._done = phase, total, 0
        self._started = self._clock()
        self._print(f"{phase}: {'started' if total is None else f'{total} to do'}")

    def advance(self, n: int = 1, *, usage: Usage | None = None, failed: int = 0) -> None:
        if usage is not None:
            self._usage = self._usage + usage
        self._failed += failed
        if self._phase is None:
            return
        before, self._done = self._done, self._done + n
        due = self._clock() - self._last_line >= self._interval_s
        if due or self._quarter(self._done) > self._quarter(before):
            self._print(self._status())

    def _quarter(self, done: int) -> int:
        return done * 4 // self._total if self._total else 0

    def _finish_phase(self) -> None:
        """The last count of a phase that ended before its last line (stopped, interrupted)."""
        if self._phase is not None and self._done != self._last_done:
            self._print(self._status())

    def stop(self) -> None:
        self._finish_phase()
        self._phase = None


def _duration(seconds: float) -> str:
    """``34 s``, ``2 min 05 s``, ``1 h 02 min``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _is_terminal(stream: TextIO) -> bool:
    """A terminal that can redraw a progress bar: a tty, outside CI (``CI`` set)."""
    in_ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    if in_ci or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def make_progress(show: bool | None) -> ProgressReporter:
    """The progress display for stderr.

    ``show=True``: a live bar on a terminal, else plain periodic lines (CI logs, a pipe);
    ``show=None``: the live bar on a terminal, else nothing; ``show=False``: nothing.
    """
    if show is False:
        return QuietProgress()
    if _is_terminal(sys.stderr):
        return RichProgress()
    return PlainProgress() if show else QuietProgress()
