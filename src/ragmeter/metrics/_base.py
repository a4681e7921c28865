"""What every metric is: a name, the sample fields it needs, a direction, and a score.

There are two kinds: a :class:`BatchMetric` is pure and scores whole batches at once
(retrieval, text overlap, function metrics); a per-sample async metric
(:class:`ragmeter.metrics.SampleMetric`) declares the facts it needs and computes from them.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from ragmeter.metrics._details import NO_DETAILS, Details

if TYPE_CHECKING:  # reading stored results needs neither the samples' model nor asyncio
    from ragmeter.dataset import Sample

T = TypeVar("T")


class Status(str, Enum):
    """Whether a metric produced a score for a sample."""

    OK = "ok"
    #: The metric does not apply to this sample (e.g. recall when nothing is relevant).
    NOT_APPLICABLE = "not_applicable"
    #: The metric should have applied but could not be computed (see ``error``).
    FAILED = "failed"
    #: The run stopped before computing it (its budget, a refused judge, a kill): not a
    #: failure, and ``resume`` computes it (see ``reason``).
    NOT_STARTED = "not_started"


class Direction(str, Enum):
    HIGHER_IS_BETTER = "higher"
    LOWER_IS_BETTER = "lower"


def parse_direction(value: Direction | str) -> Direction:
    """A direction from a :class:`Direction` or its word, in any case: ``higher`` (or
    ``higher_is_better``), ``lower`` (or ``lower_is_better``).

    >>> parse_direction("Lower"), parse_direction("HIGHER_IS_BETTER").value
    (<Direction.LOWER_IS_BETTER: 'lower'>, 'higher')
    """
    if isinstance(value, Direction):
        return value
    try:
        return Direction(str(value).strip().lower().removesuffix("_is_better"))
    except ValueError:
        raise ValueError(f"direction must be 'higher' or 'lower', got {value!r}") from None


@dataclass(frozen=True)
class MetricResult:
    """One metric's outcome on one sample. ``score`` is ``None`` unless ``status`` is ok.

    ``details`` are typed records (:class:`Details`); a plain mapping given instead is read
    as their stored form.
    """

    score: float | None
    status: Status = Status.OK
    reason: str | None = None
    error: str | None = None
    details: Details = field(default_factory=lambda: NO_DETAILS)

    def __post_init__(self) -> None:
        if not isinstance(self.details, Details):
            object.__setattr__(self, "details", Details.from_dict(self.details))
        if self.status is Status.OK:
            if self.score is None or not math.isfinite(self.score):
                raise ValueError(f"an ok result needs a finite score, got {self.score!r}")
        elif self.score is not None:
            raise ValueError(f"a {self.status.value} result carries no score")

    @classmethod
    def ok(
        cls, score: float, reason: str | None = None, details: Details | None = None, **extra: Any
    ) -> MetricResult:
        """An ok result; ``extra`` keys are read as the stored form of details (a function
        metric's own keys land in ``Details.extra``).

        >>> MetricResult.ok(1, "why", tokens=3).details.extra
        {'tokens': 3}
        """
        if details is not None and not isinstance(details, Details):
            extra = {"details": details, **extra}  # a user's own key named "details"
            details = None
        typed = (details or NO_DETAILS).merged(extra) if extra else details or NO_DETAILS
        return cls(float(score), Status.OK, reason=reason, details=typed)

    @classmethod
    def ok_finite(cls, score: float) -> MetricResult:
        """``ok(score)`` for a score its caller knows to be a finite ``float`` (a vectorised
        metric's, checked with ``math.isfinite``): made without the checks of ``__init__``,
        a fifth of the time, for runs that make millions of results.

        >>> MetricResult.ok_finite(0.5) == MetricResult.ok(0.5)
        True
        """
        result = object.__new__(cls)
        # Field by field, in order, as __init__ sets them (the instances share their keys).
        for name, value in (
            ("score", score),
            ("status", Status.OK),
            ("reason", None),
            ("error", None),
            ("details", NO_DETAILS),
        ):
            object.__setattr__(result, name, value)
        return result

    @classmethod
    def not_applicable(cls, reason: str) -> MetricResult:
        return cls(None, Status.NOT_APPLICABLE, reason=reason)

    @classmethod
    def failed(cls, error: str) -> MetricResult:
        return cls(None, Status.FAILED, error=error)

    @property
    def is_plain_ok(self) -> bool:
        """An ok score and nothing else (no reason, error or details): what a
        :class:`ScoreColumn` holds as a number."""
        return (
            self.status is Status.OK
            and self.reason is None
            and self.error is None
            and not self.details
            and type(self.score) is float
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"score": self.score, "status": self.status.value}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.error is not None:
            out["error"] = self.error
        if self.details:
            out["details"] = self.details.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MetricResult:
        return cls(
            data.get("score"),
            Status(data["status"]),
            reason=data.get("reason"),
            error=data.get("error"),
            details=Details.from_dict(data.get("details")),
        )


@dataclass(frozen=True)
class ScoreColumn:
    """A batch's results as a column: ``scores[i]`` is sample ``i``'s score where its result
    is a plain ok score (no reason, error or details), NaN where it is another result, kept
    in ``others`` (position -> result). A vectorised metric makes one without a result object
    per sample; the run's store keeps such a column as one block.

    >>> column = ScoreColumn.of([MetricResult.ok(0.5), MetricResult.failed("no ids")])
    >>> column.scores.tolist(), column.others[1].error
    ([0.5, nan], 'no ids')
    >>> column.results() == [MetricResult.ok(0.5), MetricResult.failed("no ids")]
    True
    """

    scores: NDArray[np.float64]
    others: dict[int, MetricResult]

    def __len__(self) -> int:
        return len(self.scores)

    @classmethod
    def of(cls, results: Sequence[MetricResult]) -> ScoreColumn:
        """The column of per-sample results."""
        scores = np.full(len(results), np.nan)
        others: dict[int, MetricResult] = {}
        for i, result in enumerate(results):
            if result.is_plain_ok:
                scores[i] = result.score
            else:
                others[i] = result
        return cls(scores, others)

    @classmethod
    def failed(cls, n: int, error: str) -> ScoreColumn:
        """``n`` samples failed with the same ``error``."""
        result = MetricResult.failed(error)
        return cls(np.full(n, np.nan), dict.fromkeys(range(n), result))

    def results(self) -> list[MetricResult]:
        """One result per sample."""
        others = self.others
        ok = MetricResult.ok_finite
        return [
            others[i] if score != score else ok(score)  # NaN: another result
            for i, score in enumerate(self.scores.tolist())
        ]

    @property
    def n_failed(self) -> int:
        return sum(r.status is Status.FAILED for r in self.others.values())


class BatchContext:
    """Work shared by the metrics scoring one batch of samples, computed once.

    Metrics that need the same preparation (e.g. every ranking metric needs the relevance of
    the retrieved ids) ask for it by key; the first asker computes it.
    """

    def __init__(self) -> None:
        self._memo: dict[Any, Any] = {}

    def memo(self, key: Any, compute: Callable[[], T]) -> T:
        if key not in self._memo:
            self._memo[key] = compute()
        value: T = self._memo[key]
        return value


#: A metric's needs: each entry lists alternative fields, at least one of which must be set.
Requirements = tuple[tuple[str, ...], ...]


def missing_fields_result(missing: Sequence[str]) -> MetricResult:
    """The failed result of a sample that lacks fields a metric needs.

    >>> missing_fields_result(["reference", "response or reference"]).error
    'missing field(s): reference, response or reference'
    """
    return MetricResult.failed(f"missing field(s): {', '.join(missing)}")


class Metric(ABC):
    """Base class of every metric: its name, the fields it needs, its direction.

    A metric is either a :class:`BatchMetric` (pure, scored a batch at a time) or a
    :class:`~ragmeter.metrics.SampleMetric` (async, per sample, from facts). A direct
    subclass of ``Metric`` that is not a ``SampleMetric`` is scored as a batch metric.
    """

    name: str
    requires: Requirements = ()
    direction: Direction = Direction.HIGHER_IS_BETTER

    @property
    def description(self) -> str:
        doc = (type(self).__doc__ or "").strip()
        return doc.splitlines()[0] if doc else ""

    def params(self) -> dict[str, Any]:
        """The settings that change this metric's scores, recorded with every run."""
        return {}

    def missing_fields(self, sample: Sample) -> list[str]:
        return [
            " or ".join(options)
            for options in self.requires
            if not any(sample.has(f) for f in options)
        ]

    def missing_result(self, sample: Sample) -> MetricResult | None:
        """The failed result of a sample lacking a required field, else ``None``."""
        missing = self.missing_fields(sample)
        return missing_fields_result(missing) if missing else None

    @abstractmethod
    def score(self, sample: Sample) -> MetricResult:
        """Score one sample."""

    def score_batch(
        self, samples: Sequence[Sample], context: BatchContext | None = None
    ) -> list[MetricResult]:
        """Score many samples; a sample that raises is recorded as failed, not lost."""
        return [self._guarded(sample) for sample in samples]

    def score_column(
        self, samples: Sequence[Sample], context: BatchContext | None = None
    ) -> ScoreColumn:
        """:meth:`score_batch` as a :class:`ScoreColumn`, which is what the runner asks for.
        A vectorised metric overrides it to make its scores without a result object each
        (and derives :meth:`score_batch` from it)."""
        return ScoreColumn.of(self.score_batch(samples, context))

    async def ascore(self, sample: Sample) -> MetricResult:
        import asyncio

        return await asyncio.to_thread(self.score, sample)

    def _guarded(self, sample: Sample) -> MetricResult:
        missing = self.missing_result(sample)
        if missing is not None:
            return missing
        try:
            return self.score(sample)
        except Exception as error:  # noqa: BLE001 - one sample's failure must not fail the batch
            return MetricResult.failed(f"{type(error).__name__}: {error}")

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({params})"


class BatchMetric(Metric):
    """A pure metric scored a batch at a time (retrieval, text overlap, function metrics).

    Implement :meth:`score`, and :meth:`score_batch` too when scoring many samples at once
    is faster (vectorised); work shared by several metrics of a batch goes through the
    :class:`BatchContext`. The runner calls :meth:`score_column`, which is
    :meth:`score_batch` as a column unless a metric makes the column itself.
    """
