"""Shared shape of the answer-vs-reference text metrics."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from ragmeter._text import normalize
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


class StringMatchMetric(TextMetric):
    """1 when :meth:`matches` says the response matches the reference, else 0; with
    ``normalize`` (default) both sides are normalised first (:func:`ragmeter._text.normalize`)."""

    def __init__(self, *, normalize: bool = True) -> None:
        self.normalize = normalize

    def params(self) -> dict[str, Any]:
        return {"normalize": self.normalize}

    def compare(self, response: str, reference: str) -> MetricResult:
        if self.normalize:
            response, reference = normalize(response), normalize(reference)
        return MetricResult.ok(float(self.matches(response, reference)))

    @abstractmethod
    def matches(self, response: str, reference: str) -> bool:
        """Whether ``response`` matches ``reference`` (both normalised with ``normalize``)."""
