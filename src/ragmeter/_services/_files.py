"""Files as every reader and writer of ragmeter treats them: a path is checked to be a
regular file before it is opened (a FIFO would block, a link to ``/dev/zero`` would read
until memory runs out), and a file is replaced atomically (a kill leaves the old file or
the new one, never a cut-short one)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _reason(error: OSError) -> str:
    return error.strerror or str(error) or type(error).__name__


def check_regular_file(path: Path, *, what: str, fix: str, directory_fix: str = "") -> None:
    """A clear ``ValueError`` (``FileNotFoundError`` when missing) for a path that is not a
    regular file, before it is opened: ``what`` names the file ("dataset file"), ``fix``
    says what to give instead (``directory_fix`` for a directory, when it differs).

    >>> check_regular_file(Path("/dev/null"), what="trace file", fix="give an export file")
    Traceback (most recent call last):
    ...
    ValueError: '/dev/null' is a device, not a trace file. Fix: give an export file
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"no such {what}: {str(path)!r}") from None
    except OSError as error:
        raise ValueError(f"cannot read {what} {str(path)!r}: {_reason(error)}") from None
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        kind, fix = "a directory", directory_fix or fix
    elif stat.S_ISFIFO(mode):
        kind = "a named pipe (FIFO)"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    else:
        kind = "not a regular file"
    raise ValueError(f"{str(path)!r} is {kind}, not a {what}. Fix: {fix}")


@contextmanager
def replaced_atomically(path: Path) -> Iterator[Path]:
    """A temporary path next to ``path`` to write; when the block ends without an error it
    is flushed to disk and renamed over ``path``, else removed (``path`` is left as it was).

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "out.jsonl"
    >>> with replaced_atomically(target) as partial:
    ...     _ = partial.write_text("{}\\n")
    >>> target.read_text(), partial.exists()
    ('{}\\n', False)
    """
    # the same suffix: a writer choosing the format by extension writes the same format
    partial = path.with_name(f".{path.name}.partial{path.suffix}")
    try:
        yield partial
        with partial.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
