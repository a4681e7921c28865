"""What metrics ask for (needs) and what the steps found (facts), for one sample."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

from ragmeter.judge import Usage
from ragmeter.prompts import Language
from ragmeter.steps._table import error_names

if TYPE_CHECKING:
    from ragmeter.steps._table import JudgmentKind

T = TypeVar("T")

#: The built-in judgments (any judgment in the table can be needed: ``Need(name)``).
Fact = Literal[
    "response_claims",
    "questions",
    "statements",
    "usefulness_reference",
    "usefulness_response",
    "usefulness_question",
    "entities",
    "support",
    "custom",
    "abstains",
    "standalone_question",
]
ClaimSource = Literal["response", "reference"]
#: ``reference_contexts``: the passages the reference answer was written from (e.g. the hops
#: of a generated multi-hop question), one column each.
PassageSource = Literal["contexts", "reference", "response", "reference_contexts"]


@dataclass(frozen=True)
class Need:
    """One thing a metric needs from the judge for a sample: a judgment of the table by
    name (``fact``) and the options it takes.

    ``support`` needs name whose claims (``claims_of``: the response's claims or the
    reference's statements) are checked against which passages (``against``), and whether
    each passage's verdict is needed (``per_passage``) or only "some passage supports it".
    """

    fact: Fact | str
    n: int = 0
    claims_of: ClaimSource | None = None
    against: tuple[PassageSource, ...] = ()
    per_passage: bool = False
    #: For ``custom``: the custom prompt to ask (a hashable spec with ``render`` and
    #: ``schema`` methods, e.g. :class:`ragmeter.metrics.custom.PromptSpec`).
    prompt: Any = None

    @property
    def judgment(self) -> str:
        """The name of the judgment in the table that answers this need."""
        if self.fact == "support":
            return f"support:{self.claims_of or 'response'}"
        return self.fact


@dataclass(frozen=True)
class Statement:
    """A reference statement and the (0-based) contexts that support it."""

    text: str
    contexts: tuple[int, ...] = ()


def _agrees(verdict: bool, probability: float | None) -> None:
    """A verdict with P(yes) is yes exactly when P >= 0.5: one number stands behind both."""
    if probability is not None and (probability >= 0.5) != verdict:
        raise ValueError(f"verdict {verdict} contradicts its probability {probability}")


@dataclass(frozen=True)
class AnswerRelevance:
    """Whether the response answers the question, from one verdict, with P(yes) when the
    judge gave one (then the verdict is yes exactly when P >= 0.5); ``noncommittal``: the
    response refuses to answer (no verdict is asked)."""

    relevant: bool
    probability: float | None = None
    noncommittal: bool = False

    def __post_init__(self) -> None:
        _agrees(self.relevant, self.probability)


@dataclass(frozen=True)
class ContextVerdict:
    """Whether a context is useful (relevant), the judge's reason, and P(useful) when the
    judge gave one: then the verdict is yes exactly when P >= 0.5."""

    useful: bool
    reason: str = ""
    probability: float | None = None

    def __post_init__(self) -> None:
        _agrees(self.useful, self.probability)


@dataclass(frozen=True)
class Entity:
    text: str
    in_contexts: bool


@dataclass(frozen=True)
class Support:
    """Claims x passages: ``matrix[i][j]`` says whether passage ``j`` supports claim ``i``.

    With ``per_passage=False`` the judge was only asked whether any passage supports each
    claim; the matrix then has one column, "any passage".
    """

    claims: tuple[str, ...]
    passages: tuple[PassageSource | str, ...]
    matrix: tuple[tuple[bool, ...], ...]
    reasons: tuple[str, ...]
    #: P(supported) per cell, when the judge's verdicts are probabilities (``()`` otherwise).
    #: A cell's verdict is yes exactly when its probability is at least 0.5: one number
    #: stands behind both, so a claim can never read "unsupported" with P 0.95.
    probabilities: tuple[tuple[float, ...], ...] = ()

    def __post_init__(self) -> None:
        if not self.probabilities:
            return
        for row, chances in zip(self.matrix, self.probabilities, strict=True):
            if tuple(p >= 0.5 for p in chances) != row:
                raise ValueError(f"verdicts {row} contradict their probabilities {chances}")

    def supported(self, claim: int, passages: set[int] | None = None) -> bool:
        """Whether ``claim`` is supported by any of ``passages`` (all when ``None``)."""
        row = self.matrix[claim]
        if passages is None:
            return any(row)
        return any(row[j] for j in passages if j < len(row))

    def probability(self, claim: int, passages: set[int] | None = None) -> float | None:
        """P(``claim`` is supported by some passage of ``passages``, all when ``None``): the
        largest of their cells, so that it is at least 0.5 exactly when :meth:`supported`
        is true; ``None`` when the judge gave no probabilities."""
        if not self.probabilities:
            return None
        row = self.probabilities[claim]
        columns = range(len(row)) if passages is None else (j for j in passages if j < len(row))
        return max((row[j] for j in columns), default=0.0)

    def column(self, source: str) -> int:
        return self.passages.index(source)


@dataclass(frozen=True)
class AbstentionCheck:
    """Whether an answer abstains (a refusal, "I don't know", "the documents do not say", a
    deflection; not a partial answer with a caveat), the reason given, and who decided:
    the judge, or the refusal phrases (judges whose flag is unreliable, see ``abstains``)."""

    abstains: bool
    reason: str = ""
    by: Literal["judge", "phrases"] = "judge"


@dataclass(frozen=True)
class CustomAnswer:
    """A custom prompt's validated answer; ``distribution`` is P(label) over the allowed
    labels or scores when the judge returned token probabilities (G-Eval style)."""

    output: dict[str, Any]
    distribution: dict[str, float] | None = None


class _Found(Generic[T]):
    """A built-in judgment's fact as an attribute of :class:`Facts` (``facts.statements``):
    reads and sets ``facts.found[NAME]``, typed ``T | None``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, facts: Facts | None, owner: type) -> T | None:
        # On the class itself (``Facts.statements``, e.g. for ``inspect``) there is no fact.
        return None if facts is None else cast("T | None", facts.found.get(self.name))

    def __set__(self, facts: Facts, value: T | None) -> None:
        facts.found[self.name] = value


