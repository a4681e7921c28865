"""Label files: people's labels as JSONL records (:class:`ragmeter.store.Label`), read with
every problem named by line, field and fix, and written back.

Two kinds of file are read. A labels file has one label record per line (the format
``ragmeter labels export`` and ``ragmeter labels queue`` write). A labelling file from
``ragmeter mine`` (JSONL, JSON or CSV: samples with ``label`` and ``reason`` columns that
people filled) gives sample-level labels of one metric by one labeller, named by the caller.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter._services import replaced_atomically
from ragmeter.align._align import BINARY_LABELS, _labelled_items, _missing_label, discrete_key
from ragmeter.dataset import DatasetError, Problem, load_dataset, parse_json_line
from ragmeter.store import LABEL_FIELDS, PREFERENCES, Label, LabelError, LabelValue, sample_key

#: The fields a label record must have (``created_at`` is filled on import when missing,
#: ``note`` is optional, ``item`` may be left out for a sample label).
REQUIRED_FIELDS: tuple[str, ...] = (
    "sample_id",
    "sample_key",
    "metric",
    "level",
    "value",
    "labeller",
)
#: What a labelling file from ``ragmeter mine`` is read as: these columns hold the person's
#: label and reason.
MINE_LABEL_FIELD, MINE_REASON_FIELD = "label", "reason"

_VALUE_FIX = {
    "claim": "write true (the contexts support the claim) or false",
    "context": "write true (the context is useful for the question) or false",
    "sample": "write a score from 0 to 1, or pass / fail (yes / no, true / false, 1 / 0)",
    "preference": "write better (this sample is the better one), worse or tie",
}


def label_value(level: str, value: Any) -> LabelValue:
    """A label's value as the store keeps it: ``True``/``False`` for claims and contexts
    (which also read pass / fail, yes / no, 1 / 0 and the other words of
    :func:`ragmeter.align.discrete_key`); for a sample a number in [0, 1] as a float, or the
    pass / fail word as written; for a preference ``"better"``, ``"worse"`` or ``"tie"`` (in
    any case). ``ValueError`` (a :class:`~ragmeter.store.LabelError`) for anything else.

    >>> label_value("claim", "yes"), label_value("sample", 1), label_value("sample", " Fail ")
    (True, 1.0, 'Fail')
    >>> label_value("preference", "Better")
    'better'
    """
    if level == "preference":
        word = value.strip().casefold() if isinstance(value, str) else value
        if word in PREFERENCES:
            return str(word)
        raise LabelError("value", f"{value!r} is not a preference label", _VALUE_FIX[level])
    key = None if _missing_label(value) else discrete_key(value)
    if level in ("claim", "context"):
        if key in (0.0, 1.0):
            return key == 1.0
    elif level == "sample":
        if isinstance(value, str) and value.strip().casefold() in BINARY_LABELS:
            return value.strip()  # a verdict word, kept as the person wrote it
        if isinstance(key, float) and 0.0 <= key <= 1.0:
            return bool(value) if isinstance(value, bool) else key
    else:
        return value  # type: ignore[no-any-return]  # the level's own error says what is wrong
    raise LabelError("value", f"{value!r} is not a {level} label", _VALUE_FIX[level])


def label_verdict(value: LabelValue) -> float:
    """A stored value as a number: 1.0 / 0.0 for true / false and the verdict words, the
    score itself otherwise; 1.0 / 0.5 / 0.0 for better / tie / worse."""
    if isinstance(value, str) and value in PREFERENCES:
        return PREFERENCES[value]
    key = discrete_key(value)
    if not isinstance(key, float):  # the store holds only what label_value gives
        raise ValueError(f"not a label value: {value!r}")
    return key


def _moment(value: Any) -> dt.datetime:
    if isinstance(value, str):
        text = value.strip()
        try:
            moment = dt.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
        except ValueError:
            moment = None
        if moment is not None and moment.tzinfo is not None:
            return moment.astimezone(dt.timezone.utc)
    raise LabelError(
        "created_at",
        f"{value!r} is not an ISO 8601 moment with its time zone",
        "write it in UTC, e.g. 2026-12-06T13:00:00Z, or leave it out (the import time is used)",
    )


def label_from_record(
    record: Mapping[str, Any], *, now: dt.datetime, labeller: str | None = None
) -> Label:
    """One label record (a JSON object of the labels format) as a :class:`Label`;
    ``labeller`` fills a missing or empty ``labeller``, ``now`` a missing ``created_at``.
    :class:`~ragmeter.store.LabelError` names the first field that is wrong."""
    unknown = sorted(set(record) - set(LABEL_FIELDS) - _QUEUE_FIELDS)
    if unknown:
        raise LabelError(
            unknown[0], "is not a field of a label record", f"use only {', '.join(LABEL_FIELDS)}"
        )
    values = dict(record)
    if labeller and not values.get("labeller"):
        values["labeller"] = labeller
    for name in REQUIRED_FIELDS:
        if name not in values or (name == "value" and _missing_label(values[name])):
            fix = "pass --labeller NAME, or add it" if name == "labeller" else "add it"
            if name == "value":
                fix = _VALUE_FIX.get(str(values.get("level")), "fill it in")
            raise LabelError(name, "is missing", fix)
    level = values["level"]
    created = values.get("created_at")
    return Label(
        sample_id=str(values["sample_id"]) if values["sample_id"] is not None else "",
        sample_key=values["sample_key"],
        metric=values["metric"],
        level=level,
        item=values.get("item"),
        value=label_value(level, values["value"]),
        labeller=values["labeller"],
        created_at=now if created in (None, "") else _moment(created),
        note="" if values.get("note") is None else values["note"],
    )


#: Fields a queue file (``ragmeter labels queue``) adds for the labeller to read; ignored.
_QUEUE_FIELDS = frozenset(
    {"user_input", "response", "retrieved_contexts", "judge", "context", "tags"}
    | {"other_sample_id", "other_response", "other_contexts"}  # a preference item's other side
)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise DatasetError(
            [
                Problem(
                    1,
                    None,
                    f"the file is not UTF-8 text ({error.reason})",
                    "save it as UTF-8",
                    source=str(path),
                )
            ]
        ) from None


def _is_labels_file(path: Path, text: str) -> bool:
    """A JSONL file whose first record has a ``level`` or a ``sample_key``."""
    if path.suffix.lower() != ".jsonl":
        return False
    for line in text.splitlines():
        if line.strip():
            value, problem, _ = parse_json_line(line)
            return problem is not None or (
                isinstance(value, dict) and ("level" in value or "sample_key" in value)
            )
    return False


def read_labels(
    path: str | Path,
    *,
    metric: str | None = None,
    labeller: str | None = None,
    now: dt.datetime | None = None,
    unlabelled: list[int] | None = None,
) -> list[Label]:
    """Every label of ``path``: a labels file (one label record per line), or a labelling
    file from ``ragmeter mine`` whose ``label`` column people filled (sample-level labels of
    ``metric`` by ``labeller``, both required then; ``reason`` becomes the note; rows without
    a label are left out). ``labeller`` also fills a labels file's missing labeller; ``now``
    (default: the current time) its missing ``created_at``. The items of a queue file
    (``ragmeter labels queue``) nobody labelled yet (``value`` empty) are skipped, their line
    numbers appended to ``unlabelled`` when given.

    Raises :class:`~ragmeter.dataset.DatasetError` listing every problem by line, field and
    fix, and returns nothing then: a file is read whole or not at all.
    """
    path = Path(path)
    now = now or dt.datetime.now(dt.timezone.utc)
    text = _read_text(path) if path.suffix.lower() == ".jsonl" else ""
    if _is_labels_file(path, text):
        return _read_label_records(
            path,
            text,
            now=now,
            labeller=labeller,
            unlabelled=[] if unlabelled is None else unlabelled,
        )
    if not metric or not labeller:
        raise DatasetError(
            [
                Problem(
                    1,
                    None,
                    "this is not a labels file (its records have no level or sample_key), so it "
                    "is read as a labelling file from ragmeter mine, which needs the metric and "
                    "the labeller",
                    "pass --metric M --labeller NAME (metric=, labeller=)",
                    source=str(path),
                )
            ]
        )
    return _read_mined(path, metric=metric, labeller=labeller, now=now)


def _read_label_records(
    path: Path, text: str, *, now: dt.datetime, labeller: str | None, unlabelled: list[int]
) -> list[Label]:
    found: list[Label] = []
    problems: list[Problem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        value, message, fix = parse_json_line(line)
        if message is not None:
            problems.append(Problem(number, None, message, fix or "", source=str(path)))
        elif not isinstance(value, dict):
            problems.append(
                Problem(
                    number,
                    None,
                    "a label is a JSON object",
                    "write one {...} label record per line",
                    source=str(path),
                )
            )
        elif "judge" in value and _missing_label(value.get("value")):
            unlabelled.append(number)  # a queue item nobody labelled yet
        else:
            try:
                found.append(label_from_record(value, now=now, labeller=labeller))
            except LabelError as error:
                problems.append(
                    Problem(number, error.field, error.message, error.fix, source=str(path))
                )
    if problems:
        raise DatasetError(problems, hint="Nothing was imported: fix these lines and import again.")
    return found


def _read_mined(path: Path, *, metric: str, labeller: str, now: dt.datetime) -> list[Label]:
    dataset = load_dataset(path)
    items, _unlabelled = _labelled_items(dataset, MINE_LABEL_FIELD, MINE_REASON_FIELD)
    found: list[Label] = []
    problems: list[Problem] = []
    for item, row in zip(items, _rows_of(dataset, [item.sample_id for item in items])):
        try:
            found.append(
                Label(
                    sample_id=item.sample_id,
                    sample_key=sample_key(item.sample),
                    metric=metric,
                    level="sample",
                    item=None,
                    value=label_value("sample", item.label),
                    labeller=labeller,
                    created_at=now,
                    note=item.human_reason or "",
                )
            )
        except LabelError as error:
            problems.append(
                Problem(row, MINE_LABEL_FIELD, error.message, error.fix, source=str(path))
            )
    if problems:
        raise DatasetError(problems, hint="Nothing was imported: fix these rows and import again.")
    return found


def _rows_of(dataset: Any, ids: Sequence[str]) -> list[int]:
    row_of = dict(zip(dataset.ids, dataset.rows))
    return [int(row_of[sample_id]) for sample_id in ids]


def write_labels(labels: Iterable[Mapping[str, Any] | Label], path: str | Path) -> Path:
    """Write labels (or queue records) as JSONL, one record a line; a failed write leaves no
    half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with replaced_atomically(path) as partial, partial.open("w", encoding="utf-8") as handle:
        for label in labels:
            record = label.to_dict() if isinstance(label, Label) else label
            handle.write(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
    return path
