"""A validated, ordered collection of samples, built from records with every problem reported."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import reprlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

from pydantic import ValidationError

from ragmeter.dataset._problems import DatasetError, InvalidRow, Problem
from ragmeter.dataset._sample import LEGACY_NAMES, LIST_FIELDS, Sample, canonical_record

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
    ) -> None:
        self.samples: list[Sample] = list(samples)
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
        return cls(samples, source=source, invalid=invalid, rows=sample_rows)

    # -- checking against what metrics need ------------------------------------------------
    def problems_for(self, requirements: Mapping[str, Sequence[Sequence[str]]]) -> list[Problem]:
        """Problems for rows missing fields that metrics need.

        ``requirements`` maps a metric name to its needs, each a tuple of alternative field
        names of which at least one must hold a value.
        """
        problems: list[Problem] = []
        for sample, row, sample_id in zip(self.samples, self.rows, self.ids):
            for metric, needs in requirements.items():
                for alternatives in needs:
                    if not any(sample.has(field) for field in alternatives):
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
