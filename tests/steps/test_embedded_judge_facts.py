"""What a judge whose verdicts are likelihoods (the embedded 0.5B model) is asked, and what it
is spared (issue 35): claims and reference statements are the texts' own sentences (no call);
a claim stating a number or code that none of a source's passages holds is unsupported
without a verdict, and says which; answer relevancy is one yes/no verdict, and a response
that leaves the question unanswered scores 0 without one."""

from __future__ import annotations

import math
import re

import pytest

from ragmeter import evaluate
from ragmeter.judge import BinaryVerdict, TextLikelihood
from ragmeter.steps._judgments import (  # private: the embedded judge's heuristics
    hedge_phrase,
    sentence_claims,
)
from ragmeter.testing import ScriptedEmbeddings, ScriptedJudge

SAMPLE = {
    "user_input": "How long does the M5 battery last?",
    "response": "It lasts up to 12 days in normal use. A full charge takes only 45 minutes.",
    "retrieved_contexts": [
        "The M5 battery lasts up to 12 days in normal use.",
        "The M5 has a 1.4-inch display.",
    ],
    "reference": "No. The M5 lasts up to 12 days, or 30 hours with GPS.",
}


def tag(prompt: str, name: str) -> str:
    found = re.search(rf"<{name}>\n(.*?)\n</{name}>", prompt, re.DOTALL)
    return found.group(1) if found else ""


def responder(messages, schema):
    if schema is TextLikelihood:
        # the evidence raises every statement's likelihood a lot: only the figure check says no
        return {"logprob": -0.5 if tag(messages[-2].content, "text") else -3.0, "tokens": 5}
    if schema is BinaryVerdict:
        return {"verdict": 1}
    raise AssertionError(f"no structured call expected, got {schema.__name__}")


def likelihood_judge(p_yes: float = 0.8) -> ScriptedJudge:
    judge = ScriptedJudge(
        responder,
        likelihood_probability=lambda task, language, gain: 1 / (1 + math.exp(-(gain - 1))),
        probabilities=lambda output: [p_yes] if isinstance(output, BinaryVerdict) else None,
    )
    judge.supports_batched_verdicts = False
    return judge


def scores(metrics, judge, sample=SAMPLE):
    return (
        evaluate([sample], metrics, judge=judge, embeddings=ScriptedEmbeddings()).samples[0].scores
    )


def test_claims_and_statements_are_the_texts_sentences_without_a_call() -> None:
    judge = likelihood_judge()
    found = scores(["faithfulness", "context_recall"], judge)
    claims = [c["claim"] for c in found["faithfulness"].details["claims"]]
    assert claims == [
        "It lasts up to 12 days in normal use.",
        "A full charge takes only 45 minutes.",
    ]
    statements = [s["statement"] for s in found["context_recall"].details["statements"]]
    assert statements == ["No. The M5 lasts up to 12 days, or 30 hours with GPS."]  # "No." joins
    assert {call.schema for call in judge.calls} <= {TextLikelihood, BinaryVerdict}


def test_a_number_no_context_states_is_unsupported_without_a_verdict() -> None:
    judge = likelihood_judge()
    found = scores(["faithfulness", "context_recall"], judge)
    first, second = found["faithfulness"].details["claims"]
    assert (first["supported"], second["supported"]) == (True, False)
    assert second["p_supported"] == 0.0
    assert second["reason"] == "not in the contexts: 45"
    assert found["faithfulness"].score == pytest.approx(first["p_supported"] / 2)
    # the reference's "30 hours" is in no context: not found, where likelihoods alone said yes
    assert found["context_recall"].score == 0.0
    scored = [c.messages[-1].content for c in judge.calls if c.schema is TextLikelihood]
    assert scored and not any("45 minutes" in text for text in scored)  # no call for it


def test_a_claim_joining_two_contexts_is_not_refused() -> None:
    sample = {
        **SAMPLE,
        "response": "It lasts 12 days and has a 1.4-inch display.",
        "reference": "It lasts 12 days and has a 1.4-inch display.",
    }
    found = scores(["faithfulness", "context_recall"], likelihood_judge(), sample)
    assert found["faithfulness"].details["claims"][0]["supported"] is True
    assert found["context_recall"].score == 1.0


def test_number_words_and_chinese_numerals_count_as_the_number() -> None:
    sample = {
        "user_input": "保修多久？",
        "response": "整机保修 1 年，电池保修 2 年。",
        "retrieved_contexts": ["整机保修一年，电池单独保修两年。"],
    }
    found = scores(["faithfulness"], likelihood_judge(), sample)
    assert found["faithfulness"].details["claims"][0]["supported"] is True


def test_answer_relevancy_is_one_yes_no_verdict_with_its_probability() -> None:
    judge = likelihood_judge(p_yes=0.7)
    result = scores(["answer_relevancy"], judge)["answer_relevancy"]
    assert result.score == pytest.approx(0.7)
    assert result.details["p_relevant"] == pytest.approx(0.7)
    assert "answers the question" in result.reason
    (call,) = judge.calls
    assert call.schema is BinaryVerdict
    assert tag(call.messages[-1].content, "text") == SAMPLE["response"]

    low = scores(["answer_relevancy"], likelihood_judge(p_yes=0.3))["answer_relevancy"]
    assert low.score == pytest.approx(0.3)
    assert "does not answer" in low.reason


def test_a_response_that_leaves_the_question_unanswered_scores_0_without_a_call() -> None:
    judge = likelihood_judge()
    sample = {**SAMPLE, "response": "It lasts a while, but I do not have the exact figure."}
    result = scores(["answer_relevancy"], judge, sample)["answer_relevancy"]
    assert (result.score, result.details["noncommittal"]) == (0.0, True)
    assert judge.calls == []


def test_a_judge_that_batches_verdicts_still_writes_claims_and_questions() -> None:
    asked = []

    def batched(messages, schema):
        asked.append(schema.__name__)
        fields = schema.model_fields
        out = {}
        if "claims" in fields:
            out["claims"] = ["It lasts up to 12 days in normal use."]
        if "questions" in fields:
            out.update(questions=["How long does the battery last?"], noncommittal=0)
        if "support" in fields:
            out["support"] = [{"claim": 1, "passages": [1]}]
        return out

    found = scores(["faithfulness", "answer_relevancy"], ScriptedJudge(batched))
    assert found["faithfulness"].score == 1.0
    assert found["answer_relevancy"].details["questions"] == ["How long does the battery last?"]
    assert any("Claims" in name for name in asked)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Yes. It ships today; returns take 30 days.",
            ["Yes. It ships today;", "returns take 30 days."],
        ),
        (
            "可以。自签收之日起 7 天内可以退货。需要发票吗？",
            ["可以。自签收之日起 7 天内可以退货。"],
        ),
        ("It lasts 12 days. It lasts 12 days.", ["It lasts 12 days."]),
        ("", []),
    ],
)
def test_sentence_claims(text: str, expected: list[str]) -> None:
    assert sentence_claims(text) == expected


def test_hedges_are_found_in_any_clause() -> None:
    assert hedge_phrase("The festival is in September. I am not aware of the opening film.")
    assert hedge_phrase("资料里没有说明，不过应该可以。") == "没有说明"
    assert hedge_phrase("It lasts 12 days in normal use.") is None
    # a negative fact is an answer, not a hedge
    assert hedge_phrase("No. The warranty does not cover water damage; it is not included.") is None
