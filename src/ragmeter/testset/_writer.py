"""Writing and checking questions: synthesizer candidates in, kept samples out.

Candidates are attempted in rounds, concurrently, until each synthesizer's plan is met or
its candidates run out; a shortfall moves to synthesizers with candidates to spare. Each
attempt writes a question (one call), checks its language, then has the judge attribute the
reference answer's statements to the passages (one call). The adversarial synthesizers
check instead what they claim: an unanswerable question that no close chunk answers, a false
premise that no passage supports, a calculation whose values and arithmetic hold (in Python,
no call), a temporal question that names its chunk's date, version or condition. Duplicates
are removed in candidate order after each round, so the result does not depend on timing;
each kept question then gets its difficulty tier.
"""

from __future__ import annotations

import asyncio
import functools
import random
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from itertools import product
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter._text import normalize
from ragmeter.embed import Embeddings
from ragmeter.judge import Judge, JudgeConfigError, JudgeError, Usage
from ragmeter.prompts import Language, detect_language, load_prompt
from ragmeter.runner import ProgressReporter
from ragmeter.steps import GenerationSteps, Length, Persona, Style, WrittenQuestion
from ragmeter.testset._arithmetic import CalculationError, Value, check_calculation
from ragmeter.testset._difficulty import Difficulty, paraphrase_distance
from ragmeter.testset._graph import KnowledgeGraph
from ragmeter.testset._result import GeneratedSample, SizeAccounting, SynthesizerAccount
from ragmeter.testset._synthesizers import (
    KIND,
    SYNTHESIZERS,
    Candidate,
    SynthesizerName,
    candidates_for,
)
from ragmeter.testset._temporal import temporal_problem
from ragmeter.testset._workdir import WorkDir

if TYPE_CHECKING:
    from ragmeter.runner import WorkerPool

#: Chunks an unanswerable question is checked against: its source and the most similar others.
UNANSWERABLE_CHECKED = 5


def allocate(n: int, weights: Mapping[SynthesizerName, float]) -> dict[SynthesizerName, int]:
    """Split ``n`` by ``weights`` with the largest-remainder method (exact total).

    >>> allocate(10, {"single": 0.5, "multi": 0.3, "compare": 0.2})
    {'single': 5, 'multi': 3, 'compare': 2}
    >>> allocate(2, {"single": 0.5, "multi": 0.3, "compare": 0.2})
    {'single': 1, 'multi': 1, 'compare': 0}
    """
    exact = {name: n * weight for name, weight in weights.items()}
    counts = {name: int(value) for name, value in exact.items()}
    order = sorted(exact, key=lambda name: (-(exact[name] - counts[name]), -weights[name]))
    for name in order[: n - sum(counts.values())]:
        counts[name] += 1
    return counts


@dataclass
class _Outcome:
    candidate: Candidate
    key: str
    sample: GeneratedSample | None = None
    reason: str = ""  # the rejection category
    detail: str = ""
    usage_writing: Usage = field(default_factory=Usage)
    usage_checking: Usage = field(default_factory=Usage)

    @property
    def usage(self) -> Usage:
        return self.usage_writing + self.usage_checking

    def record(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "sample": self.sample.to_record() if self.sample else None,
            "reason": self.reason,
            "detail": self.detail,
            "usage": {
                "writing": self.usage_writing.to_dict(),
                "checking": self.usage_checking.to_dict(),
            },
        }


