"""What a metric found on a sample, as typed records: claims with verdicts, reference
statements, per-context judgments, entities, generated questions, passage matches, hops.

:class:`Details` holds them plus ``extra``, a free-form mapping for everything else (a custom
or function metric's keys, scalars such as ``soft_score`` or ``precision``). Its stored form
(:meth:`Details.to_dict`, the JSON of results.jsonl, run stores and resume files) is the
plain dict metrics have always written; :meth:`Details.from_dict` reads it back, old runs
included. A :class:`Details` is also a read-only mapping of that stored form, so
``details["soft_score"]`` keeps working.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from enum import Enum
from typing import Any, Protocol, TypeVar


class _Stored(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=_Stored)


class ClaimCheck(str, Enum):
    """What a claim's ``verdict`` answers (the value is its key in the stored form)."""

    #: The retrieved contexts support the claim (faithfulness).
    SUPPORTED = "supported"
    #: The reference supports this claim of the response (answer / factual correctness).
    IN_REFERENCE = "in_reference"
    #: The response supports this statement of the reference (answer / factual correctness).
    IN_RESPONSE = "in_response"
    #: The reference supports the claim (noise sensitivity).
    CORRECT = "correct"

    @property
    def side(self) -> str | None:
        """Whose claim it is, for the two directions of a claim comparison."""
        return {"in_reference": "response", "in_response": "reference"}.get(self.value)


@dataclass(frozen=True)
class ClaimVerdict:
    """A claim and, when one was asked, the verdict ``check`` gave it.

    >>> ClaimVerdict("Paris is in France", ClaimCheck.SUPPORTED, True, "stated").to_dict()
    {'claim': 'Paris is in France', 'supported': True, 'reason': 'stated'}
    """

    text: str
    check: ClaimCheck | None = None
    #: The answer to ``check``; ``None`` when the claim is only listed (no verdict asked).
    verdict: bool | None = None
    reason: str | None = None
    #: The judge's probability that ``verdict`` is true, when it gave token probabilities.
    probability: float | None = None

    @property
    def side(self) -> str | None:
        return self.check.side if self.check is not None else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"claim": self.text}
        if self.check is not None:
            if self.side is not None:
                out["side"] = self.side
            out[self.check.value] = self.verdict
        if self.reason is not None:
            out["reason"] = self.reason
        if self.probability is not None and self.check is not None:
            out[f"p_{self.check.value}"] = self.probability
        return out

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> ClaimVerdict:
        if "from_relevant_context" in data or "counted" in data:
            return NoiseClaimVerdict.from_dict(data)
        text = data["claim"]
        if not isinstance(text, str):  # multi-hop completeness wrote {"claim": 1, "text": ...}
            text = data["text"]
        check = next((c for c in ClaimCheck if c.value in data), None)
        probability = data.get(f"p_{check.value}") if check is not None else None
        return ClaimVerdict(
            _str(text),
            check,
            bool(data[check.value]) if check is not None else None,
            _opt_str(data.get("reason")),
            _opt_float(probability),
        )


@dataclass(frozen=True)
class NoiseClaimVerdict(ClaimVerdict):
    """A response claim checked against the reference (``check`` is ``CORRECT``) and traced
    to the contexts it came from; ``counted`` when it counts as noise for the metric's mode."""

    from_relevant_context: bool = False
    from_irrelevant_context: bool = False
    counted: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "from_relevant_context": self.from_relevant_context,
            "from_irrelevant_context": self.from_irrelevant_context,
            "counted": self.counted,
        }

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> NoiseClaimVerdict:
        return NoiseClaimVerdict(
            _str(data["claim"]),
            ClaimCheck.CORRECT,
            bool(data["correct"]),
            _opt_str(data.get("reason")),
            _opt_float(data.get("p_correct")),
            bool(data.get("from_relevant_context")),
            bool(data.get("from_irrelevant_context")),
            bool(data.get("counted")),
        )


@dataclass(frozen=True)
class StatementFinding:
    """A reference statement and the retrieved contexts (1-based ranks) it is found in."""

    text: str
    found: bool
    contexts: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"statement": self.text, "found": self.found, "contexts": list(self.contexts)}

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> StatementFinding:
        contexts = tuple(int(c) for c in data.get("contexts") or ())
        return StatementFinding(
            _str(data["statement"]), bool(data.get("found", bool(contexts))), contexts
        )


