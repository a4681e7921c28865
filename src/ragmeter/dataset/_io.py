"""Reading and writing datasets: JSONL, JSON, CSV, Parquet, pandas and Hugging Face datasets.

Round trips are lossless: ids, order, unicode, empty lists and empty strings survive. Tabular
formats (CSV, Parquet, pandas, Hugging Face) keep lists and objects as JSON text, and CSV writes
an explicitly empty string as ``""`` because an empty cell means "missing".

Reading never fails with a traceback or a bare codec message. Text files are UTF-8, or UTF-16 /
UTF-32 when a byte-order mark or their NUL pattern says so; a line that does not decode, nests
too deeply or has more CSV cells than the header is one invalid row, named with its line (and
byte offset), which ``skip_invalid`` skips. A directory, a FIFO or a device is refused before
it is opened.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import importlib
import json
import math
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter._services import check_regular_file
from ragmeter.dataset._conversation import message_key
from ragmeter.dataset._dataset import JSON_CELL_FIELDS, Dataset
from ragmeter.dataset._decode import (
    Line,
    detect_encoding,
    encoding_name,
    read_lines,
    resave_fix,
)
from ragmeter.dataset._fields import SAMPLE_FIELDS
from ragmeter.dataset._problems import DatasetError, Problem
from ragmeter.dataset._sample import LIST_FIELDS, Sample, field_name
from ragmeter.dataset._values import utf8_text

if TYPE_CHECKING:
    from _csv import Reader as _CsvReader

    import pandas as pd

FORMATS = ("jsonl", "json", "csv", "parquet")
EMPTY_STRING_CELL = '""'


def _format_of(path: Path, format: str | None) -> str:
    if format:
        if format not in FORMATS:
            raise ValueError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
        return format
    suffix = path.suffix.lower().lstrip(".")
    if suffix in ("jsonl", "ndjson"):
        return "jsonl"
    if suffix in FORMATS:
        return suffix
    raise ValueError(
        f"cannot tell the format of {str(path)!r} from its extension; "
        f"use .jsonl, .json, .csv or .parquet, or pass format= (--format)"
    )


def _optional(module: str, extra: str) -> Any:
    """``module``, or an ``ImportError`` naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.partition(".")[0]
        raise ImportError(
            f"{package} is needed for this; install it with: pip install 'ragmeter[{extra}]'"
        ) from None


# -- reading ----------------------------------------------------------------------------------
NESTING_FIX = "flatten the sample: fields hold text, lists of text or a flat object of tags"
NUL_HINT = (
    "; the line holds NUL bytes (\\x00): remove them, or re-save the file as UTF-8 if it is "
    "in another encoding"
)


LONG_NUMBER_FIX = "write very long numbers as strings"


def _value_error(error: ValueError) -> str:
    if "digits" in str(error):
        return "a number too long to read (over 4300 digits)"
    return f"unreadable JSON value: {error}"


def _undecodable(line: Line, encoding: str, path: Path) -> tuple[str, str]:
    """The message and the fix for a line whose bytes do not decode."""
    return (
        f"line {line.number} is not valid {encoding_name(encoding)} text: byte "
        f"0x{line.bad_byte or 0:02x} at byte offset {line.bad_offset} of the file",
        resave_fix(path, encoding),
    )


def parse_json_line(text: str) -> tuple[Any, str | None, str | None]:
    """One JSONL line: ``(value, None, None)``, or ``(None, what is wrong, the fix)`` (invalid
    JSON, nesting too deep, a number too long), never an exception."""
    try:
        return json.loads(text), None, None
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, " if error.lineno > 1 else ""
        return (
            None,
            f"invalid JSON at {where}column {error.colno}: {error.msg}",
            "write each sample as one JSON object on one line (check quotes, commas and brackets)",
        )
    except RecursionError:
        return None, "JSON nested too deeply to read", NESTING_FIX
    except ValueError as error:  # an integer of more than 4300 digits
        return None, _value_error(error), LONG_NUMBER_FIX


