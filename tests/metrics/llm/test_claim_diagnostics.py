"""RAGChecker's claim-level diagnostics (hallucination, self-knowledge, claim-level context
utilization) and the seed's noise sensitivity, on the worked example of their docstrings:
hand-computed scores, n/a cases, and no judge call beyond the metrics they build on."""

import re

import pytest

from ragmeter import Sample, Status, evaluate
from ragmeter.judge import BinaryVerdict
from ragmeter.metrics import Direction, get_metric
from ragmeter.metrics.llm import (
    AnswerCorrectness,
    ClaimContextUtilization,
    Hallucination,
    NoiseSensitivity,
    SelfKnowledge,
)
from ragmeter.testing import ScriptedJudge
from tests.metrics.llm import scripts

QUESTION = "What does the X200 warranty cover?"
REFERENCE = "The X200 has a 2-year warranty that covers battery defects. Repairs take 5 days."
RESPONSE = (
    "The X200 has a 2-year warranty that covers water damage. An extended warranty costs $50. "
    "Repairs take 5 days, and the warranty can be transferred."
)
CONTEXTS = [
    "X200 warranty terms: two years from the date of purchase.",  # relevant (statement 1)
    "The X200 warranty covers battery defects and water damage.",  # relevant (statement 2)
    "An extended warranty for the X300 costs $50.",  # irrelevant: no reference statement
]
CLAIMS = [
    "The X200 has a 2-year warranty",  # correct, context 1
    "The warranty covers water damage",  # wrong, relevant context 2: relevant noise
    "An extended warranty costs $50",  # wrong, irrelevant context 3: irrelevant noise
    "Repairs take 5 days",  # correct, no context: self-knowledge
    "The warranty can be transferred",  # wrong, no context: hallucination
]
STATEMENTS = [
    "The X200 has a 2-year warranty.",  # context 1; the response states it
    "The warranty covers battery defects.",  # context 2; the response does not state it
    "Repairs take 5 days.",  # no context; the response states it
]
#: The passages (by text) that support each claim or statement.
SUPPORT = {
    CLAIMS[0]: {REFERENCE, CONTEXTS[0]},
    CLAIMS[1]: {CONTEXTS[1]},
    CLAIMS[2]: {CONTEXTS[2]},
    CLAIMS[3]: {REFERENCE},
    CLAIMS[4]: set(),
    STATEMENTS[0]: {RESPONSE, CONTEXTS[0]},
    STATEMENTS[1]: {CONTEXTS[1]},
    STATEMENTS[2]: {RESPONSE},
}
SAMPLE = {
    "user_input": QUESTION,
    "response": RESPONSE,
    "reference": REFERENCE,
    "retrieved_contexts": CONTEXTS,
}


def _items(prompt, tag):
    block = prompt.split(f"<{tag}>")[1].split(f"</{tag}>")[0]
    return re.findall(r'<item index="\d+">(.*?)</item>', block, flags=re.DOTALL)


def answer(messages, schema):
    """Claims and statements as above; each verified against the passages it is shown."""
    name = schema.__name__
    if schema is BinaryVerdict:  # a judge that cannot batch: one statement, one text
        prompt = messages[-1].content
        text = re.search(r"<text>\n(.*?)\n</text>", prompt, re.DOTALL).group(1)
        statement = re.search(r"<statement>\n(.*?)\n</statement>", prompt, re.DOTALL).group(1)
        return {"verdict": int(any(p in text for p in SUPPORT[statement]))}
    if name.startswith("ResponseAnalysis"):
        return {"claims": CLAIMS}
    if name.startswith("ReferenceReview"):
        found = [[1], [2], []]
        return {"statements": [{"text": s, "contexts": c} for s, c in zip(STATEMENTS, found)]}
    if name == "VerifySupport":
        prompt = messages[-1].content
        passages = _items(prompt, "passages")
        return {
            "support": [
                {
                    "claim": i,
                    "passages": [j for j, p in enumerate(passages, 1) if p in SUPPORT[claim]],
                    "reason": f"reason {i}",
                }
                for i, claim in enumerate(_items(prompt, "claims"), start=1)
            ]
        }
    raise AssertionError(f"unexpected schema {name}")


