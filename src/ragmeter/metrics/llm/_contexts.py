"""The judged metrics of the retrieved contexts: not applicable when none was retrieved."""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings
from ragmeter.metrics._base import MetricResult
from ragmeter.metrics._sample import SampleMetric
from ragmeter.steps import Facts, Need


class RetrievedContextsMetric(SampleMetric):
    """A metric judged from the facts ``context_needs`` about the retrieved contexts
    (:meth:`judged`); with no context retrieved nothing is asked and it is not applicable."""

    context_needs: ClassVar[tuple[Need, ...]]

    def needs(self, sample: Sample) -> list[Need]:
        return list(self.context_needs) if sample.retrieved_contexts else []

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        if not sample.retrieved_contexts:
            return MetricResult.not_applicable("no context was retrieved")
        return self.judged(facts)

    @abstractmethod
    def judged(self, facts: Facts) -> MetricResult:
        """The score from the facts, some context having been retrieved."""
