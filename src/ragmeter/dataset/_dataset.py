"""A validated, ordered collection of samples, built from records with every problem reported."""

from __future__ import annotations

import json
import math
import reprlib
import shlex
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple, overload

from pydantic import ValidationError

from ragmeter.dataset._cells import decode_cell, looks_like_a_list
from ragmeter.dataset._conversation import expand_conversation, message_key
from ragmeter.dataset._fields import SAMPLE_FIELDS
from ragmeter.dataset._problems import DatasetError, InvalidRow, Problem
from ragmeter.dataset._sample import (
    ALIAS_SOURCES,
    LEGACY_NAMES,
    LIST_FIELDS,
    TEXT_KEYS,
    Sample,
    canonical_record,
    field_name,
)
from ragmeter.dataset._values import LONE_SURROGATE_FIX, lone_surrogate

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
    "history": 'give the earlier messages, oldest first, each {"role": "user" or "assistant", '
    '"content": "text"}; or give the whole conversation as "messages"',
}

JSON_CELL_FIELDS: frozenset[str] = LIST_FIELDS | {"relevance", "metadata", "history"}
#: Columns of tabular formats that may hold a conversation's messages as JSON text.
MESSAGE_COLUMNS: frozenset[str] = frozenset({"messages", "turns", "user_input"})


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


def _text_fix(field: str, got: Any, fix: str) -> str:
    """The fix for an object or a list given where a text is expected."""
    if isinstance(got, list) and any(isinstance(m, Mapping) and "content" in m for m in got):
        return (
            f'{fix}; a conversation goes in "messages" as a list of '
            '{"role": "user" or "assistant", "content": "text"} objects (one sample per reply)'
        )
    if isinstance(got, Mapping):
        keys = ", ".join(repr(k) for k in list(got)[:6])
        known = ", ".join(TEXT_KEYS)
        return (
            f"{fix}, not an object (keys {keys}); in Langfuse's input, output and "
            f"expected_output an object with one text under one of the keys {known} is read "
            "as that text"
        )
    return fix


def _list_fix(field: str, got: str, notes: Mapping[str, str]) -> str:
    """The fix for text given where a list is expected."""
    example = FIX_HINTS[field].partition("e.g. ")[2] or '["chunk 1"]'
    if field in notes:
        return f"{notes[field]}; write the list as JSON, e.g. {example}"
    if looks_like_a_list(got):
        return f"give a list, not text that looks like one: e.g. {example}"
    return f'wrap a single item in a list, e.g. ["{got[:20]}"]'


def _validation_problems(
    error: ValidationError,
    row: int,
    raw: Mapping[str, Any],
    notes: Mapping[str, str] | None = None,
) -> list[Problem]:
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
        if field == "history" and len(err["loc"]) > 1 and isinstance(err["loc"][1], int):
            message = f"message {err['loc'][1] + 1}: {message}"
        if field == "metadata" and err["type"] == "value_error":  # nested too deeply
            message = message.removeprefix("Value error, ")
            fix = "flatten the metadata: tags hold text, numbers or short lists"
        if field in LIST_FIELDS and isinstance(got, str) and len(err["loc"]) == 1:
            fix = _list_fix(field, got, notes or {})
        elif field is not None and notes and field in notes:  # relevance, metadata
            fix = f"{notes[field]}; {fix}"
        elif field in ("user_input", "response", "reference") and len(err["loc"]) == 1:
            fix = _text_fix(field, got, fix)
        problems.append(Problem(row=row, field=field, message=message, fix=fix))
    return problems


def check_sample(sample: Sample) -> list[tuple[str, str, str]]:
    """Consistency checks a field type cannot express: (field, message, fix) triples."""
    found: list[tuple[str, str, str]] = []
    values = {name: getattr(sample, name) for name in SAMPLE_FIELDS}
    if lone_surrogate(list(values.values())) is not None:  # it would fail every write later
        for name, value in values.items():
            message = lone_surrogate(value)
            if message is not None:
                found.append((name, message, LONE_SURROGATE_FIX))
    if sample.relevance is None and (
        sample.retrieved_contexts is None and sample.reference_contexts is None
    ):
        return found  # nothing to check (a retrieval sample given by ids)
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
) -> tuple[dict[str, Any], dict[str, str]]:
    """Tabular formats store lists and objects as text (JSON, or Python reprs written by
    pandas); decode the cells that should be. Returns the record and, per field, why a cell
    that looks like a list or an object could not be read (it is left as text)."""
    out = dict(record)
    notes: dict[str, str] = {}
    for key, value in record.items():
        name = field_name(key, column_map)
        if isinstance(value, str) and (name in JSON_CELL_FIELDS or name == "ground_truths"):
            decoded, reason = decode_cell(value, name)
            if reason is None and decoded is not None:
                out[key] = decoded
            elif reason is not None:
                notes[name] = reason
        elif isinstance(value, str) and name in MESSAGE_COLUMNS and value.lstrip()[:1] == "[":
            try:  # a conversation's messages, as JSON text
                messages = json.loads(value)
            except (ValueError, RecursionError):
                continue
            if isinstance(messages, list) and all(isinstance(m, dict) for m in messages):
                out[key] = messages
    return out, notes


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


