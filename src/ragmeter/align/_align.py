"""``align()``: score human-labelled samples with a metric and measure how far it agrees.

The workflow: load the labelled file, take each row's human label out of the sample (the
metric never sees it), score the samples with :func:`ragmeter.evaluate`, and compare the
metric's labels or scores with the human ones on the items both scored. Items the metric did
not score are listed, never dropped in silence. With ``improve=True`` the items are split into
a train and a test part; few-shot examples for the metric are chosen from the train part only
and both the original and the improved metric are measured on the test part only.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

import numpy as np

from ragmeter._validate import check_level, check_resamples
from ragmeter.align._agreement import (
    DEFAULT_RESAMPLES,
    KINDS,
    STATISTICS,
    Agreement,
    measure,
    measure_change,
)
from ragmeter.dataset import SAMPLE_FIELDS, Dataset, Sample, load_dataset
from ragmeter.metrics import Metric, MetricResult, Status

if TYPE_CHECKING:
    from ragmeter.embed import Embeddings
    from ragmeter.judge import Judge


@runtime_checkable
class SupportsExamples(Protocol):
    """A metric that can be given few-shot examples (what ``improve=True`` needs).

    ``with_examples`` returns a new metric (the original unchanged) that shows the judge
    ``examples``: each a sample's record (``ragmeter.Sample.to_record()``: ``user_input``,
    ``response``, ...) plus ``"label"`` (the human label as written in the labelled file),
    for numeric, rubric and ranking kinds also ``"score"`` (that label as a number), and,
    when the file gives one, ``"reason"`` (the human's reason).
    """

    def with_examples(self, examples: list[dict[str, Any]]) -> Metric: ...


# -- results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Disagreement:
    """An item on which the metric and the human differ.

    ``size`` orders them: 1 for a different discrete label, the distance in levels for a
    rubric, and for numbers the gap once each side is rescaled to 0-1 by its own range over
    the compared items (the raw gap when one side is constant).
    ``metric_label`` is the metric's label (discrete, rubric) or its score (numbers);
    ``reason`` is the metric's reason, ``human_reason`` the labeller's, when given.
    """

    sample_id: str
    human_label: Any
    metric_label: Any
    score: float | None
    size: float
    reason: str | None = None
    human_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.sample_id,
            "human": _plain(self.human_label),
            "metric": _plain(self.metric_label),
            "score": self.score,
            "size": self.size,
            "reason": self.reason,
            "human_reason": self.human_reason,
        }


@dataclass(frozen=True)
class Unscored:
    """An item of the measured set that the metric gave nothing comparable for.

    ``status`` is ``failed`` or ``not_applicable`` (the metric's own status), ``skipped``
    (the row lacks a field the metric needs) or ``no_label`` (the metric scored it but gave
    no label to compare); ``message`` says more.
    """

    sample_id: str
    status: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.sample_id, "status": self.status, "message": self.message}


@dataclass(frozen=True)
class Measurement:
    """One metric's agreement with the human labels on a set of items.

    ``sample_ids`` are the items measured on, ``n_compared`` of which the metric scored
    (the others are in ``unscored``); ``agreement`` holds each statistic of the kind, the
    headline one first; ``confusion`` counts human label -> metric label (discrete and rubric
    kinds only).
    """

    metric: str
    sample_ids: tuple[str, ...]
    n_compared: int
    agreement: dict[str, Agreement]
    unscored: list[Unscored]
    disagreements: list[Disagreement]
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def coverage(self) -> float:
        """The share of the items the metric scored."""
        return self.n_compared / len(self.sample_ids) if self.sample_ids else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "n_items": len(self.sample_ids),
            "n_compared": self.n_compared,
            "coverage": self.coverage,
            "agreement": {name: a.to_dict() for name, a in self.agreement.items()},
            "unscored": [u.to_dict() for u in self.unscored],
            "disagreements": [d.to_dict() for d in self.disagreements],
            "confusion": self.confusion,
            "sample_ids": list(self.sample_ids),
        }


@dataclass(frozen=True)
class Split:
    """The train / test split of ``improve=True``: examples came from ``train_ids`` only and
    every figure was measured on ``test_ids`` only (the two never share an item)."""

    train_ids: tuple[str, ...]
    test_ids: tuple[str, ...]
    example_ids: tuple[str, ...]
    examples: list[dict[str, Any]]
    test_share: float
    seed: int
    stratified: bool

    def to_dict(self) -> dict[str, Any]:
        data = {k: list(v) if isinstance(v, tuple) else v for k, v in vars(self).items()}
        return {**data, "examples": [_plain(e) for e in self.examples]}


@dataclass
class AlignmentReport:
    """How far a metric agrees with human labels.

    ``original`` measures the metric as given: on every labelled item, or, with
    ``improve=True``, on the test split only (``measured_on`` says which). Then ``improved``
    measures the metric with the few-shot examples on the same test split, ``change`` is
    improved minus original per statistic (paired bootstrap CI over the items both scored)
    and ``split`` records the split and the examples.
    """

    metric: str
    kind: str
    #: Where the kind came from: "given" (``kind=``), "metric" (its ``kind``) or "labels".
    kind_source: str
    source: str | None
    label_field: str
    n_labelled: int
    #: Rows of the file without a human label: not scored, not measured.
    unlabelled: list[str]
    #: "all labelled items" or "test split".
    measured_on: str
    original: Measurement
    improved: Measurement | None = None
    change: dict[str, Agreement] | None = None
    split: Split | None = None
    level: float = 0.95
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0

    @property
    def statistic(self) -> str:
        """The headline statistic of the kind (e.g. ``cohen_kappa``)."""
        return STATISTICS[self.kind][0]

    @property
    def agreement(self) -> dict[str, Agreement]:
        """The agreement of the metric as given (on the test split with ``improve``)."""
        return self.original.agreement

    @property
    def disagreements(self) -> list[Disagreement]:
        return self.original.disagreements

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "kind": self.kind,
            "kind_source": self.kind_source,
            "source": self.source,
            "label_field": self.label_field,
            "n_labelled": self.n_labelled,
            "unlabelled": self.unlabelled,
            "measured_on": self.measured_on,
            "statistic": self.statistic,
            "original": self.original.to_dict(),
            "improved": None if self.improved is None else self.improved.to_dict(),
            "change": None
            if self.change is None
            else {name: a.to_dict() for name, a in self.change.items()},
            "split": None if self.split is None else self.split.to_dict(),
            "level": self.level,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
        }

    def summary(self, top: int = 10) -> str:
        """The report in plain text lines: agreement with CIs, coverage, the ``top`` largest
        disagreements with the metric's reasons, and with ``improve`` the split, the examples
        and the change."""
        kind_from = {"given": "as given", "metric": "from the metric", "labels": "from the labels"}
        lines = [
            f"metric {self.metric} ({self.kind}, {kind_from.get(self.kind_source, '')}) against "
            f"{self.n_labelled} human labels ({self.label_field!r})"
            + (f" in {self.source}" if self.source else "")
        ]
        if self.unlabelled:
            lines.append(
                f"{len(self.unlabelled)} row(s) without a label were left out: "
                + _ids(self.unlabelled)
            )
        if self.split is not None:
            split = self.split
            lines.append(
                f"split (seed {split.seed}{', stratified by label' if split.stratified else ''}):"
                f" {len(split.train_ids)} train, {len(split.test_ids)} test; "
                f"{len(split.example_ids)} examples from train: {_ids(split.example_ids)}"
            )
            lines.append(
                f"measured on the test split only ({len(split.test_ids)} items): no example "
                "and no train item is in it"
            )
        else:
            lines.append(f"measured on all {len(self.original.sample_ids)} labelled items")
        versions = [("original", self.original)]
        if self.improved is not None:
            versions.append(("improved", self.improved))
        for title, measurement in versions:
            first, *rest = _coverage(measurement)
            lines += [f"{title}: {first}", *rest]
            lines += [f"  {a.describe()}" for a in measurement.agreement.values()]
        if self.change:
            lines.append("change (improved - original, on the items both scored):")
            lines += [f"  {a.describe()}" for a in self.change.values()]
        for title, measurement in versions:
            lines += _disagreement_lines(title, self.kind, measurement, top)
        return "\n".join(lines)


def _ids(ids: Sequence[str], most: int = 10) -> str:
    shown = ", ".join(ids[:most])
    return shown + (f" and {len(ids) - most} more" if len(ids) > most else "")


def _coverage(m: Measurement, most: int = 5) -> list[str]:
    lines = [f"{m.n_compared}/{len(m.sample_ids)} items scored ({m.coverage:.0%})"]
    lines += [f"  not scored: {u.sample_id} ({u.status}): {u.message}" for u in m.unscored[:most]]
    if len(m.unscored) > most:
        lines.append(f"  ... and {len(m.unscored) - most} more not scored")
    return lines


def _show(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _disagreement_lines(title: str, kind: str, m: Measurement, top: int) -> list[str]:
    if not m.disagreements:
        return [f"{title}: no disagreement"]
    if kind in ("numeric", "ranking"):
        head = "the largest gaps (each side rescaled to 0-1 by its range)"
    else:
        head = f"{len(m.disagreements)} disagreement(s), largest first"
    lines = [f"{title}: {head}"]
    for d in m.disagreements[:top]:
        line = f"  {d.sample_id}: human {_show(d.human_label)}, metric {_show(d.metric_label)}"
        if d.score is not None and d.metric_label != d.score:
            line += f" (score {d.score:.3g})"
        if d.reason:
            line += f"; metric's reason: {d.reason}"
        if d.human_reason:
            line += f"; human's reason: {d.human_reason}"
        lines.append(line)
    if len(m.disagreements) > top:
        lines.append(f"  ... and {len(m.disagreements) - top} more")
    return lines


def _plain(value: Any) -> Any:
    """``value`` as plain JSON data (unknown objects as their text)."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


# -- labels -----------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    """A label as a number: numbers, booleans (1 / 0) and numeric text; else ``None``."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


#: Text labels of a pass / fail verdict, compared as 1 and 0 (a 0-1 score matches them).
BINARY_LABELS: dict[str, float] = {
    **dict.fromkeys(("pass", "passed", "yes", "true", "是", "通过"), 1.0),
    **dict.fromkeys(("fail", "failed", "no", "false", "否", "不通过"), 0.0),
}

#: A 0-1 score without a label passes (1) at this or more against pass / fail labels.
BINARY_THRESHOLD = 0.5


def discrete_key(value: Any) -> float | str | None:
    """The key two discrete labels are compared by: numbers, booleans and numeric text as
    floats (so ``true``, ``1`` and ``"1.0"`` match a score of 1.0), the verdicts of
    :data:`BINARY_LABELS` (pass / fail, yes / no, true / false, 是 / 否, 通过 / 不通过) as 1.0
    and 0.0, other text trimmed and case-folded.

    >>> discrete_key(" PASS "), discrete_key("No"), discrete_key("不通过"), discrete_key("partial")
    (1.0, 0.0, 0.0, 'partial')
    """
    if value is None:
        return None
    if isinstance(value, str) and value.strip().casefold() in BINARY_LABELS:
        return BINARY_LABELS[value.strip().casefold()]
    number = _number(value)
    if number is not None:
        return number
    text = str(value).strip().casefold()
    return text or None


def infer_kind(labels: Sequence[Any]) -> str:
    """The kind the human labels suggest: text or booleans are discrete, whole numbers from
    1 to 5 a rubric, other numbers numeric.

    >>> infer_kind(["pass", "fail"]), infer_kind([1, 4, 5]), infer_kind([0.2, 0.9])
    ('discrete', 'rubric', 'numeric')
    """
    numbers = [None if isinstance(v, bool) else _number(v) for v in labels if not _missing_label(v)]
    if not numbers or any(n is None for n in numbers):
        return "discrete"
    if all(n is not None and n.is_integer() and 1 <= n <= 5 for n in numbers):
        return "rubric"
    return "numeric"


def _missing_label(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


@dataclass(frozen=True)
class _Item:
    """A labelled item: its sample (label taken out), the label as written, its value."""

    sample_id: str
    sample: Sample
    label: Any
    value: Any  # discrete key, or float
    human_reason: str | None


@dataclass(frozen=True)
class _Prediction:
    value: Any  # discrete key, or float
    shown: Any  # the metric's label as it gave it, or its score
    score: float | None
    reason: str | None


# -- scoring ----------------------------------------------------------------------------------


def _score(
    metric: Metric,
    items: Sequence[_Item],
    *,
    judge: Judge | None,
    embeddings: Embeddings | None,
    progress: bool,
) -> dict[str, MetricResult | str]:
    """Each item's result, or the reason it was skipped (a field the metric needs)."""
    from ragmeter.runner import evaluate

    dataset = Dataset([item.sample for item in items])  # each sample carries its id
    result = evaluate(
        dataset,
        [metric],
        skip_invalid=True,
        judge=judge,
        embeddings=embeddings,
        progress=progress,
    )
    out: dict[str, MetricResult | str] = {r.sample_id: r.scores[metric.name] for r in result}
    by_id = dict(zip(dataset.ids, dataset.samples))
    for invalid in result.skipped:
        sample_id = invalid.sample_id or dataset.ids[invalid.row - 1]
        missing = metric.missing_fields(by_id[sample_id])
        out[sample_id] = (
            f"missing field(s) the metric needs: {', '.join(missing)}"
            if missing
            else "; ".join(p.message for p in invalid.problems)
        )
    return out


def _prediction(
    kind: str, result: MetricResult | str, numeric_labels: bool, binary_labels: bool = False
) -> _Prediction | Unscored:
    if isinstance(result, str):
        return Unscored("", "skipped", result)
    if result.status is not Status.OK or result.score is None:
        message = result.error or result.reason or result.status.value
        return Unscored("", result.status.value, message)
    score, label = result.score, result.details.get("label")
    if kind == "discrete":
        if label is not None and discrete_key(label) is not None:
            return _Prediction(discrete_key(label), label, score, result.reason)
        if binary_labels and 0.0 <= score <= 1.0:
            # pass / fail labels against a 0-1 score: the metric passes at 0.5 or more
            verdict = 1.0 if score >= BINARY_THRESHOLD else 0.0
            return _Prediction(verdict, verdict, score, result.reason)
        if numeric_labels:
            return _Prediction(score, score, score, result.reason)
        return Unscored(
            "",
            "no_label",
            f"the metric gave no label (details['label']) and its score {score:.3g} cannot be "
            "compared with text labels other than pass/fail, yes/no, true/false or 1/0 "
            "(compared as 1 and 0)",
        )
    if kind == "rubric":
        level = result.details.get("level", label)
        if level is not None and _number(level) is not None:
            return _Prediction(_number(level), level, score, result.reason)
    return _Prediction(score, score, score, result.reason)


def _arrays(kind: str, *columns: list[Any]) -> tuple[np.ndarray, ...]:
    """The columns as integer codes of one shared set of labels (discrete) or as numbers."""
    if kind != "discrete":
        return tuple(np.asarray(column, dtype=float) for column in columns)
    index: dict[Any, int] = {}
    for column in columns:
        for value in column:
            index.setdefault(value, len(index))
    return tuple(np.array([index[v] for v in column], dtype=np.intp) for column in columns)


#: Gaps smaller than this are rounding, not disagreement.
_TOLERANCE = 1e-9


def _sizes(
    kind: str, compared: Sequence[_Item], predictions: Mapping[str, _Prediction]
) -> dict[str, float]:
    """How far apart the two sides are on each compared item (0 when they agree)."""
    if not compared:
        return {}
    if kind == "discrete":
        return {i.sample_id: float(i.value != predictions[i.sample_id].value) for i in compared}
    human = np.array([i.value for i in compared], dtype=float)
    metric = np.array([predictions[i.sample_id].value for i in compared], dtype=float)
    if kind != "rubric" and np.ptp(human) > 0 and np.ptp(metric) > 0:
        # Numbers may be on different scales (labels 1-10, scores 0-1): each side rescaled to
        # 0-1 by its own range over the compared items.
        human = (human - human.min()) / np.ptp(human)
        metric = (metric - metric.min()) / np.ptp(metric)
    gaps = np.abs(human - metric)
    gaps[gaps < _TOLERANCE] = 0.0
    return {i.sample_id: float(g) for i, g in zip(compared, gaps)}


def _disagreements(
    kind: str, compared: Sequence[_Item], predictions: Mapping[str, _Prediction]
) -> list[Disagreement]:
    sizes = _sizes(kind, compared, predictions)
    found = [
        Disagreement(
            item.sample_id,
            item.label,
            predictions[item.sample_id].shown,
            predictions[item.sample_id].score,
            sizes[item.sample_id],
            predictions[item.sample_id].reason,
            item.human_reason,
        )
        for item in compared
        if sizes[item.sample_id] > 0
    ]
    return sorted(found, key=lambda d: -d.size)  # stable: file order among equal sizes


def _confusion(
    kind: str, compared: Sequence[_Item], predictions: Mapping[str, _Prediction]
) -> dict[str, dict[str, int]]:
    if kind not in ("discrete", "rubric"):
        return {}
    table: dict[str, dict[str, int]] = {}
    for item in compared:
        row = table.setdefault(_show(item.label), {})
        shown = _show(predictions[item.sample_id].shown)
        row[shown] = row.get(shown, 0) + 1
    return table


# -- the split and the examples -----------------------------------------------------------------


def _split(
    items: Sequence[_Item], *, stratify: bool, test_share: float, seed: int
) -> tuple[list[_Item], list[_Item]]:
    """Train and test items (each in file order), stratified by label when asked."""
    rng = np.random.default_rng(seed)
    groups: dict[Any, list[int]] = {}
    for position, item in enumerate(items):
        groups.setdefault(item.value if stratify else None, []).append(position)
    test: set[int] = set()
    for members in groups.values():
        shuffled = [members[i] for i in rng.permutation(len(members))]
        test.update(shuffled[: math.floor(len(members) * test_share + 0.5)])
    everyone = [members[i] for members in groups.values() for i in rng.permutation(len(members))]
    if not test:  # e.g. only singleton labels: take one item over
        test.add(everyone[0])
    if len(test) == len(items):
        test.discard(next(p for p in everyone if p in test))
    train = [item for p, item in enumerate(items) if p not in test]
    return train, [item for p, item in enumerate(items) if p in test]


def _choose_examples(
    kind: str,
    train: Sequence[_Item],
    sizes: Mapping[str, float],
    *,
    shots: int,
    seed: int,
) -> list[_Item]:
    """``shots`` train items, those the metric gets most wrong first, taken in turn from each
    label (discrete, rubric) or from each part of the label range (numbers)."""
    rng = np.random.default_rng(seed + 1)
    shuffled = [train[i] for i in rng.permutation(len(train))]

    def priority(item: _Item) -> tuple[int, float]:
        size = sizes.get(item.sample_id)
        if size is None:  # not scored: a useful example too, after the wrong ones
            return (1, 0.0)
        return (0, -size) if size > 0 else (2, 0.0)

    if kind in ("discrete", "rubric"):
        groups: dict[Any, list[_Item]] = {}
        for item in shuffled:
            groups.setdefault(item.value, []).append(item)
        pools = list(groups.values())
    else:  # contiguous parts of the label range, lowest first
        by_value = sorted(shuffled, key=lambda item: float(item.value))
        parts = np.array_split(np.arange(len(by_value)), min(shots, len(by_value)))
        pools = [[by_value[i] for i in part] for part in parts if len(part)]
    pools = [sorted(pool, key=priority) for pool in pools]
    pools.sort(key=lambda pool: priority(pool[0]))
    chosen: list[_Item] = []
    while len(chosen) < shots and any(pools):
        for pool in pools:
            if pool and len(chosen) < shots:
                chosen.append(pool.pop(0))
    return chosen


def _example(kind: str, item: _Item) -> dict[str, Any]:
    record = item.sample.to_record()
    if not record.get("metadata"):
        record.pop("metadata", None)
    record["label"] = item.label
    if kind != "discrete":  # the human number, also under the name numeric answers use
        record["score"] = item.value
    if item.human_reason:
        record["reason"] = item.human_reason
    return record


# -- the workflow -----------------------------------------------------------------------------


def _labelled_items(
    dataset: Dataset, label_field: str, reason_field: str
) -> tuple[list[_Item], list[str]]:
    items: list[_Item] = []
    unlabelled: list[str] = []
    for sample, sample_id in zip(dataset.samples, dataset.ids):
        metadata = dict(sample.metadata)
        label = metadata.pop(label_field, None)
        reason = metadata.pop(reason_field, None)
        if _missing_label(label):
            unlabelled.append(sample_id)
            continue
        # The metric must not see the human's label or reason.
        stripped = sample.model_copy(update={"metadata": metadata, "id": sample_id})
        items.append(
            _Item(sample_id, stripped, label, None, None if reason is None else str(reason))
        )
    return items, unlabelled


def _with_values(items: list[_Item], kind: str) -> list[_Item]:
    out = []
    wrong: list[str] = []
    for item in items:
        value = discrete_key(item.label) if kind == "discrete" else _number(item.label)
        if value is None or (kind != "discrete" and isinstance(item.label, bool)):
            wrong.append(f"{item.sample_id} ({item.label!r})")
        out.append(_Item(item.sample_id, item.sample, item.label, value, item.human_reason))
    if wrong:
        raise ValueError(
            f"a {kind} metric needs numeric human labels; not numbers: {_ids(wrong, 5)} "
            "(use --kind discrete for labels that are categories)"
        )
    return out


class CannotImprove(TypeError, ValueError):
    """``improve`` asked of a metric without ``with_examples``: a wrong argument (TypeError)
    and a usage error (ValueError, what the CLI reports)."""


def cannot_improve(metric: Metric) -> str:
    """Why ``improve`` is refused for a metric without ``with_examples``."""
    return (
        f"metric {metric.name!r} cannot be improved with examples: it has no "
        "with_examples(examples) method (prompt metrics loaded from a metric file have one)"
    )


@dataclass(frozen=True)
class AlignOptions:
    """How :func:`align` measures (its keyword arguments, and ``ragmeter align``'s options)."""

    kind: str | None = None
    improve: bool = False
    test_share: float = 0.5
    shots: int = 4
    seed: int = 0
    label_field: str = "label"
    reason_field: str = "reason"
    level: float = 0.95
    n_resamples: int = DEFAULT_RESAMPLES

    def checked(self, metric: Metric) -> AlignOptions:
        """These options, checked for ``metric`` (:class:`CannotImprove` or ValueError)."""
        level = check_level(self.level)
        check_resamples(self.n_resamples)
        if self.improve:
            if not isinstance(metric, SupportsExamples):
                raise CannotImprove(cannot_improve(metric))
            if not 0 < self.test_share < 1:
                raise ValueError(f"test_share must be between 0 and 1, got {self.test_share!r}")
            shots = self.shots
            if isinstance(shots, bool) or not isinstance(shots, int) or shots < 1:
                raise ValueError(f"shots must be a positive integer, got {shots!r}")
        if self.label_field in SAMPLE_FIELDS:
            raise ValueError(
                f"label_field {self.label_field!r} is a sample field; give the human label its "
                "own column, e.g. label"
            )
        return dataclasses.replace(self, level=level)


def _resolve_kind(metric: Metric, kind: str | None, labels: Sequence[Any]) -> tuple[str, str]:
    if kind is not None:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        return kind, "given"
    declared = getattr(metric, "kind", None)
    if declared in KINDS:
        return str(declared), "metric"
    return infer_kind(labels), "labels"


@dataclass(frozen=True)
class _Measure:
    """Measures a metric's agreement on some items with one set of figures."""

    kind: str
    numeric_labels: bool
    level: float
    n_resamples: int
    seed: int
    #: Every human label is 1 or 0 (pass / fail): a 0-1 score without a label is a verdict.
    binary_labels: bool = False

    def __call__(
        self, name: str, items: Sequence[_Item], results: Mapping[str, MetricResult | str]
    ) -> tuple[Measurement, dict[str, _Prediction]]:
        kind = self.kind
        predictions: dict[str, _Prediction] = {}
        unscored: list[Unscored] = []
        for item in items:
            found = _prediction(
                kind, results[item.sample_id], self.numeric_labels, self.binary_labels
            )
            if isinstance(found, Unscored):
                unscored.append(Unscored(item.sample_id, found.status, found.message))
            else:
                predictions[item.sample_id] = found
        compared = [item for item in items if item.sample_id in predictions]
        human, metric = _arrays(
            kind, [i.value for i in compared], [predictions[i.sample_id].value for i in compared]
        )
        agreement = {
            statistic: self.agreement(statistic, human, metric) for statistic in STATISTICS[kind]
        }
        measurement = Measurement(
            name,
            tuple(item.sample_id for item in items),
            len(compared),
            agreement,
            unscored,
            _disagreements(kind, compared, predictions),
            _confusion(kind, compared, predictions),
        )
        return measurement, predictions

    def agreement(self, statistic: str, human: np.ndarray, metric: np.ndarray) -> Agreement:
        """``statistic`` of the two sides with its bootstrap CI, at these options."""
        return measure(
            statistic, human, metric, level=self.level, n_resamples=self.n_resamples, seed=self.seed
        )

    def change(
        self,
        items: Sequence[_Item],
        before: Mapping[str, _Prediction],
        after: Mapping[str, _Prediction],
    ) -> dict[str, Agreement]:
        """Each statistic's change from ``before`` to ``after`` on the items both scored."""
        both = [item for item in items if item.sample_id in before and item.sample_id in after]
        human, first, second = _arrays(
            self.kind,
            [i.value for i in both],
            [before[i.sample_id].value for i in both],
            [after[i.sample_id].value for i in both],
        )
        return {
            statistic: measure_change(
                statistic,
                human,
                first,
                second,
                level=self.level,
                n_resamples=self.n_resamples,
                seed=self.seed,
            )
            for statistic in STATISTICS[self.kind]
        }


def _items(
    dataset: Dataset, metric: Metric, options: AlignOptions
) -> tuple[list[_Item], list[str], str, str]:
    """The labelled items with their values, the unlabelled ids, the kind and its source."""
    items, unlabelled = _labelled_items(dataset, options.label_field, options.reason_field)
    if not items:
        raise ValueError(
            f"no row of {dataset.source or 'the labelled data'} has a {options.label_field!r} "
            "field with the human label (choose the column with --label-field / label_field=)"
        )
    kind, kind_source = _resolve_kind(metric, options.kind, [item.label for item in items])
    items = _with_values(items, kind)
    if options.improve and len(items) < 2:
        raise ValueError("improving needs at least 2 labelled items: one to learn, one to test")
    return items, unlabelled, kind, kind_source


def _improve(
    report: AlignmentReport,
    metric: Metric,
    items: list[_Item],
    results: Mapping[str, MetricResult | str],
    predictions: Mapping[str, _Prediction],
    options: AlignOptions,
    measure_on: _Measure,
    score: Callable[[Metric, Sequence[_Item]], dict[str, MetricResult | str]],
) -> None:
    """Give the metric examples from a train split; measure both metrics on the test split."""
    kind = report.kind
    stratified = kind in ("discrete", "rubric")
    train, test = _split(
        items, stratify=stratified, test_share=options.test_share, seed=options.seed
    )
    compared = [item for item in items if item.sample_id in predictions]
    sizes = _sizes(kind, compared, predictions)
    chosen = _choose_examples(kind, train, sizes, shots=options.shots, seed=options.seed)
    examples = [_example(kind, item) for item in chosen]
    test_ids = {item.sample_id for item in test}
    if test_ids & {item.sample_id for item in train}:  # a guard: _split never does this
        raise RuntimeError("the train and test splits share items")
    improved_metric = cast(SupportsExamples, metric).with_examples(examples)
    if not isinstance(improved_metric, Metric):
        raise TypeError(
            f"{type(metric).__name__}.with_examples returned {type(improved_metric).__name__}, "
            "not a Metric"
        )
    original, before = measure_on(metric.name, test, {i: results[i] for i in test_ids})
    improved, after = measure_on(improved_metric.name, test, score(improved_metric, test))
    report.change = measure_on.change(test, before, after)
    report.measured_on = "test split"
    report.original = original
    report.improved = improved
    report.split = Split(
        train_ids=tuple(item.sample_id for item in train),
        test_ids=tuple(item.sample_id for item in test),
        example_ids=tuple(item.sample_id for item in chosen),
        examples=examples,
        test_share=options.test_share,
        seed=options.seed,
        stratified=stratified,
    )


def align(
    metric: Metric,
    labelled: str | Path | Dataset | Sequence[Mapping[str, Any]],
    *,
    kind: str | None = None,
    judge: Judge | None = None,
    embeddings: Embeddings | None = None,
    improve: bool = False,
    test_share: float = 0.5,
    shots: int = 4,
    seed: int = 0,
    label_field: str = "label",
    reason_field: str = "reason",
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    progress: bool = False,
) -> AlignmentReport:
    """Measure how far ``metric`` agrees with the human labels of ``labelled``.

    ``labelled`` is a dataset file (JSONL, JSON, CSV, Parquet), a :class:`Dataset` or a list
    of records: ordinary samples with one more field, ``label_field``, holding the human
    label, and optionally ``reason_field``, the human's reason. Both are taken out of the
    samples before scoring. Rows without a label are left out and listed.

    The ``kind`` of agreement ("discrete", "numeric", "rubric" or "ranking") is ``kind``,
    else the metric's ``kind`` attribute, else inferred from the labels
    (:func:`infer_kind`). Discrete: accuracy and Cohen's kappa of the metric's label
    (``MetricResult.details["label"]``, else its score when the human labels are numbers or
    booleans); rubric: quadratic-weighted kappa and exact accuracy of the level (its
    ``details["level"]`` or ``details["label"]``, else the score); numeric and ranking:
    Spearman and Pearson correlations of the score. Each figure has a percentile bootstrap
    CI at ``level`` over ``n_resamples`` resamples of the items, seeded by ``seed``.

    With ``improve`` the metric must have ``with_examples`` (:class:`SupportsExamples`). The
    items are split at random with ``seed`` into train and test (``test_share`` of them in
    test; stratified by label for discrete and rubric kinds); ``shots`` examples are chosen
    from train, those the metric gets wrong first, balanced across labels; the original and
    the improved metric are then both measured on the test split only, so no figure counts an
    item used as an example.
    """
    options = AlignOptions(
        kind, improve, test_share, shots, seed, label_field, reason_field, level, n_resamples
    ).checked(metric)
    dataset = load_dataset(labelled)
    items, unlabelled, kind, kind_source = _items(dataset, metric, options)
    measure_on = _Measure(
        kind,
        all(isinstance(item.value, float) for item in items),
        options.level,
        options.n_resamples,
        options.seed,
        binary_labels=kind == "discrete" and all(item.value in (0.0, 1.0) for item in items),
    )

    def score(scored: Metric, some: Sequence[_Item]) -> dict[str, MetricResult | str]:
        return _score(scored, some, judge=judge, embeddings=embeddings, progress=progress)

    results = score(metric, items)
    everything, predictions = measure_on(metric.name, items, results)
    if not everything.n_compared:
        first = everything.unscored[0]
        raise ValueError(
            f"metric {metric.name!r} gave nothing to compare on any of the {len(items)} "
            f"labelled items ({first.sample_id}: {first.status}, {first.message})"
        )
    report = AlignmentReport(
        metric=metric.name,
        kind=kind,
        kind_source=kind_source,
        source=dataset.source,
        label_field=options.label_field,
        n_labelled=len(items),
        unlabelled=unlabelled,
        measured_on="all labelled items",
        original=everything,
        level=options.level,
        n_resamples=options.n_resamples,
        seed=options.seed,
    )
    if options.improve:
        _improve(report, metric, items, results, predictions, options, measure_on, score)
    return report
