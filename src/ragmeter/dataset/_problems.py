"""Problems found in input data, reported all together with the row, the field and the fix."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one row of the input.

    ``row`` is 1-based: the line number in a JSONL file, the data row in a CSV file (header
    excluded), the position in a JSON array, a DataFrame or a list. ``turn`` (1-based) names
    the turn of a conversation row the problem is in.

    >>> str(Problem(3, "retrieved_contexts", "expected a list", "give a list", turn=2))
    "row 3, turn 2, field 'retrieved_contexts': expected a list. Fix: give a list"
    """

    row: int
    field: str | None
    message: str
    fix: str
    source: str | None = None
    sample_id: str | None = None
    turn: int | None = None

    def __str__(self) -> str:
        where = [self.source] if self.source else []
        where.append(f"row {self.row}")
        if self.turn is not None:
            where.append(f"turn {self.turn}")
        if self.sample_id is not None:
            where.append(f"id {self.sample_id!r}")
        if self.field:
            where.append(f"field {self.field!r}")
        return f"{', '.join(where)}: {self.message}. Fix: {self.fix}"


#: Rows (and ids) named in the line of a problem repeated in many rows.
ROWS_SHOWN = 5

#: What makes two problems the same kind: their source, field, message and fix.
ProblemKind = tuple[str | None, str | None, str, str]


#: The parts of a message or a fix that quote the row's own value (a wrong value's text,
#: an example made of it, a duplicated id): two problems differing only there are one kind.
_ROW_VALUE = re.compile(r"(, got \w+) .*$|(e\.g\.) .*$|(duplicate sample id) .*$", re.DOTALL)


def problem_kind(problem: Problem) -> ProblemKind:
    """The kind of ``problem``: its source, field, message and fix less the row's value.

    >>> problem_kind(Problem(2, "response", "Input should be a valid string, got int 3", "x"))
    (None, 'response', 'Input should be a valid string, got int', 'x')
    """

    def shape(text: str) -> str:
        return _ROW_VALUE.sub(lambda m: next(g for g in m.groups() if g), text)

    return (problem.source, problem.field, shape(problem.message), shape(problem.fix))


def grouped_problems(
    problems: Sequence[Problem],
    n_rows: int | None = None,
    rows_of_kind: Mapping[ProblemKind, int] | None = None,
) -> list[str]:
    """One line per kind of problem (the same source, field, message and fix), in the order
    each kind first appears: a problem found in one row as :class:`Problem` writes it; one
    found in several as one line with how many rows (of ``n_rows``, when given) and the
    first :data:`ROWS_SHOWN` of them. No distinct problem is left out. ``rows_of_kind``
    gives the rows of each kind where ``problems`` lists only the first ones.

    >>> missing = [Problem(row, "response", "missing", "add it") for row in range(1, 8)]
    >>> for line in grouped_problems([*missing, Problem(9, "id", "empty", "give one")], 9):
    ...     print(line)
    field 'response': missing, in 7/9 rows (first rows 1, 2, 3, 4, 5). Fix: add it
    row 9, field 'id': empty. Fix: give one
    """
    kinds: dict[ProblemKind, list[Problem]] = {}
    for problem in problems:
        kinds.setdefault(problem_kind(problem), []).append(problem)
    lines = []
    for kind, found in kinds.items():
        source, field, message, fix = kind
        if all(p.message == found[0].message for p in found):
            message = found[0].message
        else:  # the rows' own values differ: the first one's as the example
            message = f"{found[0].message} (row {found[0].row}; the others alike)"
        fix = found[0].fix
        rows = (rows_of_kind or {}).get(kind) or len({p.row for p in found})
        if rows == 1:
            lines.append(str(found[0]))
            continue
        where = ([source] if source else []) + ([f"field {field!r}"] if field else [])
        first = found[:ROWS_SHOWN]
        shown = ", ".join(f"{p.row}" + ("" if p.turn is None else f" turn {p.turn}") for p in first)
        ids = [repr(p.sample_id) for p in first if p.sample_id is not None]
        of = "" if n_rows is None else f"/{n_rows}"
        lines.append(
            f"{', '.join(where) + ': ' if where else ''}{message}, in {rows}{of} rows "
            f"({'first rows' if rows > len(first) else 'rows'} {shown}"
            + (f"; ids {', '.join(ids)}" if ids else "")
            + f"). Fix: {fix}"
        )
    return lines


class DatasetError(ValueError):
    """Raised when input data has problems; ``problems`` lists every one of them. The
    message lists each kind of problem once (:func:`grouped_problems`), with how many of
    the ``n_rows`` rows (when given) have it."""

    def __init__(
        self,
        problems: Sequence[Problem],
        *,
        hint: str | None = None,
        n_rows: int | None = None,
        rows_of_kind: Mapping[ProblemKind, int] | None = None,
    ) -> None:
        self.problems = list(problems)
        rows = len({p.row for p in self.problems})
        lines = [f"{len(self.problems)} problem(s) in {rows} row(s):"]
        lines += [f"  - {line}" for line in grouped_problems(self.problems, n_rows, rows_of_kind)]
        if hint:
            lines.append(hint)
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class InvalidRow:
    """A row left out of an evaluation (``skip_invalid``), with the reasons."""

    row: int
    sample_id: str | None
    problems: tuple[Problem, ...]

    def to_dict(self) -> dict[str, Any]:
        """As a run records it (``skipped``): the row, its id and each problem's text."""
        return {"row": self.row, "id": self.sample_id, "problems": [str(p) for p in self.problems]}
