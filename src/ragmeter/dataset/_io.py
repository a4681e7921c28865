"""Reading and writing datasets: JSONL, JSON, CSV, Parquet, pandas and Hugging Face datasets.

Round trips are lossless: ids, order, unicode, empty lists and empty strings survive. Tabular
formats (CSV, Parquet, pandas, Hugging Face) keep lists and objects as JSON text, and CSV writes
an explicitly empty string as ``""`` because an empty cell means "missing".
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.dataset._dataset import JSON_CELL_FIELDS, Dataset
from ragmeter.dataset._problems import DatasetError, Problem
from ragmeter.dataset._sample import SAMPLE_FIELDS

if TYPE_CHECKING:
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


def _missing_extra(package: str, extra: str) -> ImportError:
    return ImportError(
        f"{package} is needed for this; install it with: pip install 'ragmeter[{extra}]'"
    )


# -- reading ----------------------------------------------------------------------------------
def _read_jsonl(path: Path) -> tuple[list[Any], list[int], list[Problem]]:
    records: list[Any] = []
    rows: list[int] = []
    problems: list[Problem] = []
    with path.open(encoding="utf-8-sig") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line.rstrip("\r\n")))
                rows.append(line_number)
            except json.JSONDecodeError as error:
                problems.append(
                    Problem(
                        line_number,
                        None,
                        f"invalid JSON at column {error.colno}: {error.msg}",
                        "write each sample as one JSON object on one line "
                        "(check quotes, commas and brackets)",
                    )
                )
    return records, rows, problems


def _read_json(path: Path) -> list[Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as error:
        raise DatasetError(
            [
                Problem(
                    error.lineno,
                    None,
                    f"invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}",
                    "check quotes, commas and brackets near that place",
                    source=str(path),
                )
            ]
        ) from None
    if isinstance(data, Mapping) and isinstance(data.get("samples"), list):
        data = data["samples"]
    if not isinstance(data, list):
        raise DatasetError(
            [
                Problem(
                    1,
                    None,
                    f"expected a JSON array of samples, got {type(data).__name__}",
                    'write [{"user_input": ...}, ...] or {"samples": [...]}',
                    source=str(path),
                )
            ]
        )
    return data


def _read_csv(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        records = []
        for row in reader:
            record: dict[str, Any] = {}
            for key, cell in row.items():
                if key is None or cell is None or cell == "":
                    continue  # an empty cell is a missing value
                record[key] = "" if cell == EMPTY_STRING_CELL else cell
            records.append(record)
    return records


def _plain(value: Any) -> Any:
    """numpy / pandas / arrow cell values to plain Python, missing values to None."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "tolist") and not isinstance(value, str):
        return _plain(value.tolist())
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    return value


def _tabular_records(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in ((k, _plain(v)) for k, v in row.items()) if v is not None} for row in rows
    ]


def load_dataset(
    source: str | Path | Any,
    *,
    column_map: Mapping[str, str] | None = None,
    skip_invalid: bool = False,
    format: str | None = None,
) -> Dataset:
    """Load samples from a file (JSONL, JSON, CSV, Parquet), a pandas DataFrame, a Hugging Face
    ``datasets.Dataset``, a list of dicts, or a :class:`Dataset`.

    Every problem in the input is reported at once in a :class:`DatasetError`; with
    ``skip_invalid`` the valid rows load and the others are listed in ``dataset.invalid``.
    """
    if isinstance(source, Dataset):
        return source
    if isinstance(source, list | tuple):
        return Dataset.from_records(source, column_map=column_map, skip_invalid=skip_invalid)
    module = type(source).__module__
    if module.startswith("pandas"):
        return from_pandas(source, column_map=column_map, skip_invalid=skip_invalid)
    if module.startswith("datasets"):
        return from_hf(source, column_map=column_map, skip_invalid=skip_invalid)

    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"no such dataset file: {str(path)!r}")
    kind = _format_of(path, format)
    name = str(path)
    if kind == "jsonl":
        records, rows, problems = _read_jsonl(path)
        return Dataset.from_records(
            records,
            rows=rows,
            pre_problems=problems,
            column_map=column_map,
            source=name,
            skip_invalid=skip_invalid,
        )
    if kind == "json":
        return Dataset.from_records(
            _read_json(path), column_map=column_map, source=name, skip_invalid=skip_invalid
        )
    if kind == "csv":
        return Dataset.from_records(
            _read_csv(path),
            column_map=column_map,
            source=name,
            skip_invalid=skip_invalid,
            decode_json_cells=True,
        )
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise _missing_extra("pyarrow", "parquet") from None
    return Dataset.from_records(
        _tabular_records(pq.read_table(path).to_pylist()),
        column_map=column_map,
        source=name,
        skip_invalid=skip_invalid,
        decode_json_cells=True,
    )


