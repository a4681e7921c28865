"""The built-in judgments, in the order the planner asks for them.

With a judge that batches verdicts the standard suite (faithfulness, answer relevancy,
context precision, context recall) costs four calls, two in sequence:

1. ``response_analysis`` reads the question and the response once: the response's claims.
2. ``reverse_questions`` reads the response alone: the questions it answers (shown the
   question, a judge copies it).
3. ``reference_review`` reads question, reference and contexts once: the reference's
   statements with the contexts that support them, and each context's usefulness.
4. ``verify`` (after 1) checks all claims against all passages in one call.

A judge that cannot batch verdicts (small local models) gets one yes/no question per
verdict instead.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, Field
from rapidfuzz import fuzz

from ragmeter._text import contains_cjk, figures_missing, normalize, split_sentences
from ragmeter.dataset import Sample
from ragmeter.judge import JudgeError, Judgment
from ragmeter.steps._facts import (
    AbstentionCheck,
    AnswerRelevance,
    ClaimSource,
    ContextVerdict,
    CustomAnswer,
    Entity,
    Facts,
    Need,
    PassageSource,
    Statement,
    Support,
)
from ragmeter.steps._table import (
    DataValue,
    Generate,
    JudgmentKind,
    Request,
    Verdict,
    judgment,
    register,
)

SOURCE_ORDER: tuple[PassageSource, ...] = (
    "reference",
    "response",
    "contexts",
    "reference_contexts",
)
ANY_CONTEXT = "contexts:any"


class StepError(JudgeError):
    """The judge's answer could not be used (e.g. fewer verdicts than claims, twice)."""


# -- answers: each task's output keys, written once (tests/prompts checks the task texts) --------
class ClaimsOutput(BaseModel):
    claims: list[str]


class QuestionsOutput(BaseModel):
    questions: list[str]
    noncommittal: Literal[0, 1] = 0


class StandaloneOutput(BaseModel):
    standalone: str = ""


class AbstainsOutput(BaseModel):
    abstains: Literal[0, 1]
    abstains_reason: str = ""


class StatementItem(BaseModel):
    text: str
    contexts: list[int] = Field(default_factory=list)


class UsefulnessItem(BaseModel):
    index: int
    useful: Literal[0, 1]
    reason: str = ""


class EntityItem(BaseModel):
    entity: str
    in_contexts: Literal[0, 1] = 0


class SupportItem(BaseModel):
    claim: int
    passages: list[int] = Field(default_factory=list)
    reason: str = ""


class StatementsOutput(BaseModel):
    statements: list[StatementItem]


class UsefulnessOutput(BaseModel):
    usefulness: list[UsefulnessItem]


class EntitiesOutput(BaseModel):
    entities: list[EntityItem]


class SupportOutput(BaseModel):
    support: list[SupportItem]


# -- 1. the response -----------------------------------------------------------------------------
def _with_conversation(request: Request, inputs: dict[str, DataValue]) -> dict[str, DataValue]:
    """``inputs`` after a ``conversation`` block of the earlier turns when the sample is a
    turn of a conversation (its ``question`` is then the user's latest message); unchanged
    for a single-turn sample."""
    conversation = request.sample.conversation
    return inputs if conversation is None else {"conversation": conversation, **inputs}


def _response_inputs(request: Request) -> dict[str, DataValue]:
    return _with_conversation(
        request,
        {"question": request.sample.user_input or "", "answer": request.sample.response or ""},
    )


def _n_questions(request: Request) -> int:
    return max((need.n for need in request.needs), default=0)


def _read_claims(judgment: Judgment[ClaimsOutput], request: Request) -> list[str]:
    """The claims that come from the response: one the judge copied from the question or
    an example, or repeated, is left out and recorded (``facts.discarded``)."""
    response, question = request.sample.response or "", request.sample.user_input or ""
    kept: list[str] = []
    for claim in (c.strip() for c in judgment.output.claims):
        if not is_claim(claim):
            continue
        why = _not_from(claim, response, question, kept)
        if why is None:
            kept.append(claim)
        else:
            request.facts.discard("response_claims", claim, why)
    return kept


