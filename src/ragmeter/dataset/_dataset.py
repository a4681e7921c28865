"""A validated, ordered collection of samples, built from records with every problem reported."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import reprlib
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, overload

from pydantic import ValidationError

from ragmeter.dataset._problems import DatasetError, InvalidRow, Problem
from ragmeter.dataset._sample import (
    LEGACY_NAMES,
    LIST_FIELDS,
    SAMPLE_FIELDS,
    Sample,
    canonical_record,
)

FIX_HINTS: dict[str, str] = {
    "id": "give each sample a unique string id",
    "user_input": "give the question as a string",
    "response": "give the RAG system's answer as a string",
    "reference": "give the reference answer as a string",
    "retrieved_contexts": 'give a list of strings in rank order, e.g. ["chunk 1", "chunk 2"]',
    "retrieved_context_ids": 'give a list of ids in rank order, e.g. ["doc-3", "doc-7"]',
    "reference_contexts": 'give a list of strings, e.g. ["chunk 1"]',
    "reference_context_ids": 'give a list of ids, e.g. ["doc-3"]',
    "relevance": 'give an object from context id to a graded relevance >= 0, e.g. {"doc-3": 2}',
    "metadata": 'give an object of tags, e.g. {"question_type": "multi_hop"}',
}

JSON_CELL_FIELDS: frozenset[str] = LIST_FIELDS | {"relevance", "metadata"}


_SHORT = reprlib.Repr()
_SHORT.maxlevel = 3
_SHORT.maxstring = _SHORT.maxother = 60


def _describe(value: Any) -> str:
    """The type and the start of ``value``, however large or deeply nested it is."""
    try:
        text = _SHORT.repr(value)
    except RecursionError:
        text = "(nested too deeply to show)"
    return f"{type(value).__name__} {text[:60] + '…' if len(text) > 60 else text}"


def _validation_problems(error: ValidationError, row: int, raw: Mapping[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[str] = set()
    for err in error.errors():
        field = str(err["loc"][0]) if err["loc"] else None
        if field in seen:
            continue  # one problem per field is enough: the fix is the same
        seen.add(field or "")
        got = err.get("input")
        message = err["msg"]
        if field and err["type"] != "missing":
            message = f"{message}, got {_describe(got)}"
        fix = FIX_HINTS.get(field or "", "correct the value")
        if field == "metadata" and err["type"] == "value_error":  # nested too deeply
            message = message.removeprefix("Value error, ")
            fix = "flatten the metadata: tags hold text, numbers or short lists"
        if field in LIST_FIELDS and isinstance(got, str):
            fix = f'wrap a single item in a list, e.g. ["{got[:20]}"]'
        problems.append(Problem(row=row, field=field, message=message, fix=fix))
    return problems


def check_sample(sample: Sample) -> list[tuple[str, str, str]]:
    """Consistency checks a field type cannot express: (field, message, fix) triples."""
    found: list[tuple[str, str, str]] = []
    for texts, ids in (
        ("retrieved_contexts", "retrieved_context_ids"),
        ("reference_contexts", "reference_context_ids"),
    ):
        text_list, id_list = getattr(sample, texts), getattr(sample, ids)
        if text_list is not None and id_list is not None and len(text_list) != len(id_list):
            found.append(
                (
                    ids,
                    f"{len(id_list)} ids for {len(text_list)} {texts}",
                    f"give one id per context, in the same order as {texts}",
                )
            )
    for doc_id, grade in (sample.relevance or {}).items():
        if not math.isfinite(grade) or grade < 0:
            found.append(
                (
                    "relevance",
                    f"relevance of {doc_id!r} is {grade}",
                    "use a finite grade >= 0 (0 = not relevant)",
                )
            )
            break
    return found


def _decode_json_cells(
    record: dict[str, Any], column_map: Mapping[str, str] | None
) -> dict[str, Any]:
    """Tabular formats store lists and objects as JSON text; decode the cells that should be."""
    out = dict(record)
    for key, value in record.items():
        name = (column_map or {}).get(key, key)
        name = LEGACY_NAMES.get(name, name)
        if isinstance(value, str) and (name in JSON_CELL_FIELDS or name == "ground_truths"):
            stripped = value.strip()
            if stripped[:1] in "[{":
                # Undecodable text is left as is: validation then names the field and the fix.
                with contextlib.suppress(ValueError, RecursionError):
                    out[key] = json.loads(stripped)
    return out


#: How similar (0-100, ``fuzz.ratio`` of normalised names) a column that names no field must
#: be to a field's name or alias to be taken for a misspelling of it.
COLUMN_CUTOFF = 80.0

#: Every name a field is known by: its own, then its aliases.
FIELD_NAMES: dict[str, tuple[str, ...]] = {
    field: (
        field,
        *(alias for alias, name in LEGACY_NAMES.items() if name == field),
        *(("ground_truths",) if field == "reference" else ()),
    )
    for field in SAMPLE_FIELDS
    if field != "metadata"
}


def _normal(name: str) -> str:
    return name.strip().lower().replace(" ", "_").replace("-", "_")


def _unknown_columns(record: Mapping[Any, Any], column_map: Mapping[str, str] | None) -> list[Any]:
    """The keys of ``record`` that name no field (they become tags in ``metadata``)."""
    unknown = []
    for key in record:
        name = (column_map or {}).get(key, key)
        name = LEGACY_NAMES.get(name, name)
        if name not in SAMPLE_FIELDS and name != "ground_truths":
            unknown.append(key)
    return unknown


class _Lookalike(NamedTuple):
    """An input column that looks like a missing field's name or one of its aliases."""

    tag: str  # the column's name in ``metadata`` (after ``column_map``)
    column: str  # the input column
    field: str
    name: str  # the field's name or alias the column looks like


