"""Metrics judged by an LLM: thin compositions of shared steps."""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from ragmeter._services import run_sync
from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings
from ragmeter.judge import Judge, JudgeError
from ragmeter.metrics._base import BatchContext, Metric, MetricResult
from ragmeter.prompts import Language
from ragmeter.steps import Facts, Need, StepRunner


class JudgedMetric(Metric):
    """A metric computed from facts the steps establish with a judge (and embeddings).

    Subclasses say what they need (:meth:`needs`) and how to score from the facts
    (:meth:`compute`); they never call the judge themselves, so metrics evaluated together
    share every judge call.
    """

    uses_judge: ClassVar[bool] = True
    uses_embeddings: ClassVar[bool] = False

    def __init__(
        self,
        *,
        judge: Judge | None = None,
        embeddings: Embeddings | None = None,
        language: Language | None = None,
    ) -> None:
        self.judge = judge
        self.embeddings = embeddings
        self.language = language

    @abstractmethod
    def needs(self, sample: Sample) -> list[Need]:
        """The facts this metric needs for ``sample`` (may depend on which fields are set)."""

    @abstractmethod
    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        """The score from the facts."""

    def _judge(self) -> Judge:
        if self.judge is None:
            from ragmeter.judge import default_judge

            self.judge = default_judge()
        return self.judge

    def _embeddings(self) -> Embeddings | None:
        if not self.uses_embeddings:
            return None
        if self.embeddings is None:
            from ragmeter.embed import default_embeddings

            self.embeddings = default_embeddings()
        return self.embeddings

    def blank_fields(self, sample: Sample) -> list[str]:
        """Required text fields that hold only whitespace: nothing to judge."""
        blank = []
        for options in self.requires:
            values = [getattr(sample, f) for f in options if sample.has(f)]
            if values and all(isinstance(v, str) and not v.strip() for v in values):
                blank.append(" or ".join(options))
        return blank

    def precheck(self, sample: Sample) -> MetricResult | None:
        """The result without any judge call when fields are missing (failed) or blank
        (not applicable)."""
        missing = self.missing_fields(sample)
        if missing:
            return MetricResult.failed(f"missing field(s): {', '.join(missing)}")
        blank = self.blank_fields(sample)
        if blank:
            return MetricResult.not_applicable(f"empty {', '.join(blank)}")
        return None

    async def finish(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        """The result from gathered facts, or the error of a fact it needed."""
        error = facts.error_for(self.needs(sample))
        if error is not None:
            return MetricResult.failed(error)
        try:
            return await self.compute(sample, facts, embeddings)
        except JudgeError as error:
            return MetricResult.failed(f"{type(error).__name__}: {error}")

    async def ascore(self, sample: Sample) -> MetricResult:
        early = self.precheck(sample)
        if early is not None:
            return early
        runner = StepRunner(self._judge(), language=self.language, sample_id=sample.id)
        facts = await runner.gather(sample, self.needs(sample))
        return await self.finish(sample, facts, self._embeddings())

    def score(self, sample: Sample) -> MetricResult:
        """Sync scoring; works inside Jupyter's running loop too."""
        return run_sync(self.ascore(sample))

    def score_batch(
        self, samples: Sequence[Sample], context: BatchContext | None = None
    ) -> list[MetricResult]:
        async def all_samples() -> list[MetricResult]:
            return list(await asyncio.gather(*(self.ascore(s) for s in samples)))

        return run_sync(all_samples())

    def params(self) -> dict[str, Any]:
        return {"language": self.language} if self.language else {}