def sentence_claims(text: str) -> list[str]:
    """The claims of ``text`` as its own sentences (a semicolon ends one too), for a judge
    whose verdicts are likelihoods: asked to write claims, the embedded 0.5B model returned
    none for plain answers, copied the question or repeated a sentence. A piece too short
    to state anything alone ("No.", "可以。") joins the sentence after it; questions are
    left out.

    >>> sentence_claims("No. The warranty does not cover it; water damage is excluded.")
    ['No. The warranty does not cover it;', 'water damage is excluded.']
    >>> sentence_claims("可以。自签收之日起 7 天内可以退货。需要发票吗？")
    ['可以。自签收之日起 7 天内可以退货。']
    """
    pieces = [sentence for part in _SEMICOLON.split(text) for sentence in split_sentences(part)]
    claims: list[str] = []
    carried = ""
    for sentence in pieces:
        gap = "" if not carried or contains_cjk(sentence[:1]) else " "
        carried = f"{carried}{gap}{sentence}"
        if len(_letters(sentence)) < MIN_CLAIM_CHARS:
            continue  # joins the next sentence
        if is_claim(carried) and _letters(carried) not in {_letters(c) for c in claims}:
            claims.append(carried)
        carried = ""
    if carried and claims and is_claim(carried):
        claims[-1] = f"{claims[-1]} {carried}"
    return claims


def _claims_without_call(request: Request) -> list[str] | None:
    calibrated = request.facts.calibrated_verdicts
    return sentence_claims(request.sample.response or "") if calibrated else None


RESPONSE_CLAIMS = register(
    JudgmentKind(
        name="response_claims",
        template="response_analysis",
        task="claims",
        output=ClaimsOutput,
        inputs=_response_inputs,
        read=_read_claims,
        without_call=_claims_without_call,
    )
)


def _answer_only(request: Request) -> dict[str, DataValue]:
    """Answer relevancy's reverse generation sees the answer alone: shown the question, a
    judge copies it, and every answer then scores as relevant."""
    return {"answer": request.sample.response or ""}


@functools.cache
def _example_questions() -> frozenset[str]:
    """The questions of the reverse-generation examples (both languages), normalised."""
    return frozenset(
        _letters(q)
        for language in ("en", "zh")
        for example in judgment("questions").load(language).examples
        for q in example.outputs.get("questions", [])
    )


def _copied(question: str, request: Request) -> str | None:
    """Why a generated question cannot count: it is the user's question or an example's."""
    text = _letters(question)
    asked = {
        _letters(request.sample.user_input or ""),
        _letters(request.sample.question_in_context),
    }
    if text in asked:
        return "the user's question word for word"
    if text in _example_questions():
        return "a question of the prompt's examples"
    return None


def _check_questions(output: QuestionsOutput, request: Request) -> str | None:
    copies = [q for q in output.questions if q.strip() and _copied(q, request)]
    return f"{len(copies)} generated questions are copies" if copies else None


def _read_questions(
    judgment: Judgment[QuestionsOutput], request: Request
) -> tuple[list[str], bool]:
    questions: list[str] = []
    for question in (q.strip() for q in judgment.output.questions):
        why = _copied(question, request) if question else "empty"
        if why is None and _letters(question) not in {_letters(q) for q in questions}:
            questions.append(question)
        elif question:
            request.facts.discard("questions", question, why or "a repeat")
    questions = questions[: _n_questions(request)]
    if request.facts.calibrated_verdicts:
        # The embedded judge (a small model whose verdicts come from likelihoods) marks nearly
        # every answer noncommittal (37 of the 38 WikiEval dev answers it read): the refusal
        # phrases decide for it, as they do whether it abstains.
        return questions, refusal_phrase(request.sample.response or "") is not None
    return questions, bool(judgment.output.noncommittal)


def _store_questions(facts: Facts, request: Request, value: tuple[list[str], bool]) -> None:
    facts.questions, facts.noncommittal = value


QUESTIONS = register(
    JudgmentKind(
        name="questions",
        template="reverse_questions",
        task="questions",
        output=QuestionsOutput,
        inputs=_answer_only,
        applies=lambda request: not request.facts.calibrated_verdicts,
        params=lambda request: {"n": _n_questions(request)},
        # A copy is re-asked once; what is still a copy then is left out (and recorded).
        check=_check_questions,
        tolerate_check=True,
        read=_read_questions,
        store=_store_questions,
    )
)


async def _relevance_by_verdict(verdict: Verdict, request: Request) -> AnswerRelevance:
    sample = request.sample
    if hedge_phrase(sample.response or "") is not None:
        return AnswerRelevance(False, 0.0, noncommittal=True)
    relevant, p_yes = await verdict(
        "answers", {"text": sample.response or "", "question": sample.question_in_context}
    )
    return AnswerRelevance(relevant, p_yes)


