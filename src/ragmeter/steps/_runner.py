"""The steps: the only code that talks to the judge. For one sample they turn the metrics'
needs into as few judge calls as possible, run independent calls concurrently, and share
every answer between the metrics that need it.

With a judge that batches verdicts the standard suite (faithfulness, answer relevancy,
context precision, context recall) costs three calls, two in sequence:

1. ``response_analysis`` reads the response once: its claims and reverse-generated questions.
2. ``reference_review`` reads question, reference and contexts once: the reference's
   statements with the contexts that support them, and each context's usefulness.
3. ``verify`` (after 1) checks all claims against all passages in one call.

A judge that cannot batch verdicts (small local models) gets one yes/no question per
verdict instead.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from pydantic import BaseModel
from rapidfuzz import fuzz

from ragmeter._text import normalize
from ragmeter.dataset import Sample
from ragmeter.judge import BinaryVerdict, Judge, JudgeConfigError, JudgeError
from ragmeter.prompts import Language, PromptTemplate, detect_language, load_prompt
from ragmeter.steps._facts import (
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
from ragmeter.steps._schemas import schema_for

SOURCE_ORDER: tuple[PassageSource, ...] = (
    "reference",
    "response",
    "contexts",
    "reference_contexts",
)
ANY_CONTEXT = "contexts:any"


class StepError(JudgeError):
    """The judge's answer could not be used (e.g. fewer verdicts than claims, twice)."""


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
    ) -> Any:
        """Ask the judge; when ``check`` finds the answer incomplete (e.g. fewer verdicts
        than claims), re-ask once, then give up with a :class:`StepError`."""
        messages = template.render(inputs, tasks, params=params)
        schema = schema or schema_for(template.name, tuple(tasks))
        problem = None
        for attempt in range(2 if check else 1):
            judgment = await self.judge.generate(
                messages,
                schema,
                prompt_version=template.key,
                scope=template.name,
                sample_id=self.sample_id,
                salt="|".join(
                    part
                    for part in (f"repeat-{self.repeat}" if self.repeat else "", "re-ask" * attempt)
                    if part
                ),
            )
            facts.usage = facts.usage + judgment.usage
            facts.prompt_versions.add(template.key)
            problem = check(judgment.output) if check else None
            if problem is None:
                return judgment
        raise StepError(f"{problem} (also after a re-ask)")

    # -- planning and running ----------------------------------------------------------------
    async def gather(
        self,
        sample: Sample,
        needs: Iterable[Need],
        *,
        while_verifying: Callable[[Facts], Awaitable[None]] | None = None,
    ) -> Facts:
        """The facts ``needs`` ask for: the first calls concurrently, then the verification
        of claims against passages. ``while_verifying`` runs as soon as the first facts are
        known, alongside the verification (e.g. the embedding calls of metrics that need no
        verdict), so it adds nothing to the sample's chain of calls."""
        needs = set(needs)
        language = self.language or detect_language(
            sample.user_input, sample.response, sample.reference
        )
        facts = Facts(language=language)
        wanted = {n.fact for n in needs}
        support = [n for n in needs if n.fact == "support"]
        want_claims = "response_claims" in wanted or any(n.claims_of == "response" for n in support)
        want_statements = "statements" in wanted or any(n.claims_of == "reference" for n in support)
        attribution = any(n.fact == "statements" and "contexts" in n.against for n in needs)
        questions = max((n.n for n in needs if n.fact == "questions"), default=0)

        first = []
        if want_claims or questions:
            first.append(self._response_analysis(sample, facts, want_claims, questions))
        if want_statements or {"usefulness_reference", "entities"} & wanted:
            first.append(
                self._reference_review(
                    sample,
                    facts,
                    statements=want_statements,
                    attribution=attribution,
                    usefulness="usefulness_reference" in wanted,
                    entities="entities" in wanted,
                )
            )
        for target in ("response", "question"):
            if f"usefulness_{target}" in wanted:
                first.append(self._usefulness(sample, facts, target))
        prompts = {n.prompt.key: n.prompt for n in needs if n.fact == "custom"}
        first += [self._custom(sample, facts, prompt) for prompt in prompts.values()]
        await asyncio.gather(*first)

        groups: dict[ClaimSource, list[Need]] = {}
        for need in support:
            groups.setdefault(need.claims_of or "response", []).append(need)
        await asyncio.gather(
            *(self._support(sample, facts, source, group) for source, group in groups.items()),
            *([while_verifying(facts)] if while_verifying is not None else []),
        )
        return facts

    @staticmethod
    def _record_error(facts: Facts, names: Iterable[str], error: Exception) -> None:
        if isinstance(error, JudgeConfigError):
            raise error  # a wrong key, model or endpoint fails every call: stop the run
        message = f"{type(error).__name__}: {error}"
        for name in names:
            facts.errors.setdefault(name, message)

    # -- 1. the response ---------------------------------------------------------------------
    async def _response_analysis(
        self, sample: Sample, facts: Facts, claims: bool, questions: int
    ) -> None:
        tasks = [t for t, on in (("claims", claims), ("questions", questions > 0)) if on]
        names = (["response_claims"] if claims else []) + (["questions"] if questions else [])
        template = load_prompt("response_analysis", facts.language)
        inputs = {"question": sample.user_input or "", "answer": sample.response or ""}
        try:
            judgment = await self._ask(template, tasks, inputs, facts, params={"n": questions})
        except JudgeError as error:
            self._record_error(facts, names, error)
            return
        output = judgment.output
        if claims:
            facts.response_claims = [c.strip() for c in output.claims if is_claim(c)]
        if questions:
            facts.questions = [q.strip() for q in output.questions if q.strip()][:questions]
            facts.noncommittal = bool(output.noncommittal)

    # -- 2. the reference and the contexts ----------------------------------------------------
    async def _reference_review(
        self,
        sample: Sample,
        facts: Facts,
        *,
        statements: bool,
        attribution: bool,
        usefulness: bool,
        entities: bool,
    ) -> None:
        contexts = sample.retrieved_contexts or []
        batched = self.judge.supports_batched_verdicts
        tasks = []
        if statements:
            tasks.append("statements")
        if usefulness and batched and contexts:
            tasks.append("usefulness")
        if entities:
            tasks.append("entities")
        jobs = []
        if tasks:
            jobs.append(
                self._reference_call(sample, facts, tasks, contexts, attribution and batched)
            )
        if usefulness and (not batched or not contexts):
            jobs.append(self._usefulness_by_verdicts(sample, facts, "reference"))
        await asyncio.gather(*jobs)
        if statements and attribution and not batched and facts.statements and contexts:
            need = Need("support", claims_of="reference", against=("contexts",), per_passage=True)
            await self._support(sample, facts, "reference", [need])
            if "support:reference" not in facts.errors:
                matrix = facts.support_for(need)
                columns = context_columns(matrix)
                facts.statements = [
                    Statement(
                        s.text, tuple(j for j, c in enumerate(columns) if matrix.matrix[i][c])
                    )
                    for i, s in enumerate(facts.statements)
                ]

    async def _reference_call(
        self,
        sample: Sample,
        facts: Facts,
        tasks: list[str],
        contexts: list[str],
        attribution: bool,
    ) -> None:
        template = load_prompt("reference_review", facts.language)
        inputs: dict[str, Any] = {
            "question": sample.user_input or "",
            "reference": sample.reference or "",
        }
        if contexts and (attribution or "usefulness" in tasks or "entities" in tasks):
            inputs["contexts"] = contexts
        fact_names = [
            {"statements": "statements", "usefulness": "usefulness_reference"}.get(t, t)
            for t in tasks
        ]
        check = _rates_every_context(len(contexts)) if "usefulness" in tasks else None
        try:
            judgment = await self._ask(template, tasks, inputs, facts, check=check)
            output = judgment.output
            if "usefulness" in tasks:
                facts.usefulness_reference = _context_verdicts(
                    output.usefulness, len(contexts), judgment.probabilities
                )
        except JudgeError as error:
            self._record_error(facts, fact_names, error)
            return
        if "statements" in tasks:
            facts.statements = [
                Statement(
                    s.text.strip(),
                    tuple(sorted({i - 1 for i in s.contexts if 1 <= i <= len(contexts)}))
                    if attribution
                    else (),
                )
                for s in output.statements
                if is_claim(s.text)
            ]
        if "entities" in tasks:
            facts.entities = [
                Entity(e.entity.strip(), bool(e.in_contexts) or _mentioned(e.entity, contexts))
                for e in output.entities
                if e.entity.strip()
            ]

    async def _usefulness(self, sample: Sample, facts: Facts, target: str) -> None:
        """Each context's usefulness for the response given (context utilization) or for the
        question alone (context relevance)."""
        name = f"usefulness_{target}"
        contexts = sample.retrieved_contexts or []
        if not contexts:
            setattr(facts, name, [])
            return
        if not self.judge.supports_batched_verdicts:
            await self._usefulness_by_verdicts(sample, facts, target)
            return
        template_name = "context_utilization" if target == "response" else "context_relevance"
        template = load_prompt(template_name, facts.language)
        inputs: dict[str, Any] = {"question": sample.user_input or ""}
        if target == "response":
            inputs["answer"] = sample.response or ""
        inputs["contexts"] = contexts
        try:
            judgment = await self._ask(
                template, ["usefulness"], inputs, facts, check=_rates_every_context(len(contexts))
            )
            setattr(
                facts,
                name,
                _context_verdicts(
                    judgment.output.usefulness, len(contexts), judgment.probabilities
                ),
            )
        except JudgeError as error:
            self._record_error(facts, [name], error)

    async def _usefulness_by_verdicts(self, sample: Sample, facts: Facts, target: str) -> None:
        name = f"usefulness_{target}"
        contexts = sample.retrieved_contexts or []
        answer = {"reference": sample.reference, "response": sample.response}.get(target)
        task = "relevant" if target == "question" else "useful"
        template = load_prompt("verdict", facts.language)

        async def one(context: str) -> ContextVerdict:
            # The text first and the question last: small models separate yes from no
            # much better in this order (bench/RESULTS_local_judge.md).
            inputs = {"text": context}
            if task == "useful":
                inputs["answer"] = answer or ""
            inputs["question"] = sample.user_input or ""
            judgment = await self._ask(template, [task], inputs, facts, schema=BinaryVerdict)
            p_yes = judgment.probabilities[0] if judgment.probabilities else None
            return ContextVerdict(bool(judgment.output.verdict), "", p_yes)

        try:
            verdicts = await asyncio.gather(*(one(c) for c in contexts))
        except JudgeError as error:
            self._record_error(facts, [name], error)
            return
        setattr(facts, name, list(verdicts))

    # -- custom prompts --------------------------------------------------------------------------
    async def _custom(self, sample: Sample, facts: Facts, prompt: Any) -> None:
        """A custom metric's own prompt (one call), answered against its derived schema."""
        messages = prompt.render(sample, facts.language)
        version = f"{prompt.key}/{facts.language}"
        try:
            judgment = await self.judge.generate(
                messages,
                prompt.schema(),
                prompt_version=version,
                scope=prompt.key,
                sample_id=self.sample_id,
                salt=f"repeat-{self.repeat}" if self.repeat else "",
            )
        except JudgeError as error:
            self._record_error(facts, [prompt.key], error)
            return
        facts.usage = facts.usage + judgment.usage
        facts.prompt_versions.add(version)
        facts.custom[prompt.key] = CustomAnswer(
            judgment.output.model_dump(mode="json"), judgment.distribution
        )

    # -- 3. claims against passages ------------------------------------------------------------
    async def _support(
        self, sample: Sample, facts: Facts, source: ClaimSource, needs: list[Need]
    ) -> None:
        claims = (
            facts.response_claims
            if source == "response"
            else ([s.text for s in facts.statements] if facts.statements is not None else None)
        )
        error_name = f"support:{source}"
        if claims is None:
            return  # the claims themselves failed; that error is already recorded
        kinds = {kind for need in needs for kind in need.against}
        sources = [k for k in SOURCE_ORDER if k in kinds]
        per_passage = any(need.per_passage for need in needs)
        labels, texts = _passages(sample, sources)
        try:
            if not claims:
                support = Support((), tuple(labels), (), ())
            elif self.judge.supports_batched_verdicts:
                support = await self._verify_batched(facts, claims, labels, texts)
            else:
                support = await self._verify_by_verdicts(
                    facts, claims, labels, texts, sample, sources, per_passage
                )
        except JudgeError as error:
            self._record_error(facts, [error_name], error)
            return
        for need in needs:
            facts.support[(source, need.against, need.per_passage)] = support

    async def _verify_batched(
        self, facts: Facts, claims: list[str], labels: list[str], texts: list[str]
    ) -> Support:
        if not texts:
            return Support(
                tuple(claims), (), tuple(() for _ in claims), ("no passage",) * len(claims)
            )
        template = load_prompt("verify", facts.language)
        inputs = {"claims": claims, "passages": texts}

        def check(output: Any) -> str | None:
            got = {item.claim for item in output.support} & set(range(1, len(claims) + 1))
            if len(got) < len(claims):
                return f"the judge returned verdicts for {len(got)} of {len(claims)} claims"
            return None

        judgment = await self._ask(template, ["support"], inputs, facts, check=check)
        items = {item.claim: item for item in judgment.output.support}
        rows, reasons = [], []
        for i in range(1, len(claims) + 1):
            supported = {j - 1 for j in items[i].passages if 1 <= j <= len(texts)}
            supported |= {j for j, t in enumerate(texts) if stated_verbatim(claims[i - 1], t)}
            rows.append(tuple(j in supported for j in range(len(texts))))
            reasons.append(items[i].reason)
        return Support(tuple(claims), tuple(labels), tuple(rows), tuple(reasons))

    async def _verify_by_verdicts(
        self,
        facts: Facts,
        claims: list[str],
        labels: list[str],
        texts: list[str],
        sample: Sample,
        sources: list[PassageSource],
        per_passage: bool,
    ) -> Support:
        if not per_passage and "contexts" in sources and sample.retrieved_contexts:
            # One verdict per claim against all contexts together.
            keep = [i for i, label in enumerate(labels) if not label.startswith("context:")]
            labels = [labels[i] for i in keep] + [ANY_CONTEXT]
            texts = [texts[i] for i in keep] + ["\n\n".join(sample.retrieved_contexts)]
        template = load_prompt("verdict", facts.language)

        async def one(claim: str, text: str) -> tuple[bool, float | None]:
            if stated_verbatim(claim, text):
                return True, 1.0  # the passage says it word for word: no call needed
            inputs = {"text": text, "statement": claim}
            judgment = await self._ask(template, ["supported"], inputs, facts, schema=BinaryVerdict)
            p_yes = judgment.probabilities[0] if judgment.probabilities else None
            return bool(judgment.output.verdict), p_yes

        cells = await asyncio.gather(*(one(c, t) for c in claims for t in texts))
        width = len(texts)
        rows = tuple(
            tuple(cells[i * width + j][0] for j in range(width)) for i in range(len(claims))
        )
        probabilities = tuple(
            max((cells[i * width + j][1] or 0.0 for j in range(width)), default=None)
            if width and all(cells[i * width + j][1] is not None for j in range(width))
            else None
            for i in range(len(claims))
        )
        return Support(tuple(claims), tuple(labels), rows, ("",) * len(claims), probabilities)


