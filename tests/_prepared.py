"""A metric whose scores are given per sample id: runs with known scores for the tests of
the diagnosis, the statistics and the gate."""

from ragmeter import Metric, MetricResult, Sample
from ragmeter.metrics import Direction, Requirements


class Prepared(Metric):
    """Scores ``scores[sample.id]`` (None: not applicable)."""

    requires: Requirements = ()

    def __init__(self, name: str, scores: dict[str, float | None], lower_is_better=False):
        self.name = name
        self.scores = scores
        if lower_is_better:
            self.direction = Direction.LOWER_IS_BETTER

    def score(self, sample: Sample) -> MetricResult:
        value = self.scores[str(sample.id)]
        return MetricResult.not_applicable("none") if value is None else MetricResult.ok(value)
