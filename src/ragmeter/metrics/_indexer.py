"""Writes the index of the built-in metrics, ``ragmeter/metrics/_index.py``, from their
:func:`~ragmeter.metrics._spec.builtin_metric` declarations: it imports every module of
``ragmeter.metrics`` and lists what they declare, by rank.

    python -m ragmeter.metrics._indexer --write   # after adding or changing a declaration
    python -m ragmeter.metrics._indexer --check   # exit 1 when the index is stale
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path

from ragmeter.metrics._spec import DECLARED, Declared, name_keys

COMMAND = "python -m ragmeter.metrics._indexer --write"
INDEX = Path(__file__).with_name("_index.py")
WIDTH = 100

HEADER = f'''
"""Every built-in and shipped metric, in the order ``ragmeter metrics`` lists them, read by
the name lookup without importing a metric module. Generated from the ``@builtin_metric``
declarations by ``{COMMAND}``: do not edit.
"""

from ragmeter.metrics._spec import Declared

INDEX: tuple[Declared, ...] = (
'''


def collect() -> list[Declared]:
    """The declarations of every module of ``ragmeter.metrics``, by rank; each rank, name
    and alias must be unique."""
    import ragmeter.metrics

    for module in pkgutil.walk_packages(ragmeter.metrics.__path__, "ragmeter.metrics."):
        importlib.import_module(module.name)
    by_rank: dict[int, Declared] = {}
    owners: dict[str, str] = {}
    for rank, declared in DECLARED:
        other = by_rank.setdefault(rank, declared)
        if other != declared:
            raise ValueError(f"rank {rank} is declared by both {other.name} and {declared.name}")
        for key in (declared.name, *declared.aliases):
            for form in name_keys(key):
                owner = owners.setdefault(form, declared.name)
                if owner != declared.name:
                    raise ValueError(f"{key!r} of {declared.name} also selects {owner}")
    return [by_rank[rank] for rank in sorted(by_rank)]


def _string(text: str) -> str:
    """``text`` as a double-quoted literal (single quotes where it holds ``"``, as ruff
    formats it)."""
    if '"' in text and "'" not in text:
        return repr(text)
    return json.dumps(text, ensure_ascii=False)


def _argument(name: str, value: str, indent: int) -> list[str]:
    """``name=value,`` for a string, split into an implicit concatenation in parentheses
    where the line would be too long."""
    pad = " " * indent
    line = f"{pad}{name}={_string(value)},"
    if len(line) <= WIDTH:
        return [line]
    pieces: list[str] = []
    for word in value.split(" "):
        if pieces and indent + 4 + len(_string(f"{pieces[-1]} {word} ")) <= WIDTH:
            pieces[-1] += " " + word
        else:
            pieces.append(word)
    pieces = [p + " " for p in pieces[:-1]] + pieces[-1:]
    return [f"{pad}{name}=(", *(f"{pad}    {_string(p)}" for p in pieces), f"{pad}),"]


def _tuple(name: str, values: Sequence[str], indent: int) -> list[str]:
    pad = " " * indent
    items = [_string(v) for v in values]
    line = f"{pad}{name}=({', '.join(items)}{',' if len(items) == 1 else ''}),"
    if len(line) <= WIDTH:
        return [line]
    return [f"{pad}{name}=(", *(f"{pad}    {item}," for item in items), f"{pad}),"]


def render(declarations: Sequence[Declared]) -> str:
    """The text of ``_index.py`` for ``declarations``, formatted as ruff formats it."""
    lines = [HEADER.strip("\n")]
    for declared in declarations:
        lines.append("    Declared(")
        lines += _argument("name", declared.name, 8)
        lines += _argument("target", declared.target, 8)
        lines += _argument("family", declared.family, 8)
        lines += _argument("summary", declared.summary, 8)
        if declared.cutoff != "none":
            lines += _argument("cutoff", declared.cutoff, 8)
        if declared.aliases:
            lines += _tuple("aliases", declared.aliases, 8)
        if declared.params:
            params = ", ".join(
                f"{_string(k)}: {_string(v) if isinstance(v, str) else repr(v)}"
                for k, v in declared.params.items()
            )
            lines.append(f"        params={{{params}}},")
        lines.append("    ),")
    return "\n".join([*lines, ")", ""])


def main(argv: Sequence[str]) -> int:
    declarations = collect()
    text = render(declarations)
    if list(argv) == ["--write"]:
        INDEX.write_text(text, encoding="utf-8")
        return 0
    if list(argv) == ["--check"]:
        from ragmeter.metrics._index import INDEX as indexed

        if INDEX.read_text(encoding="utf-8") == text and indexed == tuple(declarations):
            return 0
        print(f"{INDEX} is stale: the metric declarations changed. Run `{COMMAND}`.")
        return 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
