"""What a diagnosis says: a finding, with the figures and samples behind it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Finding:
    """One rule that fired on a run.

    ``figures`` holds, per metric the rule reads, its mean over the matching samples
    (``"<metric> (matching)"``) and over the run (``"<metric> (run)"``); ``sample_ids`` are
    the samples that show it, worst first.
    """

    rule_id: str
    area: str  # "retrieval", "generation" or "answer"
    severity: str  # "high", "medium" or "low"
    title: str
    explanation: str
    advice: list[str]
    n_matching: int
    n_evaluated: int
    figures: dict[str, float] = field(default_factory=dict)
    sample_ids: list[str] = field(default_factory=list)

    @property
    def share(self) -> float:
        """Share of the evaluated samples that match the rule."""
        return self.n_matching / self.n_evaluated if self.n_evaluated else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "share": self.share}