_QUESTION_MARKS = ("?", "？")
_NOT_WORDS = re.compile(r"[\W_]+", re.UNICODE)
#: Shorter texts ("yes", "1 年") are contained in too many passages by chance.
MIN_VERBATIM_CHARS = 8


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
    needle = _NOT_WORDS.sub("", normalize(claim))
    return len(needle) >= MIN_VERBATIM_CHARS and needle in _NOT_WORDS.sub("", normalize(passage))


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


def _rates_every_context(n_contexts: int) -> Callable[[Any], str | None]:
    def check(output: Any) -> str | None:
        rated = {item.index for item in output.usefulness} & set(range(1, n_contexts + 1))
        if len(rated) < n_contexts:
            return f"the judge rated {len(rated)} of {n_contexts} contexts"
        return None

    return check


def _context_verdicts(
    items: Sequence[Any], n_contexts: int, probabilities: list[float] | None
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
        ContextVerdict(
            bool(by_index[i].useful), by_index[i].reason, usable[i - 1] if usable else None
        )
        for i in range(1, n_contexts + 1)
    ]


def _mentioned(entity: str, contexts: Sequence[str], threshold: float = 90.0) -> bool:
    """Whether an entity appears in the contexts, allowing for case, width and small variants."""
    target = normalize(entity)
    return (
        any(
            target in normalize(c) or fuzz.partial_ratio(target, normalize(c)) >= threshold
            for c in contexts
        )
        if target
        else False
    )
