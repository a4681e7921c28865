"""Per-sample async metrics: they declare the facts they need and compute from them.

A :class:`SampleMetric` never calls a judge itself: :func:`score_sample`, the one orchestrator
(used by the runner and by a metric's own ``score`` / ``ascore`` / ``score_batch``), gathers
the union of the needs of every metric of a sample with one :class:`~ragmeter.steps.StepRunner`
per judge and language, so metrics evaluated together share every judge call.
:class:`Fallback` composes two metrics: the second scores where the first cannot.
"""

from __future__ import annotations

import asyncio
import dataclasses
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, cast

from ragmeter._services import run_sync
from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings
from ragmeter.judge import Judge, JudgeError, Usage
from ragmeter.metrics._base import BatchContext, Metric, MetricResult, Status
from ragmeter.prompts import Language

if TYPE_CHECKING:  # the steps load when a sample is judged: not for retrieval metrics
    from ragmeter.steps import Facts, Need


class CannotScore(Exception):
    """Raised by :meth:`SampleMetric.compute` when the metric cannot decide the sample (e.g.
    no database to execute a query on). Alone, the metric is then not applicable; inside a
    :class:`Fallback` the secondary metric scores the sample instead."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SampleMetric(Metric):
    """A metric scored one sample at a time, asynchronously, from facts and/or embeddings.

    Subclasses say what they need (:meth:`needs`, none by default) and how to score from
    the facts (:meth:`compute`); they never call the judge themselves. ``uses_judge`` and
    ``uses_embeddings`` tell the runner which services to give the metric; they are
    properties, so a composed metric answers from its parts.
    """

    #: Whether required fields holding only whitespace are scored (else: not applicable).
    scores_blank_fields: ClassVar[bool] = False
    _uses_judge: bool = True
    _uses_embeddings: bool = False

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

    @property
    def uses_judge(self) -> bool:
        """Whether the metric's needs are established by a judge (the runner gives it one)."""
        return self._uses_judge

    @uses_judge.setter
    def uses_judge(self, value: bool) -> None:
        self._uses_judge = value

    @property
    def uses_embeddings(self) -> bool:
        """Whether :meth:`compute` embeds text (the runner gives it embeddings)."""
        return self._uses_embeddings

    @uses_embeddings.setter
    def uses_embeddings(self, value: bool) -> None:
        self._uses_embeddings = value

    # -- the protocol ----------------------------------------------------------------------
    def needs(self, sample: Sample) -> list[Need]:
        """The facts this metric needs for ``sample`` (may depend on which fields are set)."""
        return []

    @abstractmethod
    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        """The score from the facts; raise :class:`CannotScore` when the sample cannot be
        decided."""

    def cannot_score(self, sample: Sample) -> str | None:
        """Why :meth:`compute` would raise :class:`CannotScore` for ``sample``, when that is
        known before any fact is gathered; ``None`` otherwise. A :class:`Fallback` asks it to
        gather only its secondary's facts."""
        return None

    # -- what the orchestrator calls ----------------------------------------------------------
    def blank_fields(self, sample: Sample) -> list[str]:
        """Required text fields that hold only whitespace: nothing to judge."""
        blank = []
        for options in self.requires:
            values = [getattr(sample, f) for f in options if sample.has(f)]
            if values and all(isinstance(v, str) and not v.strip() for v in values):
                blank.append(" or ".join(options))
        return blank

    def precheck(self, sample: Sample) -> MetricResult | None:
        """The result without any call when fields are missing (failed) or blank (not
        applicable, unless ``scores_blank_fields``)."""
        missing = self.missing_result(sample)
        if missing is not None or self.scores_blank_fields:
            return missing
        blank = self.blank_fields(sample)
        if blank:
            return MetricResult.not_applicable(f"empty {', '.join(blank)}")
        return None

    async def finish(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        """The result from gathered facts, or the error of a fact it needed."""
        try:
            return await self.result(sample, facts, embeddings)
        except CannotScore as cannot:
            return MetricResult.not_applicable(cannot.reason)

    async def result(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        """:meth:`finish` less the handling of :class:`CannotScore`, which it raises."""
        error = facts.error_for(self.needs(sample))
        if error is not None:
            return MetricResult.failed(error)
        try:
            return await self.compute(sample, facts, embeddings)
        except JudgeError as error:
            return MetricResult.failed(f"{type(error).__name__}: {error}")

    # -- scoring on its own ------------------------------------------------------------------
    def own_services(self) -> tuple[Judge | None, Embeddings | None]:
        """The judge and embeddings to score with outside the runner: the metric's own, else
        the defaults (made once, kept), each only where the metric uses it."""
        if self.judge is None and self.uses_judge:
            from ragmeter.judge import default_judge

            self.judge = default_judge()
        if not self.uses_embeddings:
            return self.judge, None
        if self.embeddings is None:
            from ragmeter.embed import default_embeddings

            self.embeddings = default_embeddings()
        return self.judge, self.embeddings

    async def ascore(self, sample: Sample) -> MetricResult:
        outcome = await score_sample(
            sample, [self], lambda metric: metric.own_services(), sample_id=sample.id
        )
        return outcome.results[self.name]

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


@dataclass
class SampleOutcome:
    """What scoring one sample produced: a result per metric, judge usage, prompt versions."""

    results: dict[str, MetricResult] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    prompt_versions: set[str] = field(default_factory=set)


#: The judge and embeddings a metric runs with (asked only for metrics that get that far).
ServicesOf = Callable[[SampleMetric], tuple[Judge | None, Embeddings | None]]


async def score_sample(
    sample: Sample,
    metrics: Sequence[SampleMetric],
    services: ServicesOf,
    *,
    language: Language | None = None,
    sample_id: str | None = None,
    repeat: int = 0,
) -> SampleOutcome:
    """Score ``sample`` with every metric: missing or blank fields first (no call), then one
    :meth:`StepRunner.gather <ragmeter.steps.StepRunner.gather>` of the union of the needs of
    the metrics sharing a judge and a language, then each metric's :meth:`~SampleMetric.finish`.

    Metrics that need no verdict on claims finish while the verification runs, so their
    embedding calls do not wait for it. A judge refusing its configuration raises
    :class:`ragmeter.judge.JudgeConfigError`; other judge failures fail the metrics they touch.
    """
    from ragmeter.steps import StepRunner, verifies

    outcome = SampleOutcome()
    groups: dict[tuple[int, Language | None], list[tuple[SampleMetric, Embeddings | None]]] = {}
    judges: dict[int, Judge | None] = {}
    for metric in metrics:
        prechecked = metric.precheck(sample)
        if prechecked is not None:
            outcome.results[metric.name] = prechecked
            continue
        judge, vectors = services(metric)
        judges[id(judge)] = judge
        groups.setdefault((id(judge), metric.language or language), []).append((metric, vectors))
    for (judge_id, group_language), group in groups.items():
        needs_of = {metric.name: metric.needs(sample) for metric, _ in group}
        # Without needs (e.g. semantic similarity only) the runner makes no call: no judge.
        runner = StepRunner(
            cast(Judge, judges[judge_id]),  # None only where nothing is needed from it
            language=group_language,
            sample_id=sample_id,
            repeat=repeat,
        )
        early = [m for m in group if not any(verifies(n) for n in needs_of[m[0].name])]
        late = [m for m in group if all(m[0] is not e[0] for e in early)]

        async def finish(
            members: list[tuple[SampleMetric, Embeddings | None]], facts: Facts
        ) -> None:
            for metric, vectors in members:
                outcome.results[metric.name] = await metric.finish(sample, facts, vectors)

        def while_verifying(
            facts: Facts, early: list[tuple[SampleMetric, Embeddings | None]] = early
        ) -> Awaitable[None]:
            return finish(early, facts)

        needs = [need for metric, _ in group for need in needs_of[metric.name]]
        facts = await runner.gather(sample, needs, while_verifying=while_verifying)
        outcome.usage = outcome.usage + facts.usage
        outcome.prompt_versions |= facts.prompt_versions
        await finish(late, facts)
    return outcome


class Fallback(SampleMetric):
    """Scores with ``primary``; where it cannot (:class:`CannotScore`), with ``secondary``.

    A result the secondary produced records it: ``details["fallback"]`` (its name) and
    ``details["fallback_because"]`` (why the primary could not), and its reason starts with
    ``judged by NAME (WHY)``. Without a secondary such a sample is not applicable
    (``"{cannot}: WHY"``). The secondary may be any metric; a per-sample one shares the
    sample's judge calls, gathered only where the primary's :meth:`~SampleMetric.cannot_score`
    says it cannot.
    """

    #: The start of the reason of a sample neither metric scored.
    cannot: ClassVar[str] = "cannot score"

    def __init__(
        self, primary: SampleMetric, secondary: Metric | None = None, *, name: str | None = None
    ) -> None:
        if not isinstance(primary, SampleMetric):
            raise TypeError(f"primary must be a SampleMetric, got {primary!r}")
        if secondary is not None and not isinstance(secondary, Metric):
            raise TypeError(f"fallback must be a Metric, got {secondary!r}")
        self.primary = primary
        self.secondary = secondary
        judged = secondary if isinstance(secondary, SampleMetric) else None
        super().__init__(
            judge=primary.judge or (judged.judge if judged else None),
            embeddings=primary.embeddings or (judged.embeddings if judged else None),
            language=primary.language or (judged.language if judged else None),
        )
        if name is not None or not hasattr(self, "name"):
            self.name = name or primary.name
        self.requires = primary.requires
        self.direction = primary.direction
        self.scores_blank_fields = primary.scores_blank_fields  # type: ignore[misc]  # per instance: the primary's

    @property
    def uses_judge(self) -> bool:
        judged = self.secondary if isinstance(self.secondary, SampleMetric) else None
        return self.primary.uses_judge or bool(judged and judged.uses_judge)

    @uses_judge.setter
    def uses_judge(self, value: bool) -> None:
        raise AttributeError("a Fallback uses a judge where one of its metrics does")

    @property
    def uses_embeddings(self) -> bool:
        judged = self.secondary if isinstance(self.secondary, SampleMetric) else None
        return self.primary.uses_embeddings or bool(judged and judged.uses_embeddings)

    @uses_embeddings.setter
    def uses_embeddings(self, value: bool) -> None:
        raise AttributeError("a Fallback uses embeddings where one of its metrics does")

    def params(self) -> dict[str, Any]:
        params = self.primary.params()
        if self.secondary is not None:
            params["fallback"] = {"name": self.secondary.name, "params": self.secondary.params()}
        return params

    def _secondary_needs(self, sample: Sample) -> list[Need]:
        judged = self.secondary if isinstance(self.secondary, SampleMetric) else None
        return judged.needs(sample) if judged is not None else []

    def needs(self, sample: Sample) -> list[Need]:
        """The secondary's needs where the primary says beforehand it cannot score, else the
        primary's. The primary is asked only when the secondary needs facts."""
        wanted = self._secondary_needs(sample) if not self.missing_fields(sample) else []
        if not wanted:
            return self.primary.needs(sample)
        try:
            cannot = self.primary.cannot_score(sample)
        except Exception:  # noqa: BLE001 - finish() meets the same error and reports it
            cannot = None
        return self.primary.needs(sample) if cannot is None else wanted

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        return await self.finish(sample, facts, embeddings)

    async def finish(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        try:
            # Where the secondary needs facts, needs() asked the primary beforehand and the
            # runner gathered the secondary's facts if it could not score.
            planned = bool(self._secondary_needs(sample))
            why = self.primary.cannot_score(sample) if planned else None
            if why is None:
                try:
                    return await self.primary.result(sample, facts, embeddings)
                except CannotScore as cannot:
                    why = cannot.reason
                gathered = not planned  # the secondary needs no facts: all there
            else:
                gathered = True
        except Exception as error:  # noqa: BLE001 - never lose the run over one sample
            return MetricResult.failed(f"{type(error).__name__}: {error}")
        return await self._fall_back(
            sample, why, facts if gathered else None, embeddings if gathered else None
        )

    async def _fall_back(
        self, sample: Sample, why: str, facts: Facts | None, embeddings: Embeddings | None
    ) -> MetricResult:
        secondary = self.secondary
        if secondary is None:
            return MetricResult.not_applicable(f"{self.cannot}: {why}")
        try:
            if isinstance(secondary, SampleMetric) and facts is not None:
                result = secondary.precheck(sample) or await secondary.finish(
                    sample, facts, embeddings
                )
            else:  # scored on its own (with its own judge, if any)
                result = secondary.missing_result(sample) or await secondary.ascore(sample)
        except Exception as error:  # noqa: BLE001 - the secondary's failure is this sample's
            result = MetricResult.failed(f"{type(error).__name__}: {error}")
        details = result.details.with_extra(fallback=secondary.name, fallback_because=why)
        if result.status is Status.FAILED:
            return dataclasses.replace(result, details=details)
        reason = f"judged by {secondary.name} ({why})"
        if result.reason:
            reason += f": {result.reason}"
        return dataclasses.replace(result, reason=reason, details=details)