@dataclass
class Facts:
    """Everything the steps established for one sample; ``errors`` holds what failed.

    Each judgment's fact is kept under its name (:meth:`get`, :meth:`value`); the built-in
    ones also read as typed attributes (``facts.response_claims``, ``facts.statements``, ...).
    """

    language: Language
    support: dict[tuple[ClaimSource, tuple[PassageSource, ...], bool], Support] = field(
        default_factory=dict
    )
    #: Answers to custom prompts, by the prompt's key (``custom:NAME@VERSION``).
    custom: dict[str, CustomAnswer] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    prompt_versions: set[str] = field(default_factory=set)
    found: dict[str, Any] = field(default_factory=dict)
    #: Whether one-at-a-time verdicts carry a calibrated P(yes) (a judge that scores
    #: likelihoods): then metrics that count verdicts score the mean P(yes) instead, which
    #: agrees better with people and ties less (bench/RESULTS_meta_eval.md).
    calibrated_verdicts: bool = False
    #: What the steps left out of the judge's answers, by judgment (see :meth:`discard`).
    left_out: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def discard(self, name: str, text: str, why: str) -> None:
        """Record that the judge's ``text`` for judgment ``name`` was left out, and why (a
        claim copied from the question, a generated question equal to the user's)."""
        self.left_out.setdefault(name, []).append((text, why))

    def discarded(self, name: str) -> list[tuple[str, str]]:
        """What was left out of judgment ``name``'s answer: (text, why) pairs."""
        return self.left_out.get(name, [])

    def get(self, name: str) -> Any:
        """The fact of the judgment ``name``; ``None`` when not asked for or failed."""
        return self.found.get(name)

    def value(self, kind: JudgmentKind[Any, T]) -> T | None:
        """The fact of ``kind``, typed as its declaration reads it."""
        return cast("T | None", self.found.get(kind.name))

    def set(self, name: str, value: Any) -> None:
        self.found[name] = value

    def error_for(self, needs: list[Need]) -> str | None:
        """The first error among the facts ``needs`` depend on, if any."""
        for need in needs:
            for name in error_names(need):
                if name in self.errors:
                    return self.errors[name]
        return None

    def support_for(self, need: Need) -> Support:
        key = (need.claims_of or "response", need.against, need.per_passage)
        return self.support[key]

    # -- the built-in judgments' facts, typed (``facts.found[NAME]``) -----------------------
    response_claims = _Found[list[str]]()
    questions = _Found[list[str]]()
    #: A conversation turn's question rewritten to stand alone (answer relevancy).
    standalone_question = _Found[str]()
    noncommittal = _Found[bool]()
    statements = _Found[list[Statement]]()
    usefulness_reference = _Found[list[ContextVerdict]]()
    usefulness_response = _Found[list[ContextVerdict]]()
    usefulness_question = _Found[list[ContextVerdict]]()
    entities = _Found[list[Entity]]()
    abstains = _Found[AbstentionCheck]()