#: Answer relevancy for a judge whose verdicts are likelihoods (the embedded 0.5B model),
#: in place of generated questions: one yes/no verdict, "can the question be answered from
#: the response?", and its P(yes). The questions that model wrote copied its examples or the
#: answer itself, the likelihood of the question given the answer rose with any shared name
#: (an off-topic answer about the same shop scored highest), and the embeddings' cosines of
#: any two questions of one domain lie in 0.8-0.95 (bench/RESULTS_meta_eval.md). A response
#: that leaves part of the question unanswered ("I do not have the exact dates") is
#: noncommittal: 0, without a call.
ANSWER_RELEVANCE = register(
    JudgmentKind[BaseModel, AnswerRelevance](
        name="answer_relevance",
        serves=lambda need: "answer_relevance" if need.fact == "questions" else None,
        applies=lambda request: request.facts.calibrated_verdicts,
        by_verdicts=_relevance_by_verdict,
    )
)


def _read_standalone(judgment: Judgment[StandaloneOutput], request: Request) -> str:
    standalone = judgment.output.standalone.strip()
    if not standalone:
        raise StepError("the judge did not rewrite the question as a standalone question")
    return standalone


def _standalone_without_call(request: Request) -> str | None:
    """The question itself for a single-turn sample. For a judge whose verdicts are
    likelihoods (the embedded 0.5B model) the user's earlier messages and the question
    (:attr:`Sample.question_in_context`), not a rewrite: asked for one, that model copied
    its few-shot example's questions or a sentence of the answer instead (a two-turn English
    and Chinese check, recorded with issue 21's closing note)."""
    sample = request.sample
    if sample.conversation is None:
        return sample.user_input or ""
    return sample.question_in_context if request.facts.calibrated_verdicts else None


#: A turn's question rewritten to stand alone ("and its price?" -> "What is the price of the
#: S3 earbuds?"), for answer relevancy: asked with the questions, in the same call, and only
#: for a sample with a history.
STANDALONE_QUESTION = register(
    JudgmentKind(
        name="standalone_question",
        template="response_analysis",
        task="standalone",
        output=StandaloneOutput,
        inputs=_response_inputs,
        read=_read_standalone,
        without_call=_standalone_without_call,
    )
)


# -- 2. the reference and the contexts ----------------------------------------------------------
def _reference_inputs(request: Request, with_contexts: bool) -> dict[str, DataValue]:
    inputs: dict[str, DataValue] = {
        "question": request.sample.user_input or "",
        "reference": request.sample.reference or "",
    }
    if with_contexts and request.contexts:
        inputs["contexts"] = request.contexts
    return _with_conversation(request, inputs)


def _attribution(request: Request) -> bool:
    """Whether the statements' supporting contexts are wanted."""
    return any(need.fact == "statements" and "contexts" in need.against for need in request.needs)


def _read_statements(judgment: Judgment[StatementsOutput], request: Request) -> list[Statement]:
    attributed = _attribution(request) and request.batched
    n = len(request.contexts)
    return [
        Statement(
            s.text.strip(),
            tuple(sorted({i - 1 for i in s.contexts if 1 <= i <= n})) if attributed else (),
        )
        for s in judgment.output.statements
        if is_claim(s.text)
    ]


def _statements_without_call(request: Request) -> list[Statement] | None:
    """The reference's sentences, for a judge whose verdicts are likelihoods (see
    :func:`sentence_claims`): its contexts are found by verdicts after."""
    if not request.facts.calibrated_verdicts:
        return None
    return [Statement(text) for text in sentence_claims(request.sample.reference or "")]


STATEMENTS = register(
    JudgmentKind(
        name="statements",
        template="reference_review",
        task="statements",
        output=StatementsOutput,
        inputs=lambda r: _reference_inputs(r, _attribution(r) and r.batched),
        read=_read_statements,
        without_call=_statements_without_call,
    )
)


def _no_contexts(request: Request) -> list[ContextVerdict] | None:
    return [] if not request.contexts else None


