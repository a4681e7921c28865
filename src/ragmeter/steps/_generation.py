"""The judge work of test-set generation: reading chunks, writing personas, writing questions,
and checking that each reference answer is supported by its passages.

Like the metric steps these are the only code that talks to the judge for a test set; the
answerability check is the same attributed-statements step that context recall uses, so a
generated sample is accepted by exactly the verification its evaluation will rely on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from ragmeter.dataset import Sample
from ragmeter.judge import Judge, JudgeError
from ragmeter.prompts import Language, load_prompt
from ragmeter.steps._facts import Facts, Need, Statement
from ragmeter.steps._judgments import stated_verbatim
from ragmeter.steps._runner import StepRunner
from ragmeter.steps._schemas import (
    CalculationOutput,
    ChunkAnalysisOutput,
    FalsePremiseOutput,
    PersonasOutput,
    QuestionOutput,
)

QuestionKind = Literal[
    "single_hop",
    "multi_hop",
    "comparison",
    "unanswerable",
    "false_premise",
    "calculation",
    "temporal",
]
#: What the judge writes for each kind beyond a question and its answer.
QUESTION_OUTPUTS: dict[str, type[QuestionOutput | FalsePremiseOutput | CalculationOutput]] = {
    "false_premise": FalsePremiseOutput,
    "calculation": CalculationOutput,
}
Style = Literal["plain", "colloquial", "typos", "web"]
Length = Literal["short", "medium", "long"]
STYLES: tuple[Style, ...] = ("plain", "colloquial", "typos", "web")
LENGTHS: tuple[Length, ...] = ("short", "medium", "long")
ATTRIBUTED_STATEMENTS = Need("statements", against=("contexts",))
ANSWERS_THE_QUESTION = Need("usefulness_question")
#: Keyphrases and entities kept per chunk (the prompt asks for at most 5 and 8).
MAX_KEYPHRASES = 5
MAX_ENTITIES = 8


@dataclass(frozen=True)
class ChunkAnalysis:
    summary: str
    keyphrases: tuple[str, ...]
    entities: tuple[str, ...]


@dataclass(frozen=True)
class Persona:
    name: str
    description: str = ""

    def __str__(self) -> str:
        return f"{self.name}: {self.description}" if self.description else self.name


@dataclass(frozen=True)
class WrittenQuestion:
    """A question and its reference answer; a false-premise question also has the false
    ``premise`` it assumes, a calculation question its ``values`` (each as written, with the
    1-based passage it comes from) and its arithmetic ``expression``."""

    question: str
    answer: str
    premise: str = ""
    values: tuple[tuple[str, int], ...] = ()
    expression: str = ""

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> WrittenQuestion:
        """From :func:`dataclasses.asdict` output read back from JSON (lists for tuples)."""
        values = tuple((str(v[0]), int(v[1])) for v in record.get("values", ()))
        return cls(**{**record, "values": values})


@dataclass(frozen=True)
class Answerability:
    """Whether the reference answer is supported by its passages, every passage needed."""

    answerable: bool
    statements: tuple[Statement, ...]
    reason: str = ""


class GenerationSteps(StepRunner):
    """Judge calls for test-set generation, in one language (the documents')."""

    def __init__(self, judge: Judge, *, language: Language, sample_id: str | None = None) -> None:
        super().__init__(judge, language=language, sample_id=sample_id)
        self._language: Language = language  # never None here, unlike StepRunner.language

    def _facts(self) -> Facts:
        return Facts(language=self._language)

    async def analyse_chunk(self, text: str) -> tuple[ChunkAnalysis, Facts]:
        """A chunk's summary, keyphrases and entities (one call)."""
        facts = self._facts()
        template = load_prompt("chunk_analysis", self._language)
        judgment = await self._ask(
            template,
            ["summary", "keyphrases", "entities"],
            {"passage": text},
            facts,
            schema=ChunkAnalysisOutput,
        )
        output = judgment.output
        analysis = ChunkAnalysis(
            summary=output.summary.strip(),
            keyphrases=_distinct(output.keyphrases)[:MAX_KEYPHRASES],
            entities=_distinct(output.entities)[:MAX_ENTITIES],
        )
        return analysis, facts

    async def personas(self, summaries: Sequence[str], n: int) -> tuple[list[Persona], Facts]:
        """``n`` personas who would ask about a corpus, from summaries of its chunks."""
        facts = self._facts()
        template = load_prompt("personas", self._language)

        def check(output: PersonasOutput) -> str | None:
            named = {p.name.strip() for p in output.personas if p.name.strip()}
            return None if len(named) >= n else f"the judge wrote {len(named)} of {n} personas"

        judgment = await self._ask(
            template,
            ["personas"],
            {"summaries": list(summaries)},
            facts,
            params={"n": n},
            schema=PersonasOutput,
            check=check,
        )
        personas: dict[str, Persona] = {}
        for item in judgment.output.personas:
            if name := item.name.strip():
                personas.setdefault(name, Persona(name, item.description.strip()))
        return list(personas.values())[:n], facts

    async def write_question(
        self,
        kind: QuestionKind,
        contexts: Sequence[str],
        *,
        focus: str,
        persona: Persona,
        style: Style,
        length: Length,
    ) -> tuple[WrittenQuestion, Facts]:
        """One question of ``kind`` and its reference answer, from ``contexts``."""
        facts = self._facts()
        template = load_prompt("question", self._language)
        params = {
            "style": template.fragments[f"style_{style}"],
            "length": template.fragments[f"length_{length}"],
        }
        inputs = {"persona": str(persona), "focus": focus, "contexts": list(contexts)}

        schema = QUESTION_OUTPUTS.get(kind, QuestionOutput)

        def check(output: Any) -> str | None:
            if not output.question.strip() or not output.answer.strip():
                return "the judge wrote an empty question or answer"
            if kind == "false_premise" and not output.premise.strip():
                return "the judge wrote no false premise"
            if kind == "calculation" and not (output.values and output.expression.strip()):
                return "the judge wrote no values or no expression"
            return None

        judgment = await self._ask(
            template,
            [kind],
            inputs,
            facts,
            params=params,
            schema=schema,
            check=check,
            output_keys={kind: tuple(schema.model_fields)},
        )
        output = judgment.output
        written = WrittenQuestion(output.question.strip(), output.answer.strip())
        if isinstance(output, FalsePremiseOutput):
            written = replace(written, premise=output.premise.strip())
        if isinstance(output, CalculationOutput):
            values = tuple((_number_text(v.value), v.passage) for v in output.values)
            written = replace(written, values=values, expression=output.expression.strip())
        return written, facts

    async def check_answerable(
        self, question: str, answer: str, contexts: Sequence[str]
    ) -> tuple[Answerability, Facts]:
        """Whether the reference answer is grounded and answers the question. Two checks run
        at once: the answer's statements attributed to the contexts (the step context recall
        uses), and whether the answer holds what the question asks (the step context
        relevance uses, with the answer as the passage). Answerable when every statement is
        supported, with several contexts every context supports some statement, and the
        answer answers the question."""
        grounded = Sample(user_input=question, reference=answer, retrieved_contexts=list(contexts))
        answering = Sample(user_input=question, retrieved_contexts=[answer])
        facts, relevance = await asyncio.gather(
            self.gather(grounded, [ATTRIBUTED_STATEMENTS]),
            self.gather(answering, [ANSWERS_THE_QUESTION]),
        )
        facts.usage = facts.usage + relevance.usage
        facts.prompt_versions |= relevance.prompt_versions
        error = facts.error_for([ATTRIBUTED_STATEMENTS]) or relevance.error_for(
            [ANSWERS_THE_QUESTION]
        )
        if error is not None:
            raise JudgeError(error)
        statements = tuple(facts.statements or ())
        verdict = _answerability(statements, len(contexts))
        answers = bool(relevance.usefulness_question and relevance.usefulness_question[0].useful)
        if verdict.answerable and not answers:
            reason = "the answer does not hold what the question asks"
            verdict = Answerability(False, statements, reason)
        return verdict, facts

    async def passages_answering(
        self, question: str, passages: Sequence[str]
    ) -> tuple[list[bool], Facts]:
        """Which of ``passages`` hold what ``question`` asks (the step context relevance
        uses; one call): an unanswerable question is kept only when none does."""
        facts = await self.gather(
            Sample(user_input=question, retrieved_contexts=list(passages)), [ANSWERS_THE_QUESTION]
        )
        error = facts.error_for([ANSWERS_THE_QUESTION])
        if error is not None:
            raise JudgeError(error)
        return [verdict.useful for verdict in facts.usefulness_question or []], facts

    async def premise_support(
        self, premise: str, passages: Sequence[str]
    ) -> tuple[list[int], Facts]:
        """The (1-based) passages that support ``premise`` (the ``verify`` template's
        ``support`` task; no call when a passage states it word for word)."""
        facts = self._facts()
        verbatim = [i for i, text in enumerate(passages, start=1) if stated_verbatim(premise, text)]
        if verbatim:
            return verbatim, facts

        def check(output: Any) -> str | None:
            return None if any(item.claim == 1 for item in output.support) else "no verdict"

        judgment = await self._ask(
            load_prompt("verify", self._language),
            ["support"],
            {"claims": [premise], "passages": list(passages)},
            facts,
            check=check,
        )
        found = {
            j
            for item in judgment.output.support
            if item.claim == 1
            for j in item.passages
            if 1 <= j <= len(passages)
        }
        return sorted(found), facts

    async def check_false_premise(
        self, question: str, answer: str, premise: str, contexts: Sequence[str]
    ) -> tuple[Answerability, list[int], Facts]:
        """:meth:`check_answerable` for the correcting answer and :meth:`premise_support`
        for the false premise, at once: kept when the answer is answerable and no passage
        supports the premise."""
        (verdict, facts), (supporting, premise_facts) = await asyncio.gather(
            self.check_answerable(question, answer, contexts),
            self.premise_support(premise, contexts),
        )
        facts.usage = facts.usage + premise_facts.usage
        facts.prompt_versions |= premise_facts.prompt_versions
        return verdict, supporting, facts


def _number_text(value: str | float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _answerability(statements: tuple[Statement, ...], n_contexts: int) -> Answerability:
    if not statements:
        return Answerability(False, statements, "the answer states nothing checkable")
    unsupported = [s.text for s in statements if not s.contexts]
    if unsupported:
        return Answerability(
            False,
            statements,
            f"{len(unsupported)} of {len(statements)} statements of the answer are not "
            f"supported by the passages: {unsupported[0]!r}",
        )
    used = {i for s in statements for i in s.contexts}
    unused = [i + 1 for i in range(n_contexts) if i not in used]
    if n_contexts > 1 and unused:
        return Answerability(
            False,
            statements,
            f"passage(s) {unused} support no statement of the answer: the question does not "
            "need them",
        )
    return Answerability(True, statements)


def _distinct(items: Sequence[str]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for item in items:
        text = item.strip()
        if text and text.casefold() not in seen:
            seen[text.casefold()] = text
    return tuple(seen.values())
