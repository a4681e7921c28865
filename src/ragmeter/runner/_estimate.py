"""What a run would ask its judge, predicted without asking it: calls, tokens and cost.

The prediction runs the real planner (:class:`ragmeter.steps.StepRunner`) on every sample
still to judge, against an :class:`EstimatingJudge`: a judge that answers each request with
a schema-valid synthetic answer sized from the request's own data (a response's claims are
its sentences, a verdict list has one item per claim or context) and counts the calls and
the tokens of the rendered prompts. So a judge that batches verdicts (one call for all
claims) and one that asks a yes/no question per claim (the embedded judge) are counted by
the code the run itself uses. Answers already in the judge's cache are read from it (they
are no calls, and their real claims size what follows); nothing is written to it.

Where a prediction can be off: the judge may split a text into more or fewer claims than it
has sentences (per-verdict judges make calls per claim), and a real run re-asks an answer
that is incomplete or malformed, which synthetic answers never are.
"""

from __future__ import annotations

import contextlib
import re
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel, ValidationError

from ragmeter.dataset import Dataset, DatasetLike, Sample
from ragmeter.judge import (
    Cache,
    Judge,
    JudgeConfigError,
    Judgment,
    Message,
    NullCache,
    OutputT,
    Price,
    TextLikelihood,
    Usage,
    estimate_tokens,
)
from ragmeter.metrics import Metric, SampleMetric, resolve_metrics
from ragmeter.prompts import Language
from ragmeter.results import STORE_FILE, RunDatabase
from ragmeter.runner._judged import judges_for
from ragmeter.runner._sync import synchronous

#: A data block of a rendered prompt (``ragmeter.prompts.data_block``): ``<name>...</name>``.
_BLOCK = re.compile(r"^<([a-z_]+)>\n(.*?)\n</\1>$", re.DOTALL | re.MULTILINE)
_ITEM = re.compile(r'<item index="\d+">(.*?)</item>', re.DOTALL)
#: Where a sentence ends: after . ! ? ; and their full-width forms, or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
_NOT_WORDS = re.compile(r"[\W_]+")
#: Letters (or CJK characters) a sentence needs to be predicted as a claim of its own.
_MIN_CLAIM_CHARS = 4
#: A reason or other free text in an answer: about one short sentence.
_FREE_TEXT = "a short reason given for the verdict in one sentence"
#: How many questions an answer is assumed to be reverse-questioned with (answer relevancy's
#: default strictness); only completion tokens depend on it.
_QUESTIONS = 3