class Writer:
    """Attempts candidates in rounds until each synthesizer's plan is met or its candidates
    run out; shortfalls move to synthesizers that still have candidates."""

    def __init__(
        self,
        *,
        graph: KnowledgeGraph,
        judge: Judge,
        embeddings: Embeddings,
        personas: list[Persona],
        styles: list[Style],
        lengths: list[Length],
        rng: random.Random,
        dedup_threshold: float,
        concurrency: int,
        work: WorkDir,
        attempts_per_question: int = 4,
        workers: WorkerPool | None = None,
    ) -> None:
        self.graph = graph
        self.judge = judge
        #: A Ray cluster's workers (:meth:`ragmeter.runner.RayBackend.start` with ``judge``):
        #: the questions are written and checked there; the rest is done here.
        self.workers = workers
        self.embeddings = embeddings
        self.rng = rng
        self.dedup_threshold = dedup_threshold
        self.attempts_per_question = attempts_per_question
        self.work = work
        self.recorded = work.read_attempts()
        self.combos = list(product(personas, styles, lengths))
        rng.shuffle(self.combos)
        self.semaphore = asyncio.Semaphore(max(1, concurrency))
        self.usage_writing = Usage()
        self.usage_checking = Usage()
        self.prompt_versions: set[str] = set()
        self.kept_vectors: list[np.ndarray] = []
        self.kept_texts: dict[str, str] = {}
        self._chunks: tuple[list[str], list[str], np.ndarray] | None = None

    async def run(
        self,
        n: int,
        weights: Mapping[SynthesizerName, float],
        languages: set[Language],
        accounting: SizeAccounting,
        progress: ProgressReporter,
    ) -> list[GeneratedSample]:
        requested = allocate(n, weights)
        queues: dict[SynthesizerName, list[Candidate]] = {}
        for name in SYNTHESIZERS:
            if name not in weights:
                continue
            supply = candidates_for(name, self.graph, self.rng, languages)
            queues[name] = list(supply.candidates)
            accounting.synthesizers[name] = SynthesizerAccount(
                requested=requested[name],
                planned=requested[name],
                available=len(supply.candidates),
                why_few=supply.why,
            )
        accounts = accounting.synthesizers
        kept: dict[SynthesizerName, list[GeneratedSample]] = {name: [] for name in queues}
        turn = dict.fromkeys(queues, 0)
        while True:
            self._move_shortfalls(queues, accounts, kept)
            batch = [
                (name, queues[name].pop(0))
                for name in queues
                for _ in range(
                    min(
                        accounts[name].planned - len(kept[name]),
                        self._tries_left(name, queues, accounts),
                    )
                )
            ]
            if not batch:
                break
            jobs = []
            for name, candidate in batch:
                # Synthesizers start the persona/style/length rotation at different points.
                combo = turn[name] + SYNTHESIZERS.index(name) * 7
                persona, style, length = self.combos[combo % len(self.combos)]
                turn[name] += 1
                jobs.append(self._attempt(candidate, persona, style, length))
            outcomes = await asyncio.gather(*jobs)
            await self._deduplicate(outcomes)
            for (name, _), outcome in zip(batch, outcomes, strict=True):
                account = accounts[name]
                account.attempted += 1
                if outcome.sample is not None:
                    kept[name].append(outcome.sample)
                    account.produced += 1
                else:
                    account.rejected[outcome.reason] += 1
                progress.advance(1 if outcome.sample else 0, usage=outcome.usage)
        samples = [s for name in queues for s in kept[name]]
        accounting.produced = len(samples)
        accounting.notes += filter(None, (a.explain(name) for name, a in accounts.items()))
        if accounting.produced < n:
            accounting.notes.append(
                f"{accounting.produced} of {n} questions: the synthesizers ran out of candidates"
                + (
                    " or reached the limit of attempts per question"
                    if any(a.stopped for a in accounts.values())
                    else ""
                )
            )
        return samples

    def _move_shortfalls(
        self,
        queues: dict[SynthesizerName, list[Candidate]],
        accounts: dict[str, SynthesizerAccount],
        kept: dict[SynthesizerName, list[GeneratedSample]],
    ) -> None:
        """A synthesizer that cannot meet its plan with the candidates and attempts it has
        left hands the rest to synthesizers with candidates to spare, largest spare first."""
        for name in queues:
            account = accounts[name]
            short = account.planned - len(kept[name]) - self._tries_left(name, queues, accounts)
            if short <= 0:
                continue
            budget = self.attempts_per_question * account.planned - account.attempted
            if budget < len(queues[name]):
                account.stopped = True  # candidates left, but too many attempts failed
            account.planned -= short
            # Receiving a question raises a synthesizer's attempt budget too, so what it can
            # take is its candidates left; synthesizers that stopped early come last.
            spare = {
                other: len(queues[other]) - (accounts[other].planned - len(kept[other]))
                for other in queues
                if other != name
            }
            for other in sorted(spare, key=lambda o: (accounts[o].stopped, -spare[o])):
                give = min(short, max(spare[other], 0))
                if give:
                    accounts[other].planned += give
                    accounts[other].took[name] += give
                    account.gave[other] += give
                    short -= give

    def _tries_left(
        self,
        name: SynthesizerName,
        queues: dict[SynthesizerName, list[Candidate]],
        accounts: dict[str, SynthesizerAccount],
    ) -> int:
        """Candidates this synthesizer may still attempt: those left, up to
        ``attempts_per_question`` attempts per planned question in all."""
        account = accounts[name]
        budget = self.attempts_per_question * account.planned - account.attempted
        return max(0, min(len(queues[name]), budget))

    async def _attempt(
        self, candidate: Candidate, persona: Persona, style: Style, length: Length
    ) -> _Outcome:
        key = f"{candidate.key}|{persona}|{style}|{length}"
        recorded = self.recorded.get(key)
        if recorded is not None and "written" not in recorded:  # finished in an earlier run
            sample = recorded.get("sample")
            outcome = _Outcome(
                candidate,
                key,
                GeneratedSample.from_record(sample) if sample else None,
                recorded.get("reason", ""),
                recorded.get("detail", ""),
                *_recorded_usage(recorded, "writing", "checking"),
            )
        else:
            written = None
            written_usage = Usage()
            if recorded is not None:  # written in an earlier run, not yet checked
                written = WrittenQuestion.from_record(recorded["written"])
                written_usage = _recorded_usage(recorded, "writing")[0]
            async with self.semaphore:
                with self.work.in_flight.item(f"attempt:{key}"):
                    outcome = await self._write_and_check(
                        candidate, key, persona, style, length, written, written_usage
                    )
                    self.work.append_attempt(outcome.record())
        self.usage_writing = self.usage_writing + outcome.usage_writing
        self.usage_checking = self.usage_checking + outcome.usage_checking
        return outcome

    async def _write_and_check(
        self,
        candidate: Candidate,
        key: str,
        persona: Persona,
        style: Style,
        length: Length,
        written: WrittenQuestion | None,
        writing: Usage,
    ) -> _Outcome:
        nodes = [self.graph.nodes[i] for i in candidate.chunk_ids]
        contexts = [node.text for node in nodes]
        steps: GenerationSteps | _StepsOnWorkers = (
            GenerationSteps(self.judge, language=candidate.language, sample_id=f"attempt:{key}")
            if self.workers is None
            else _StepsOnWorkers(self.workers, candidate.language)
        )
        if written is None:  # else written before an interruption, and recorded
            try:
                written, facts = await steps.write_question(
                    KIND[candidate.synthesizer],
                    contexts,
                    focus=candidate.focus,
                    persona=persona,
                    style=style,
                    length=length,
                )
            except JudgeConfigError:
                raise
            except JudgeError as error:
                return _Outcome(candidate, key, reason="judge error", detail=str(error))
            self.prompt_versions |= facts.prompt_versions
            writing = facts.usage
            self.work.append_attempt(
                {"key": key, "written": asdict(written), "usage": {"writing": writing.to_dict()}}
            )
            self.work.in_flight.kept(f"attempt:{key}")  # the writing call is recorded
        problem = _not_a_question(written.question, style, contexts) or _copied_example(
            written, candidate.language
        )
        if problem is not None:
            return _Outcome(candidate, key, None, "not a question", problem, writing)
        written_language = detect_language(written.question)
        if written_language != candidate.language:
            return _Outcome(
                candidate,
                key,
                reason="wrong language",
                detail=f"question in {written_language}, documents in {candidate.language}: "
                f"{written.question!r}",
                usage_writing=writing,
            )
        sample = GeneratedSample(
            id=candidate.sample_id,
            user_input=written.question,
            reference=written.answer,
            reference_contexts=tuple(contexts),
            reference_context_ids=candidate.chunk_ids,
            synthesizer=KIND[candidate.synthesizer],
            persona=persona.name,
            style=style,
            length=length,
            focus=candidate.focus,
            source_document_ids=tuple(dict.fromkeys(node.document_id for node in nodes)),
            language=candidate.language,
        )
        try:
            outcome = await self._check(candidate, key, written, steps, sample)
        except JudgeConfigError:
            raise
        except JudgeError as error:
            return _Outcome(candidate, key, None, "judge error", str(error), writing)
        outcome.usage_writing = writing
        return outcome

    async def _check(
        self,
        candidate: Candidate,
        key: str,
        written: WrittenQuestion,
        steps: GenerationSteps | _StepsOnWorkers,
        sample: GeneratedSample,
    ) -> _Outcome:
        """The synthesizer's own acceptance check of ``sample``; the sample when it passes."""
        contexts = list(sample.reference_contexts)
        name = candidate.synthesizer
        if name == "unanswerable":
            return await self._check_unanswerable(candidate, key, written, steps, sample)
        if name == "calculation":
            return self._check_calculation(candidate, key, written, sample)
        if name == "temporal":
            problem = temporal_problem(written.question, contexts)
            if problem is not None:
                return _Outcome(candidate, key, None, "no temporal expression", problem)
        supporting: list[int] = []
        if name == "false_premise":
            verdict, supporting, facts = await steps.check_false_premise(
                written.question, written.answer, written.premise, contexts
            )
            sample = replace(sample, premise=written.premise)
        else:
            verdict, facts = await steps.check_answerable(
                written.question, written.answer, contexts
            )
        self.prompt_versions |= facts.prompt_versions
        checking = facts.usage
        if not verdict.answerable:
            return _Outcome(
                candidate, key, None, "not answerable", verdict.reason, Usage(), checking
            )
        if supporting:
            detail = f"passage(s) {supporting} support the premise {written.premise!r}"
            return _Outcome(candidate, key, None, "premise supported", detail, Usage(), checking)
        return _Outcome(candidate, key, sample, usage_checking=checking)

    async def _check_unanswerable(
        self,
        candidate: Candidate,
        key: str,
        written: WrittenQuestion,
        steps: GenerationSteps | _StepsOnWorkers,
        sample: GeneratedSample,
    ) -> _Outcome:
        """Kept when neither the source chunk nor the chunks most similar to the question
        (by embedding, ``UNANSWERABLE_CHECKED`` chunks in all) hold what it asks."""
        vector = (
            await self.embeddings.embed([written.question], kind="query", scope="testset_dedup")
        )[0]
        checked = list(candidate.chunk_ids)
        for node_id in self._most_similar(vector, candidate.language):
            if len(checked) >= UNANSWERABLE_CHECKED:
                break
            if node_id not in checked:
                checked.append(node_id)
        passages = [self.graph.nodes[i].text for i in checked]
        useful, facts = await steps.passages_answering(written.question, passages)
        self.prompt_versions |= facts.prompt_versions
        answering = [node_id for node_id, yes in zip(checked, useful, strict=False) if yes]
        if answering:
            detail = f"chunk(s) {answering} answer {written.question!r}"
            return _Outcome(
                candidate, key, None, "answer found in corpus", detail, Usage(), facts.usage
            )
        kept = replace(
            sample,
            reference_contexts=(),
            reference_context_ids=(),
            answerable=False,
            checked_context_ids=tuple(checked),
        )
        return _Outcome(candidate, key, kept, usage_checking=facts.usage)

    def _check_calculation(
        self, candidate: Candidate, key: str, written: WrittenQuestion, sample: GeneratedSample
    ) -> _Outcome:
        """Checked in Python (:func:`check_calculation`): the values are in the passages
        they cite, the expression uses only them and the answer holds its result. The
        reference contexts are the passages the values come from."""
        values = [Value(text, passage) for text, passage in written.values]
        try:
            check_calculation(values, written.expression, written.answer, sample.reference_contexts)
        except CalculationError as error:
            return _Outcome(candidate, key, None, error.reason, str(error))
        cited = sorted({value.passage - 1 for value in values})
        ids = tuple(candidate.chunk_ids[i] for i in cited)
        kept = replace(
            sample,
            reference_contexts=tuple(sample.reference_contexts[i] for i in cited),
            reference_context_ids=ids,
            source_document_ids=tuple(dict.fromkeys(self.graph.nodes[i].document_id for i in ids)),
            expression=written.expression,
        )
        return _Outcome(candidate, key, kept)

    def _chunk_vectors(self) -> tuple[list[str], list[str], np.ndarray] | None:
        """Ids, languages and embeddings (rows) of the analysed chunks, built once."""
        if self._chunks is None:
            embedded = [node for node in self.graph.analysed if node.embedding is not None]
            if not embedded:
                return None
            self._chunks = (
                [node.id for node in embedded],
                [node.language for node in embedded],
                np.stack([np.asarray(node.embedding, dtype=np.float32) for node in embedded]),
            )
        return self._chunks

    def _most_similar(self, vector: np.ndarray, language: Language) -> list[str]:
        """Chunk ids in ``language``, most similar to ``vector`` first."""
        chunks = self._chunk_vectors()
        if chunks is None:
            return []
        ids, languages, matrix = chunks
        scores = matrix @ np.asarray(vector, dtype=np.float32)
        return [ids[i] for i in np.argsort(-scores, kind="stable") if languages[i] == language]

    def _difficulty(self, sample: GeneratedSample, vector: np.ndarray) -> Difficulty:
        """Hops, distractor margin and paraphrase distance of a kept sample (an
        unanswerable question's source is its first checked chunk)."""
        sources = sample.reference_context_ids or sample.checked_context_ids[:1]
        texts = [self.graph.nodes[i].text for i in sources if i in self.graph.nodes]
        margin = 0.0
        chunks = self._chunk_vectors()
        if chunks is not None:
            ids, _, matrix = chunks
            scores = matrix @ np.asarray(vector, dtype=np.float32)
            own = [float(scores[i]) for i, node_id in enumerate(ids) if node_id in sources]
            others = [float(scores[i]) for i, node_id in enumerate(ids) if node_id not in sources]
            if own and others:
                margin = max(others) - max(own)
        distance = paraphrase_distance(sample.user_input, texts, language=sample.language)
        return Difficulty(max(1, len(sources)), margin, distance)

    async def _deduplicate(self, outcomes: Sequence[_Outcome]) -> None:
        """Drop, in candidate order, questions that repeat one already kept: the same text
        once normalised, or an embedding at least ``dedup_threshold`` similar."""
        fresh = [(o, o.sample) for o in outcomes if o.sample is not None]
        if not fresh:
            return
        vectors = await self.embeddings.embed(
            [sample.user_input for _, sample in fresh],
            kind="query",
            scope="testset_dedup",
        )
        for (outcome, sample), vector in zip(fresh, vectors, strict=True):
            text = normalize(sample.user_input)
            duplicate_of = self.kept_texts.get(text)
            similarity = 1.0
            if duplicate_of is None and self.kept_vectors:
                scores = np.stack(self.kept_vectors) @ vector
                best = int(np.argmax(scores))
                if scores[best] >= self.dedup_threshold:
                    duplicate_of = list(self.kept_texts.values())[best]
                    similarity = float(scores[best])
            if duplicate_of is not None:
                outcome.sample = None
                outcome.reason = "near-duplicate"
                outcome.detail = f"cosine {similarity:.3f} with {duplicate_of}"
                continue
            self.kept_texts[text] = sample.id
            self.kept_vectors.append(vector)
            outcome.sample = replace(sample, difficulty=self._difficulty(sample, vector).tier)


