"""Multi-hop completeness with the scripted judge: hops used, shared steps, edge cases."""

from __future__ import annotations

import re

import pytest

from ragmeter import DatasetError, Sample, Status, evaluate
from ragmeter.judge import JudgeError
from ragmeter.metrics.custom import MultiHopCompleteness
from ragmeter.metrics.llm import Faithfulness
from ragmeter.testing import ScriptedJudge

QUESTION = "Which warranty covers the earbuds sold with the X200 phone?"
HOPS = [
    "The X200 phone is sold in a bundle with the Buds S earbuds.",
    "Buds S earbuds carry a two-year limited warranty.",
]
RETRIEVED = ["The X200 phone has a 6.1 inch screen.", "Buds S earbuds carry a two-year warranty."]
#: Each claim is supported by the passages that contain its key.
KEYS = {
    "The X200 comes with Buds S earbuds.": "bundle with the Buds S",
    "Buds S have a two-year warranty.": "two-year",
    "The earbuds are waterproof.": "waterproof",
}
CLAIMS = list(KEYS)
BOTH, FIRST_HOP_ONLY = CLAIMS[:2], [CLAIMS[0], CLAIMS[2]]


def items(block: str) -> list[str]:
    return re.findall(r'<item index="\d+">\n?(.*?)\n?</item>', block, flags=re.DOTALL)


def tagged(text: str, tag: str) -> str:
    return text.split(f"<{tag}>")[-1].split(f"</{tag}>")[0].strip()


class Script:
    """The judge: the response's claims are given; a passage supports a claim when it holds the
    claim's key. Counts the calls by kind."""

    def __init__(self, claims: list[str]) -> None:
        self.claims = claims
        self.calls: dict[str, int] = {}
        self.passages_seen: list[list[str]] = []

    def __call__(self, messages, schema):
        name = schema.__name__
        self.calls[name] = self.calls.get(name, 0) + 1
        prompt = messages[-1].content
        if name.startswith("ResponseAnalysis"):
            return {"claims": self.claims}
        if name.startswith("VerifySupport"):
            claims, passages = items(tagged(prompt, "claims")), items(tagged(prompt, "passages"))
            self.passages_seen.append(passages)
            return {
                "support": [
                    {
                        "claim": i,
                        "passages": [j for j, p in enumerate(passages, 1) if KEYS[c] in p],
                        "reason": "r",
                    }
                    for i, c in enumerate(claims, 1)
                ]
            }
        if name == "BinaryVerdict":
            statement, text = tagged(prompt, "statement"), tagged(prompt, "text")
            return {"verdict": int(KEYS[statement] in text)}
        raise AssertionError(f"unexpected schema {name}")


def judge_for(script: Script, *, batched: bool = True) -> ScriptedJudge:
    judge = ScriptedJudge(script)
    judge.supports_batched_verdicts = batched
    return judge


def sample(hops: list[str] | None = HOPS, **fields) -> Sample:
    return Sample(
        id="q1",
        user_input=QUESTION,
        response="The X200 comes with Buds S earbuds, which have a two-year warranty.",
        reference_contexts=hops,
        **fields,
    )


@pytest.mark.parametrize("batched", [True, False])
def test_every_hop_used(batched):
    script = Script(BOTH)
    result = MultiHopCompleteness(judge=judge_for(script, batched=batched)).score(sample())
    assert (result.status, result.score) == (Status.OK, 1.0)
    assert result.reason == "the response uses 2 of 2 hops"
    assert result.details["hops"] == [
        {"hop": 1, "used": True, "claims": [1]},
        {"hop": 2, "used": True, "claims": [2]},
    ]
    assert result.details["claims"] == [{"claim": BOTH[0]}, {"claim": BOTH[1]}]
    assert [c.text for c in result.details.claims] == BOTH
    assert [h.claims for h in result.details.hops] == [(1,), (2,)]
    if batched:
        assert script.calls == {"ResponseAnalysisClaims": 1, "VerifySupport": 1}
        assert script.passages_seen == [HOPS]  # verified against the hops, not the contexts
    else:
        assert script.calls == {"ResponseAnalysisClaims": 1, "BinaryVerdict": 4}


@pytest.mark.parametrize("batched", [True, False])
def test_a_missed_hop(batched):
    script = Script(FIRST_HOP_ONLY)
    result = MultiHopCompleteness(judge=judge_for(script, batched=batched)).score(sample())
    assert result.score == 0.5
    assert result.reason == "the response uses 1 of 2 hops; hop(s) 2 support none of its claims"
    assert result.details["hops"][1] == {"hop": 2, "used": False, "claims": []}


