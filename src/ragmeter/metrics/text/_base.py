"""Shared shape of the answer-vs-reference text metrics."""

from __future__ import annotations

from abc import abstractmethod

from ragmeter.dataset import Sample
from ragmeter.metrics._base import BatchMetric, MetricResult, Requirements


class TextMetric(BatchMetric):
    """Compares ``response`` with ``reference``; subclasses implement :meth:`compare`."""

    requires: Requirements = (("response",), ("reference",))

    def score(self, sample: Sample) -> MetricResult:
        assert sample.response is not None and sample.reference is not None
        if not sample.reference.strip():
            return MetricResult.not_applicable("reference is empty")
        return self.compare(sample.response, sample.reference)

    @abstractmethod
    def compare(self, response: str, reference: str) -> MetricResult:
        """Score one response against its reference."""
