"""What the metrics read comes from the response (issue 35): answer relevancy's questions are
written from the answer alone, copies of the user's question or of an example are re-asked
once and then left out; claims copied from the question, or repeated, are left out; both are
recorded in the details."""

from __future__ import annotations

from ragmeter import evaluate
from ragmeter.testing import ScriptedEmbeddings, ScriptedJudge

SAMPLE = {
    "id": "dispatch",
    "user_input": "I order at 11:00 Central European Time. When will my order be dispatched?",
    "response": "It will probably be dispatched within a few business days.",
    "retrieved_contexts": ["Express shipping delivers within 2 business days."],
}


def test_the_questions_are_written_without_the_question_and_copies_are_left_out() -> None:
    def answer(messages, schema):
        assert "<question>" not in messages[-1].content
        assert "11:00" not in messages[-1].content  # the user's question is never shown
        return {
            "questions": [
                SAMPLE["user_input"],  # a copy of the user's question
                "Which team won the 2031 chess olympiad?",  # a copy of an example's
                "When will the order be dispatched?",
            ],
            "noncommittal": 0,
        }

    judge = ScriptedJudge(answer)
    outcome = evaluate(
        [SAMPLE], ["answer_relevancy"], judge=judge, embeddings=ScriptedEmbeddings()
    ).samples[0]
    result = outcome.scores["answer_relevancy"]
    assert len(judge.calls) == 2  # the copies were re-asked once
    assert result.details["questions"] == ["When will the order be dispatched?"]
    whys = [item["why"] for item in result.details["left_out"]]
    assert whys == ["the user's question word for word", "a question of the prompt's examples"]


def test_only_copies_fail_the_metric_and_say_why() -> None:
    judge = ScriptedJudge(lambda m, s: {"questions": [SAMPLE["user_input"]], "noncommittal": 0})
    result = (
        evaluate([SAMPLE], ["answer_relevancy"], judge=judge, embeddings=ScriptedEmbeddings())
        .samples[0]
        .scores["answer_relevancy"]
    )
    assert result.status == "failed"
    assert "1 were copies" in str(result.error)


def test_claims_copied_from_the_question_or_repeated_are_left_out() -> None:
    def answer(messages, schema):
        if "claims" in schema.model_fields:
            return {
                "claims": [
                    "I order at 11:00 Central European Time.",
                    "The order will probably be dispatched within a few business days.",
                    "The order will probably be dispatched within a few business days.",
                ]
            }
        return {"support": [{"claim": 1, "passages": [], "reason": "not stated"}]}

    result = (
        evaluate([SAMPLE], ["faithfulness"], judge=ScriptedJudge(answer))
        .samples[0]
        .scores["faithfulness"]
    )
    assert [c["claim"] for c in result.details["claims"]] == [
        "The order will probably be dispatched within a few business days."
    ]
    whys = [item["why"] for item in result.details["left_out"]]
    assert whys[0].startswith("copied from the question")
    assert whys[1] == "a repeat of an earlier claim"
    assert result.score == 0.0


def test_a_response_whose_every_claim_is_copied_is_not_applicable_and_says_so() -> None:
    judge = ScriptedJudge(lambda m, s: {"claims": ["I order at 11:00 Central European Time."]})
    result = evaluate([SAMPLE], ["faithfulness"], judge=judge).samples[0].scores["faithfulness"]
    assert result.status == "not_applicable"
    assert "1 claims the judge wrote are not the response's" in str(result.reason)
