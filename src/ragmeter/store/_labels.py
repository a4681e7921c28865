"""People's labels of a metric's results: the :class:`Label` record the run store keeps.

A label says what a person thinks of one thing a metric judged: the whole sample's result
(``level="sample"``: a score in [0, 1] or a pass / fail word), one claim of the answer
(``"claim"``: is it supported by the contexts?) or one retrieved context (``"context"``: is it
useful for the question?), or which of two samples is the better one (``"preference"``: the
metric should score this sample above, below or level with the other one, as people who
compare two answers to one question, or two retrieved sets, say). It names its sample by
:func:`sample_key`, a hash of the sample's content, so it applies to every run of the same
sample whatever the ids; ``sample_id`` is kept for people. Several people may label the same
item: every label is kept, with who and when.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragmeter._record import attributes

if TYPE_CHECKING:
    from ragmeter.dataset import Sample

#: What a label is about: the metric's result for the whole sample, one claim, one context,
#: or the sample against another one.
LEVELS: tuple[str, ...] = ("sample", "claim", "context", "preference")
#: A preference label's values: this sample is better than the other, worse, or as good.
PREFERENCES: dict[str, float] = {"better": 1.0, "tie": 0.5, "worse": 0.0}
#: The sample fields :func:`sample_key` hashes.
KEY_FIELDS: tuple[str, ...] = ("user_input", "response", "retrieved_contexts")
#: The fields of a label record, in their written order.
LABEL_FIELDS: tuple[str, ...] = (
    "sample_id",
    "sample_key",
    "metric",
    "level",
    "item",
    "value",
    "labeller",
    "created_at",
    "note",
)

#: A label's value: true / false (claim, context), a score in [0, 1] or a pass / fail word
#: (sample), better / worse / tie (preference).
LabelValue = bool | float | str


class LabelError(ValueError):
    """A label record that is not valid: ``field`` names the field, ``fix`` says what to
    write instead; ``str()`` says both."""

    def __init__(self, field: str, message: str, fix: str) -> None:
        super().__init__(f"field {field!r}: {message}. Fix: {fix}")
        self.field = field
        self.message = message
        self.fix = fix


def sample_key(sample: Sample | Mapping[str, Any]) -> str:
    """A stable hash of a sample's content: the first 16 hex digits of the sha256 of the
    canonical JSON (keys sorted, no spaces, UTF-8) of its ``user_input``, ``response`` and
    ``retrieved_contexts`` (a missing one is null). The same sample gets the same key in
    every run and every file, whatever its id.

    >>> sample_key({"user_input": "q", "response": "a", "retrieved_contexts": ["c"]})
    '90b9b04d26c502af'
    """
    if isinstance(sample, Mapping):
        values = {name: sample.get(name) for name in KEY_FIELDS}
    else:
        values = {name: getattr(sample, name, None) for name in KEY_FIELDS}
    text = json.dumps(values, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def utc_text(moment: dt.datetime) -> str:
    """``moment`` in ISO 8601, UTC, with a ``Z``: ``2026-12-06T13:00:00Z``."""
    return moment.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class Label:
    """One person's label of one item a metric judged (see the module's text).

    ``item`` is the claim's text (``level="claim"``), the context's 0-based index in
    ``retrieved_contexts`` (``"context"``), the other sample's :func:`sample_key`
    (``"preference"``), ``None`` for ``"sample"``. ``value`` is ``True``/``False`` for claims
    and contexts; a number in [0, 1] or a pass / fail word for a sample; ``"better"``,
    ``"worse"`` or ``"tie"`` for a preference (this sample against the other one).
    ``created_at`` is timezone-aware. Invalid values raise :class:`LabelError`.
    """

    sample_id: str
    sample_key: str
    metric: str
    level: str
    item: str | int | None
    value: LabelValue
    labeller: str
    created_at: dt.datetime
    note: str = ""

    def __post_init__(self) -> None:
        for name in ("sample_key", "metric", "labeller"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise LabelError(name, f"must be a non-empty text, got {value!r}", _FIXES[name])
        if not isinstance(self.sample_id, str):
            raise LabelError("sample_id", f"must be a text, got {self.sample_id!r}", "quote it")
        if self.level not in LEVELS:
            raise LabelError(
                "level", f"must be one of {', '.join(LEVELS)}, got {self.level!r}", _FIXES["level"]
            )
        _check_item(self.level, self.item)
        if self.level == "preference" and self.item == self.sample_key:
            raise LabelError(
                "item",
                "a preference compares two samples, but item is the sample's own key",
                "write the sample_key of the other sample",
            )
        _check_value(self.level, self.value)
        if not isinstance(self.created_at, dt.datetime) or self.created_at.tzinfo is None:
            raise LabelError(
                "created_at",
                f"must be a moment with its time zone, got {self.created_at!r}",
                "write ISO 8601 in UTC, e.g. 2026-12-06T13:00:00Z",
            )
        if not isinstance(self.note, str):
            raise LabelError(
                "note", f"must be a text, got {self.note!r}", "quote it, or leave it out"
            )

    @property
    def target(self) -> tuple[str, str, str, str | int | None]:
        """What is labelled: (sample_key, metric, level, item). Labels of one target by
        several people are compared with each other."""
        return (self.sample_key, self.metric, self.level, self.item)

    def to_dict(self) -> dict[str, Any]:
        """The label as a JSONL record (``created_at`` in ISO 8601 UTC)."""
        return {**attributes(self, *LABEL_FIELDS), "created_at": utc_text(self.created_at)}


_FIXES = {
    "sample_key": "copy the sample_key the queue file gives (ragmeter labels queue)",
    "metric": "name the metric the label is about, e.g. faithfulness",
    "labeller": "name who labelled it, e.g. alice (or pass --labeller)",
    "level": "write sample, claim, context or preference",
}


def _check_item(level: str, item: Any) -> None:
    if level == "claim" and not (isinstance(item, str) and item.strip()):
        raise LabelError(
            "item",
            f"a claim label needs the claim's text, got {item!r}",
            "copy the claim's text from the queue file",
        )
    if level == "context" and (isinstance(item, bool) or not isinstance(item, int) or item < 0):
        raise LabelError(
            "item",
            f"a context label needs the context's 0-based index, got {item!r}",
            "write the position of the context in retrieved_contexts: 0, 1, ...",
        )
    if level == "preference" and not (isinstance(item, str) and item.strip()):
        raise LabelError(
            "item",
            f"a preference label needs the other sample's key, got {item!r}",
            "write the sample_key of the sample this one is compared with",
        )
    if level == "sample" and item is not None:
        raise LabelError("item", f"a sample label has no item, got {item!r}", "write null")


def _check_value(level: str, value: Any) -> None:
    if level == "preference":
        if value not in PREFERENCES:
            raise LabelError(
                "value",
                f"a preference label is better, worse or tie, got {value!r}",
                "write better (this sample is the better one), worse or tie",
            )
        return
    if level in ("claim", "context"):
        if not isinstance(value, bool):
            raise LabelError(
                "value",
                f"a {level} label is true or false, got {value!r}",
                "write true (supported / useful) or false",
            )
        return
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise LabelError(
                "value",
                f"a sample score must be in [0, 1], got {value!r}",
                "write a score from 0 to 1, or pass / fail",
            )
        return
    if not (isinstance(value, str) and value.strip()):
        raise LabelError(
            "value",
            f"a sample label needs a value, got {value!r}",
            "write a score from 0 to 1, or pass / fail",
        )
