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

HEADER = f'''
# ruff: noqa: E501
"""Every built-in and shipped metric, in the order ``ragmeter metrics`` lists them, read by
the name lookup without importing a metric module. Generated from the ``@builtin_metric``
declarations by ``{COMMAND}``: do not edit.
"""

from ragmeter.metrics._spec import Declared

# fmt: off
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


def _tuple(values: Sequence[str]) -> str:
    items = [_string(v) for v in values]
    return f"({', '.join(items)}{',' if len(items) == 1 else ''})"


def _entry(declared: Declared) -> str:
    """``declared`` as one line: name, target, family and summary, then what differs from
    the defaults."""
    arguments = [_string(declared.name), _string(declared.target), _string(declared.family)]
    arguments.append(_string(declared.summary))
    if declared.cutoff != "none":
        arguments.append(f"cutoff={_string(declared.cutoff)}")
    if declared.aliases:
        arguments.append(f"aliases={_tuple(declared.aliases)}")
    if declared.params:
        params = ", ".join(
            f"{_string(k)}: {_string(v) if isinstance(v, str) else repr(v)}"
            for k, v in declared.params.items()
        )
        arguments.append(f"params={{{params}}}")
    return f"    Declared({', '.join(arguments)}),"


def render(declarations: Sequence[Declared]) -> str:
    """The text of ``_index.py`` for ``declarations``: one line a metric, which ruff leaves
    as it is (``fmt: off``, long lines allowed)."""
    lines = [HEADER.strip("\n"), *(_entry(declared) for declared in declarations)]
    return "\n".join([*lines, ")", "# fmt: on", ""])


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