def _usefulness(
    name: str,
    template: str,
    inputs: Callable[[Request], dict[str, DataValue]],
    answer: Callable[[Sample], str | None] | None,
) -> JudgmentKind[UsefulnessOutput, list[ContextVerdict]]:
    """Each context's usefulness, asked through ``template``; for a judge that cannot batch
    verdicts, one yes/no question per context (``answer``: the answer the context should be
    useful for; ``None``: relevant to the question)."""

    async def by_verdicts(verdict: Verdict, request: Request) -> list[ContextVerdict]:
        async def one(context: str) -> ContextVerdict:
            # The text first and the question last: small models separate yes from no
            # much better in this order (bench/RESULTS_local_judge.md).
            inputs: dict[str, DataValue] = {"text": context}
            if answer is not None:
                inputs["answer"] = answer(request.sample) or ""
            # The verdict template has no conversation block: a follow-up ("and its
            # price?") comes with the user's earlier messages, so it keeps its referent.
            inputs["question"] = request.sample.question_in_context
            useful, p_yes = await verdict("useful" if answer else "relevant", inputs)
            return ContextVerdict(useful, "", p_yes)

        return list(await asyncio.gather(*(one(c) for c in request.contexts)))

    return JudgmentKind(
        name=name,
        template=template,
        task="usefulness",
        output=UsefulnessOutput,
        inputs=inputs,
        check=_rates_every_context,
        read=_read_usefulness,
        without_call=_no_contexts,
        by_verdicts=by_verdicts,
    )


def _rates_every_context(output: UsefulnessOutput, request: Request) -> str | None:
    n_contexts = len(request.contexts)
    rated = {item.index for item in output.usefulness} & set(range(1, n_contexts + 1))
    if len(rated) < n_contexts:
        return f"the judge rated {len(rated)} of {n_contexts} contexts"
    return None


def _read_usefulness(
    judgment: Judgment[UsefulnessOutput], request: Request
) -> list[ContextVerdict]:
    return _context_verdicts(
        judgment.output.usefulness, len(request.contexts), judgment.probabilities
    )


USEFULNESS_REFERENCE = register(
    _usefulness(
        "usefulness_reference",
        "reference_review",
        lambda r: _reference_inputs(r, True),
        lambda sample: sample.reference,
    )
)


def _read_entities(judgment: Judgment[EntitiesOutput], request: Request) -> list[Entity]:
    return [
        Entity(e.entity.strip(), bool(e.in_contexts) or _mentioned(e.entity, request.contexts))
        for e in judgment.output.entities
        if e.entity.strip()
    ]


ENTITIES = register(
    JudgmentKind(
        name="entities",
        template="reference_review",
        task="entities",
        output=EntitiesOutput,
        inputs=lambda r: _reference_inputs(r, True),
        read=_read_entities,
    )
)


def _attribution_applies(request: Request) -> bool:
    return (
        not request.batched
        and _attribution(request)
        and bool(request.facts.statements)
        and bool(request.contexts)
    )


ATTRIBUTION_NEED = Need("support", claims_of="reference", against=("contexts",), per_passage=True)


async def _attribute_by_verdicts(verdict: Verdict, request: Request) -> Support:
    statements = [s.text for s in request.facts.statements or []]
    return await _verify_by_verdicts(verdict, request, statements, ["contexts"], True)


def _store_attribution(facts: Facts, request: Request, support: Support) -> None:
    facts.support[("reference", ATTRIBUTION_NEED.against, True)] = support
    columns = context_columns(support)
    facts.statements = [
        Statement(s.text, tuple(j for j, c in enumerate(columns) if support.matrix[i][c]))
        for i, s in enumerate(facts.statements or [])
    ]


#: A judge that cannot batch verdicts attributes the reference's statements to the contexts
#: one yes/no question at a time, once the statements are known.
STATEMENT_CONTEXTS = register(
    JudgmentKind[BaseModel, Support](
        name="statement_contexts",
        serves=lambda need: (
            "support:reference"
            if need.fact == "statements" and "contexts" in need.against
            else None
        ),
        depends_on=("statements",),
        applies=_attribution_applies,
        by_verdicts=_attribute_by_verdicts,
        store=_store_attribution,
    )
)


def _utilization_inputs(request: Request) -> dict[str, DataValue]:
    return {**_response_inputs(request), "contexts": request.contexts}


def _relevance_inputs(request: Request) -> dict[str, DataValue]:
    return _with_conversation(
        request, {"question": request.sample.user_input or "", "contexts": request.contexts}
    )


