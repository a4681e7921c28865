"""RAGChecker's self-knowledge: correct claims that no retrieved context backs."""

from typing import Any

from ragmeter.metrics._base import Direction, parse_direction
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.llm.hallucination import Hallucination


@builtin_metric(
    "self_knowledge",
    family="llm",
    rank=130,
    summary="share of claims correct but supported by no context (RAGChecker; lower is better)",
)
class SelfKnowledge(Hallucination):
    """Share of the response's claims that are correct (the reference supports them) but
    that no retrieved context supports: the generator answered from its own knowledge.

    RAGChecker's ``mean(unfaithful & correct)``. In the worked example of
    :class:`~ragmeter.metrics.llm.hallucination.Hallucination` only "repairs take 5 days" is
    correct and in no context: 1 / 5 = 0.2. Same verdicts as hallucination, no extra call.

    Direction: lower is better by default. RAGChecker leaves it to the user's preference;
    in a RAG system an answer should come from the retrieved documents, so a correct claim
    they do not back is unverifiable model memory (it may go stale) and a sign the
    retriever missed the source. Pass ``direction="higher"`` where answering from memory
    is welcome.
    """

    name = "self_knowledge"
    counts_correct = True

    def __init__(
        self, direction: Direction | str = Direction.LOWER_IS_BETTER, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.direction = parse_direction(direction)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "direction": self.direction.value}