def from_pandas(
    frame: pd.DataFrame,
    *,
    column_map: Mapping[str, str] | None = None,
    skip_invalid: bool = False,
) -> Dataset:
    """A dataset from a pandas DataFrame (one row per sample)."""
    return Dataset.from_records(
        _tabular_records(frame.to_dict(orient="records")),
        column_map=column_map,
        skip_invalid=skip_invalid,
        decode_json_cells=True,
    )


def from_hf(
    hf_dataset: Any, *, column_map: Mapping[str, str] | None = None, skip_invalid: bool = False
) -> Dataset:
    """A dataset from a Hugging Face ``datasets.Dataset``."""
    return Dataset.from_records(
        _tabular_records(hf_dataset.to_list()),
        column_map=column_map,
        skip_invalid=skip_invalid,
        decode_json_cells=True,
    )


# -- writing ----------------------------------------------------------------------------------
def _columns(dataset: Dataset) -> list[str]:
    present = {
        field
        for sample in dataset
        for field in SAMPLE_FIELDS
        if sample.has(field) and not (field == "metadata" and not sample.metadata)
    }
    return [field for field in SAMPLE_FIELDS if field in present]


def _tabular_row(sample: Any, columns: list[str]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for field in columns:
        value = getattr(sample, field)
        if field in JSON_CELL_FIELDS and value is not None:
            value = json.dumps(value, ensure_ascii=False)
        row[field] = value
    return row


def to_records(dataset: Dataset) -> list[dict[str, Any]]:
    """Plain dicts with canonical field names; ``None`` fields and empty metadata left out."""
    records = []
    for sample in dataset:
        record = sample.to_record()
        if not record.get("metadata"):
            record.pop("metadata", None)
        records.append(record)
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
            for sample in dataset:
                row = _tabular_row(sample, columns)
                writer.writerow(
                    {
                        k: (EMPTY_STRING_CELL if v == "" else "" if v is None else v)
                        for k, v in row.items()
                    }
                )
    else:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise _missing_extra("pyarrow", "parquet") from None
        columns = _columns(dataset)
        rows = [_tabular_row(sample, columns) for sample in dataset]
        schema = pa.schema(
            [
                (
                    c,
                    pa.list_(pa.string())
                    if c in JSON_CELL_FIELDS - {"relevance", "metadata"}
                    else pa.string(),
                )
                for c in columns
            ]
        )
        for row in rows:  # list columns are stored natively, not as JSON text
            for c in columns:
                if c in JSON_CELL_FIELDS - {"relevance", "metadata"} and row[c] is not None:
                    row[c] = json.loads(row[c])
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def to_pandas(dataset: Dataset) -> pd.DataFrame:
    """One row per sample; list columns hold Python lists, ``relevance`` and ``metadata`` dicts."""
    try:
        import pandas as pd
    except ImportError:
        raise _missing_extra("pandas", "pandas") from None
    columns = _columns(dataset)
    return pd.DataFrame([{c: getattr(s, c) for c in columns} for s in dataset], columns=columns)


def to_hf(dataset: Dataset) -> Any:
    """A Hugging Face ``datasets.Dataset``; ``relevance`` and ``metadata`` become JSON text."""
    try:
        import datasets
    except ImportError:
        raise _missing_extra("datasets", "hf") from None
    columns = _columns(dataset)
    rows = []
    for sample in dataset:
        row = {c: getattr(sample, c) for c in columns}
        for c in ("relevance", "metadata"):
            if c in row and row[c] is not None:
                row[c] = json.dumps(row[c], ensure_ascii=False)
        rows.append(row)
    return datasets.Dataset.from_list(rows)