USEFULNESS_RESPONSE = register(
    _usefulness(
        "usefulness_response",
        "context_utilization",
        _utilization_inputs,
        lambda sample: sample.response,
    )
)
USEFULNESS_QUESTION = register(
    _usefulness("usefulness_question", "context_relevance", _relevance_inputs, None)
)


# -- custom prompts --------------------------------------------------------------------------------
async def _ask_custom(generate: Generate, request: Request) -> CustomAnswer:
    """A custom metric's own prompt (one call), answered against its derived schema."""
    prompt = request.needs[0].prompt
    judgment = await generate(
        prompt.render(request.sample, request.facts.language),
        prompt.schema(),
        prompt_version=f"{prompt.key}/{request.facts.language}",
        scope=prompt.key,
    )
    return CustomAnswer(judgment.output.model_dump(mode="json"), judgment.distribution)


def _store_custom(facts: Facts, request: Request, answer: CustomAnswer) -> None:
    facts.custom[request.name] = answer


CUSTOM = register(
    JudgmentKind[BaseModel, CustomAnswer](
        name="custom",
        serves=lambda need: str(need.prompt.key) if need.fact == "custom" else None,
        call=_ask_custom,
        store=_store_custom,
    )
)


# -- abstention ------------------------------------------------------------------------------
def _read_abstains(judgment: Judgment[AbstainsOutput], request: Request) -> AbstentionCheck:
    return AbstentionCheck(bool(judgment.output.abstains), judgment.output.abstains_reason.strip())


def _abstains_by_phrases(request: Request) -> AbstentionCheck | None:
    """For a judge whose verdicts are likelihoods (the embedded one) the refusal phrases
    decide, without a call: its flag is unreliable (it marked 37 of 38 WikiEval answers
    noncommittal, see ``_read_questions``). Other judges are asked."""
    if not request.facts.calibrated_verdicts:
        return None
    phrase = refusal_phrase(request.sample.response or "")
    reason = f"refusal phrase {phrase!r}" if phrase else "no refusal phrase"
    return AbstentionCheck(phrase is not None, reason, "phrases")


#: Whether the response abstains, asked in the same call as the response's claims.
ABSTAINS = register(
    JudgmentKind(
        name="abstains",
        template="response_analysis",
        task="abstains",
        output=AbstainsOutput,
        inputs=_response_inputs,
        read=_read_abstains,
        without_call=_abstains_by_phrases,
    )
)


# -- 3. claims against passages ------------------------------------------------------------------
def _claims(request: Request, source: ClaimSource) -> list[str]:
    facts = request.facts
    if source == "response":
        return facts.response_claims or []
    return [s.text for s in facts.statements or []]


def _sources(request: Request) -> list[PassageSource]:
    kinds = {kind for need in request.needs for kind in need.against}
    return [k for k in SOURCE_ORDER if k in kinds]


def _support_kind(source: ClaimSource) -> JudgmentKind[SupportOutput, Support]:
    def inputs(request: Request) -> dict[str, DataValue]:
        _, texts = _passages(request.sample, _sources(request))
        return {"claims": _claims(request, source), "passages": texts}

    def without_call(request: Request) -> Support | None:
        claims = _claims(request, source)
        labels, texts = _passages(request.sample, _sources(request))
        if not claims:
            return Support((), tuple(labels), (), ())
        if request.batched and not texts:
            return Support(
                tuple(claims), (), tuple(() for _ in claims), ("no passage",) * len(claims)
            )
        return None

    def check(output: SupportOutput, request: Request) -> str | None:
        n = len(_claims(request, source))
        got = {item.claim for item in output.support} & set(range(1, n + 1))
        if len(got) < n:
            return f"the judge returned verdicts for {len(got)} of {n} claims"
        return None

    def read(judgment: Judgment[SupportOutput], request: Request) -> Support:
        claims = _claims(request, source)
        labels, texts = _passages(request.sample, _sources(request))
        items = {item.claim: item for item in judgment.output.support}
        rows, reasons = [], []
        for i in range(1, len(claims) + 1):
            supported = {j - 1 for j in items[i].passages if 1 <= j <= len(texts)}
            supported |= {j for j, t in enumerate(texts) if stated_verbatim(claims[i - 1], t)}
            rows.append(tuple(j in supported for j in range(len(texts))))
            reasons.append(items[i].reason)
        return Support(tuple(claims), tuple(labels), tuple(rows), tuple(reasons))

    async def by_verdicts(verdict: Verdict, request: Request) -> Support:
        per_passage = any(need.per_passage for need in request.needs)
        claims = _claims(request, source)
        return await _verify_by_verdicts(verdict, request, claims, _sources(request), per_passage)

    def store(facts: Facts, request: Request, support: Support) -> None:
        for need in request.needs:
            facts.support[(source, need.against, need.per_passage)] = support

    return JudgmentKind(
        name=f"support:{source}",
        template="verify",
        task="support",
        output=SupportOutput,
        inputs=inputs,
        check=check,
        read=read,
        depends_on=("response_claims" if source == "response" else "statements",),
        stage="verify",
        without_call=without_call,
        by_verdicts=by_verdicts,
        store=store,
    )