def judge(batched=True):
    made = ScriptedJudge(answer)
    made.supports_batched_verdicts = batched
    return made


NEW = ["hallucination", "self_knowledge", "claim_context_utilization", "noise_sensitivity_all"]


@pytest.mark.parametrize("batched", [True, False])
def test_the_worked_example_by_hand(batched):
    names = [
        "faithfulness",
        "context_recall",
        "noise_sensitivity_relevant",
        "noise_sensitivity_irrelevant",
        *NEW,
    ]
    result = evaluate([SAMPLE], names, judge=judge(batched))
    scores = {name: result.scores(name)[0] for name in names}
    assert scores["faithfulness"] == pytest.approx(3 / 5)  # claims 1-3 are in a context
    assert scores["context_recall"] == pytest.approx(2 / 3)  # statements 1-2
    assert scores["noise_sensitivity_relevant"] == pytest.approx(1 / 5)  # water damage
    assert scores["noise_sensitivity_irrelevant"] == pytest.approx(1 / 5)  # $50
    assert scores["hallucination"] == pytest.approx(1 / 5)  # transferable
    assert scores["self_knowledge"] == pytest.approx(1 / 5)  # 5 days
    assert scores["noise_sensitivity_all"] == pytest.approx(3 / 5)  # 3 wrong of 5
    # statements 1-2 are in the contexts; the response states 1 (and 3, not in a context)
    assert scores["claim_context_utilization"] == pytest.approx(1 / 2)
    split = sum(scores[n] for n in ("noise_sensitivity_relevant", "noise_sensitivity_irrelevant"))
    assert split + scores["hallucination"] == pytest.approx(scores["noise_sensitivity_all"])
    found = result.samples[0].scores
    assert found["hallucination"].details["counted"] == [5]
    assert found["self_knowledge"].details["counted"] == [4]
    assert found["hallucination"].details["in_contexts"] == [True, True, True, False, False]
    assert found["hallucination"].reason == "1 of 5 claims are incorrect and in no context"
    ccu = found["claim_context_utilization"].details
    assert [c["in_response"] for c in ccu["claims"]] == [True, False, True]
    assert [s["contexts"] for s in ccu["statements"]] == [[1], [2], []]


def _calls(names, batched=True):
    made = judge(batched)
    evaluate([SAMPLE], names, judge=made)
    return sorted(c.schema.__name__ for c in made.calls)


@pytest.mark.parametrize("batched", [True, False])
def test_no_new_call_next_to_faithfulness_recall_and_answer_correctness(batched):
    base = ["faithfulness", "context_recall", AnswerCorrectness(weights=(1.0, 0.0))]
    before = _calls(base, batched)
    # batched: claims, reference review, verify claims, verify statements. One at a time:
    # claims, statements, 5 claims x (reference, all contexts) less claims 1 and 4 stated
    # word for word in the reference and less claim 3's $50 (not in the reference) and
    # claim 4's 5 days (in no context), 3 statements x 3 contexts less statement 3's 5 days
    # (in no context), 3 statements x response less statements 1 and 3 stated word for
    # word in it (no call for those).
    assert len(before) == (4 if batched else 2 + (5 * 2 - 2 - 2) + (3 * 3 - 3) + (3 - 2))
    new = ["hallucination", "self_knowledge", "claim_context_utilization"]
    assert _calls([*base, *new], batched) == before


@pytest.mark.parametrize("batched", [True, False])
def test_no_new_call_next_to_faithfulness_recall_and_noise_sensitivity(batched):
    base = ["faithfulness", "context_recall", "noise_sensitivity_relevant"]
    before = _calls(base, batched)
    if batched:
        assert len(before) == 3  # claims, reference review, verify
    new = ["hallucination", "self_knowledge", "noise_sensitivity_all"]
    assert _calls([*base, *new], batched) == before


def test_claim_context_utilization_without_answer_correctness_costs_one_verify_call():
    base = ["faithfulness", "context_recall", "noise_sensitivity_relevant"]
    before = _calls(base)
    # claim-level context utilization needs the reference's statements checked against the
    # response (answer correctness's verdicts): without it in the run, that one call more
    assert _calls([*base, "claim_context_utilization"]) == sorted([*before, "VerifySupport"])


