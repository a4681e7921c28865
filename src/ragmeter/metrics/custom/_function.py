"""Metrics from a plain Python function: ``@metric`` turns ``fn(sample) -> score`` into a
:class:`~ragmeter.metrics.Metric` that ``evaluate``, the report, ``ragmeter.stats`` and the
gate treat like any built-in metric.

What the function may return, and what it becomes:

=====================================  ===========================================
return value                           result
=====================================  ===========================================
a finite number                        ok, that score
``True`` / ``False``                   ok, 1.0 / 0.0
``(score, reason)``                    ok with the reason (``score`` as above; a
                                       ``None`` score is not applicable)
a :class:`MetricResult`                itself
``None``                               not applicable
NaN or infinity                        failed: no NaN passed off as a score
anything else, or an exception         failed for that sample (the run goes on)
=====================================  ===========================================

A sync function is scored with the retrieval and text metrics, a whole batch at a time. An
``async def`` function is awaited on the runner's event loop with the judged metrics, up to
``evaluate(concurrency=...)`` samples at once: use it for metrics that wait on I/O.
"""

from __future__ import annotations

import decimal
import inspect
import math
import numbers
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar, overload

from ragmeter.dataset import SAMPLE_FIELDS, Sample
from ragmeter.embed import Embeddings
from ragmeter.metrics._base import (
    BatchMetric,
    Direction,
    Metric,
    MetricResult,
    Requirements,
    parse_direction,
)
from ragmeter.metrics._sample import SampleMetric
from ragmeter.metrics._sync import is_async
from ragmeter.steps import Facts

#: What a metric function returns (see the module's table).
FunctionOutput = Any
SyncMetricFunction = Callable[[Sample], FunctionOutput]
AsyncMetricFunction = Callable[[Sample], Awaitable[FunctionOutput]]
MetricFunction = SyncMetricFunction | AsyncMetricFunction


def _as_bool(value: Any) -> bool | None:
    """``value`` as a bool when it is one (Python's or a NumPy scalar's), else ``None``."""
    if isinstance(value, bool):
        return value
    dtype = getattr(value, "dtype", None)
    if getattr(dtype, "kind", None) == "b" and getattr(value, "ndim", None) == 0:
        return bool(value)
    return None


def _as_score(value: Any) -> float | str:
    """A finite float from a bool or a number, else the reason it is not a score."""
    flag = _as_bool(value)
    if flag is not None:
        return 1.0 if flag else 0.0
    if isinstance(value, numbers.Real | decimal.Decimal):
        score = float(value)
        if not math.isfinite(score):
            return (
                f"returned {score!r}, which is not a score (return None when the metric "
                "does not apply to the sample)"
            )
        return score
    return (
        f"returned {type(value).__name__} {value!r:.80}; expected a number, a bool, None, "
        "a MetricResult or (score, reason)"
    )


def to_result(value: Any) -> MetricResult:
    """The :class:`MetricResult` a metric function's return value stands for.

    >>> to_result(True).score, to_result(0.25).score, to_result(None).status.value
    (1.0, 0.25, 'not_applicable')
    >>> to_result((0, "no price mentioned")).reason
    'no price mentioned'
    >>> print(to_result(float("nan")).error)
    returned nan, which is not a score (return None when the metric does not apply to the sample)
    """
    if isinstance(value, MetricResult):
        return value
    if value is None:
        return MetricResult.not_applicable("the metric function returned None")
    if inspect.isawaitable(value):
        if inspect.iscoroutine(value):
            value.close()  # never awaited: close it, so Python does not warn later
        return MetricResult.failed(
            "returned an awaitable from a function not declared `async def`: declare it "
            "`async def` so the runner awaits it"
        )
    reason: str | None = None
    if isinstance(value, tuple):
        if len(value) != 2 or not (value[1] is None or isinstance(value[1], str)):
            return MetricResult.failed(
                f"returned a tuple of {len(value)}; expected (score, reason) with a str reason"
            )
        value, reason = value
        if value is None:
            return MetricResult.not_applicable(reason or "the metric function returned None")
    score = _as_score(value)
    if isinstance(score, str):
        return MetricResult.failed(score)
    return MetricResult.ok(score, reason)


def _requirements(requires: Sequence[Sequence[str] | str]) -> Requirements:
    """Normalised requirements: each entry lists alternative fields; a plain string is one
    field of its own (``("response", "reference")`` needs both)."""
    out: list[tuple[str, ...]] = []
    for entry in requires:
        options = (entry,) if isinstance(entry, str) else tuple(entry)
        unknown = [f for f in options if f not in SAMPLE_FIELDS]
        if not options or unknown:
            raise ValueError(
                f"unknown sample field(s) {unknown or [entry]!r} in requires; "
                f"fields: {', '.join(SAMPLE_FIELDS)}"
            )
        out.append(options)
    return tuple(out)