SUPPORT_RESPONSE = register(_support_kind("response"))
SUPPORT_REFERENCE = register(_support_kind("reference"))


async def _verify_by_verdicts(
    verdict: Verdict,
    request: Request,
    claims: list[str],
    sources: Sequence[PassageSource],
    per_passage: bool,
) -> Support:
    sample = request.sample
    labels, texts = _passages(sample, sources)
    if not claims:
        return Support((), tuple(labels), (), ())
    if not per_passage and "contexts" in sources and sample.retrieved_contexts:
        # One verdict per claim against all contexts together.
        keep = [i for i, label in enumerate(labels) if not label.startswith("context:")]
        labels = [labels[i] for i in keep] + [ANY_CONTEXT]
        texts = [texts[i] for i in keep] + ["\n\n".join(sample.retrieved_contexts)]

    # A claim's numbers and codes must be somewhere in a source's passages (the contexts
    # together: a claim may join two of them) for any of them to support it.
    groups = [_source_of(label) for label in labels]
    pooled = {g: "\n".join(t for t, h in zip(texts, groups) if h == g) for g in set(groups)}
    absent = [{g: figures_missing(claim, pooled[g]) for g in pooled} for claim in claims]

    async def one(i: int, j: int) -> tuple[bool, float | None]:
        claim, text = claims[i], texts[j]
        if stated_verbatim(claim, text):
            return True, 1.0  # the passage says it word for word: no call needed
        if absent[i][groups[j]]:
            return False, 0.0  # it states a number or code none of them has: no call
        return await verdict("supported", {"text": text, "statement": claim})

    width = len(texts)
    cells = await asyncio.gather(*(one(i, j) for i in range(len(claims)) for j in range(width)))
    grid = [cells[i * width : (i + 1) * width] for i in range(len(claims))]
    rows = tuple(tuple(supported for supported, _ in row) for row in grid)
    probabilities: tuple[tuple[float, ...], ...] = ()
    if all(p is not None for _, p in cells):
        probabilities = tuple(tuple(float(p or 0.0) for _, p in row) for row in grid)
    reasons = tuple(
        "; ".join(
            f"not in the {group.replace('_', ' ')}: {', '.join(figures)}"
            for group, figures in missing.items()
            if figures
        )
        for missing in absent
    )
    return Support(tuple(claims), tuple(labels), rows, reasons, probabilities)


def _source_of(label: str) -> str:
    """The source a passage label belongs to ("context:2" and "contexts:any": contexts)."""
    kind = label.split(":")[0]
    return {"context": "contexts", "reference_context": "reference_contexts"}.get(kind, kind)


# -- text helpers --------------------------------------------------------------------------------
def _not_from(text: str, response: str, question: str, kept: Sequence[str]) -> str | None:
    """Why ``text`` (a claim) does not come from ``response``, or ``None`` when it does: it
    repeats an earlier claim, or is a piece of the question that the response does not
    contain (a small judge copies the question into the claims). A resolved subject
    ("Paris." -> "Paris is the capital of France.") is kept.

    >>> _not_from("Paris is the capital of France.", "Paris.", "Capital of France?", []) is None
    True
    >>> _not_from("I order at 11:00 CET.", "It ships in a few days.",
    ...           "I order at 11:00 CET. When will it ship?", [])
    'copied from the question'
    """
    if any(_letters(text) == _letters(other) for other in kept):
        return "a repeat of an earlier claim"
    own = _letters(text)
    if own and own in _letters(question) and own not in _letters(response):
        return "copied from the question"
    return None


