"""Files as every reader and writer of ragmeter treats them: a path is checked to be a
regular file before it is opened (a FIFO would block, a link to ``/dev/zero`` would read
until memory runs out), a settings file (a judge config, a metric file, a gate file) is read
in one way whatever its format, and a file is replaced atomically (a kill leaves the old
file or the new one, never a cut-short one)."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


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


def read_settings(path: Path, *, what: str) -> Any:
    """The data of a settings file, TOML, JSON or YAML by its suffix (TOML for any other):
    ``what`` names it ("metric file"). Every problem is a ``ValueError`` naming the file
    (and the line where the parser gives one): not a regular file, not UTF-8, not valid,
    nested too deeply; for YAML, an alias (an alias bomb of a few bytes would expand to
    gigabytes), a second document, a tab.

    >>> import tempfile
    >>> bomb = Path(tempfile.mkdtemp()) / "m.yaml"
    >>> _ = bomb.write_text("a: &a [x, x]\\nb: [*a, *a]\\n")
    >>> read_settings(bomb, what="metric file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...m.yaml: line 2: YAML aliases (*name) are not allowed in a metric file; ...
    """
    check_regular_file(path, what=what, fix=f"give the path of the {what}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path}: not UTF-8 text (byte {error.start}); save the {what} as UTF-8"
        ) from None
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            return json.loads(text)
        if suffix in (".yaml", ".yml"):
            return _yaml_document(text, path, what)
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        kind = "JSON" if suffix == ".json" else "TOML"
        raise ValueError(f"{path}: not valid {kind} ({error})") from None
    except RecursionError:
        raise ValueError(
            f"{path}: nested too deeply to be a {what}; write its settings as tables of values"
        ) from None


def _yaml_document(text: str, path: Path, what: str) -> Any:
    """The one YAML document of a settings file, read without aliases and with each
    problem's line named."""
    try:
        import yaml
    except ImportError:
        raise ValueError(
            f"{path}: YAML files need PyYAML: pip install 'ragmeter[yaml]' (or use TOML)"
        ) from None

    class NoAliases(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML has no stubs here
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise ValueError(
                    f"{path}: line {mark.line + 1}: YAML aliases (*name) are not allowed in "
                    f"a {what}; write the value out"
                )
            return super().compose_node(parent, index)

    loader = NoAliases(text)
    try:
        if not loader.check_node():
            return None
        node = loader.get_node()
        if not loader.check_event(yaml.StreamEndEvent):
            mark = loader.peek_event().start_mark
            raise ValueError(
                f"{path}: line {mark.line + 1}: a second YAML document; a {what} holds one "
                "(remove the '---' and what follows, or split the file)"
            )
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f"line {mark.line + 1}: " if mark is not None else ""
        problem = error.problem or error.context or "not valid YAML"
        if "\\t" in problem:
            problem = "a tab; YAML is indented with spaces, not tabs"
        raise ValueError(f"{path}: {line}not valid YAML ({problem})") from None
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not valid YAML ({error})") from None
    finally:
        loader.dispose()