class ContextCriterion(str, Enum):
    """What a per-context judgment decides (the value is its key in the stored form)."""

    #: Useful to reach the reference answer or the response (context precision/utilization).
    USEFUL = "useful"
    #: Relevant to the question alone (context relevance).
    RELEVANT = "relevant"


@dataclass(frozen=True)
class ContextJudgment:
    """The judge's verdict on one retrieved context (``rank`` is 1-based)."""

    rank: int
    criterion: ContextCriterion
    verdict: bool
    reason: str = ""
    probability: float | None = None

    def to_dict(self) -> dict[str, Any]:
        key = self.criterion.value
        return {
            "rank": self.rank,
            key: self.verdict,
            "reason": self.reason,
            f"p_{key}": self.probability,
        }

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> ContextJudgment:
        criterion = next(c for c in ContextCriterion if c.value in data)
        return ContextJudgment(
            int(data["rank"]),
            criterion,
            bool(data[criterion.value]),
            _str(data.get("reason") or ""),
            _opt_float(data.get(f"p_{criterion.value}")),
        )


@dataclass(frozen=True)
class EntityFinding:
    """A reference entity and whether the retrieved contexts name it."""

    text: str
    in_contexts: bool

    def to_dict(self) -> dict[str, Any]:
        return {"entity": self.text, "in_contexts": self.in_contexts}

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> EntityFinding:
        return EntityFinding(_str(data["entity"]), bool(data["in_contexts"]))


@dataclass(frozen=True)
class LeftOut:
    """Something the judge wrote that the metric did not use, and why: a claim copied from
    the question, a repeat, a generated question equal to the user's."""

    text: str
    why: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> LeftOut:
        return LeftOut(_str(data["text"]), _str(data["why"]))

    @staticmethod
    def of(pairs: Sequence[tuple[str, str]]) -> tuple[LeftOut, ...]:
        return tuple(LeftOut(text, why) for text, why in pairs)


@dataclass(frozen=True)
class GeneratedQuestion:
    """A question generated back from the response and its similarity to the user input."""

    text: str
    similarity: float | None = None


@dataclass(frozen=True)
class PassageMatch:
    """Whether a passage matched its counterpart (a string or id match, no judge): one per
    retrieved context by rank for the precision-style metrics, one per reference context
    for the recall-style ones (the stored form does not say which; the metric does)."""

    matched: bool
    similarity: float | None = None


@dataclass(frozen=True)
class HopUse:
    """A hop (1-based reference context) of a multi-hop question and the response claims
    (1-based) it supports."""

    hop: int
    claims: tuple[int, ...] = ()

    @property
    def used(self) -> bool:
        return bool(self.claims)

    def to_dict(self) -> dict[str, Any]:
        return {"hop": self.hop, "used": self.used, "claims": list(self.claims)}

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> HopUse:
        return HopUse(int(data["hop"]), tuple(int(c) for c in data.get("claims") or ()))


class AbstentionOutcome(str, Enum):
    """How a response met the question's need to abstain (the value is its stored form)."""

    #: Should answer, did.
    ANSWERED = "answered"
    #: Should abstain, did.
    ABSTAINED = "abstained"
    #: Should answer, refused.
    WRONGLY_REFUSED = "wrongly_refused"
    #: Should abstain, answered.
    HALLUCINATED_INSTEAD_OF_REFUSING = "hallucinated_instead_of_refusing"

    @staticmethod
    def of(should_abstain: bool, abstained: bool) -> AbstentionOutcome:
        """
        >>> AbstentionOutcome.of(should_abstain=True, abstained=False).value
        'hallucinated_instead_of_refusing'
        """
        if should_abstain:
            return (
                AbstentionOutcome.ABSTAINED
                if abstained
                else AbstentionOutcome.HALLUCINATED_INSTEAD_OF_REFUSING
            )
        return AbstentionOutcome.WRONGLY_REFUSED if abstained else AbstentionOutcome.ANSWERED

    @property
    def right(self) -> bool:
        """Whether the system behaved right (abstention scores 1)."""
        return self in (AbstentionOutcome.ANSWERED, AbstentionOutcome.ABSTAINED)


