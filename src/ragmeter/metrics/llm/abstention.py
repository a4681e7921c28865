"""Abstention: did the system refuse when it should, and answer when it could?

Both halves come from judgments other metrics already ask for, so the metric adds no judge
call to a run that computes faithfulness and context recall (or context relevance):

- **did it abstain?** The ``abstains`` task of ``response_analysis``, asked in the same call
  as the response's claims (faithfulness). A judge whose verdicts are likelihoods (the
  embedded one) is not asked: a small model's flag is unreliable (it marked 37 of 38 WikiEval
  answers noncommittal), so a list of English and Chinese refusal phrases decides there.
- **should it abstain?** In order: the sample's ``metadata["answerable"]`` (the test-set
  generator's unanswerable questions set it); else, with a reference, whether any of the
  reference's statements is supported by a retrieved context (context recall's attributed
  statements); else whether any retrieved context is relevant to the question (context
  relevance's verdicts). With no retrieved context at all it should abstain.

Relevance is the weakest basis: a passage on the question's topic that lacks its answer
counts as relevant (bench/abstention.py); a reference or ``metadata["answerable"]`` decides
better.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from ragmeter.dataset import Sample
from ragmeter.embed import Embeddings
from ragmeter.metrics._base import MetricResult, Requirements
from ragmeter.metrics._details import AbstentionFinding, AbstentionOutcome, Details
from ragmeter.metrics._sample import SampleMetric
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.llm.context_recall import ATTRIBUTED
from ragmeter.steps import Facts, Need

Expected = Literal["auto", "metadata", "contexts"]
ABSTAINS = Need("abstains")
RELEVANT = Need("usefulness_question")
_TRUTH = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


@dataclass(frozen=True)
class _Expectation:
    should_abstain: bool
    basis: str
    why: str


@builtin_metric(
    "abstention",
    family="llm",
    rank=150,
    summary=(
        "1 when the response abstained where it should (unanswerable, or no context supports an "
        "answer) and answered where it could; details separate wrongly refused from hallucinated "
        "instead of refusing"
    ),
)
class Abstention(SampleMetric):
    """1 when the system behaved right: it abstained when it should (the question is
    unanswerable, or no retrieved context supports an answer) or answered when it could;
    0 when it did not. ``details.abstention`` gives the outcome (``answered``, ``abstained``,
    ``wrongly_refused``, ``hallucinated_instead_of_refusing``), why it should or should not
    abstain and on what basis, and the reason for the abstention verdict.

    ``expected`` says how "should abstain" is decided: ``"metadata"`` only from
    ``metadata["answerable"]`` (a sample without it fails, naming the field), ``"contexts"``
    only from the retrieved contexts (the reference's statements they support, else their
    relevance to the question), ``"auto"`` (default) from the metadata when the sample has
    it, else from the contexts.

    Worked examples (tests/metrics/llm/test_abstention.py), four samples:

    - "When was Python released?", contexts say "Python was released in 1991", reference
      "Python was released in 1991" (its one statement is in context 1: should answer),
      response "Python was released in 1991." (does not abstain): ``answered``, 1.
    - Same question and contexts, response "I don't know." (abstains): ``wrongly_refused``, 0.
    - "What is the refund period?", the one context is about shipping and the reference
      says "The refund period is 30 days", in no context (0 of 1 statements supported:
      should abstain), response "I could not find that." (abstains): ``abstained``, 1.
    - Same, response "The refund period is 14 days." (answers):
      ``hallucinated_instead_of_refusing``, 0.

    Mean over the four: (1 + 0 + 1 + 0) / 4 = 0.5. A sample with
    ``metadata={"answerable": False}`` should abstain whatever its contexts hold.
    """

    name = "abstention"
    requires: Requirements = (("user_input",), ("response",))

    def __init__(self, expected: Expected | str = "auto", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if expected not in get_args(Expected):
            raise ValueError(
                f"expected must be one of {', '.join(get_args(Expected))}, got {expected!r}"
            )
        self.expected: Expected = expected  # type: ignore[assignment]  # checked above

    def params(self) -> dict[str, Any]:
        return {**super().params(), "expected": self.expected}

    def _answerable(self, sample: Sample) -> bool | None:
        """``metadata["answerable"]`` when this metric reads it and the sample has it
        (``true``/``false``, also as text from a CSV); another value raises ValueError."""
        if self.expected == "contexts":
            return None
        value = (sample.metadata or {}).get("answerable")
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUTH:
            return _TRUTH[value.strip().lower()]
        raise ValueError(
            f"field metadata.answerable is {value!r}: set it to true or false (or leave it "
            "out to decide from the contexts)"
        )

    def needs(self, sample: Sample) -> list[Need]:
        try:
            answerable = self._answerable(sample)
        except ValueError:
            return []  # compute() fails the sample, naming the field
        if answerable is not None:
            return [ABSTAINS]
        if self.expected == "metadata":
            return []
        if not sample.retrieved_contexts:
            return [ABSTAINS]
        return [ABSTAINS, ATTRIBUTED if sample.reference else RELEVANT]

    def _expectation(self, sample: Sample, facts: Facts) -> _Expectation | MetricResult:
        try:
            answerable = self._answerable(sample)
        except ValueError as error:
            return MetricResult.failed(str(error))
        if answerable is not None:
            said = "answerable" if answerable else "unanswerable"
            return _Expectation(not answerable, "metadata", f"the sample is marked {said}")
        if self.expected == "metadata":
            return MetricResult.failed(
                "field metadata.answerable is missing: set it to true or false, or use "
                "Abstention(expected='auto') to decide from the contexts"
            )
        contexts = sample.retrieved_contexts or []
        if not contexts:
            return _Expectation(True, "no_contexts", "no context was retrieved")
        if sample.reference:
            statements = facts.statements or []
            found = sum(bool(s.contexts) for s in statements)
            why = f"{found} of {len(statements)} reference statements are in the contexts"
            return _Expectation(found == 0, "reference", why)
        verdicts = facts.usefulness_question or []
        relevant = sum(v.useful for v in verdicts)
        why = f"{relevant} of {len(verdicts)} contexts are relevant to the question"
        return _Expectation(relevant == 0, "contexts", why)

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        expectation = self._expectation(sample, facts)
        if isinstance(expectation, MetricResult):
            return expectation
        check = facts.abstains
        if check is None:
            return MetricResult.failed("the judge gave no abstention verdict")
        outcome = AbstentionOutcome.of(expectation.should_abstain, check.abstains)
        finding = AbstentionFinding(
            outcome,
            expectation.should_abstain,
            check.abstains,
            expectation.basis,
            expectation.why,
            check.reason,
            check.by,
        )
        should = "should abstain" if expectation.should_abstain else "should answer"
        did = "abstained" if check.abstains else "answered"
        return MetricResult.ok(
            float(outcome.right),
            reason=f"{outcome.value}: {should} ({expectation.why}) and {did}",
            details=Details(abstention=finding),
        )