def read_jsonl_chunks(
    path: Path, size: int | None = None
) -> Iterator[tuple[list[Any], list[int], list[Problem]]]:
    """(records, their line numbers, problems of lines that do not read) for each ``size``
    lines with content (all of them at once when ``size`` is None)."""
    records: list[Any] = []
    rows: list[int] = []
    problems: list[Problem] = []
    encoding, lines = read_lines(path)
    for line in lines:
        if line.text is None:
            problems.append(Problem(line.number, None, *_undecodable(line, encoding, path)))
        elif line.text.strip():
            value, message, fix = parse_json_line(line.text.rstrip("\r\n"))
            if message is None:
                records.append(value)
                rows.append(line.number)
            else:
                if "\x00" in line.text:
                    message += NUL_HINT
                problems.append(Problem(line.number, None, message, fix or ""))
        if size is not None and len(records) + len(problems) >= size:
            yield records, rows, problems
            records, rows, problems = [], [], []
    if records or problems or size is None:
        yield records, rows, problems


def _deep_nesting_line(text: str, limit: int = 500) -> int:
    """The line where brackets (outside strings) first nest ``limit`` deep; 1 if never."""
    depth = 0
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[{]|[\]}]', text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth >= limit:
                return text.count("\n", 0, match.start()) + 1
        elif token in "]}":
            depth -= 1
    return 1


def _file_problem(path: Path, line: int, message: str, fix: str) -> DatasetError:
    return DatasetError([Problem(line, None, message, fix, source=str(path))])


