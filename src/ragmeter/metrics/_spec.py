"""Building a metric from its name (``name`` or ``name@K``) out of a table of specs."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

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


class UnknownMetricError(ValueError):
    """A metric name that names no metric (or a cutoff it cannot take); the message says
    which known names are closest. ``short`` is the message without the list of every
    known name, for an error that reports several names at once."""

    def __init__(self, message: str, *, short: str | None = None) -> None:
        super().__init__(message)
        self.short = short or message


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
    keys = {key.lower(): (key, spec) for spec in specs for key in (spec.name, *spec.aliases)}
    found = process.extract(
        base.lower(),
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


def with_k(factory: Callable[[int], Metric]) -> Callable[[int | None], Metric]:
    """A builder of a metric whose cutoff is required."""
    return lambda k: factory(k)  # type: ignore[arg-type]  # the parser guarantees k


_NAME = re.compile(r"^(?P<base>[A-Za-z0-9_+\-]+?)(?:@(?P<k>[^@]*))?$")


def build_metric(name: str, specs: Sequence[MetricSpec], *, kind: str = "metric") -> Metric:
    """The metric ``name`` (``@K`` for a cutoff) stands for among ``specs``; ``kind`` names
    what ``specs`` hold in the error for an unknown name."""
    match = _NAME.match(name.strip())
    base = match.group("base").lower() if match else ""
    spec = next((s for s in specs if base in (key.lower() for key in (s.name, *s.aliases))), None)
    if match is None or spec is None:
        raise unknown_name_error(name, specs, kind=kind)
    raw_k = match.group("k")
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