def _lookalike(column: str, field: str) -> tuple[float, str] | None:
    """How close ``column`` is to ``field`` or one of its aliases, and to which name."""
    from rapidfuzz import fuzz, process  # only for columns that name no field (40 ms)

    found = process.extractOne(
        _normal(column), FIELD_NAMES[field], scorer=fuzz.ratio, score_cutoff=COLUMN_CUTOFF
    )
    return None if found is None else (found[1], found[0])


class Dataset(Sequence[Sample]):
    """An ordered, validated list of samples with stable ids.

    Samples without an id are known as ``row-N`` (N = their 1-based position), so results
    can always be joined back to their inputs.

    >>> ds = Dataset.from_records([{"question": "q1"}, {"id": "x", "question": "q2"}])
    >>> ds.ids
    ['row-1', 'x']
    """

    def __init__(
        self,
        samples: Iterable[Sample],
        *,
        source: str | None = None,
        invalid: Sequence[InvalidRow] = (),
        rows: Sequence[int] | None = None,
        unknown_columns: Mapping[str, str] | None = None,
    ) -> None:
        self.samples: list[Sample] = list(samples)
        #: Input columns that name no field (their tags in ``metadata``), each with its tag
        #: name (the column renamed by ``column_map``), for suggestions when a field is missing.
        self.unknown_columns: dict[str, str] = dict(unknown_columns or {})
        self.source = source
        self.invalid: list[InvalidRow] = list(invalid)
        self.rows: list[int] = list(rows) if rows is not None else list(range(1, len(self) + 1))
        self.ids: list[str] = [
            s.id if s.id is not None else f"row-{row}" for s, row in zip(self.samples, self.rows)
        ]

    # -- Sequence -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.samples)

    @overload
    def __getitem__(self, index: int) -> Sample: ...
    @overload
    def __getitem__(self, index: slice) -> list[Sample]: ...
    def __getitem__(self, index: int | slice) -> Sample | list[Sample]:
        return self.samples[index]

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dataset) and self.samples == other.samples

    def __repr__(self) -> str:
        source = f", source={self.source!r}" if self.source else ""
        return f"Dataset({len(self)} samples{source})"

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_records(
        cls,
        records: Iterable[Any],
        *,
        column_map: Mapping[str, str] | None = None,
        source: str | None = None,
        skip_invalid: bool = False,
        decode_json_cells: bool = False,
        rows: Sequence[int] | None = None,
        pre_problems: Sequence[Problem] = (),
    ) -> Dataset:
        """Validate raw records (dicts) into a dataset, reporting every problem at once.

        Raises :class:`DatasetError` listing all problems unless ``skip_invalid`` is set, in
        which case the valid rows are kept and the others are listed in ``dataset.invalid``.
        ``rows`` gives each record's row number (default 1, 2, ...); ``pre_problems`` are
        problems a reader already found (e.g. unparseable lines).
        """
        samples: list[Sample] = []
        sample_rows: list[int] = []
        problems_by_row: dict[int, list[Problem]] = {}
        for problem in pre_problems:
            problems_by_row.setdefault(problem.row, []).append(problem)
        first_row_of_id: dict[str, int] = {}
        unknown_columns: dict[str, str] = {}
        layouts: set[tuple[Any, ...]] = set()
        for offset, raw in enumerate(records):
            row = rows[offset] if rows is not None else offset + 1
            found: list[Problem] = []
            if isinstance(raw, Sample):
                sample: Sample | None = raw
            elif not isinstance(raw, Mapping):
                sample = None
                found.append(
                    Problem(
                        row,
                        None,
                        f"expected an object, got {_describe(raw)}",
                        "give each sample as an object of fields",
                    )
                )
            else:
                record = dict(raw)
                if (layout := tuple(record)) not in layouts:  # rows mostly share their columns
                    layouts.add(layout)
                    for key in _unknown_columns(record, column_map):
                        if isinstance(key, str):
                            unknown_columns.setdefault(key, (column_map or {}).get(key, key))
                if decode_json_cells:
                    record = _decode_json_cells(record, column_map)
                try:
                    sample = Sample.model_validate(canonical_record(record, column_map))
                except ValidationError as error:
                    sample = None
                    found += _validation_problems(error, row, record)
                except ValueError as error:  # conflicting column names
                    sample = None
                    found.append(Problem(row, None, str(error), "fix the column names"))
            if sample is not None:
                found += [Problem(row, f, m, x) for f, m, x in check_sample(sample)]
                sample_id = sample.id if sample.id is not None else f"row-{row}"
                if sample_id in first_row_of_id:
                    found.append(
                        Problem(
                            row,
                            "id",
                            f"duplicate sample id {sample_id!r} (first seen in row "
                            f"{first_row_of_id[sample_id]})",
                            "give every sample a unique id",
                        )
                    )
                else:
                    first_row_of_id[sample_id] = row
            if found:
                problems_by_row.setdefault(row, []).extend(found)
            elif sample is not None and row not in problems_by_row:
                samples.append(sample)
                sample_rows.append(row)

        all_problems = [
            Problem(p.row, p.field, p.message, p.fix, source=source, sample_id=p.sample_id)
            for row in sorted(problems_by_row)
            for p in problems_by_row[row]
        ]
        if all_problems and not skip_invalid:
            raise DatasetError(
                all_problems,
                hint="Fix these rows, or pass skip_invalid=True (--skip-invalid) to evaluate "
                "the valid rows only.",
            )
        invalid = [
            InvalidRow(row, None, tuple(p for p in all_problems if p.row == row))
            for row in sorted(problems_by_row)
        ]
        return cls(
            samples,
            source=source,
            invalid=invalid,
            rows=sample_rows,
            unknown_columns=unknown_columns,
        )

    # -- checking against what metrics need ------------------------------------------------
    def problems_for(self, requirements: Mapping[str, Sequence[Sequence[str]]]) -> list[Problem]:
        """Problems for rows missing fields that metrics need.

        ``requirements`` maps a metric name to its needs, each a tuple of alternative field
        names of which at least one must hold a value. A missing field that an input column
        of the row looks like (``questoin`` for ``user_input``) is one problem per row and
        column that says how to rename it, whichever metrics need it.
        """
        problems: list[Problem] = []
        lookalikes: dict[tuple[str, ...], _Lookalike | None] = {}
        for sample, row, sample_id in zip(self.samples, self.rows, self.ids):
            renamed: set[str] = set()
            for metric, needs in requirements.items():
                for alternatives in needs:
                    if any(sample.has(field) for field in alternatives):
                        continue
                    key = tuple(alternatives)
                    if key not in lookalikes:
                        lookalikes[key] = self._lookalike(alternatives)
                    found = lookalikes[key]
                    if found is not None and found.tag in sample.metadata:
                        if found.column not in renamed:
                            renamed.add(found.column)
                            problems.append(self._rename_problem(row, sample_id, found))
                        continue
                    field = " or ".join(alternatives)
                    problems.append(
                        Problem(
                            row,
                            field,
                            f"missing, and metric {metric!r} needs it",
                            f"add {field} to this row, or drop {metric!r} from the metrics",
                            source=self.source,
                            sample_id=sample_id,
                        )
                    )
        return problems

    def _lookalike(self, alternatives: Sequence[str]) -> _Lookalike | None:
        """The unknown column closest to one of ``alternatives`` or an alias of it."""
        best: tuple[float, _Lookalike] | None = None
        for column, tag in self.unknown_columns.items():
            for field in alternatives:
                found = _lookalike(tag, field) if field in FIELD_NAMES else None
                if found is not None and (best is None or found[0] > best[0]):
                    best = (found[0], _Lookalike(tag, column, field, found[1]))
        return None if best is None else best[1]

    def _rename_problem(self, row: int, sample_id: str, found: _Lookalike) -> Problem:
        alias = f" ({found.name})" if found.name != found.field else ""
        return Problem(
            row,
            found.field,
            f"missing; column {found.column!r} looks like {found.field!r}{alias}",
            f"rename it or pass --column-map {shlex.quote(f'{found.column}={found.field}')} "
            f"(column_map={{{found.column!r}: {found.field!r}}})",
            source=self.source,
            sample_id=sample_id,
        )

    def without_rows(self, problems: Sequence[Problem]) -> Dataset:
        """This dataset less the rows named in ``problems``, which join ``invalid``."""
        bad_rows = {p.row for p in problems}
        keep = [i for i, row in enumerate(self.rows) if row not in bad_rows]
        id_of_row = dict(zip(self.rows, self.ids))
        newly_invalid = [
            InvalidRow(row, id_of_row.get(row), tuple(p for p in problems if p.row == row))
            for row in sorted(bad_rows)
        ]
        dataset = Dataset(
            [self.samples[i] for i in keep],
            source=self.source,
            invalid=sorted([*self.invalid, *newly_invalid], key=lambda r: r.row),
            rows=[self.rows[i] for i in keep],
            unknown_columns=self.unknown_columns,
        )
        return dataset

    def fingerprint(self) -> str:
        """A content hash of the samples (order-sensitive), for run records and resuming."""
        digest = hashlib.sha256()
        for sample in self.samples:
            digest.update(
                json.dumps(sample.to_record(), ensure_ascii=False, sort_keys=True).encode()
            )
            digest.update(b"\n")
        return digest.hexdigest()[:16]