def test_three_hops_and_a_claim_using_two():
    hops = [*HOPS, "The X200 is waterproof to 1 metre."]
    claims = ["Buds S have a two-year warranty.", "The earbuds are waterproof."]
    script = Script(claims)
    result = MultiHopCompleteness(judge=judge_for(script)).score(sample(hops))
    assert result.score == pytest.approx(2 / 3)
    assert [h["used"] for h in result.details["hops"]] == [False, True, True]


def test_fewer_than_two_hops_is_not_applicable_without_a_judge_call():
    script = Script(BOTH)
    metric = MultiHopCompleteness(judge=judge_for(script))
    for hops in ([HOPS[0]], []):
        result = metric.score(sample(hops))
        assert result.status is Status.NOT_APPLICABLE
        assert "a multi-hop question has at least 2" in result.reason
    assert script.calls == {}


def test_no_claim_uses_no_hop():
    result = MultiHopCompleteness(judge=judge_for(Script([]))).score(sample())
    assert (result.status, result.score) == (Status.OK, 0.0)
    assert result.reason.startswith("the response makes no factual claim")


def test_missing_reference_contexts():
    result = MultiHopCompleteness(judge=judge_for(Script(BOTH))).score(sample(None))
    assert result.status is Status.FAILED
    assert result.error == "missing field(s): reference_contexts"
    with pytest.raises(DatasetError, match="reference_contexts"):
        evaluate([{"response": "x"}], [MultiHopCompleteness()], judge=judge_for(Script(BOTH)))


def test_a_judge_error_fails_the_sample():
    judge = ScriptedJudge(lambda messages, schema: JudgeError("rate limited"))
    result = MultiHopCompleteness(judge=judge).score(sample())
    assert result.status is Status.FAILED and result.error == "JudgeError: rate limited"


def test_with_faithfulness_in_one_run_the_claims_and_the_verification_are_shared():
    record = sample(retrieved_contexts=RETRIEVED).to_record()
    other = {"id": "q2", "reference_contexts": HOPS[:1], "response": "Yes: " + record["response"]}
    records = [record, {**record, **other}]
    script = Script(FIRST_HOP_ONLY)
    together = evaluate(records, [Faithfulness(), MultiHopCompleteness()], judge=judge_for(script))
    # Per sample one claims call; one verify call for the multi-hop sample (contexts and
    # hops together) and one for the other (contexts only).
    assert script.calls == {"ResponseAnalysisClaims": 2, "VerifySupport": 2}
    assert sorted(script.passages_seen, key=len) == [RETRIEVED, RETRIEVED + HOPS]
    assert together.scores("multihop_completeness") == [0.5, None]
    alone = evaluate(records, [Faithfulness()], judge=judge_for(Script(FIRST_HOP_ONLY)))
    assert together.scores("faithfulness") == alone.scores("faithfulness") == [0.0, 0.0]
    (info,) = [m for m in together.metrics if m.name == "multihop_completeness"]
    assert info.kind == "ragmeter.metrics.custom.multihop_completeness.MultiHopCompleteness"


def test_faithfulness_counts_only_the_retrieved_contexts_when_hops_are_verified_too():
    record = sample(retrieved_contexts=RETRIEVED).to_record()
    script = Script(BOTH)
    result = evaluate([record], [Faithfulness(), MultiHopCompleteness()], judge=judge_for(script))
    # Claim 1 is only in hop 1 (not retrieved): faithfulness 1/2, completeness 2/2.
    assert result.scores("faithfulness") == [0.5]
    assert result.scores("multihop_completeness") == [1.0]
    assert script.passages_seen == [RETRIEVED + HOPS]


def test_the_report_shows_the_claims_by_their_text():
    from ragmeter.report import sample_card
    from tests.report.dom import parse

    result = evaluate([sample()], [MultiHopCompleteness(judge=judge_for(Script(FIRST_HOP_ONLY)))])
    # A lone sample is at its own median, so the report lists no card: render the card itself.
    card = parse(sample_card(result.samples[0], result.metrics)).find(id="sample-0")
    claims = [
        li.find_all("span")[-1].text() for li in card.find("ul", class_="claims").find_all("li")
    ]
    assert claims == FIRST_HOP_ONLY
    hops = [chip.text() for chip in card.find_all("span", class_="chip") if "hop" in chip.text()]
    assert hops == ["hop 1 ✓ claims 1", "hop 2 ✗"]
