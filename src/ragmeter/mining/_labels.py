"""The labelling file: one row per mined question, with empty fields for people to fill.

JSONL (or JSON) rows are written as they are; a CSV file has one column per field, lists and
the metadata as JSON text, and an empty text written as ``""`` so that it reads back as an
empty text (ragmeter's CSV reader takes an empty cell for a missing value).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragmeter._services import replaced_atomically
from ragmeter.dataset import SAMPLE_FIELDS

#: The sample fields a labelling file has no column for (``metadata`` comes last).
_NOT_SHOWN = frozenset({"reference_contexts", "relevance", "history", "metadata"})
#: The columns of a labelling file, in order: the sample's fields in their written order,
#: then ``label`` and ``reason``, which are what ``ragmeter align`` reads (its default
#: ``--label-field`` and ``--reason-field``), then the metadata.
LABEL_COLUMNS: tuple[str, ...] = (
    *(name for name in SAMPLE_FIELDS if name not in _NOT_SHOWN),
    "label",
    "reason",
    "metadata",
)
#: The fields a labeller fills, and their empty values.
TO_FILL: dict[str, Any] = {"reference": "", "reference_context_ids": [], "label": "", "reason": ""}
#: How ragmeter's CSV files write an empty text (see ``ragmeter.dataset.save_dataset``).
EMPTY_TEXT_CELL = '""'
FORMATS = (".jsonl", ".json", ".csv")


def check_label_path(path: str | Path) -> Path:
    """``path`` if its extension names a format a labelling file can have."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(
            f"cannot write a labelling file as {path.name!r}: give a name ending in .jsonl, "
            ".json or .csv"
        )
    return path


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if value == "":
        return EMPTY_TEXT_CELL
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


@contextmanager
def written_whole(path: Path) -> Iterator[Path]:
    """A temporary path to write, renamed over ``path`` when the block succeeds (see
    ``replaced_atomically``), its folder made first; an OS error names ``path``, never the
    temporary file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        reason = f"cannot create its folder {str(path.parent)!r}: {error.strerror}"
        raise OSError(error.errno, reason, str(path)) from None
    partial: Path | None = None
    try:
        with replaced_atomically(path) as partial:
            yield partial
    except OSError as error:
        if partial is not None and error.filename in (str(partial), partial):
            error.filename = str(path)
        if partial is not None and getattr(error, "filename2", None) in (str(partial), partial):
            error.filename2 = None
        raise


def write_rows(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Write labelling rows as JSONL, JSON or CSV, chosen by the extension; a failed write
    leaves no half-written file."""
    path = check_label_path(path)
    suffix = path.suffix.lower()
    with written_whole(path) as partial:
        if suffix == ".jsonl":
            with partial.open("w", encoding="utf-8") as handle:
                for row in rows:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        elif suffix == ".json":
            text = json.dumps(list(rows), ensure_ascii=False, indent=2) + "\n"
            partial.write_text(text, "utf-8")
        else:
            with partial.open("w", encoding="utf-8", newline="") as handle:
                writer = csv.writer(handle)
                writer.writerow(LABEL_COLUMNS)
                for row in rows:
                    writer.writerow([_cell(row.get(column)) for column in LABEL_COLUMNS])
    return path
