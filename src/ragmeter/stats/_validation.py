"""A metric's validation on the team's own labels, as every summary, report and gate reads it
(issue 39): "validated on 120 of your labels: kappa 0.71 [0.58, 0.83]" or "not validated on
your data". :func:`ragmeter.align.agreement_on_labels` measures it; the reports and the gate
only read this record (they do not import align)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

#: How the headline statistics are named in a one-line validation.
SHORT_NAMES = {
    "cohen_kappa": "kappa",
    "spearman": "Spearman",
    "preference_agreement": "preference agreement",
}


def statistic_name(statistic: str | None) -> str | None:
    """How a validation names an agreement statistic: ``cohen_kappa`` -> ``kappa``."""
    return None if statistic is None else SHORT_NAMES.get(statistic, statistic)


@dataclass(frozen=True)
class Validation:
    """What other code shows where a metric's scores are read: on how many of the team's
    labels it was checked and the headline agreement with its CI, e.g. ``validated on 120 of
    your labels: kappa 0.71 [0.58, 0.83]``; ``n_labels == 0``: not validated.

    >>> Validation("faithfulness", 120, "sample", "cohen_kappa", 0.71, (0.58, 0.83)).describe()
    'validated on 120 of your labels: kappa 0.71 [0.58, 0.83]'
    >>> Validation("faithfulness", 0).describe()
    'not validated on your data'

    A run whose judge applied a verdict ``calibration`` says that labels it was fitted on
    flatter it:

    >>> Validation("faithfulness", 9, "claim", "cohen_kappa", 1.0, None, "team@v2 (sha256 1a2b)"
    ...            ).describe()  # doctest: +NORMALIZE_WHITESPACE
    'validated on 9 of your labels (claim level): kappa 1.00 (judge calibrated with team@v2:
    optimistic on the labels it was fitted on; held-out: ragmeter calibrate show team)'
    """

    metric: str
    n_labels: int
    level: str | None = None
    statistic: str | None = None
    value: float | None = None
    ci: tuple[float, float] | None = None
    #: The verdict calibration the run's judge applied (its label, ``NAME@vN (sha256 ...)``).
    calibration: str | None = None

    @property
    def validated(self) -> bool:
        return self.n_labels > 0 and self.value is not None

    def describe(self) -> str:
        if self.n_labels == 0:
            return "not validated on your data"
        name = statistic_name(self.statistic)
        where = f" ({self.level} level)" if self.level != "sample" else ""
        if self.value is None:
            return f"checked on {self.n_labels} of your labels{where}: {name} undefined"
        interval = "" if self.ci is None else f" [{self.ci[0]:.2f}, {self.ci[1]:.2f}]"
        return (
            f"validated on {self.n_labels} of your labels{where}: {name} {self.value:.2f}{interval}"
            + self._calibrated()
        )

    def _calibrated(self) -> str:
        if self.calibration is None:
            return ""
        label = self.calibration.split(" (", 1)[0]
        return (
            f" (judge calibrated with {label}: optimistic on the labels it was fitted on; "
            f"held-out: ragmeter calibrate show {label.split('@', 1)[0]})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **dataclasses.asdict(self),
            "ci": None if self.ci is None else list(self.ci),
            "text": self.describe(),
        }