_QUESTION_MARKS = ("?", "？")
_SEMICOLON = re.compile(r"(?<=[;；])\s*")
_NOT_WORDS = re.compile(r"[\W_]+", re.UNICODE)
#: Shorter texts ("yes", "1 年") are contained in too many passages by chance.
MIN_VERBATIM_CHARS = 8
#: A sentence with fewer letters ("No.", "可以。") states nothing alone.
MIN_CLAIM_CHARS = 6


def is_claim(text: str) -> bool:
    """Whether a claim the judge extracted can be one: not empty and not a question (small
    judges sometimes copy the user's question into the claims)."""
    text = text.strip()
    return bool(text) and not text.endswith(_QUESTION_MARKS)


def stated_verbatim(claim: str, passage: str) -> bool:
    """Whether ``passage`` contains ``claim`` word for word (case, width, spacing and
    punctuation aside): then it supports the claim and no judge needs to be asked.

    >>> stated_verbatim("配合充电盒总续航 36 小时。", "S3 配合充电盒总续航36小时。")
    True
    >>> stated_verbatim("Battery lasts 36 hours", "The battery lasts 30 hours.")
    False
    """
    needle = _letters(claim)
    return len(needle) >= MIN_VERBATIM_CHARS and needle in _letters(passage)


@functools.lru_cache(maxsize=1024)
def _letters(text: str) -> str:
    """``text`` normalised, without spaces or punctuation: computed once per passage, not
    once per claim checked against it (a sample's passages meet every claim)."""
    return _NOT_WORDS.sub("", normalize(text))


def _passages(sample: Sample, sources: Sequence[PassageSource]) -> tuple[list[str], list[str]]:
    labels: list[str] = []
    texts: list[str] = []
    for source in sources:
        if source == "contexts":
            for i, context in enumerate(sample.retrieved_contexts or []):
                labels.append(f"context:{i + 1}")
                texts.append(context)
        elif source == "reference_contexts":
            # Always one column per reference context (never collapsed into "any context").
            for i, context in enumerate(sample.reference_contexts or []):
                labels.append(f"reference_context:{i + 1}")
                texts.append(context)
        else:
            labels.append(source)
            texts.append((sample.reference if source == "reference" else sample.response) or "")
    return labels, texts


def context_columns(support: Support) -> list[int]:
    """The matrix columns that hold contexts (one "any context" column or one per context)."""
    return [j for j, label in enumerate(support.passages) if str(label).startswith("context")]


def _context_verdicts(
    items: Sequence[UsefulnessItem], n_contexts: int, probabilities: list[float] | None
) -> list[ContextVerdict]:
    by_index = {item.index: item for item in items}
    missing = [i for i in range(1, n_contexts + 1) if i not in by_index]
    if missing:
        raise StepError(
            f"the judge rated {n_contexts - len(missing)} of {n_contexts} contexts "
            f"(missing {missing})"
        )
    usable = probabilities if probabilities and len(probabilities) == n_contexts else None
    return [
        # With P(useful) the verdict is P >= 0.5 (one number behind both), else the label.
        ContextVerdict(usable[i - 1] >= 0.5, by_index[i].reason, usable[i - 1])
        if usable
        else ContextVerdict(bool(by_index[i].useful), by_index[i].reason)
        for i in range(1, n_contexts + 1)
    ]


def _mentioned(entity: str, contexts: Sequence[str], threshold: float = 90.0) -> bool:
    """Whether an entity appears in the contexts, allowing for case, width and small variants."""
    target = normalize(entity)
    return bool(target) and any(
        target in normalize(c) or fuzz.partial_ratio(target, normalize(c)) >= threshold
        for c in contexts
    )


