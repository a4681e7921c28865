"""Claim-level precision, recall and F-beta from support verdicts (one place for the formula)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClaimCounts:
    """TP: response claims the reference supports; FP: those it does not; FN: reference
    statements the response does not support."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    def f_beta(self, beta: float = 1.0) -> float | None:
        """(1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP); ``None`` when there is no claim at all.

        >>> ClaimCounts(tp=2, fp=1, fn=1).f_beta()
        0.6666666666666666
        """
        b2 = beta * beta
        denominator = (1 + b2) * self.tp + b2 * self.fn + self.fp
        if denominator == 0:
            return None
        return (1 + b2) * self.tp / denominator
