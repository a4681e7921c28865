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
    pass


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
        known = ", ".join(s.name + ("@K" if s.cutoff == "required" else "") for s in specs)
        raise UnknownMetricError(f"unknown {kind} {name!r}; known {kind}s: {known}")
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
