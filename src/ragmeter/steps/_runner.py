"""The steps: the only code that talks to the judge. For one sample they turn the metrics'
needs into as few judge calls as possible, run independent calls concurrently, and share
every answer between the metrics that need it.

The planner knows no judgment by name: it reads the table (``steps/_table.py``, built-in
entries in ``steps/_judgments.py``). For each need it finds the judgments that serve it
(and the ones those depend on); judgments sharing a template become one call doing all their
tasks; ``read`` judgments run first, concurrently, each after the ones it depends on; then the
``verify`` judgments (verdicts on claims), alongside ``while_verifying``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ragmeter.dataset import Sample
from ragmeter.judge import (
    BinaryVerdict,
    Judge,
    JudgeConfigError,
    JudgeError,
    Judgment,
    Message,
    TextLikelihood,
)
from ragmeter.prompts import Language, PromptTemplate, detect_language, load_prompt
from ragmeter.steps._evidence import evidence_query, select_evidence
from ragmeter.steps._facts import Facts, Need
from ragmeter.steps._judgments import StepError
from ragmeter.steps._table import (
    JUDGMENTS,
    DataValue,
    Generate,
    JudgmentKind,
    OutputT,
    Request,
    schema_for,
)

#: The template of one yes/no question, for judges that cannot batch verdicts.
VERDICT_TEMPLATE = "verdict"
#: The template of likelihood verdicts, for judges that score likelihoods.
LIKELIHOOD_TEMPLATE = "likelihood"
#: For each verdict task, the input whose likelihood is scored; the evidence is always "text".
LIKELIHOOD_TARGET = {"supported": "statement", "useful": "answer", "relevant": "question"}
EVIDENCE_INPUT = "text"


@dataclass
class _Planned:
    """One judgment asked for this sample, with the needs it serves."""

    kind: JudgmentKind[Any, Any]
    name: str
    needs: list[Need] = field(default_factory=list)

    def request(self, sample: Sample, facts: Facts, batched: bool) -> Request:
        return Request(self.name, sample, tuple(self.needs), facts, batched)


@dataclass
class _Job:
    """One call (several judgments sharing a template), or one judgment asked its own way."""

    members: list[_Planned]
    by_verdicts: bool = False

    @property
    def template(self) -> str:
        return self.members[0].kind.template


class StepRunner:
    """Computes the facts for one sample's needs through one judge."""

    def __init__(
        self,
        judge: Judge,
        *,
        language: Language | None = None,
        sample_id: str | None = None,
        repeat: int = 0,
    ) -> None:
        self.judge = judge
        self.language = language
        self.sample_id = sample_id
        #: Repeat r > 0 of a judge-noise run: its answers are cached apart from repeat 0's.
        self.repeat = repeat

    # -- the judge, through a template -----------------------------------------------------
    def _salt(self, attempt: int = 0) -> str:
        """``repeat-N`` for repeats, ``re-ask`` for the second try (both part of cache keys)."""
        parts = (f"repeat-{self.repeat}" if self.repeat else "", "re-ask" if attempt else "")
        return "|".join(part for part in parts if part)

    async def _ask(
        self,
        template: PromptTemplate,
        tasks: Sequence[str],
        inputs: dict[str, Any],
        facts: Facts,
        *,
        params: dict[str, Any] | None = None,
        schema: type[BaseModel] | None = None,
        check: Callable[[Any], str | None] | None = None,
        output_keys: dict[str, tuple[str, ...]] | None = None,
        tolerate: bool = False,
    ) -> Any:
        """Ask the judge; when ``check`` finds the answer incomplete (e.g. fewer verdicts
        than claims), re-ask once, then give up with a :class:`StepError`."""
        messages = template.render(inputs, tasks, params=params, output_keys=output_keys)
        schema = schema or schema_for(template.name, tuple(tasks))
        problem = None
        for attempt in range(2 if check else 1):
            judgment = await self._judged(
                facts,
                messages,
                schema,
                prompt_version=template.key,
                scope=template.name,
                salt=self._salt(attempt),
            )
            problem = check(judgment.output) if check else None
            if problem is None or (tolerate and attempt):
                return judgment
        raise StepError(f"{problem} (also after a re-ask)")

    # -- planning ------------------------------------------------------------------------------
    @staticmethod
    def plan(needs: Iterable[Need]) -> list[_Planned]:
        """The judgments ``needs`` ask for, with those they depend on, in table order."""
        planned: dict[tuple[str, str], _Planned] = {}

        def add(kind: JudgmentKind[Any, Any], name: str) -> _Planned:
            if (kind.name, name) not in planned:
                for dependency in kind.depends_on:
                    add(JUDGMENTS[dependency], dependency)
                planned[(kind.name, name)] = _Planned(kind, name)
            return planned[(kind.name, name)]

        needs = list(dict.fromkeys(needs))
        for kind in JUDGMENTS.values():
            for need in needs:
                name = kind.request_for(need)
                if name is not None:
                    add(kind, name).needs.append(need)
        order = {name: i for i, name in enumerate(JUDGMENTS)}
        return sorted(planned.values(), key=lambda p: order[p.kind.name])

    def _jobs(self, planned: list[_Planned]) -> list[_Job]:
        """Judgments sharing a template become one call (a task at most once per call);
        the calls come in table order, each template's per-verdict work after its call."""
        if not planned:
            return []  # no judge needed (it may be None)
        batched = self.judge.supports_batched_verdicts
        ranks: dict[str, int] = {}
        jobs: list[tuple[int, bool, int, _Job]] = []
        calls: dict[str, _Job] = {}
        for item in planned:
            kind = item.kind
            rank = ranks.setdefault(kind.template or f"{kind.name}:{item.name}", len(ranks))
            templated = kind.call is None and bool(kind.template)
            if kind.by_verdicts is not None and (not batched or not templated):
                jobs.append((rank, True, len(jobs), _Job([item], by_verdicts=True)))
            elif kind.call is not None:
                jobs.append((rank, False, len(jobs), _Job([item])))
            else:
                call = calls.get(kind.template)
                if call is None or any(m.kind.task == kind.task for m in call.members):
                    call = calls[kind.template] = _Job([item])
                    jobs.append((rank, False, len(jobs), call))
                else:
                    call.members.append(item)
        return [job for *_, job in sorted(jobs, key=lambda j: j[:3])]

    # -- running -------------------------------------------------------------------------------
    async def gather(
        self,
        sample: Sample,
        needs: Iterable[Need],
        *,
        while_verifying: Callable[[Facts], Awaitable[None]] | None = None,
    ) -> Facts:
        """The facts ``needs`` ask for: the ``read`` judgments concurrently, then the
        verification of claims against passages. ``while_verifying`` runs as soon as the
        first facts are known, alongside the verification (e.g. the embedding calls of
        metrics that need no verdict), so it adds nothing to the sample's chain of calls."""
        language = self.language or detect_language(
            sample.user_input, sample.response, sample.reference
        )
        facts = Facts(
            language=language,
            calibrated_verdicts=self.judge is not None
            and self.judge.supports_likelihood
            and not self.judge.supports_batched_verdicts,
        )
        planned = self.plan(needs)
        first = [p for p in planned if p.kind.stage == "read"]
        await asyncio.gather(*self._stage(sample, facts, first))
        then = [p for p in planned if p.kind.stage != "read"]
        await asyncio.gather(
            *self._stage(sample, facts, then),
            *([while_verifying(facts)] if while_verifying is not None else []),
        )
        return facts

    def _stage(
        self, sample: Sample, facts: Facts, planned: list[_Planned]
    ) -> list[asyncio.Task[None]]:
        """One task per job; a job waits for the jobs of the judgments it depends on.

        Job ``i`` of a sample starts ``i`` turns of the event loop after the first, so that
        across the samples in flight the calls through one template reach the judge
        together: the embedded judge, which answers one call at a time, then reuses the
        instruction and few-shot prefix they share (started all at once, the demo's 12
        samples cost 35% more prompt tokens evaluated and 21% more time)."""
        done: dict[str, list[asyncio.Task[None]]] = {}
        task_of: dict[int, asyncio.Task[None]] = {}

        async def run(job: _Job, turns: int) -> None:
            for _ in range(turns):
                await asyncio.sleep(0)
            own = task_of[id(job)]
            waits = {d for m in job.members for d in m.kind.depends_on}
            await asyncio.gather(*(t for d in waits for t in done.get(d, []) if t is not own))
            await self._run(job, sample, facts)

        tasks = []
        for turns, job in enumerate(self._jobs(planned)):
            task = asyncio.ensure_future(run(job, turns))
            task_of[id(job)] = task
            for member in job.members:
                done.setdefault(member.kind.name, []).append(task)
            tasks.append(task)
        return tasks

    async def _run(self, job: _Job, sample: Sample, facts: Facts) -> None:
        batched = self.judge.supports_batched_verdicts
        members = []
        for item in job.members:
            if any(d in facts.errors for d in item.kind.depends_on):
                continue  # what it reads failed; that error is already recorded
            request = item.request(sample, facts, batched)
            if item.kind.applies is not None and not item.kind.applies(request):
                continue
            value = item.kind.without_call(request) if item.kind.without_call else None
            if value is not None:
                self._store(facts, item, request, value)
                continue
            members.append((item, request))
        if not members:
            return
        try:
            if job.by_verdicts:
                ((item, request),) = members
                assert item.kind.by_verdicts is not None
                value = await item.kind.by_verdicts(self._verdict(facts), request)
                self._store(facts, item, request, value)
            elif job.members[0].kind.call is not None:
                ((item, request),) = members
                assert item.kind.call is not None
                value = await item.kind.call(self._generate(facts), request)
                self._store(facts, item, request, value)
            else:
                await self._call(members, facts)
        except JudgeError as error:
            self._record_error(facts, [item.name for item, _ in members], error)

    async def _call(self, members: list[tuple[_Planned, Request]], facts: Facts) -> None:
        """One call through a template doing every member's task; each member reads its
        answer (a member that cannot read it fails alone)."""
        kinds = [item.kind for item, _ in members]
        template = kinds[0].load(facts.language)
        inputs: dict[str, DataValue] = {}
        params: dict[str, Any] = {}
        for kind, (_, request) in zip(kinds, members):
            assert kind.inputs is not None
            inputs.update(kind.inputs(request))
            params.update(kind.params(request) if kind.params else {})

        def check(output: Any) -> str | None:
            for kind, (_, request) in zip(kinds, members):
                problem = kind.check(output, request) if kind.check else None
                if problem is not None:
                    return problem
            return None

        judgment = await self._ask(
            template,
            [kind.task for kind in kinds],
            inputs,
            facts,
            params=params,
            check=check if any(kind.check for kind in kinds) else None,
            output_keys={kind.task: kind.keys for kind in kinds},
            tolerate=all(kind.tolerate_check for kind in kinds if kind.check),
        )
        for item, request in members:
            assert item.kind.read is not None
            try:
                value = item.kind.read(judgment, request)
            except JudgeError as error:
                self._record_error(facts, [item.name], error)
                continue
            self._store(facts, item, request, value)

    @staticmethod
    def _store(facts: Facts, item: _Planned, request: Request, value: Any) -> None:
        if item.kind.store is not None:
            item.kind.store(facts, request, value)
        else:
            facts.set(item.name, value)

    def _verdict(self, facts: Facts) -> Callable[..., Awaitable[tuple[bool, float | None]]]:
        async def verdict(task: str, inputs: dict[str, DataValue]) -> tuple[bool, float | None]:
            if self.judge.supports_likelihood and task in LIKELIHOOD_TARGET:
                return await self._likelihood_verdict(task, inputs, facts)
            template = load_prompt(VERDICT_TEMPLATE, facts.language)
            judgment = await self._ask(template, [task], inputs, facts, schema=BinaryVerdict)
            if judgment.probabilities:
                # One number behind the verdict and its probability (calibrated, if the
                # judge has a calibration for the task, then by the run's calibration).
                p_yes = self.judge.calibrated_verdict_probability(
                    task, facts.language, judgment.probabilities[0]
                )
                return p_yes >= 0.5, p_yes
            return bool(judgment.output.verdict), None

        return verdict

    async def _likelihood_verdict(
        self, task: str, inputs: dict[str, DataValue], facts: Facts
    ) -> tuple[bool, float]:
        """A verdict from how much the evidence raises the likelihood of the claim (answer,
        question): two scored texts, one with the evidence (the passage's sentences that
        bear on it, :func:`select_evidence`) and one without, the second shared by every
        passage the same claim is checked against."""
        target = LIKELIHOOD_TARGET[task]
        scored = str(inputs[target])
        given = {name: value for name, value in inputs.items() if name != target}
        query = evidence_query(scored, *(str(v) for k, v in given.items() if k != EVIDENCE_INPUT))
        given[EVIDENCE_INPUT] = select_evidence(query, str(given[EVIDENCE_INPUT]))
        template = load_prompt(LIKELIHOOD_TEMPLATE, facts.language)
        with_evidence, without = await asyncio.gather(
            self._likelihood(template, task, given, scored, facts),
            self._likelihood(template, task, {**given, EVIDENCE_INPUT: ""}, scored, facts),
        )
        gain = with_evidence.logprob - without.logprob
        p_yes = self.judge.calibrated_likelihood_probability(task, facts.language, gain)
        return p_yes >= 0.5, p_yes

    async def _likelihood(
        self,
        template: PromptTemplate,
        task: str,
        inputs: dict[str, DataValue],
        text: str,
        facts: Facts,
    ) -> TextLikelihood:
        messages = [*template.render(inputs, [task]), Message("assistant", text)]
        generate = self._generate(facts)
        judgment = await generate(
            messages, TextLikelihood, prompt_version=template.key, scope=template.name
        )
        return judgment.output

    def _generate(self, facts: Facts) -> Generate:
        async def generate(
            messages: list[Message], schema: type[OutputT], *, prompt_version: str, scope: str
        ) -> Judgment[OutputT]:
            return await self._judged(
                facts,
                messages,
                schema,
                prompt_version=prompt_version,
                scope=scope,
                salt=self._salt(),
            )

        return generate

    async def _judged(
        self,
        facts: Facts,
        messages: Sequence[Message],
        schema: type[OutputT],
        *,
        prompt_version: str,
        scope: str,
        salt: str,
    ) -> Judgment[OutputT]:
        """The one place steps call the judge: the answer's usage (or, when it failed, what
        the failed call cost) is the sample's."""
        try:
            judgment = await self.judge.generate(
                messages,
                schema,
                prompt_version=prompt_version,
                scope=scope,
                sample_id=self.sample_id,
                salt=salt,
            )
        except JudgeError as error:
            if error.usage is not None:
                facts.usage = facts.usage + error.usage
            raise
        facts.usage = facts.usage + judgment.usage
        facts.prompt_versions.add(prompt_version)
        return judgment

    @staticmethod
    def _record_error(facts: Facts, names: Iterable[str], error: Exception) -> None:
        if isinstance(error, JudgeConfigError):
            raise error  # a wrong key, model or endpoint fails every call: stop the run
        message = f"{type(error).__name__}: {error}"
        for name in names:
            facts.errors.setdefault(name, message)