def _read_json(path: Path) -> list[Any]:
    data = path.read_bytes()
    encoding, skip = detect_encoding(data[:4])
    try:
        text = data[skip:].decode(encoding)
    except UnicodeDecodeError as error:
        line_number = data[skip : skip + error.start].decode(encoding).count("\n") + 1
        line = Line(line_number, 0, None, skip + error.start, data[skip + error.start])
        message, fix = _undecodable(line, encoding, path)
        raise _file_problem(
            path, line_number, message, fix + " (a JSON file is read whole: it cannot be skipped)"
        ) from None
    if not text.strip():
        raise _file_problem(
            path, 1, "the file is empty", 'write the samples as a JSON array: [{"user_input": ...}]'
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise _file_problem(
            path,
            error.lineno,
            f"invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}",
            "check quotes, commas and brackets near that place",
        ) from None
    except RecursionError:
        line_number = _deep_nesting_line(text)
        raise _file_problem(
            path,
            line_number,
            f"JSON nested too deeply to read (from line {line_number})",
            NESTING_FIX,
        ) from None
    except ValueError as error:  # an integer of more than 4300 digits
        raise _file_problem(path, 1, _value_error(error), LONG_NUMBER_FIX) from None
    if isinstance(data, Mapping) and isinstance(data.get("samples"), list):
        data = data["samples"]
    if not isinstance(data, list):
        raise _file_problem(
            path,
            1,
            f"expected a JSON array of samples, got {type(data).__name__}",
            'write [{"user_input": ...}, ...] or {"samples": [...]}',
        )
    return data


@contextlib.contextmanager
def _no_csv_field_limit() -> Iterator[None]:
    """Cells of any size (the csv module refuses those over 128 KiB by default)."""
    previous = csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    try:
        yield
    finally:
        csv.field_size_limit(previous)


@dataclasses.dataclass
class _CsvLines:
    """The text of each line for the csv reader. An undecodable line is noted in ``bad`` and
    read with U+FFFD for its bad bytes (its quotes and commas kept), so that the lines after it
    are read as they would be; the lines of the record being read are kept in ``current``."""

    lines: Iterator[Line]
    bad: dict[int, Line] = dataclasses.field(default_factory=dict)
    current: list[str] = dataclasses.field(default_factory=list)

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        line = next(self.lines)
        if line.text is None:
            self.bad[line.number] = line
            text = line.lossy or "\n"
        else:
            text = line.text
        self.current.append(text)
        return text


def _header(reader: _CsvReader, path: Path, source: _CsvLines, encoding: str) -> list[str]:
    header: list[str] = []
    try:
        for cells in reader:  # blank lines before the header are skipped
            if cells or source.bad:
                header = cells
                break
    except csv.Error as error:
        raise ValueError(f"{str(path)!r}, line {reader.line_num} (the header): {error}") from None
    if source.bad:
        line = min(source.bad.values(), key=lambda b: b.number)
        message, fix = _undecodable(line, encoding, path)
        raise ValueError(f"{str(path)!r}, the header: {message}. Fix: {fix}")
    twice = next((name for i, name in enumerate(header) if name in header[:i]), None)
    if twice is not None:
        raise ValueError(
            f"{str(path)!r}, line {reader.line_num} (the header): column {twice!r} appears "
            "twice. Fix: give every column its own name"
        )
    return header


def _unclosed_quote(cells: list[str], lines: list[str]) -> bool:
    """Whether the record read from ``lines`` ends inside a quoted cell (at the end of the
    file: the csv reader then ends the cell there, line ending included, and says nothing)."""
    if not cells or not cells[-1].endswith(("\n", "\r")):
        return False
    try:
        list(csv.reader(lines, strict=True))
    except csv.Error as error:
        return "end of data" in str(error)
    return False


def _csv_row_problems(
    row: int,
    lines: range,
    cells: list[str],
    header: list[str],
    source: _CsvLines,
    encoding: str,
    path: Path,
) -> list[Problem]:
    found = [
        Problem(row, None, *_undecodable(source.bad[n], encoding, path))
        for n in lines
        if n in source.bad
    ]
    extra = cells[len(header) :]
    if any(extra):  # trailing empty cells ("a,b,,") lose nothing
        found.append(
            Problem(
                row,
                None,
                f"line {lines.start}: {len(extra)} more cell(s) than the header's "
                f"{len(header)} column(s)",
                'quote cells that hold a comma ("a, b"), or name every column in the header',
            )
        )
    return found


def read_csv_rows(path: Path) -> tuple[list[dict[str, Any]], list[int], list[Problem]]:
    """The rows of a CSV file as ``load_dataset`` reads them (cells of any size, UTF-8/16/32,
    a quote never closed or a row with more cells than the header a :class:`Problem`, empty
    cells left out): ``(records, their data row numbers (1 = the row after the header),
    problems)``. For other readers of CSV exports (``ragmeter import``); the path is expected
    to be a regular file already."""
    records: list[dict[str, Any]] = []
    rows: list[int] = []
    problems: list[Problem] = []
    encoding, lines = read_lines(path)
    source = _CsvLines(lines)
    with _no_csv_field_limit():
        reader = csv.reader(source)
        header = _header(reader, path, source, encoding)
        # df.to_csv() writes the DataFrame's index first, under an empty name: not data.
        index_first = header[:1] == [""]
        row = 0
        while True:
            first_line = reader.line_num + 1
            source.current = []
            try:
                cells = next(reader, None)
            except csv.Error as error:
                row += 1
                problems.append(
                    Problem(row, None, f"line {first_line}: {error}", "check the quoting")
                )
                if reader.line_num < first_line:
                    break  # the reader cannot go on
                continue
            if cells is None:
                break
            if not cells:
                continue  # a blank line
            row += 1
            span = range(first_line, reader.line_num + 1)
            found = _csv_row_problems(row, span, cells, header, source, encoding, path)
            if _unclosed_quote(cells, source.current):
                found.append(
                    Problem(
                        row,
                        None,
                        f"line {first_line}: a quote opened here is never closed, so its cell "
                        "runs to the end of the file"
                        + (f" (line {span.stop - 1})" if len(span) > 1 else ""),
                        'close the quote; inside a quoted cell write a quote as two ("")',
                    )
                )
            if found:
                problems += found
                continue
            record: dict[str, Any] = {}
            for position, (key, cell) in enumerate(zip(header, cells)):
                if cell == "" or (position == 0 and index_first):
                    continue  # an empty cell is a missing value
                record[key] = "" if cell == EMPTY_STRING_CELL else cell
            records.append(record)
            rows.append(row)
    return records, rows, problems


def _plain(value: Any) -> Any:
    """numpy / pandas / arrow cell values to plain Python, missing values to None."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if getattr(getattr(value, "dtype", None), "kind", None) in ("m", "M"):
        # numpy dates and durations: .tolist() would turn nanosecond ones into integers.
        import numpy as np

        return None if np.ndim(value) == 0 and np.isnat(value) else value
    if hasattr(value, "tolist") and not isinstance(value, str):
        return _plain(value.tolist())
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    return value


def _from_table(
    rows: Iterable[Mapping[str, Any]],
    column_map: Mapping[str, str] | None,
    skip_invalid: bool,
    source: str | None = None,
) -> Dataset:
    """The samples of a table's rows (numpy / pandas / arrow cells, JSON text cells)."""
    records = [
        {k: v for k, v in ((k, _plain(v)) for k, v in row.items()) if v is not None} for row in rows
    ]
    return Dataset.from_records(
        records,
        column_map=column_map,
        source=source,
        skip_invalid=skip_invalid,
        decode_json_cells=True,
    )


ACCEPTED = (
    "a path to a .jsonl, .json, .csv or .parquet file; a list of samples (dicts, pydantic "
    "models, dataclasses or objects with to_dict()); a dict of columns (lists of the same "
    "length); one sample; a pandas DataFrame; a Hugging Face Dataset (one split); a RAGAS "
    "EvaluationDataset or Testset; a DeepEval or LlamaIndex dataset; or a ragmeter Dataset"
)


def load_dataset(
    source: str | Path | Any,
    *,
    column_map: Mapping[str, str] | None = None,
    skip_invalid: bool = False,
    format: str | None = None,
) -> Dataset:
    """Load samples from a file (JSONL, JSON, CSV, Parquet), a pandas DataFrame, a Hugging Face
    ``datasets.Dataset``, a list of dicts or of sample objects (a RAGAS ``SingleTurnSample``,
    a DeepEval ``LLMTestCase``, any pydantic model or dataclass), a dict of columns, a RAGAS
    ``EvaluationDataset`` / ``Testset``, a DeepEval ``EvaluationDataset``, a LlamaIndex
    ``LabelledRagDataset``, one sample, or a :class:`Dataset`. None of those libraries is
    imported: their objects are read by their shape.

    Every problem in the input is reported at once in a :class:`DatasetError`; with
    ``skip_invalid`` the valid rows load and the others are listed in ``dataset.invalid``.
    An input of another type is a ``TypeError`` that names the kinds accepted.
    """
    if isinstance(source, Dataset):
        return source
    if isinstance(source, str | os.PathLike):
        return _load_path(Path(source), column_map, skip_invalid, format)
    module = type(source).__module__
    if module.startswith("pandas") and hasattr(source, "to_dict") and hasattr(source, "columns"):
        return from_pandas(source, column_map=column_map, skip_invalid=skip_invalid)
    if module.startswith("datasets"):
        if isinstance(source, Mapping):  # DatasetDict, IterableDatasetDict
            splits = ", ".join(repr(str(k)) for k in source)
            first = next(iter(source), "train")
            raise ValueError(
                f"a Hugging Face {type(source).__name__} holds several splits ({splits}); "
                f"evaluate one of them, e.g. dataset[{str(first)!r}]"
            )
        rows = source.to_list() if hasattr(source, "to_list") else source
        return _from_table(rows, column_map, skip_invalid)
    if module.startswith(("polars", "pyarrow")):
        rows = getattr(source, "to_dicts", None) or getattr(source, "to_pylist", None)
        if callable(rows):
            return _from_table(rows(), column_map, skip_invalid)
    records = _records_of(source, column_map)
    if records is None:
        kind = type(source).__qualname__
        kind = kind if module == "builtins" else f"{module}.{kind}"
        raise TypeError(f"cannot read samples from an object of type {kind}; give {ACCEPTED}")
    return Dataset.from_records(records, column_map=column_map, skip_invalid=skip_invalid)


def _load_path(
    path: Path, column_map: Mapping[str, str] | None, skip_invalid: bool, format: str | None
) -> Dataset:
    _check_is_file(path)
    kind = _format_of(path, format)
    try:
        return _load_file(path, kind, column_map, skip_invalid)
    except (DatasetError, FileNotFoundError):
        raise
    except (OSError, MemoryError) as error:
        raise unreadable(path, error) from None


def unreadable(path: Path, error: BaseException) -> ValueError:
    """The error for a dataset file that cannot be read (permissions, disk, memory)."""
    reason = (error.strerror if isinstance(error, OSError) else None) or str(error)
    return ValueError(
        f"cannot read dataset file {str(path)!r}: {reason or type(error).__name__}. Fix: check "
        "that the file is readable (permissions, disk, size)"
    )


# -- objects: other tools' samples and datasets, read by their shape -------------------------
def _object_record(item: Any) -> Any:
    """A sample object as a dict (None fields left out); ``item`` itself when it is a dict,
    a :class:`Sample`, or cannot be read (the row then reports what it got)."""
    if isinstance(item, Mapping | Sample):
        return item
    record: Any = None
    dump = getattr(item, "model_dump", None)  # pydantic 2: RAGAS, DeepEval, LlamaIndex
    if callable(dump) and not isinstance(item, type):
        try:
            record = dump(exclude_none=True)
        except TypeError:
            record = dump()
    elif dataclasses.is_dataclass(item) and not isinstance(item, type):
        record = dataclasses.asdict(item)
    else:
        for name in ("to_dict", "dict"):  # pandas rows, pydantic 1, hand-written classes
            method = getattr(item, name, None)
            if callable(method) and not isinstance(item, type):
                with contextlib.suppress(TypeError):
                    record = method()
                    break
    if not isinstance(record, Mapping):
        return item
    record = {k: v for k, v in record.items() if v is not None}
    nested = record.pop("eval_sample", None)  # a RAGAS TestsetSample wraps its sample
    if isinstance(nested, Mapping):
        record = {**{k: v for k, v in nested.items() if v is not None}, **record}
    elif nested is not None:
        record["eval_sample"] = nested
    return record


def _container_items(source: Any) -> list[Any] | None:
    """The samples of another tool's dataset object, or None if ``source`` is none."""
    if isinstance(getattr(source, "samples", None), list | tuple):  # RAGAS
        to_list = getattr(source, "to_list", None)
        if callable(to_list):
            with contextlib.suppress(TypeError, ValueError, AttributeError, KeyError):
                listed = to_list()
                if isinstance(listed, list) and all(isinstance(r, Mapping) for r in listed):
                    return listed
        return list(source.samples)
    for name in ("test_cases", "goldens"):  # DeepEval: test cases once run, else goldens
        items = getattr(source, name, None)
        if isinstance(items, list | tuple) and (items or name == "goldens"):
            return list(items)
    if isinstance(getattr(source, "examples", None), list | tuple):  # LlamaIndex
        return list(source.examples)
    return None


def _records_of(source: Any, column_map: Mapping[str, str] | None) -> list[Any] | None:
    """The records in an object that is no file, DataFrame or Hugging Face dataset."""
    if isinstance(source, Mapping):
        samples = source.get("samples")
        if isinstance(samples, list):  # as in a JSON file: {"samples": [...]}
            return [_object_record(item) for item in samples]
        if message_key(source, column_map) is not None:  # one conversation
            return [dict(source)]
        columns = columnar_records(source, column_map)
        return columns if columns is not None else [dict(source)]
    if isinstance(source, list | tuple):
        return [_object_record(item) for item in source]
    items = _container_items(source)
    if items is not None:
        return [_object_record(item) for item in items]
    record = _object_record(source)
    if isinstance(record, Mapping):
        return [record]  # one sample object, e.g. a RAGAS SingleTurnSample
    if isinstance(source, str | bytes | bytearray) or hasattr(source, "read"):
        return None
    if isinstance(source, Iterable):
        return [_object_record(item) for item in source]
    return None


#: Fields that hold one text (or id) per sample: in a dict of columns, their columns hold
#: lists; in a single sample, a text.
_SCALAR_FIELDS = frozenset({"id", "user_input", "response", "reference"})


def _column(value: Any) -> list[Any] | None:
    """A column's values when ``value`` is a list, a tuple or a 1-d array / Series."""
    if isinstance(value, list | tuple):
        return list(value)
    if hasattr(value, "tolist") and getattr(value, "ndim", None) == 1:
        listed = _plain(value)
        return listed if isinstance(listed, list) else None
    return None


def columnar_records(
    data: Mapping[Any, Any], column_map: Mapping[str, str] | None = None
) -> list[dict[str, Any]] | None:
    """The samples of a dict of columns (``{"question": [...], "answer": [...]}``), or None
    when ``data`` is one sample.

    It is columns when every value is a list and a text field's column (question, answer,
    reference, id) is among them, or, without one, when the list fields' values are lists
    of lists. A dict of columns of different lengths, or one that is columns in part, is a
    ``ValueError`` naming the columns.

    >>> columnar_records({"question": ["q1", "q2"], "contexts": [["a"], ["b", "c"]]})
    [{'question': 'q1', 'contexts': ['a']}, {'question': 'q2', 'contexts': ['b', 'c']}]
    >>> columnar_records({"question": "q1", "contexts": ["a", "b"]}) is None
    True
    """
    columns = {key: _column(value) for key, value in data.items()}
    listed = [key for key, values in columns.items() if values is not None]
    if not listed:
        return None
    names = {key: field_name(key, column_map) for key in data}
    texts = [key for key in data if names[key] in _SCALAR_FIELDS]
    singles = [key for key in data if columns[key] is None]
    if singles:
        listed_texts = [key for key in texts if columns[key] is not None]
        if not listed_texts:
            return None  # one sample: its text fields hold texts
        raise ValueError(
            f"this dict looks like columns of samples ({_named(listed_texts)} hold lists) but "
            f"{_named(singles)} hold{'s' if len(singles) == 1 else ''} a single value. Fix: in a "
            "dict of columns every value is a list with one item per sample; or pass a list of "
            "samples"
        )
    if not texts:
        lists = [k for k in data if names[k] in LIST_FIELDS or names[k] == "ground_truths"]
        cells = [v for k in lists for v in columns[k] or ()]
        if lists and all(isinstance(v, str | int) for v in cells):
            return None  # one sample of list fields: {"retrieved_context_ids": ["d1", "d2"]}
        if not lists or not all(isinstance(v, list | tuple) or v is None for v in cells):
            raise ValueError(
                f"cannot tell whether this dict ({_named(list(data))}) is one sample or "
                'columns of samples. Fix: pass a list of samples, e.g. [{"user_input": ...}], '
                "or a dict of columns with a user_input (question) column"
            )
    lengths = {key: len(values or ()) for key, values in columns.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{key!r} {n}" for key, n in lengths.items())
        raise ValueError(
            f"the columns of this dict have different lengths ({shown}). Fix: give every "
            "column one value per sample, in the same order"
        )
    n = next(iter(lengths.values()))
    return [
        {
            key: value
            for key, value in ((key, _plain((columns[key] or [])[i])) for key in data)
            if value is not None
        }
        for i in range(n)
    ]


def _named(keys: list[Any]) -> str:
    shown = ", ".join(repr(k) for k in keys[:6]) + (", ..." if len(keys) > 6 else "")
    return f"column{'s' if len(keys) > 1 else ''} {shown}"


def _check_is_file(path: Path) -> None:
    """A clear error for a path that is no regular file, before opening it (a FIFO would
    block)."""
    check_regular_file(
        path,
        what="dataset file",
        fix="save the data to a .jsonl, .json, .csv or .parquet file and give its path",
        directory_fix="give the path of the .jsonl, .json, .csv or .parquet file in it",
    )


def _load_file(
    path: Path, kind: str, column_map: Mapping[str, str] | None, skip_invalid: bool
) -> Dataset:
    name = utf8_text(path)
    if kind in ("jsonl", "csv"):
        reader = read_csv_rows if kind == "csv" else lambda p: next(read_jsonl_chunks(p))
        records, rows, problems = reader(path)
        return Dataset.from_records(
            records,
            rows=rows,
            pre_problems=problems,
            column_map=column_map,
            source=name,
            skip_invalid=skip_invalid,
            decode_json_cells=kind == "csv",
        )
    if kind == "json":
        return Dataset.from_records(
            _read_json(path), column_map=column_map, source=name, skip_invalid=skip_invalid
        )
    pa, pq = _optional("pyarrow", "parquet"), _optional("pyarrow.parquet", "parquet")
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, ValueError) as error:
        raise ValueError(
            f"cannot read {name!r} as Parquet: {error}. Fix: give a Parquet file, or pass "
            "--format (format=) for the file's real format"
        ) from None
    return _from_table(table.to_pylist(), column_map, skip_invalid, source=name)


def from_pandas(
    frame: pd.DataFrame,
    *,
    column_map: Mapping[str, str] | None = None,
    skip_invalid: bool = False,
) -> Dataset:
    """A dataset from a pandas DataFrame (one row per sample). A first column named
    ``Unnamed: 0`` is the index that ``df.to_csv()`` wrote and ``pd.read_csv`` read back as
    data: it is left out."""
    if len(frame.columns) and frame.columns[0] == "Unnamed: 0":
        frame = frame.drop(columns=[frame.columns[0]])
    return _from_table(frame.to_dict(orient="records"), column_map, skip_invalid)


def from_hf(
    hf_dataset: Any, *, column_map: Mapping[str, str] | None = None, skip_invalid: bool = False
) -> Dataset:
    """A dataset from a Hugging Face ``datasets.Dataset``."""
    return _from_table(hf_dataset.to_list(), column_map, skip_invalid)


# -- writing ----------------------------------------------------------------------------------
def _columns(dataset: Dataset) -> list[str]:
    present = {
        field
        for sample in dataset
        for field in SAMPLE_FIELDS
        if sample.has(field) and not (field == "metadata" and not sample.metadata)
    }
    return [field for field in SAMPLE_FIELDS if field in present]


def _cell(sample: Any, field: str) -> Any:
    """A sample's field as plain data (the history's messages as dicts)."""
    value = getattr(sample, field)
    if field == "history" and value is not None:
        return [m if isinstance(m, dict) else m.model_dump() for m in value]
    return value


def _tabular_row(sample: Any, columns: list[str], *, json_lists: bool = True) -> dict[str, Any]:
    """A sample's ``columns``, objects as JSON text, and lists too unless not ``json_lists``
    (Arrow tables, Parquet's and Hugging Face's, hold lists of texts natively)."""
    as_text = JSON_CELL_FIELDS if json_lists else JSON_CELL_FIELDS - LIST_FIELDS
    row = {field: _cell(sample, field) for field in columns}
    for field in as_text.intersection(row):
        if row[field] is not None:
            row[field] = json.dumps(row[field], ensure_ascii=False)
    return row


def to_records(dataset: Dataset) -> list[dict[str, Any]]:
    """Plain dicts with canonical field names; ``None`` fields and empty metadata left out."""
    records = [sample.to_record() for sample in dataset]
    for record in records:
        if not record.get("metadata"):
            record.pop("metadata", None)
    return records


def save_dataset(dataset: Dataset, path: str | Path, *, format: str | None = None) -> Path:
    """Write ``dataset`` to JSONL, JSON, CSV or Parquet (chosen by extension or ``format``)."""
    path = Path(path)
    kind = _format_of(path, format)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "jsonl":
        with path.open("w", encoding="utf-8") as handle:
            for record in to_records(dataset):
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    elif kind == "json":
        path.write_text(json.dumps(to_records(dataset), ensure_ascii=False, indent=2), "utf-8")
    elif kind == "csv":
        # A file of samples that all lack every field still needs a column: with none, each
        # row would be a blank line, which readers skip.
        columns = _columns(dataset) or ["user_input"]
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            writer.writerows(
                {
                    k: EMPTY_STRING_CELL if v == "" else "" if v is None else v
                    for k, v in row.items()
                }
                for row in (_tabular_row(sample, columns) for sample in dataset)
            )
    else:
        pa, pq = _optional("pyarrow", "parquet"), _optional("pyarrow.parquet", "parquet")
        columns = _columns(dataset)
        rows = [_tabular_row(sample, columns, json_lists=False) for sample in dataset]
        types = [(c, pa.list_(pa.string()) if c in LIST_FIELDS else pa.string()) for c in columns]
        pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema(types)), path)
    return path


def to_pandas(dataset: Dataset) -> pd.DataFrame:
    """One row per sample; list columns hold Python lists, ``relevance`` and ``metadata`` dicts."""
    pd = _optional("pandas", "pandas")
    columns = _columns(dataset)
    return pd.DataFrame([{c: _cell(s, c) for c in columns} for s in dataset], columns=columns)


def to_hf(dataset: Dataset) -> Any:
    """A Hugging Face ``datasets.Dataset``; ``relevance`` and ``metadata`` become JSON text."""
    datasets = _optional("datasets", "hf")
    columns = _columns(dataset)
    rows = [_tabular_row(sample, columns, json_lists=False) for sample in dataset]
    return datasets.Dataset.from_list(rows)