@dataclass(frozen=True)
class AbstentionFinding:
    """What the abstention metric found: the outcome, whether the response should and did
    abstain, on what ``basis`` that was decided (``metadata``, ``reference``, ``contexts``
    or ``no_contexts``) and why, the reason for the abstention verdict and who gave it
    (``judge`` or the refusal ``phrases``)."""

    outcome: AbstentionOutcome
    should_abstain: bool
    abstained: bool
    basis: str
    why: str
    reason: str = ""
    decided_by: str = "judge"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "outcome": self.outcome.value}

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> AbstentionFinding:
        return AbstentionFinding(
            AbstentionOutcome(data["outcome"]),
            bool(data["should_abstain"]),
            bool(data["abstained"]),
            _str(data["basis"]),
            _str(data["why"]),
            _str(data.get("reason") or ""),
            _str(data.get("decided_by") or "judge"),
        )


#: The typed fields stored as lists of records, and their record types.
_RECORDS: dict[str, type[Any]] = {
    "claims": ClaimVerdict,
    "statements": StatementFinding,
    "contexts": ContextJudgment,
    "entities": EntityFinding,
    "hops": HopUse,
    "left_out": LeftOut,
}
#: The stored keys the typed fields take; every other key is ``extra``.
_TYPED_KEYS = frozenset(
    {"claims", "statements", "contexts", "entities", "questions", "similarities"}
    | {"noncommittal", "verdicts", "hops", "abstention", "standalone_question", "left_out"}
)


@dataclass(frozen=True, eq=False)
class Details(Mapping[str, Any]):
    """Everything a metric found on one sample besides its score and reason.

    Equal to, and readable as, the plain dict of its stored form:

    >>> d = Details(entities=(EntityFinding("Paris", True),), extra={"soft_score": 0.5})
    >>> d["soft_score"], d == {"entities": [{"entity": "Paris", "in_contexts": True}],
    ...                        "soft_score": 0.5}
    (0.5, True)
    >>> Details.from_dict({"claims": [{"claim": 1, "text": "a"}]}).claims
    (ClaimVerdict(text='a', check=None, verdict=None, reason=None, probability=None),)
    """

    claims: tuple[ClaimVerdict, ...] = ()
    statements: tuple[StatementFinding, ...] = ()
    contexts: tuple[ContextJudgment, ...] = ()
    entities: tuple[EntityFinding, ...] = ()
    questions: tuple[GeneratedQuestion, ...] = ()
    #: Answer relevancy: whether the response is noncommittal ("I don't know").
    noncommittal: bool | None = None
    matches: tuple[PassageMatch, ...] = ()
    hops: tuple[HopUse, ...] = ()
    #: Abstention: whether the response abstained, should have, and the outcome.
    abstention: AbstentionFinding | None = None
    #: Answer relevancy on a turn of a conversation: the question the generated questions
    #: were compared with, the turn's question rewritten to stand alone.
    standalone_question: str | None = None
    #: What the judge wrote that was not used, and why (claims, generated questions).
    left_out: tuple[LeftOut, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The stored form: the JSON-ready dict of results.jsonl and run stores."""
        out: dict[str, Any] = {
            key: [record.to_dict() for record in records]
            for key in ("claims", "statements", "contexts", "entities", "hops")
            if (records := getattr(self, key))
        }
        if self.questions:
            out["questions"] = [q.text for q in self.questions]
            if any(q.similarity is not None for q in self.questions):
                out["similarities"] = [q.similarity for q in self.questions]
        if self.noncommittal is not None:
            out["noncommittal"] = self.noncommittal
        if self.standalone_question is not None:
            out["standalone_question"] = self.standalone_question
        if self.abstention is not None:
            out["abstention"] = self.abstention.to_dict()
        if self.left_out:
            out["left_out"] = [item.to_dict() for item in self.left_out]
        if self.matches:
            out["verdicts"] = [int(m.matched) for m in self.matches]
            if any(m.similarity is not None for m in self.matches):
                out["similarities"] = [m.similarity for m in self.matches]
        out.update(self.extra)
        return out

    @staticmethod
    def from_dict(data: Mapping[str, Any] | None) -> Details:
        """Read a stored form back (any version). A known key whose value has an unknown
        shape, as a function metric may return, stays in ``extra`` unchanged."""
        if isinstance(data, Details):
            return data
        data = dict(data or {})
        found: dict[str, Any] = {}
        extra = {k: v for k, v in data.items() if k not in _TYPED_KEYS}

        for key, record in _RECORDS.items():
            records = _records(data.get(key), record)
            if records is not None:
                found[key] = records
            elif key in data:
                extra[key] = data[key]
        similarities = data.get("similarities")
        if "verdicts" in data:
            matches = _paired(data["verdicts"], int | bool, similarities)
            if matches is None:
                for key in ("verdicts", "similarities"):
                    if key in data:
                        extra[key] = data[key]
            else:
                found["matches"] = tuple(PassageMatch(bool(v), sim) for v, sim in matches)
            similarities = None  # the matches' (or kept in extra with them)
        if "questions" in data:
            questions = _paired(data["questions"], str, similarities)
            if questions is None:
                extra["questions"] = data["questions"]
                if similarities is not None:
                    extra["similarities"] = similarities
            else:
                found["questions"] = tuple(GeneratedQuestion(q, sim) for q, sim in questions)
        elif similarities is not None:
            extra["similarities"] = similarities
        for key, kind in (("noncommittal", bool), ("standalone_question", str)):
            if key in data:
                (found if isinstance(data[key], kind) else extra)[key] = data[key]
        if "abstention" in data:
            abstention = _abstention(data["abstention"])
            if abstention is None:
                extra["abstention"] = data["abstention"]
            else:
                found["abstention"] = abstention
        return Details(**found, extra=extra)

    def with_extra(self, **values: Any) -> Details:
        """A copy with ``values`` added to (or replacing keys of) ``extra``."""
        return replace(self, extra={**self.extra, **values})

    def merged(self, values: Mapping[str, Any]) -> Details:
        """A copy with the stored-form ``values`` laid over this one's."""
        return Details.from_dict({**self.to_dict(), **values}) if values else self

    # -- read as the mapping of the stored form ----------------------------------------------
    @functools.cached_property
    def _stored(self) -> dict[str, Any]:
        return self.to_dict()

    def __getitem__(self, key: str) -> Any:
        return self._stored[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._stored)

    def __len__(self) -> int:
        return len(self._stored)

    def __repr__(self) -> str:
        shown = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if getattr(self, f.name) not in ((), None, {})
        ]
        return f"Details({', '.join(shown)})"


