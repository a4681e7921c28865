"""Building a metric from its name (``name`` or ``name@K``) out of a table of specs, and
how a built-in metric declares its name where it is defined (:func:`builtin_metric`).

The declarations are collected into a generated index, ``ragmeter/metrics/_index.py``
(``python -m ragmeter.metrics._indexer --write``), which the name lookup reads without
importing any metric module: a metric's module is imported when the metric is built.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from ragmeter.metrics._base import Metric

#: Whether a metric's name takes ``@K``: it must, it may, or it takes none.
Cutoff = Literal["required", "optional", "none"]


@dataclass(frozen=True)
class MetricSpec:
    """How to build a metric from its name: ``name`` or ``name@K``."""

    name: str
    build: Callable[[int | None], Metric]
    cutoff: Cutoff
    family: str
    summary: str
    aliases: tuple[str, ...] = ()

    def example(self) -> Metric:
        return self.build(5 if self.cutoff == "required" else None)


@dataclass(frozen=True)
class Declared:
    """A built-in or shipped metric as its module declares it (:func:`builtin_metric`) and
    the generated index lists it: what ``ragmeter metrics`` says of it, and what builds it,
    ``target`` (``module:attribute``, a metric class or factory) called with ``params``,
    after the cutoff ``k`` for a metric that takes one.

    >>> rouge_1 = Declared("rouge_1", "ragmeter.metrics.text.rouge:Rouge", "answer", "ROUGE-1",
    ...                    params={"variant": "rouge_1"})
    >>> metric = rouge_1.spec().build(None)
    >>> metric.name, metric
    ('rouge_1', Rouge(mode='fmeasure', tokenizer='auto'))
    """

    name: str
    target: str
    family: str
    summary: str
    cutoff: Cutoff = "none"
    aliases: tuple[str, ...] = ()
    params: Mapping[str, str | int] = field(default_factory=dict, hash=False)

    def spec(self) -> MetricSpec:
        """The spec that builds this metric, importing its module only then."""
        return MetricSpec(
            self.name, self._build, self.cutoff, self.family, self.summary, self.aliases
        )

    def _build(self, k: int | None) -> Metric:
        module, _, attribute = self.target.partition(":")
        factory = getattr(importlib.import_module(module), attribute)
        made = factory(**self.params) if self.cutoff == "none" else factory(k, **self.params)
        assert isinstance(made, Metric), self.target
        return made


_Target = TypeVar("_Target", bound=Callable[..., Metric])

#: The declarations of the modules imported so far, each with its rank (see
#: :func:`builtin_metric`); read by ``python -m ragmeter.metrics._indexer``.
DECLARED: list[tuple[int, Declared]] = []


def builtin_metric(
    name: str,
    *,
    family: str,
    rank: int,
    summary: str,
    cutoff: Cutoff = "none",
    aliases: Sequence[str] = (),
    params: Mapping[str, str | int] | None = None,
) -> Callable[[_Target], _Target]:
    """Declare the metric class or factory it decorates as the built-in metric ``name``:
    selected by ``name`` or an alias (in any case, or as a CamelCase class name), built as
    ``target(**params)``, or ``target(k, **params)`` where ``cutoff`` is ``"required"``
    (``name@K``) or ``"optional"``. ``ragmeter metrics`` lists the metrics by ``rank``
    with their ``family`` and ``summary``. Stacked, it declares several metrics made by one
    class with different ``params`` (``rouge_1`` is ``Rouge(variant="rouge_1")``).

    Returns what it decorates, unchanged; run ``python -m ragmeter.metrics._indexer
    --write`` to add the declaration to the index that name lookups read.
    """
    declared_params = dict(params or {})

    def declare(target: _Target) -> _Target:
        where = f"{target.__module__}:{target.__qualname__}"
        DECLARED.append(
            (rank, Declared(name, where, family, summary, cutoff, tuple(aliases), declared_params))
        )
        return target

    return declare


class UnknownMetricError(ValueError):
    """A metric name that names no metric (or a cutoff it cannot take); the message says
    which known names are closest. ``short`` is the message without the list of every
    known name, for an error that reports several names at once."""

    def __init__(self, message: str, *, short: str | None = None) -> None:
        super().__init__(message)
        self.short = short or message


class MetricLoadError(UnknownMetricError):
    """A metric name that points at code which could not be loaded or is no metric: an
    entry point of group ``ragmeter.metrics``, or ``module:attribute``. An
    :class:`UnknownMetricError`, so that it is reported with the other names of a list."""


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def normalize_name(name: str) -> str:
    """A metric name as compared: CamelCase split into snake_case, lowercase, ``-`` as
    ``_``, so that a class name matches the metric's name.

    >>> [normalize_name(n) for n in ("NoiseSensitivity", "LLMContextRecall", "rougeL", "em")]
    ['noise_sensitivity', 'llm_context_recall', 'rouge_l', 'em']
    >>> normalize_name("IDBasedContextPrecision"), normalize_name("context-recall")
    ('id_based_context_precision', 'context_recall')
    """
    return _CAMEL_BOUNDARY.sub("_", name.strip()).lower().replace("-", "_")


def name_keys(name: str) -> frozenset[str]:
    """The forms under which ``name`` matches: lowercased as is, and normalized (``mAP``
    is ``map``; ``ContextRecall`` is ``context_recall``)."""
    return frozenset({name.strip().lower(), normalize_name(name)})


def spec_keys(spec: MetricSpec) -> frozenset[str]:
    """Every form of a spec's name and aliases that selects it."""
    return frozenset().union(*(name_keys(key) for key in (spec.name, *spec.aliases)))