#: Phrases in which the answerer says it lacks the information (English and Chinese), matched
#: on normalised text: in any clause, they make a response noncommittal (:func:`hedge_phrase`).
_LACKS_INFORMATION = [
    r"\bi (?:do not|don't|really don't) know\b",
    r"\bi(?:'m| am) not (?:sure|certain|able|aware)\b",
    r"\bi (?:do not|don't|did not|didn't) have (?:access to )?(?:any |the |specific |exact "
    r"|precise |enough |further |more |current |up-to-date )+",
    r"\bno (?:relevant |specific |such )?(?:information|mention|details|data|answer)\b",
    r"\b(?:not|never) (?:mentioned|specified|stated)\b",
    r"\b(?:does|do|did)(?: not|n't) (?:mention|say|state|specify)\b",
    r"\b(?:cannot|can't|can not|could not|couldn't|unable to|not able to)"
    r" (?:answer|find|determine|tell|provide|say|locate|confirm)\b",
    r"\b(?:insufficient|not enough) (?:information|context|data)\b",
    r"\bthere is no (?:information|mention|record)\b",
    r"不知道|不清楚|不确定|没有找到|未找到|找不到|查不到|未查到|无法回答|无法确定|无法得知",
    r"无法提供|无从得知|未提及|没有提及|未提到|没有提到|未说明|没有说明|并未说明",
    r"没有(?:相关|具体|这方面的|关于.{0,20}的)?(?:信息|资料|内容|说明|记载)",
    r"(?:文档|资料|上下文|材料)中?(?:并)?(?:没有|未|不)(?:包含|涉及|提供)",
    r"暂无(?:相关)?(?:信息|资料)",
]
_HEDGES = re.compile("|".join(_LACKS_INFORMATION))
#: Phrases that refuse to answer: those, and ones that also state facts ("water damage is not
#: covered"), so a clause made of them refuses only where every clause does.
_REFUSALS = re.compile(
    "|".join(
        [
            *_LACKS_INFORMATION,
            r"\b(?:not|never) (?:provided|given|covered|included|available|found|addressed"
            r"|discussed)\b",
            r"\b(?:does|do|did)(?: not|n't) (?:contain|include|provide|cover|address|discuss)\b",
        ]
    )
)
#: Clauses that neither answer nor refuse: apologies, courtesy, "contact support", "based on
#: the documents".
_FILLER = re.compile(
    "|".join(
        [
            r"^(?:i'm |i am |we're |we are )?(?:sorry|afraid|apologi[sz]e)\b",
            r"^(?:unfortunately|sadly|regrettably)\b",
            r"^(?:please|you (?:may|might|can|could) (?:want to )?|i (?:recommend|suggest))"
            r" ?(?:contact|check|refer|consult|reach|ask|visit|try)\b",
            r"^(?:based on|according to|from|in) (?:the )?"
            r"(?:provided |given |retrieved |available )?"
            r"(?:documents?|context|information|sources?|passages?)\b",
            r"^(?:抱歉|对不起|很抱歉|非常抱歉|不好意思|很遗憾|遗憾的是)",
            r"^(?:请|建议您?|您可以|可以)(?:直接)?(?:联系|咨询|查阅|查看|致电|访问)",
            r"^(?:根据|依据|基于)(?:所?提供的|现有的?|检索到的|给定的)?(?:文档|资料|信息|上下文|材料)",
        ]
    )
)
_CLAUSES = re.compile(r"[.!?;,:\n。！？；，：、]+|\s(?=but\b|however\b)|(?=但是|但|不过|然而)")


def hedge_phrase(text: str) -> str | None:
    """The first refusal phrase in any clause of ``text`` ("... but I do not have the exact
    dates"): the response leaves part of the question unanswered, i.e. is noncommittal as
    answer relevancy counts it, though it may answer the rest.

    >>> hedge_phrase("It starts in September, but I do not have the exact dates.")
    'i do not have the exact '
    >>> hedge_phrase("资料里没有说明，不过应该可以。"), hedge_phrase("It lasts 12 days.")
    ('没有说明', None)
    >>> hedge_phrase("No. The warranty does not cover water damage.") is None  # a fact
    True
    """
    match = _HEDGES.search(normalize(text).replace("’", "'"))
    return match.group(0) if match is not None else None


def refusal_phrase(text: str) -> str | None:
    """The refusal phrase that makes ``text`` an abstention, or ``None`` when it answers.

    Every clause must refuse ("I don't know", "没有找到相关信息") or be filler (an apology,
    "please contact support", "according to the documents"), at least one refusing: a
    partial answer with a caveat answers.

    >>> refusal_phrase("I'm sorry, I could not find information about that.")
    'could not find'
    >>> refusal_phrase("抱歉，文档中未提及退货运费，建议联系客服。")
    '未提及'
    >>> refusal_phrase("The warranty is 2 years, but water damage is not mentioned.") is None
    True
    """
    text = normalize(text).replace("’", "'")
    found: str | None = None
    for clause in _CLAUSES.split(text):
        clause = clause.strip(" \"'“”()（）")
        if not clause:
            continue
        match = _REFUSALS.search(clause)
        if match is not None:
            found = found or match.group(0)
        elif not _FILLER.search(clause):
            return None
    return found