#: The embedded judge's measured speed (``ragmeter.judge._local``: an idle 2-core machine,
#: prompt tokens per second and seconds per generated token, by decoding threads).
LOCAL_SPEED = {1: (45.0, 0.062), 2: (78.0, 0.039)}


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (what a judge's claims are predicted from).

    >>> sentences("Paris. It has 2 million people! 巴黎是首都。人口两百万")
    ['Paris.', 'It has 2 million people!', '巴黎是首都。', '人口两百万']
    """
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


def claim_texts(text: str) -> list[str]:
    """The claims a judge is predicted to read in ``text``: its sentences, less the very short
    ones ("Yes.", "可以。") that judges fold into the next, unless nothing else is left.

    >>> claim_texts("Yes. The warranty lasts one year.")
    ['The warranty lasts one year.']
    """
    said = sentences(text)
    kept = [s for s in said if len(_NOT_WORDS.sub("", s)) >= _MIN_CLAIM_CHARS]
    return kept or said


def _blocks(messages: Sequence[Message]) -> dict[str, str]:
    """The data blocks of the request's own data (its last user message)."""
    last = next((m.content for m in reversed(messages) if m.role == "user"), "")
    return {name: body for name, body in _BLOCK.findall(last)}


def _items(block: str | None) -> list[str]:
    return _ITEM.findall(block or "")


class _Peek(Cache):
    """The real judge's cache, read but never written; this estimate's own answers apart."""

    def __init__(self, real: Cache) -> None:
        self.real = real
        self.memory: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        return self.memory.get(key) or self.real.get(key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.memory[key] = value


def price_of(judge: Judge) -> Price | None:
    """The judge's price per million tokens, when it knows one."""
    price = getattr(judge, "price", None)
    if price is None:
        price = getattr(getattr(judge, "config", None), "price", None)
    return price if isinstance(price, Price) else None


class EstimatingJudge(Judge):
    """Stands in for ``real``: the same identity, parameters and cache keys (so its cache
    answers what it would), synthetic answers for the rest, counted like calls."""

    def __init__(self, real: Judge) -> None:
        self.peek = _Peek(real.cache)
        super().__init__(cache=self.peek)
        self.real = real
        self.price = price_of(real)
        self.supports_batched_verdicts = real.supports_batched_verdicts
        self.supports_likelihood = real.supports_likelihood
        #: Without a cache the run shares only the answers of one sample's identical requests
        #: (made together); with one, every answer it has seen.
        self.per_sample_memory = isinstance(real.cache, NullCache)

    @property
    def identity(self) -> str:
        return self.real.identity

    def generation_params(self) -> dict[str, Any]:
        return self.real.generation_params()

    def describe(self) -> dict[str, Any]:
        return self.real.describe()

    def likelihood_probability(self, task: str, language: str, gain: float) -> float:
        return 0.5  # the verdict changes no call: any probability will do

    def next_sample(self) -> None:
        if self.per_sample_memory:
            self.peek.memory.clear()

    async def _call(self, messages: Sequence[Message], schema: type[OutputT]) -> Judgment[OutputT]:
        output = synthetic_answer(schema, messages)
        prompt = sum(estimate_tokens(m.content) for m in messages)
        completion = 0 if schema is TextLikelihood else estimate_tokens(output.model_dump_json())
        usage = Usage(calls=1, prompt_tokens=prompt, completion_tokens=completion)
        usage.estimated_calls = 1
        if self.price is not None:
            usage.cost = self.price.cost(prompt, completion)
        return Judgment(output, usage)


# -- synthetic answers -------------------------------------------------------------------------
def synthetic_answer(schema: type[OutputT], messages: Sequence[Message]) -> OutputT:
    """A valid ``schema`` answer to ``messages``, its lists as long as the data asks:
    claims and statements one per sentence of the answer / reference, one verdict per claim
    (``claim``) or per context (``index``)."""
    if schema is TextLikelihood:
        return TextLikelihood(logprob=-1.0, tokens=1)  # type: ignore[return-value]
    blocks = _blocks(messages)
    data = {n: _field_value(n, info.annotation, blocks) for n, info in schema.model_fields.items()}
    try:
        return schema.model_validate(data)
    except ValidationError:
        return schema.model_construct(**data)


def _field_value(name: str, annotation: Any, blocks: Mapping[str, str]) -> Any:
    item = _list_item(annotation)
    if item is None:
        return _value(annotation)
    if name == "claims":
        return claim_texts(blocks.get("answer", "")) or [_FREE_TEXT]
    if name == "questions":
        return [f"{_FREE_TEXT}?"] * _QUESTIONS
    if name == "statements":
        said = claim_texts(blocks.get("reference", ""))
        return [{**_value(item), "text": text} for text in said]
    if name == "entities":
        said = claim_texts(blocks.get("reference", ""))
        return [{**_value(item), "entity": text[:20]} for text in said]
    fields = getattr(item, "model_fields", {})
    if "claim" in fields:
        return [
            {**_value(item), "claim": i} for i in range(1, len(_items(blocks.get("claims"))) + 1)
        ]
    if "index" in fields:
        n = len(_items(blocks.get("contexts")))
        return [{**_value(item), "index": i} for i in range(1, n + 1)]
    return [_value(item)]


def _list_item(annotation: Any) -> Any | None:
    """The item type of a list annotation (``list[X]``, ``Sequence[X]``), else ``None``."""
    if typing.get_origin(annotation) in (list, Sequence, tuple, set, frozenset):
        args = typing.get_args(annotation)
        return args[0] if args else str
    return None


def _value(annotation: Any) -> Any:
    """A plausible value of any field type (of a fixed set, the last: 1 of 0 or 1, a yes)."""
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return typing.get_args(annotation)[-1]
    if origin in (Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _value(options[0]) if options else None
    if origin is typing.Annotated:
        return _value(typing.get_args(annotation)[0])
    if _list_item(annotation) is not None:
        return [_value(_list_item(annotation))]
    if origin is dict or annotation is dict:
        return {}
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return {n: _value(i.annotation) for n, i in annotation.model_fields.items()}
        if issubclass(annotation, Enum):
            return next(iter(annotation)).value
        if issubclass(annotation, bool):
            return True
        if issubclass(annotation, int):
            return 1
        if issubclass(annotation, float):
            return 0.5
    return _FREE_TEXT


# -- one sample, a whole run ---------------------------------------------------------------------
async def estimate_sample(
    sample: Sample,
    metrics: Sequence[SampleMetric],
    judges: Mapping[str, Judge | None],
    estimators: dict[int, EstimatingJudge],
    *,
    language: Language | None,
    sample_id: str,
    repeats: int = 1,
) -> Usage:
    """What judging ``sample`` with ``metrics`` would ask (``judges``: each metric's judge),
    through the estimating stand-in of each judge (made on first use, kept in
    ``estimators``): the same grouping of metrics as the run's
    :func:`ragmeter.metrics.score_sample`, the same planner."""
    from ragmeter.steps import StepRunner

    groups: dict[tuple[int, Language | None], list[SampleMetric]] = {}
    for metric in metrics:
        real = judges.get(metric.name)
        if real is None or not metric.uses_judge or metric.precheck(sample) is not None:
            continue
        if id(real) not in estimators:
            estimators[id(real)] = EstimatingJudge(real)
        groups.setdefault((id(real), metric.language or language), []).append(metric)
    used = Usage()
    for stand_in in {id(e): e for e in estimators.values()}.values():
        stand_in.next_sample()
    for repeat in range(repeats):
        for (judge_id, group_language), group in groups.items():
            stand_in = estimators[judge_id]
            needs = [need for metric in group for need in metric.needs(sample)]
            if not needs:
                continue
            runner = StepRunner(
                stand_in, language=group_language, sample_id=sample_id, repeat=repeat
            )
            facts = await runner.gather(sample, needs)
            used = used + facts.usage
    return used


@dataclass
class RunEstimate:
    """What a run would ask its judges: per step (the prompt template or custom prompt a
    call goes through) and in total; cached answers are ``cached_calls``, not calls."""

    n_samples: int
    #: Samples with a judged result still to compute (all of them unless resuming).
    n_to_judge: int
    by_step: dict[str, Usage] = field(default_factory=dict)
    total: Usage = field(default_factory=Usage)
    #: The judges that would be asked (``describe()``), by metric.
    judges: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Whether every judge asked has a price (else ``total.cost`` leaves some calls out).
    priced: bool = True
    currency: str | None = None
    #: The embedded judge's rough time for the calls, from its measured speed.
    seconds: float | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "by_step": {step: usage.to_dict() for step, usage in self.by_step.items()},
            "total": self.total.to_dict(),
        }


def local_seconds(judge: Judge, usage: Usage) -> float | None:
    """The embedded judge's time for ``usage``, from its measured speed; ``None`` for others.

    The speeds were measured on an idle 2-core machine; prompts sharing a prefix with the
    one before are partly reused, so this is an upper estimate there."""
    described = judge.describe()
    if described.get("kind") != "local":
        return None
    threads = min(max(int(described.get("n_threads") or 1), 1), max(LOCAL_SPEED))
    per_second, per_token = LOCAL_SPEED[threads]
    return usage.prompt_tokens / per_second + usage.completion_tokens * per_token


async def aestimate(
    dataset: DatasetLike,
    metrics: Sequence[Metric | str] | str,
    *,
    column_map: Mapping[str, str] | None = None,
    skip_invalid: bool = False,
    format: str | None = None,
    judge: Judge | None = None,
    language: Language | None = None,
    run_dir: str | Path | None = None,
    resume: bool = False,
    repeats: int = 1,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    stratify: str | None = None,
) -> RunEstimate:
    """:func:`estimate` for async code (same arguments)."""
    from ragmeter.runner._evaluate import Reading

    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    resolved = resolve_metrics(metrics if isinstance(metrics, str) else list(metrics))
    data = Reading(column_map, skip_invalid, format, limit, sample, seed, stratify).read_checked(
        dataset, resolved
    )
    judged = [m for m in resolved if isinstance(m, SampleMetric)]
    todo = _todo(data, [m.name for m in judged], run_dir if resume else None)
    judges = judges_for(judged, judge) if todo else {}
    estimators: dict[int, EstimatingJudge] = {}
    by_name = {m.name: m for m in judged}
    failed = 0
    for index, names in todo:
        try:
            await estimate_sample(
                data.samples[index],
                [by_name[name] for name in names],
                judges,
                estimators,
                language=language,
                sample_id=data.ids[index],
                repeats=repeats,
            )
        except JudgeConfigError:
            raise
        except Exception:  # noqa: BLE001 - one odd sample must not hide the rest's estimate
            failed += 1
    asked = {m.name for m in judged if m.uses_judge}
    described = {
        name: j.describe() for name, j in judges.items() if j is not None and name in asked
    }
    result = RunEstimate(n_samples=len(data), n_to_judge=len(todo), judges=described)
    currencies = set()
    for stand_in in estimators.values():
        for step, used in stand_in.ledger.by_scope.items():
            result.by_step[step] = result.by_step.get(step, Usage()) + used
        result.total = result.total + stand_in.ledger.total
        if stand_in.ledger.total.calls:
            if stand_in.price is None:
                result.priced = False
            else:
                currencies.add(stand_in.price.currency)
        local = local_seconds(stand_in.real, stand_in.ledger.total)
        if local is not None:
            result.seconds = (result.seconds or 0.0) + local
    result.currency = currencies.pop() if len(currencies) == 1 else None
    if failed:
        result.notes.append(f"{failed} sample(s) could not be estimated and are left out")
    if any(m.uses_embeddings for m in judged):
        result.notes.append("embedding calls are not counted")
    return result


@synchronous(aestimate)
def estimate() -> None:
    """What :func:`ragmeter.runner.evaluate` with these arguments would ask its judges,
    without asking them (no call, no network, nothing written): the calls, prompt and
    completion tokens and cost per step and in total. With ``resume`` only the results
    missing from ``run_dir``; answers in the judge's cache are counted as cached."""


def _todo(
    data: Dataset, names: list[str], run_dir: str | Path | None
) -> list[tuple[int, list[str]]]:
    """(index, judged metrics) still to compute: all of them, or what ``run_dir`` lacks."""
    if run_dir is None:
        return [(index, list(names)) for index in range(len(data))] if names else []
    if not (Path(run_dir) / STORE_FILE).exists():
        raise FileNotFoundError(
            f"nothing to resume: {str(run_dir)!r} holds no run ({STORE_FILE} is missing)"
        )
    with contextlib.closing(RunDatabase.in_dir(run_dir, read_only=True)) as store:
        recorded = (store.get_meta("dataset") or {}).get("fingerprint")
        if recorded != data.fingerprint():
            raise ValueError(
                f"the dataset differs from the one {str(run_dir)!r} was started with: "
                "resume with the same data, column mapping and subset options"
            )
        return list(store.todo(names, 0, len(data)).items()) if names else []