def test_the_noise_sensitivity_docstring_example():
    result = evaluate(
        [scripts.SAMPLE],
        [NoiseSensitivity("relevant"), NoiseSensitivity("all"), Hallucination()],
        judge=scripts.judge(),
    )
    assert result.scores("noise_sensitivity_relevant") == [0.0]
    assert result.scores("noise_sensitivity_all") == [pytest.approx(1 / 3)]  # AppleCare+
    assert result.scores("hallucination") == [pytest.approx(1 / 3)]


def test_a_response_without_claims_is_not_applicable():
    made = ScriptedJudge(lambda m, s: {"claims": []})
    sample = Sample(**{**SAMPLE, "response": "Hello!"})
    for metric in (Hallucination(judge=made), SelfKnowledge(judge=made)):
        result = metric.score(sample)
        assert result.status is Status.NOT_APPLICABLE and result.score is None
        assert result.reason == "the response makes no factual claim"


def test_without_contexts_every_claim_is_in_no_context():
    sample = Sample(**{**SAMPLE, "retrieved_contexts": []})
    hallucination = Hallucination(judge=judge()).score(sample)
    assert hallucination.score == pytest.approx(3 / 5)  # claims 2, 3 and 5 are wrong
    assert "no context was retrieved" in hallucination.reason
    assert SelfKnowledge(judge=judge()).score(sample).score == pytest.approx(2 / 5)
    made = judge()
    utilization = ClaimContextUtilization(judge=made).score(sample)
    assert utilization.status is Status.NOT_APPLICABLE
    assert utilization.reason == "no context was retrieved"
    assert made.calls == []


def test_claim_context_utilization_not_applicable_cases():
    def review(found):
        def answer_with(messages, schema):
            if schema.__name__.startswith("ReferenceReview"):
                return {"statements": [{"text": s, "contexts": c} for s, c in found]}
            return answer(messages, schema)

        return ScriptedJudge(answer_with)

    sample = Sample(**SAMPLE)
    none = ClaimContextUtilization(judge=review([])).score(sample)
    assert none.status is Status.NOT_APPLICABLE
    assert none.reason == "the reference makes no factual statement"
    missed = ClaimContextUtilization(judge=review([(s, []) for s in STATEMENTS])).score(sample)
    assert missed.status is Status.NOT_APPLICABLE and missed.score is None
    assert "no reference statement is in the retrieved contexts" in missed.reason


def test_registered_with_their_directions():
    assert get_metric("hallucination").direction is Direction.LOWER_IS_BETTER
    assert get_metric("self_knowledge").direction is Direction.LOWER_IS_BETTER
    assert get_metric("claim_context_utilization").direction is Direction.HIGHER_IS_BETTER
    assert get_metric("noise_sensitivity_all").name == "noise_sensitivity_all"
    higher = SelfKnowledge(direction="higher")
    assert higher.direction is Direction.HIGHER_IS_BETTER
    assert higher.params()["direction"] == "higher"
    with pytest.raises(ValueError, match="mode must be"):
        NoiseSensitivity("some")  # type: ignore[arg-type]


def test_the_diagnosis_blames_generation_for_hallucination_despite_good_recall():
    from ragmeter.diagnosis import diagnose
    from tests._prepared import Prepared

    ids = ["s0", "s1", "s2", "s3"]
    hallucination = Prepared("hallucination", dict(zip(ids, [0.4, 0.0, 0.6, 0.1])), True)
    recall = Prepared("context_recall", dict(zip(ids, [0.9, 1.0, 0.8, 1.0])))
    result = evaluate([{"id": i, "user_input": "q"} for i in ids], [hallucination, recall])
    (finding,) = diagnose(result)
    assert finding.rule_id == "hallucinates_despite_retrieval" and finding.area == "generation"
    assert finding.sample_ids == ["s2", "s0"]  # the highest hallucination first
    low_recall = Prepared("context_recall", dict(zip(ids, [0.1, 0.2, 0.3, 0.9])))
    result = evaluate([{"id": i, "user_input": "q"} for i in ids], [hallucination, low_recall])
    assert "hallucinates_despite_retrieval" not in [f.rule_id for f in diagnose(result)]
