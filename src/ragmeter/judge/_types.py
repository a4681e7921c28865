"""The values that cross the judge layer: judgments out (messages and usage are shared
service types, :mod:`ragmeter._services`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, Field

from ragmeter._services import Usage

OutputT = TypeVar("OutputT", bound=BaseModel)


@dataclass
class Judgment(Generic[OutputT]):
    """A validated structured answer with what it cost.

    ``probabilities`` holds P(yes) for each binary verdict in the answer, in order, when the
    endpoint returned token probabilities (``None`` otherwise).
    """

    output: OutputT
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    probabilities: list[float] | None = None
    #: P(value) over the allowed values of the answer's one enumerated field (a label or a
    #: rubric score), from token probabilities, when the endpoint returned them.
    distribution: dict[str, float] | None = None


class BinaryVerdict(BaseModel):
    """A yes (1) / no (0) verdict. Judges that can attach P(yes) as ``probabilities[0]``."""

    verdict: Literal[0, 1] = Field(description="1 for yes, 0 for no")


class TextLikelihood(BaseModel):
    """How probable the judge model finds a given text: the conversation's last message, which
    must be the assistant's, scored token by token after everything before it.

    Asked of judges with ``supports_likelihood`` (the embedded judge): comparing the text's
    likelihood with and without a piece of evidence in the prompt measures how much the
    evidence supports it, which small models do far better than answering yes or no.
    """

    logprob: float = Field(description="mean natural-log probability per token")
    tokens: int = Field(ge=1, description="how many tokens the text has")
