from typing import Any

import numpy as np

from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings, cosine_similarity
from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._details import Details, GeneratedQuestion, LeftOut
from ragmeter.metrics._sample import SampleMetric
from ragmeter.metrics._spec import builtin_metric
from ragmeter.steps import ANSWER_RELEVANCE, Facts, Need


def mean_similarity(similarities: list[float]) -> float:
    """The score from the questions' similarities to the user input.

    Worked examples (docs/llm-metrics.md, answer_relevancy): an off-topic answer and an
    on-topic one.

    >>> round(mean_similarity([0.55, 0.50, 0.52]), 3), round(mean_similarity([0.88, 0.82, 0.86]), 3)
    (0.523, 0.853)
    """
    return float(np.mean(similarities))


@builtin_metric(
    "answer_relevancy",
    family="llm",
    rank=20,
    summary="similarity of questions generated from the response to the question",
    aliases=("response_relevancy",),
)
class AnswerRelevancy(SampleMetric):
    """How well the response answers the question: ``strictness`` questions are generated
    back from the response alone (the judge never sees the user's question, so it cannot
    copy it) and their mean cosine similarity to the user input is the score; a
    noncommittal response ("I don't know") scores 0. A generated question equal to the
    user's or to one of the prompt's examples is re-asked once, then left out (details'
    ``left_out``).

    On a turn of a conversation (a sample with a ``history``) a follow-up such as "and its
    price?" says little on its own: the judge rewrites it as a standalone question ("What is
    the price of the S3 earbuds?"), in the same call as the generated questions, and those
    are compared with the standalone question, which the details show. The embedded judge
    (likelihood verdicts, a 0.5B model) writes no rewrite: it copied its examples instead,
    so its standalone question is the user's earlier messages and the question, one per
    line (``Sample.question_in_context``).

    The embedded judge (likelihood verdicts) writes no questions either: the ones that 0.5B
    model wrote copied its examples or the answer itself, and the embeddings' cosines of any
    two questions of one domain lie in 0.8-0.95, so an off-topic answer scored as a grounded
    one. It answers one calibrated yes/no verdict instead, "can the question be answered from
    the response?", whose P(yes) is the score (details' ``p_relevant``); a response that
    leaves the question or part of it unanswered ("... but I do not have the exact dates") is
    noncommittal and scores 0, without a call."""

    name = "answer_relevancy"
    requires: Requirements = (("user_input",), ("response",))
    _uses_embeddings = True

    def __init__(self, strictness: int = 3, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if strictness < 1:
            raise ValueError(f"strictness must be at least 1, got {strictness}")
        self.strictness = strictness

    def params(self) -> dict[str, Any]:
        return {**super().params(), "strictness": self.strictness}

    def needs(self, sample: Sample) -> list[Need]:
        if sample.conversation is None:
            return [Need("questions", n=self.strictness)]
        return [Need("questions", n=self.strictness), Need("standalone_question")]

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        standalone = facts.standalone_question if sample.conversation is not None else None
        if facts.calibrated_verdicts:
            return self._from_verdict(facts, standalone)
        questions = facts.questions or []
        left_out = LeftOut.of(facts.discarded("questions"))
        if facts.noncommittal:
            details = Details(
                questions=tuple(GeneratedQuestion(q) for q in questions),
                noncommittal=True,
                standalone_question=standalone,
                left_out=left_out,
            )
            return MetricResult.ok(0.0, reason="the response is noncommittal", details=details)
        if not questions:
            copies = f" ({len(left_out)} were copies, left out)" if left_out else ""
            return MetricResult.failed(
                f"the judge generated no usable question from the response{copies}"
            )
        assert embeddings is not None
        target = standalone if standalone is not None else sample.user_input or ""
        vectors = await embeddings.embed([target, *questions], kind="query")
        similarities = [float(x) for x in cosine_similarity(vectors[1:], vectors[0])]
        compared = "the standalone question" if standalone is not None else "the question"
        return MetricResult.ok(
            mean_similarity(similarities),
            reason=f"mean similarity of {len(questions)} generated questions to {compared}",
            details=Details(
                questions=tuple(
                    GeneratedQuestion(q, round(s, 4)) for q, s in zip(questions, similarities)
                ),
                noncommittal=False,
                standalone_question=standalone,
                left_out=left_out,
            ),
        )

    @staticmethod
    def _from_verdict(facts: Facts, standalone: str | None) -> MetricResult:
        """The score of a judge whose verdicts are likelihoods: its P(yes) that the question
        can be answered from the response, or 0 for a noncommittal response."""
        found = facts.value(ANSWER_RELEVANCE)
        if found is None:
            why = facts.errors.get(ANSWER_RELEVANCE.name, "no verdict on the response")
            return MetricResult.failed(why)
        details = Details(
            noncommittal=found.noncommittal,
            standalone_question=standalone,
            extra={} if found.probability is None else {"p_relevant": found.probability},
        )
        if found.noncommittal:
            score, reason = 0.0, "the response leaves the question (or part of it) unanswered"
        else:
            answers = "answers" if found.relevant else "does not answer"
            score, reason = float(found.relevant), f"the response {answers} the question"
            if found.probability is not None:  # else a judge that gave the verdict alone
                score, reason = found.probability, f"{reason} (P(yes) = {found.probability:.2f})"
        return MetricResult.ok(score, reason=reason, details=details)