_NOT_WORDS = re.compile(r"[\W_]+", re.UNICODE)


class _StepsOnWorkers:
    """The :class:`GenerationSteps` the writer uses, each call made on a Ray cluster's
    worker with its copy of the run's judge (arguments and answers travel; the worker's
    cache is the cluster's shared one)."""

    def __init__(self, workers: WorkerPool, language: Language) -> None:
        self.workers = workers
        self.language = language

    def __getattr__(self, step: str) -> Callable[..., Awaitable[Any]]:
        async def on_worker(*args: Any, **kwargs: Any) -> Any:
            return await self.workers.call(
                _step_on_worker, self.language, step, args, kwargs, what=f"the {step} step"
            )

        return on_worker


async def _step_on_worker(
    judge: Judge, language: Language, step: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """One step of :class:`GenerationSteps` on a Ray worker, whose services are the judge."""
    return await getattr(GenerationSteps(judge, language=language), step)(*args, **kwargs)


def _words_only(text: str) -> str:
    return _NOT_WORDS.sub("", normalize(text))


_QUESTION_END = re.compile(r"[?？][\"'”’」』）)]*$")


def _not_a_question(question: str, style: Style, contexts: Sequence[str]) -> str | None:
    """Why ``question`` is not a usable question (small judges sometimes copy a sentence or
    write a summary instead), or ``None``. Web-search queries need no question mark."""
    if style != "web" and not _QUESTION_END.search(question.strip()):
        return f"no question mark: {question!r}"
    text = _words_only(question)
    if any(text in _words_only(context) for context in contexts):
        return f"copied from the passage: {question!r}"
    return None


def _copied_example(written: WrittenQuestion, language: Language) -> str | None:
    """Why ``written`` is a copy of the ``question`` template's examples (its question or its
    answer, letters and digits compared), or ``None``. The embedded 0.5B judge was seen
    writing the examples' refund question and answer for chunks about MLflow: nothing
    answers them, so the unanswerable check alone kept them (bench/RESULTS_adversarial.md).

    >>> refund = "The documents do not say whether shipping costs are refunded."
    >>> _copied_example(WrittenQuestion("Do I get my results back?", refund), "en")[:40]
    "answer copied from the prompt's example:"
    >>> _copied_example(WrittenQuestion("退货的时候运费能退吗?", "文档没有说明。"), "zh")
    "copied from the prompt's example: '退货的时候运费能退吗?'"
    """
    questions, answers = _example_texts(language)
    if _words_only(written.question) in questions:
        return f"copied from the prompt's example: {written.question!r}"
    if _words_only(written.answer) in answers:
        return f"answer copied from the prompt's example: {written.answer!r}"
    return None


@functools.cache
def _example_texts(language: Language) -> tuple[frozenset[str], frozenset[str]]:
    """The questions and answers of the ``question`` template's examples in ``language``,
    letters and digits only."""
    outputs = [example.outputs for example in load_prompt("question", language).examples]
    return (
        frozenset(_words_only(str(o["question"])) for o in outputs if "question" in o),
        frozenset(_words_only(str(o["answer"])) for o in outputs if "answer" in o),
    )


def _recorded_usage(record: dict[str, Any], *phases: str) -> list[Usage]:
    """The usage an earlier run recorded with an attempt (nothing for older records)."""
    usage = record.get("usage") or {}
    return [Usage(**usage[phase]) if phase in usage else Usage() for phase in phases]