#: The details of a result that has none: one shared instance (a large retrieval run makes
#: millions of results). Never changed in place (no code writes to a ``Details``' ``extra``);
#: a plain dict, so that results pickle (Ray workers, multiprocessing) and deep-copy.
NO_DETAILS = Details()


def _records(value: Any, record: type[R]) -> tuple[R, ...] | None:
    """Parsed entries (records given as such kept), or ``None`` when ``value`` is not a list
    of entries whose every key the records write back unchanged (reading drops nothing)."""
    if not isinstance(value, Sequence) or isinstance(value, str):
        return None
    out: list[R] = []
    for item in value:
        if isinstance(item, record):
            out.append(item)
            continue
        if not isinstance(item, Mapping):
            return None
        try:
            parsed = record.from_dict(item)  # type: ignore[attr-defined]
        except (KeyError, TypeError, ValueError, StopIteration):
            return None
        written = parsed.to_dict()
        kept = all(k in written and written[k] == v for k, v in item.items())
        if not kept and not _legacy_claim(item):
            return None
        out.append(parsed)
    return tuple(out)


def _legacy_claim(item: Mapping[str, Any]) -> bool:
    """A claim as multi-hop completeness wrote it before details were typed:
    ``{"claim": 1, "text": ...}`` (read with the text as the claim)."""
    return set(item) == {"claim", "text"} and isinstance(item["claim"], int)


def _abstention(value: Any) -> AbstentionFinding | None:
    if isinstance(value, AbstentionFinding):
        return value
    if not isinstance(value, Mapping):
        return None
    try:
        parsed = AbstentionFinding.from_dict(value)
    except (KeyError, TypeError, ValueError):
        return None
    return parsed if parsed.to_dict() == dict(value) else None


def _paired(values: Any, kind: Any, similarities: Any) -> list[tuple[Any, float | None]] | None:
    """Each of ``values`` (a list of ``kind``) with its similarity (``None`` each when there
    are none), or ``None`` when they do not fit."""
    if not isinstance(values, list) or not all(isinstance(v, kind) for v in values):
        return None
    if similarities is None:
        return [(v, None) for v in values]
    if not isinstance(similarities, list) or len(similarities) != len(values):
        return None
    if not all(s is None or isinstance(s, int | float) for s in similarities):
        return None
    return [(v, None if s is None else float(s)) for v, s in zip(values, similarities)]


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)
