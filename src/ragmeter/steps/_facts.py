"""What metrics ask for (needs) and what the steps found (facts), for one sample."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ragmeter.judge import Usage
from ragmeter.prompts import Language

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
]
ClaimSource = Literal["response", "reference"]
#: ``reference_contexts``: the passages the reference answer was written from (e.g. the hops
#: of a generated multi-hop question), one column each.
PassageSource = Literal["contexts", "reference", "response", "reference_contexts"]


@dataclass(frozen=True)
class Need:
    """One thing a metric needs from the judge for a sample.

    ``support`` needs name whose claims (``claims_of``: the response's claims or the
    reference's statements) are checked against which passages (``against``), and whether
    each passage's verdict is needed (``per_passage``) or only "some passage supports it".
    """

    fact: Fact
    n: int = 0
    claims_of: ClaimSource | None = None
    against: tuple[PassageSource, ...] = ()
    per_passage: bool = False
    #: For ``custom``: the custom prompt to ask (a hashable spec with ``render`` and
    #: ``schema`` methods, e.g. :class:`ragmeter.metrics.custom.PromptSpec`).
    prompt: Any = None


@dataclass(frozen=True)
class Statement:
    """A reference statement and the (0-based) contexts that support it."""

    text: str
    contexts: tuple[int, ...] = ()


@dataclass(frozen=True)
class ContextVerdict:
    useful: bool
    reason: str = ""
    probability: float | None = None


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
    probabilities: tuple[float | None, ...] = ()

    def supported(self, claim: int, passages: set[int] | None = None) -> bool:
        """Whether ``claim`` is supported by any of ``passages`` (all when ``None``)."""
        row = self.matrix[claim]
        if passages is None:
            return any(row)
        return any(row[j] for j in passages if j < len(row))

    def column(self, source: str) -> int:
        return self.passages.index(source)


@dataclass(frozen=True)
class CustomAnswer:
    """A custom prompt's validated answer; ``distribution`` is P(label) over the allowed
    labels or scores when the judge returned token probabilities (G-Eval style)."""

    output: dict[str, Any]
    distribution: dict[str, float] | None = None


@dataclass
class Facts:
    """Everything the steps established for one sample; ``errors`` holds what failed."""

    language: Language
    response_claims: list[str] | None = None
    questions: list[str] | None = None
    noncommittal: bool | None = None
    statements: list[Statement] | None = None
    usefulness_reference: list[ContextVerdict] | None = None
    usefulness_response: list[ContextVerdict] | None = None
    usefulness_question: list[ContextVerdict] | None = None
    entities: list[Entity] | None = None
    support: dict[tuple[ClaimSource, tuple[PassageSource, ...], bool], Support] = field(
        default_factory=dict
    )
    #: Answers to custom prompts, by the prompt's key (``custom:NAME@VERSION``).
    custom: dict[str, CustomAnswer] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    prompt_versions: set[str] = field(default_factory=set)

    def error_for(self, needs: list[Need]) -> str | None:
        """The first error among the facts ``needs`` depend on, if any."""
        for need in needs:
            for name in _depends_on(need):
                if name in self.errors:
                    return self.errors[name]
        return None

    def support_for(self, need: Need) -> Support:
        key = (need.claims_of, need.against, need.per_passage)
        return self.support[key]  # type: ignore[index]


def _depends_on(need: Need) -> list[str]:
    if need.fact == "custom":
        return [need.prompt.key]
    if need.fact == "support":
        source = "response_claims" if need.claims_of == "response" else "statements"
        return [source, f"support:{need.claims_of}"]
    return [need.fact]
