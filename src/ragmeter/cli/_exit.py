"""What ``ragmeter``'s exit codes mean, and how a command picks one.

=====  ==============  ==================================================================
code   name            when
=====  ==============  ==================================================================
0      OK              every result was computed (n/a is a result), or the failures were
                       within ``--max-failed-share`` or accepted with ``--allow-failures``
1      GATE_FAILED     a gate rule failed (``eval --gate``, ``gate``); ``generate`` kept
                       fewer questions than asked; ``monitor`` raised an alert
2      USAGE           the command, its options, its input or the judge's configuration
                       is wrong (a rejected key: HTTP 401/403/404); fix it and run again
3      RESULTS_FAILED  more results failed than ``--max-failed-share`` allows (default 0:
                       any), or ``eval --max-cost`` stopped the run before every sample
                       was judged (``--resume`` goes on); a gate rule's metric has fewer
                       results scored than ``--min-coverage`` (default 1: all, n/a
                       aside); ``generate`` kept no question
4      IO_ERROR        a file or the run store could not be read or written: disk full,
                       read-only media, no permission, a corrupt file, a store server that
                       does not answer; what was computed before is kept
130    INTERRUPTED     Ctrl-C; what was computed is kept (``--resume``)
=====  ==============  ==================================================================

When several apply, the first in the order 2, 4, 3, 1 decides, and the last line of the
output (``exit N: ...``) says which and why.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Annotated, NoReturn

import typer
from rich.markup import escape

from ragmeter._percent import percent
from ragmeter.cli._groups import OptionGroup


class ExitCode(IntEnum):
    """The exit codes of every ``ragmeter`` command (the module's table says when)."""

    OK = 0
    GATE_FAILED = 1
    USAGE = 2
    RESULTS_FAILED = 3
    IO_ERROR = 4
    INTERRUPTED = 130


#: Which code decides when a command met several problems: the first of these it met.
PRECEDENCE = (ExitCode.USAGE, ExitCode.IO_ERROR, ExitCode.RESULTS_FAILED, ExitCode.GATE_FAILED)

EXIT_CODES_HELP = (
    "Exit codes: 0 all computed; 1 a gate rule failed (generate: fewer questions than asked; "
    "monitor: an alert fired); "
    "2 usage or configuration error (also a rejected API key); 3 more results failed than "
    "--max-failed-share allows, --max-cost stopped the run, or a gated metric's results "
    "are not all scored (--min-coverage); 4 a file or the run store "
    "could not be read or written; 130 interrupted."
)

MaxFailedShareOption = Annotated[
    float,
    typer.Option(
        "--max-failed-share",
        min=0.0,
        max=1.0,
        help="Exit 3 when more than this share of the results failed (default 0: any).",
    ),
]
AllowFailuresOption = Annotated[
    bool,
    typer.Option(
        "--allow-failures", help="Exit 0 even when results failed (they are still reported)."
    ),
]


@dataclass(frozen=True)
class FailurePolicy:
    """How many failed results a command accepts (``--max-failed-share``, ``--allow-failures``)."""

    max_share: float = 0.0
    allow: bool = False

    def check(
        self, n_failed: int, n_total: int, what: str = "results", example: str | None = None
    ) -> tuple[ExitCode, str] | None:
        """``None`` when nothing failed; else the code and the reason, e.g.
        ``(RESULTS_FAILED, "12 of 40 results failed (30%) > --max-failed-share 0")``.

        >>> FailurePolicy().check(12, 40)
        (<ExitCode.RESULTS_FAILED: 3>, '12 of 40 results failed (30%) > --max-failed-share 0')
        >>> FailurePolicy(0.5).check(12, 40)[1]
        '12 of 40 results failed (30%), within --max-failed-share 0.5'
        """
        if not n_failed:
            return None
        share = n_failed / n_total if n_total else 1.0
        counted = f"{n_failed} of {n_total} {what} failed ({percent(share)})"
        if self.allow:
            return ExitCode.OK, f"{counted}, accepted with --allow-failures"
        if share <= self.max_share:
            return ExitCode.OK, f"{counted}, within --max-failed-share {self.max_share:g}"
        reason = f"{counted} > --max-failed-share {self.max_share:g}"
        if example:
            reason += f"; {example}"
        return ExitCode.RESULTS_FAILED, reason


@dataclass
class Outcome:
    """The problems a command met; :meth:`exit` ends it with the code that decides and one
    line saying why (``exit 3: 12 of 40 results failed (30%) > --max-failed-share 0``)."""

    problems: list[tuple[ExitCode, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, code: ExitCode, reason: str) -> None:
        if code is ExitCode.OK:
            self.notes.append(reason)
        else:
            self.problems.append((code, reason))

    @property
    def code(self) -> ExitCode:
        found = {code for code, _ in self.problems}
        return next((code for code in PRECEDENCE if code in found), ExitCode.OK)

    def line(self, ok: str) -> str:
        """``exit N: why`` (the other problems after it, ``also: ...``)."""
        code = self.code
        if code is ExitCode.OK:
            return f"exit 0: {'; '.join([ok, *self.notes])}"
        first = next(reason for found, reason in self.problems if found is code)
        others = [reason for _, reason in self.problems if reason != first]
        text = f"exit {int(code)}: {first}"
        return text + (f" (also: {'; '.join(others)})" if others else "")

    def exit(self, ok: str) -> NoReturn:
        """Print :meth:`line` (on stderr unless it is 0) and end the command with the code."""
        from ragmeter.cli._app import console, errors

        code = self.code
        out = console if code is ExitCode.OK else errors
        colour = "green" if code is ExitCode.OK else "bold red"
        text = escape(self.line(ok))
        out.print(f"[{colour}]{text}[/{colour}]", highlight=False, soft_wrap=True)
        raise typer.Exit(int(code))


#: ``--max-failed-share`` and ``--allow-failures``, taken by a command as one value.
FailureGroup = Annotated[
    FailurePolicy,
    OptionGroup(
        FailurePolicy,
        max_failed_share=(MaxFailedShareOption, 0.0),
        allow_failures=(AllowFailuresOption, False),
    ),
]


def io_message(error: OSError) -> str:
    """An OS error as one line: the file, the cause in words and its errno name
    (``cannot write out.html: no space left on device (ENOSPC)``); ragmeter's own storage
    errors as they say it."""
    from ragmeter.results import RunStorageError
    from ragmeter.store import StoreError

    if isinstance(error, RunStorageError | StoreError):
        return str(error)
    number = error.errno
    where = f"{error.filename}: " if error.filename is not None else ""
    if number is None:
        return f"{where}{error}"
    cause = (error.strerror or os.strerror(number)).rstrip(".")
    cause = cause[:1].lower() + cause[1:]
    return f"{where}{cause} ({errno.errorcode.get(number, str(number))})"


def interrupted(kept: str) -> NoReturn:
    """End the command with exit 130 (Ctrl-C): what is kept, and how to go on."""
    from ragmeter.cli._app import errors

    errors.print(f"[yellow]interrupted:[/yellow] {kept}", highlight=False)
    raise typer.Exit(ExitCode.INTERRUPTED) from None


def fail_io(error: OSError, *, kept: str | None = None) -> NoReturn:
    """End the command with exit 4: the error in one line, and what is kept where."""
    from ragmeter._services import redact_secrets
    from ragmeter.cli._app import print_error

    print_error(redact_secrets(io_message(error)))  # a store URL quoted shows no credentials
    outcome = Outcome()
    outcome.add(ExitCode.IO_ERROR, kept or "a file could not be read or written")
    outcome.exit("")