def find_spec(base: str, specs: Sequence[MetricSpec]) -> MetricSpec | None:
    """The first spec whose name or alias is ``base`` (without ``@K``), in any case or as a
    CamelCase class name; ``None`` when none is."""
    wanted = name_keys(base)
    return next((s for s in specs if wanted & spec_keys(s)), None)


#: The command that lists every metric, named by errors about unknown names.
LIST_HINT = "`ragmeter metrics` lists every metric"

#: How similar (0-100, ``fuzz.ratio`` of the lowercased names) a known name must be to an
#: unknown one to be suggested, how far behind the closest one it may be, and how many are
#: suggested at most.
SUGGEST_CUTOFF = 75.0
SUGGEST_MARGIN = 8.0
SUGGEST_LIMIT = 3


def suggest_names(name: str, specs: Sequence[MetricSpec]) -> list[str]:
    """The known names closest to ``name`` (names or aliases, as spelled), best first; a
    cutoff ``@K`` in ``name`` is kept where the suggested metric takes one.

    >>> from ragmeter.metrics import SPECS
    >>> suggest_names("precsion@5", SPECS), suggest_names("Faithfulnes", SPECS)
    (['precision@5'], ['faithfulness'])
    """
    from rapidfuzz import fuzz, process  # only for an unknown name (40 ms to import)

    base, _, raw_k = name.strip().partition("@")
    keys: dict[str, tuple[str, MetricSpec]] = {}
    for spec in specs:
        for key in (spec.name, *spec.aliases):
            keys.setdefault(normalize_name(key), (key, spec))
    found = process.extract(
        normalize_name(base),
        list(keys),
        scorer=fuzz.ratio,
        score_cutoff=SUGGEST_CUTOFF,
        limit=SUGGEST_LIMIT * 2,
    )
    suggestions: list[str] = []
    seen: set[str] = set()
    for lowered, score, _index in found:
        key, spec = keys[lowered]
        if spec.name in seen or score < found[0][1] - SUGGEST_MARGIN:
            continue  # one name per metric: the closest of its name and aliases
        seen.add(spec.name)
        if spec.cutoff != "none" and "@" in name:
            key = f"{key}@{raw_k}"
        elif spec.cutoff == "required":
            key = f"{key}@K"
        suggestions.append(key)
    return suggestions[:SUGGEST_LIMIT]


def unknown_name_error(
    name: str, specs: Sequence[MetricSpec], *, kind: str = "metric"
) -> UnknownMetricError:
    """``unknown metric 'x'`` with the closest known names, or with every known name when
    none is close (not in ``short``)."""
    suggestions = suggest_names(name, specs)
    if suggestions:
        message = f"unknown {kind} {name!r}: did you mean {' or '.join(map(repr, suggestions))}?"
        return UnknownMetricError(message)
    known = ", ".join(s.name + ("@K" if s.cutoff == "required" else "") for s in specs)
    short = f"unknown {kind} {name!r}: no known {kind} is close"
    return UnknownMetricError(f"{short}; known {kind}s: {known}", short=short)


def no_k(factory: Callable[[], Metric]) -> Callable[[int | None], Metric]:
    """A builder of a metric without a cutoff."""
    return lambda k: factory()


_NAME = re.compile(r"^(?P<base>[A-Za-z0-9_+\-]+?)(?:@(?P<k>[^@]*))?$")


def split_name(name: str) -> tuple[str, str | None] | None:
    """``name`` as its base and the text after ``@`` (``None`` without one); ``None`` when
    it is not a metric name at all (empty, or characters no name has)."""
    match = _NAME.match(name.strip())
    return (match.group("base"), match.group("k")) if match else None


def build_metric(name: str, specs: Sequence[MetricSpec], *, kind: str = "metric") -> Metric:
    """The metric ``name`` (``@K`` for a cutoff) stands for among ``specs``; ``kind`` names
    what ``specs`` hold in the error for an unknown name."""
    parts = split_name(name)
    spec = find_spec(parts[0], specs) if parts else None
    if parts is None or spec is None:
        raise unknown_name_error(name, specs, kind=kind)
    return build_spec(spec, name, parts[1])


def build_spec(spec: MetricSpec, name: str, raw_k: str | None) -> Metric:
    """Build ``spec``'s metric with the cutoff ``raw_k`` (the text after ``@`` in ``name``,
    ``None`` without one), checked against what the spec takes."""
    k: int | None = None
    if raw_k is not None:
        if spec.cutoff == "none":
            raise UnknownMetricError(f"metric {spec.name!r} takes no @K cutoff (got {name!r})")
        if not raw_k.isdigit() or int(raw_k) < 1:
            raise UnknownMetricError(
                f"the cutoff in {name!r} must be a positive integer, e.g. {spec.name}@5"
            )
        k = int(raw_k)
    elif spec.cutoff == "required":
        raise UnknownMetricError(f"metric {spec.name!r} needs a cutoff, e.g. {spec.name}@5")
    return spec.build(k)