def _note_columns(
    record: Mapping[Any, Any],
    column_map: Mapping[str, str] | None,
    unknown: dict[str, str],
    known: dict[str, str],
) -> None:
    """Add the string keys of ``record`` to ``unknown`` (column -> its tag in ``metadata``)
    or ``known`` (column -> the field it names)."""
    for key in record:
        if not isinstance(key, str):
            continue
        name = (column_map or {}).get(key, key)
        field = "reference" if name == "ground_truths" else LEGACY_NAMES.get(name, name)
        if field in SAMPLE_FIELDS:
            known.setdefault(key, field)
        else:
            unknown.setdefault(key, name)


#: Fields a column read under another tool's name may have been meant for instead:
#: DeepEval's ``context`` is the ideal context, many hand-made datasets mean the retrieved one.
SIBLINGS: dict[str, str] = {
    "retrieved_contexts": "reference_contexts",
    "reference_contexts": "retrieved_contexts",
    "retrieved_context_ids": "reference_context_ids",
    "reference_context_ids": "retrieved_context_ids",
}
AMBIGUOUS_ALIASES: frozenset[str] = frozenset({"context"})


def _column_map_fix(column: str, field: str) -> str:
    return f"--column-map {shlex.quote(f'{column}={field}')} (column_map={{{column!r}: {field!r}}})"


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
        field_columns: Mapping[str, str] | None = None,
        unanswered_rows: Sequence[int] = (),
    ) -> None:
        self.samples: list[Sample] = list(samples)
        #: Rows of conversations that end with a user message without a reply (not evaluated).
        self.unanswered_rows: list[int] = list(unanswered_rows)
        #: Input columns that name no field (their tags in ``metadata``), each with its tag
        #: name (the column renamed by ``column_map``), for suggestions when a field is missing.
        self.unknown_columns: dict[str, str] = dict(unknown_columns or {})
        #: Input columns that name a field, each with that field (after ``column_map`` and
        #: the names of other tools), to say how a column was read.
        self.field_columns: dict[str, str] = dict(field_columns or {})
        self._warnings: list[str] | None = None
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
        first_rows: MutableMapping[str, int] | None = None,
    ) -> Dataset:
        """Validate raw records (dicts) into a dataset, reporting every problem at once.

        Raises :class:`DatasetError` listing all problems unless ``skip_invalid`` is set, in
        which case the valid rows are kept and the others are listed in ``dataset.invalid``.
        ``rows`` gives each record's row number (default 1, 2, ...); ``pre_problems`` are
        problems a reader already found (e.g. unparseable lines). ``first_rows`` (id -> the
        row it was first seen in) is checked and filled: a reader that validates a file in
        chunks passes the same mapping to each, so an id repeated across chunks is caught.
        """
        samples: list[Sample] = []
        sample_rows: list[int] = []
        problems_by_row: dict[int, list[Problem]] = {}
        for problem in pre_problems:
            problems_by_row.setdefault(problem.row, []).append(problem)
        first_row_of_id: MutableMapping[str, int] = {} if first_rows is None else first_rows
        unknown_columns: dict[str, str] = {}
        field_columns: dict[str, str] = {}
        layouts: set[tuple[Any, ...]] = set()
        unanswered: list[int] = []
        for offset, raw in enumerate(records):
            row = rows[offset] if rows is not None else offset + 1
            found: list[Problem] = []
            built: list[tuple[Sample, int | None]] = []  # each sample with its turn
            if isinstance(raw, Sample):
                built.append((raw, None))
            elif not isinstance(raw, Mapping):
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
                notes: dict[str, str] = {}
                if decode_json_cells:
                    record, notes = _decode_json_cells(record, column_map)
                conversation = expand_conversation(record, row, column_map)
                turns: list[tuple[dict[str, Any], int | None]]
                if conversation is not None:
                    found += conversation.problems
                    if conversation.unanswered:
                        unanswered.append(row)
                    key = message_key(record, column_map)
                    record = {k: v for k, v in record.items() if k != key}
                    turns = list(zip(conversation.records, conversation.turns))
                else:
                    turns = [(record, None)]  # one sample
                if (layout := tuple(record)) not in layouts:  # rows mostly share their columns
                    layouts.add(layout)
                    _note_columns(record, column_map, unknown_columns, field_columns)
                for turn_record, turn in turns:
                    try:
                        mapped = (
                            turn_record
                            if turn is not None
                            else canonical_record(turn_record, column_map)
                        )
                        built.append((Sample.model_validate(mapped), turn))
                    except ValidationError as error:
                        found += [
                            replace(p, turn=turn)
                            for p in _validation_problems(error, row, turn_record, notes)
                        ]
                    except ValueError as error:  # conflicting column names
                        found.append(Problem(row, None, str(error), "fix the column names"))
            for sample, turn in built:
                found += [Problem(row, f, m, x, turn=turn) for f, m, x in check_sample(sample)]
                sample_id = sample.id if sample.id is not None else f"row-{row}"
                if sample_id in first_row_of_id:
                    found.append(
                        Problem(
                            row,
                            "id",
                            f"duplicate sample id {sample_id!r} (first seen in row "
                            f"{first_row_of_id[sample_id]})",
                            "give every sample a unique id",
                            turn=turn,
                        )
                    )
                else:
                    first_row_of_id[sample_id] = row
            if found:
                problems_by_row.setdefault(row, []).extend(found)
            elif built and row not in problems_by_row:
                samples += [sample for sample, _ in built]
                sample_rows += [row] * len(built)

        all_problems = [
            replace(p, source=source)
            for row in sorted(problems_by_row)
            for p in problems_by_row[row]
        ]
        if all_problems and not skip_invalid:
            raise DatasetError(
                all_problems,
                hint="Fix these rows, or pass skip_invalid=True (--skip-invalid) to evaluate "
                "the valid rows only.",
                n_rows=len({*sample_rows, *problems_by_row}),
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
            field_columns=field_columns,
            unanswered_rows=unanswered,
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
        # Each distinct need once: most samples have every field (checked first, quickly).
        distinct = list({tuple(alts) for needs in requirements.values() for alts in needs})
        for sample, row, sample_id in zip(self.samples, self.rows, self.ids):
            if all(any(getattr(sample, f) is not None for f in alts) for alts in distinct):
                continue
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
                            self._missing_fix(sample, alternatives, metric),
                            source=self.source,
                            sample_id=sample_id,
                        )
                    )
        return problems

    def _missing_fix(self, sample: Sample, alternatives: Sequence[str], metric: str) -> str:
        """How to give a missing field: from a column read as its sibling, from one of the
        row's columns that name no field, or in the data."""
        field = alternatives[0]
        for column, read_as in self.field_columns.items():
            if SIBLINGS.get(read_as) in alternatives and sample.has(read_as):
                wanted = SIBLINGS[read_as]
                how = ALIAS_SOURCES.get(column)
                how = f" ({how})" if how and column in LEGACY_NAMES else ""
                return (
                    f"column {column!r} was read as {read_as!r}{how}; if it holds the "
                    f"{wanted.replace('_', ' ')}, pass {_column_map_fix(column, wanted)}; "
                    f"or drop {metric!r} from the metrics"
                )
        names = " or ".join(alternatives)
        columns = [c for c, tag in self.unknown_columns.items() if tag in sample.metadata]
        if not columns:
            return f"add {names} to this row, or drop {metric!r} from the metrics"
        if len(columns) == 1:
            return (
                f"add {names} to this row; or, if column {columns[0]!r} holds it, pass "
                f"{_column_map_fix(columns[0], field)}; or drop {metric!r} from the metrics"
            )
        shown = ", ".join(repr(c) for c in columns[:8]) + (", ..." if len(columns) > 8 else "")
        return (
            f"add {names} to this row; or, if one of the columns that name no field "
            f"({shown}) holds it, pass {_column_map_fix('COLUMN', field)} with its name; "
            f"or drop {metric!r} from the metrics"
        )

    def column_warnings(self) -> list[str]:
        """Notes on input columns that were probably meant for a field, each with the
        ``--column-map`` that reads them so: a column that names no field but looks like
        one (``retreived_contexts``), even when no metric needs it, and a column read under
        an ambiguous name of another tool (DeepEval's ``context``) when its sibling field is
        given by no column; and conversations whose last user message has no reply."""
        if self._warnings is not None:
            return list(self._warnings)
        given = set(self.field_columns.values())
        notes: list[str] = []
        if self.unanswered_rows:
            shown = ", ".join(str(r) for r in self.unanswered_rows[:8])
            more = ", ..." if len(self.unanswered_rows) > 8 else ""
            notes.append(
                f"{len(self.unanswered_rows)} conversation(s) end with a user message that has "
                f"no assistant reply (row(s) {shown}{more}); that message is not evaluated"
            )
        for column, read_as in self.field_columns.items():
            sibling = SIBLINGS.get(read_as)
            if column in AMBIGUOUS_ALIASES and sibling is not None and sibling not in given:
                notes.append(
                    f"column {column!r} is read as {read_as!r} "
                    f"({ALIAS_SOURCES.get(column, 'another tool names it so')}); if it holds "
                    f"the {sibling.replace('_', ' ')}, pass {_column_map_fix(column, sibling)}"
                )
        for column, tag in self.unknown_columns.items():
            alike = [(f[0], field, f[1]) for field in FIELD_NAMES if (f := _lookalike(tag, field))]
            best = max(alike, key=lambda found: found[0], default=None)
            if best is not None and best[1] not in given:  # else a tag close to a given field
                _, field, name = best
                alias = f" ({name})" if name != field else ""
                notes.append(
                    f"column {column!r} names no field and is kept as a tag, but looks like "
                    f"{field!r}{alias}; if it is, pass {_column_map_fix(column, field)}"
                )
        self._warnings = notes
        return list(notes)

    def _lookalike(self, alternatives: Sequence[str]) -> _Lookalike | None:
        """The unknown column closest to one of ``alternatives`` or an alias of it."""
        alike = [
            (found[0], _Lookalike(tag, column, field, found[1]))
            for column, tag in self.unknown_columns.items()
            for field in alternatives
            if field in FIELD_NAMES and (found := _lookalike(tag, field))
        ]
        return max(alike, key=lambda best: best[0], default=(0, None))[1]

    def _rename_problem(self, row: int, sample_id: str, found: _Lookalike) -> Problem:
        alias = f" ({found.name})" if found.name != found.field else ""
        return Problem(
            row,
            found.field,
            f"missing; column {found.column!r} looks like {found.field!r}{alias}",
            f"rename it or pass {_column_map_fix(found.column, found.field)}",
            source=self.source,
            sample_id=sample_id,
        )

    @staticmethod
    def tag_names(tags: str | Iterable[str]) -> list[str]:
        """Tag names given as a list or as one comma-separated string, each once, in order.

        >>> Dataset.tag_names("persona, question_type,persona")
        ['persona', 'question_type']
        """
        names = tags.split(",") if isinstance(tags, str) else list(tags)
        return list(dict.fromkeys(n.strip() for n in names if n.strip()))

    def check_tags(self, tags: str | Iterable[str]) -> list[str]:
        """:meth:`tag_names` of ``tags`` (``metadata`` fields to break results down by); a
        ``ValueError`` naming the fields there are when no sample carries one of them."""
        carried = {key for sample in self.samples for key in sample.metadata}
        return self.check_tag_names(tags, carried)

    @classmethod
    def check_tag_names(cls, tags: str | Iterable[str], carried: Iterable[str]) -> list[str]:
        """:meth:`check_tags` against the metadata fields ``carried`` (of a streamed file)."""
        names = cls.tag_names(tags)
        fields = set(carried)
        unknown = [n for n in names if n not in fields]
        if unknown:
            raise ValueError(
                f"no sample carries tag(s) {unknown}; the metadata fields of this dataset are "
                f"{sorted(fields)}"
            )
        return names

    def without_rows(self, problems: Sequence[Problem]) -> Dataset:
        """This dataset less the rows named in ``problems``, which join ``invalid``."""
        bad_rows = {p.row for p in problems}
        keep = [i for i, row in enumerate(self.rows) if row not in bad_rows]
        id_of_row = dict(zip(self.rows, self.ids))
        newly_invalid = [
            InvalidRow(row, id_of_row.get(row), tuple(p for p in problems if p.row == row))
            for row in sorted(bad_rows)
        ]
        return Dataset(
            [self.samples[i] for i in keep],
            source=self.source,
            invalid=sorted([*self.invalid, *newly_invalid], key=lambda r: r.row),
            rows=[self.rows[i] for i in keep],
            unknown_columns=self.unknown_columns,
            field_columns=self.field_columns,
            unanswered_rows=self.unanswered_rows,
        )

    def fingerprint(self) -> str:
        """A content hash of the samples (order-sensitive), for run records and resuming."""
        from ragmeter.dataset._stream import DatasetFingerprint  # it reads datasets

        digest = DatasetFingerprint()
        digest.update(self.samples)
        return digest.hexdigest()