class FunctionMetric(BatchMetric):
    """A metric computed by a plain function of the sample; made by :func:`metric`.

    The function itself stays available as ``.fn``. Its ``version`` is part of
    :meth:`params`, so it is recorded with every run (and a resumed run refuses a changed
    version): raise it whenever you change what the function computes.
    """

    def __init__(
        self,
        fn: SyncMetricFunction,
        *,
        name: str | None = None,
        requires: Sequence[Sequence[str] | str] = (("response",),),
        direction: Direction | str = Direction.HIGHER_IS_BETTER,
        version: str = "1",
        description: str | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"a metric function must be callable, got {fn!r}")
        name = name if name is not None else getattr(fn, "__name__", "")
        if not isinstance(name, str) or not name.strip() or name.startswith("<"):
            raise ValueError(f"give the metric a name: metric(name=...) (got {name!r})")
        self.fn = fn
        self.name = name.strip()
        self.requires = _requirements(requires)
        self.direction = parse_direction(direction)
        self.version = str(version)
        doc = (fn.__doc__ or "").strip()
        self._description = description if description is not None else doc.split("\n")[0]

    @property
    def description(self) -> str:
        return self._description

    @property
    def function(self) -> str:
        """Where the function is defined: ``module.qualified_name``."""
        module = getattr(self.fn, "__module__", None) or "?"
        qualname = getattr(self.fn, "__qualname__", None) or type(self.fn).__qualname__
        return f"{module}.{qualname}"

    def params(self) -> dict[str, Any]:
        return {"version": self.version, "function": self.function}

    def score(self, sample: Sample) -> MetricResult:
        return to_result(self.fn(sample))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, version={self.version!r})"


class AsyncFunctionMetric(SampleMetric, FunctionMetric):
    """A :class:`FunctionMetric` of an ``async def`` function.

    It is a :class:`~ragmeter.metrics.SampleMetric` that needs no facts and no judge (like
    ``semantic_similarity``), so the runner awaits it on its own event loop alongside the
    judged metrics, ``concurrency`` samples at a time. Missing fields fail; blank ones are
    the function's business (as for sync ones).
    """

    scores_blank_fields: ClassVar[bool] = True
    _uses_judge = False

    def __init__(self, fn: AsyncMetricFunction, **options: Any) -> None:
        """``options``: the keyword arguments of :class:`FunctionMetric`."""
        FunctionMetric.__init__(self, fn, **options)
        SampleMetric.__init__(self)

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        try:
            return to_result(await self.fn(sample))
        except Exception as error:  # noqa: BLE001 - one sample's failure must not fail the run
            return MetricResult.failed(f"{type(error).__name__}: {error}")

    def params(self) -> dict[str, Any]:
        return FunctionMetric.params(self)


@overload
def metric(name: MetricFunction, /) -> FunctionMetric: ...


@overload
def metric(
    name: str | None = None,
    *,
    requires: Sequence[Sequence[str] | str] = (("response",),),
    direction: Direction | str = Direction.HIGHER_IS_BETTER,
    version: str = "1",
    description: str | None = None,
) -> Callable[[MetricFunction], FunctionMetric]: ...


def metric(
    name: str | MetricFunction | None = None,
    *,
    requires: Sequence[Sequence[str] | str] = (("response",),),
    direction: Direction | str = Direction.HIGHER_IS_BETTER,
    version: str = "1",
    description: str | None = None,
) -> FunctionMetric | Callable[[MetricFunction], FunctionMetric]:
    """Make a metric of a function of the sample (sync or ``async def``).

    ``name`` defaults to the function's name; ``requires`` lists the sample fields it needs
    (each entry a field, or a tuple of alternatives: ``[("reference", "reference_contexts")]``
    needs either); ``direction`` is ``"higher"`` or ``"lower"`` is better; ``version`` is
    recorded with every run; ``description`` defaults to the docstring's first line. Works
    bare (``@metric``) or called (``@metric("name", ...)``).

    >>> from ragmeter import evaluate
    >>> @metric(requires=["response"], version="2")
    ... def mentions_price(sample):
    ...     "The answer states a price."
    ...     return "$" in sample.response
    >>> mentions_price.name, mentions_price.params()["version"], mentions_price.description
    ('mentions_price', '2', 'The answer states a price.')
    >>> result = evaluate(
    ...     [{"response": "It costs $20."}, {"response": "It is cheap."}], [mentions_price]
    ... )
    >>> result.aggregates["mentions_price"].mean
    0.5
    """
    options: dict[str, Any] = {
        "requires": requires,
        "direction": direction,
        "version": version,
        "description": description,
    }
    if isinstance(name, Metric):
        raise TypeError(f"{name!r} is a metric already")
    if callable(name):
        return _make(name, None, options)
    if name is not None and not isinstance(name, str):
        raise TypeError(f"metric(name) takes a str, got {name!r}")

    def decorate(fn: MetricFunction) -> FunctionMetric:
        return _make(fn, name, options)

    return decorate


def _make(fn: MetricFunction, name: str | None, options: dict[str, Any]) -> FunctionMetric:
    if isinstance(fn, Metric):
        raise TypeError(f"{fn!r} is a metric already")
    kind = AsyncFunctionMetric if is_async(fn) else FunctionMetric
    return kind(fn, name=name, **options)
