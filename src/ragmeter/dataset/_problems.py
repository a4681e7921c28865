"""Problems found in input data, reported all together with the row, the field and the fix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


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


class DatasetError(ValueError):
    """Raised when input data has problems; ``problems`` lists every one of them."""

    def __init__(self, problems: Sequence[Problem], *, hint: str | None = None) -> None:
        self.problems = list(problems)
        rows = len({p.row for p in self.problems})
        lines = [f"{len(self.problems)} problem(s) in {rows} row(s):"]
        lines += [f"  - {p}" for p in self.problems]
        if hint:
            lines.append(hint)
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class InvalidRow:
    """A row left out of an evaluation (``skip_invalid``), with the reasons."""

    row: int
    sample_id: str | None
    problems: tuple[Problem, ...]
