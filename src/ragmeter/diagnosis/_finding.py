"""What a diagnosis says: a finding, with the figures and samples behind it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Figure:
    """A mean a finding rests on, with the samples each covers: ``flagged`` over the
    ``n_flagged`` samples the rule flagged, ``run`` over the ``n_run`` samples of the whole
    run that have a value (for a score, every ok one: the metric's mean in the run's
    summary; for ``metric:PATH``, those whose details hold it).

    >>> Figure("faithfulness", 0.5, 4, 0.41667, 12).text()
    'faithfulness 0.50 over the 4 samples flagged (run mean 0.42 over 12)'
    """

    name: str
    flagged: float
    n_flagged: int
    run: float
    n_run: int

    def text(self, digits: int = 2) -> str:
        """The figure in words, each mean with the samples it covers."""
        samples = "sample" if self.n_flagged == 1 else "samples"
        return (
            f"{self.name} {self.flagged:.{digits}f} over the {self.n_flagged} {samples} flagged "
            f"(run mean {self.run:.{digits}f} over {self.n_run})"
        )


@dataclass(frozen=True)
class Finding:
    """One rule that fired on a run.

    ``figures`` holds a :class:`Figure` per metric the rule reads: its mean over the samples
    flagged (``n_matching`` of them) next to its mean over the run; ``sample_ids`` are the
    samples that show it, worst first.
    """

    rule_id: str
    area: str  # "retrieval", "generation" or "answer"
    severity: str  # "high", "medium" or "low"
    title: str
    explanation: str
    advice: list[str]
    n_matching: int
    n_evaluated: int
    figures: list[Figure] = field(default_factory=list)
    sample_ids: list[str] = field(default_factory=list)

    @property
    def share(self) -> float:
        """Share of the evaluated samples that match the rule."""
        return self.n_matching / self.n_evaluated if self.n_evaluated else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "share": self.share}
