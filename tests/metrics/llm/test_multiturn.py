"""Turns of a conversation through the scripted judge: the earlier turns reach the judge's
prompts, a follow-up question is scored against its standalone rewrite (not penalised),
and a conversation costs the calls its turns would cost alone."""

import re

import pytest

from ragmeter import evaluate
from ragmeter.dataset import Dataset
from ragmeter.judge import BinaryVerdict
from ragmeter.metrics.llm import AnswerRelevancy
from ragmeter.testing import ScriptedEmbeddings, ScriptedJudge, unit_vector_with_cosine

FIRST = "What are the Pulse S3?"
FIRST_ANSWER = "The Pulse S3 are wireless earbuds with 36 hours of battery life."
FOLLOW_UP = "and its price?"
ANSWER = "The Pulse S3 costs $99."
STANDALONE = "What is the price of the Pulse S3?"
QUESTIONS = ["How much does the Pulse S3 cost?", "What is the Pulse S3's price?", "Pulse S3 cost?"]
CONVERSATION = {
    "id": "c1",
    "scenario": "a shopper asks about earbuds",
    "messages": [
        {"role": "user", "content": FIRST},
        {
            "role": "assistant",
            "content": FIRST_ANSWER,
            "retrieved_contexts": ["Pulse S3: wireless earbuds, 36 hours of battery life."],
            "reference": "Wireless earbuds.",
        },
        {"role": "user", "content": FOLLOW_UP},
        {
            "role": "assistant",
            "content": ANSWER,
            "retrieved_contexts": ["Pulse S3 price list: $99.", "Pulse S3 colours."],
            "reference": "$99.",
        },
    ],
}


def answer(messages, schema):
    """Every claim supported by passage 1, every context useful, the follow-up rewritten."""
    fields = schema.model_fields
    data = messages[-1].content
    out = {}
    if "claims" in fields:
        out["claims"] = ["The Pulse S3 costs $99."]
    if "questions" in fields:
        out |= {"questions": QUESTIONS, "noncommittal": 0}
    if "standalone" in fields:
        out["standalone"] = STANDALONE
    if "statements" in fields:
        out["statements"] = [{"text": "The price is $99.", "contexts": [1]}]
    if "usefulness" in fields:
        n = len(re.findall(r'<item index="\d+">', data.split("<contexts>")[1]))
        out["usefulness"] = [{"index": i, "useful": 1, "reason": "r"} for i in range(1, n + 1)]
    if "support" in fields:
        claims = data.split("<claims>")[1].split("</claims>")[0]
        n = len(re.findall(r'<item index="\d+">', claims))
        out["support"] = [{"claim": i, "passages": [1], "reason": ""} for i in range(1, n + 1)]
    return out


def embeddings():
    """The standalone question on the first axis; the generated questions at cosines 0.9,
    0.8 and 0.85 with it (each on its own axis); the bare follow-up on a sixth axis, at
    cosine 0 with the first axis and with every generated question."""
    vectors = {STANDALONE: unit_vector_with_cosine(1.0, 1)}
    for axis, (question, cosine) in enumerate(zip(QUESTIONS, (0.9, 0.8, 0.85)), start=2):
        vectors[question] = unit_vector_with_cosine(cosine, axis)
    vectors[FOLLOW_UP] = [0.0] * 5 + [1.0] + [0.0] * 10
    return ScriptedEmbeddings(vectors)


def turns():
    return Dataset.from_records([CONVERSATION])


def test_a_follow_up_is_scored_against_its_standalone_question():
    judge = ScriptedJudge(answer)
    metric = AnswerRelevancy(judge=judge, embeddings=embeddings())
    result = metric.score(turns()[1])
    # mean(0.9, 0.8, 0.85) = 2.55 / 3 = 0.85: the questions against the standalone question
    assert result.score == pytest.approx(0.85, abs=1e-6)
    assert result.details["standalone_question"] == STANDALONE
    assert "standalone" in result.reason
    # the rewrite is asked of the response analysis; the questions of the answer alone
    rewrite, questions = sorted(judge.calls, key=lambda c: c.schema.__name__)
    assert set(rewrite.schema.model_fields) == {"standalone"}
    assert set(questions.schema.model_fields) == {"questions", "noncommittal"}
    assert "<question>" not in questions.messages[-1].content
    assert "<conversation>" not in questions.messages[-1].content


def test_the_same_question_without_its_history_is_penalised():
    """The check that the test above can fail: without the history the bare follow-up is
    compared, at cosine 0 with every generated question: mean(0, 0, 0) = 0."""
    sample = turns()[1].model_copy(update={"history": None})
    judge = ScriptedJudge(answer)
    result = AnswerRelevancy(judge=judge, embeddings=embeddings()).score(sample)
    assert result.score == pytest.approx(0.0, abs=1e-6)
    assert "standalone_question" not in result.details
    (call,) = judge.calls  # a single turn: no rewrite
    assert "standalone" not in call.schema.model_fields


def test_the_conversation_reaches_every_judgment_of_the_turn():
    judge = ScriptedJudge(answer)
    metrics = [
        "faithfulness",
        "answer_relevancy",
        "context_precision",
        "context_recall",
        "context_relevance",
        "context_utilization",
    ]
    evaluate(turns()[1:], metrics, judge=judge, embeddings=embeddings())
    conversation = f"<conversation>\nuser: {FIRST}\nassistant: {FIRST_ANSWER}\n</conversation>"
    by_schema = {call.schema.__name__: call for call in judge.calls}
    for name in (
        "ResponseAnalysis",
        "ReferenceReview",
        "ContextRelevanceUsefulness",
        "ContextUtilizationUsefulness",
    ):
        (call,) = [c for n, c in by_schema.items() if n.startswith(name)]
        assert conversation in call.messages[-1].content, name
        assert "latest message" in call.messages[0].content, name
    verify = by_schema["VerifySupport"]  # claims against passages: no question, no history
    assert "<conversation>" not in verify.messages[-1].content


def test_a_single_turn_prompt_says_nothing_of_conversations():
    judge = ScriptedJudge(answer)
    sample = turns()[1].model_copy(update={"history": None})
    evaluate([sample], ["faithfulness", "context_precision"], judge=judge)
    for call in judge.calls:
        assert "conversation" not in call.prompt


def test_a_conversation_costs_the_calls_of_its_turns_alone():
    metrics = ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]
    with_history = ScriptedJudge(answer)  # the conversation record itself, as in Python
    result = evaluate([CONVERSATION], metrics, judge=with_history, embeddings=embeddings())
    alone = ScriptedJudge(answer)
    samples = [s.model_copy(update={"history": None}) for s in turns()]
    evaluate(samples, metrics, judge=alone, embeddings=embeddings())
    # per turn: response_analysis, reverse_questions, reference_review, verify = 4 calls
    assert len(with_history.calls) == len(alone.calls) == 8
    assert [r.sample.metadata["turn"] for r in result.samples] == [1, 2]
    assert {r.sample.metadata["conversation_id"] for r in result.samples} == {"c1"}


def test_a_missing_standalone_question_fails_the_metric_not_the_score():
    def no_rewrite(messages, schema):
        return {**answer(messages, schema), "standalone": " "}

    result = AnswerRelevancy(judge=ScriptedJudge(no_rewrite), embeddings=embeddings()).score(
        turns()[1]
    )
    assert result.score is None
    assert "standalone question" in (result.error or "")


def test_a_chinese_conversation_gets_the_chinese_instruction():
    record = {
        "messages": [
            {"role": "user", "content": "Pulse S3 是什么？"},
            {"role": "assistant", "content": "Pulse S3 是一款无线耳机。"},
            {"role": "user", "content": "那价格呢？"},
            {"role": "assistant", "content": "Pulse S3 售价 99 美元。"},
        ]
    }
    judge = ScriptedJudge(answer)
    AnswerRelevancy(judge=judge, embeddings=embeddings()).score(Dataset.from_records([record])[1])
    (call,) = [c for c in judge.calls if "standalone" in c.schema.model_fields]
    assert "最新一条消息" in call.messages[0].content
    assert (
        "user: Pulse S3 是什么？\nassistant: Pulse S3 是一款无线耳机。" in call.messages[-1].content
    )


def test_a_likelihood_judge_compares_with_the_earlier_questions_and_asks_no_rewrite():
    """The embedded judge writes no standalone question: the user's earlier message and the
    follow-up, one per line, stand in for it; its answer relevancy verdict (one yes/no) and
    each one-at-a-time relevance verdict read them too (no template of theirs has a
    conversation block)."""
    in_context = f"{FIRST}\n{FOLLOW_UP}"
    seen_questions: list[str] = []
    likelihood_prompts: list[str] = []
    yes_no_prompts: list[str] = []

    def responder(messages, schema):
        if "logprob" in schema.model_fields:  # a likelihood verdict
            likelihood_prompts.append("\n".join(m.content for m in messages))
            return {"logprob": -1.0, "tokens": 5}
        if schema is BinaryVerdict:
            yes_no_prompts.append(messages[-1].content)
            return {"verdict": 1}
        seen_questions.append(messages[-1].content)
        return answer(messages, schema)

    judge = ScriptedJudge(
        responder,
        likelihood_probability=lambda task, language, gain: 0.9,
        probabilities=lambda output: [0.8] if isinstance(output, BinaryVerdict) else None,
    )
    judge.supports_batched_verdicts = False
    result = evaluate(turns(), [AnswerRelevancy(), "context_relevance"], judge=judge)
    follow_up = result.samples[1]
    relevancy = follow_up.scores["answer_relevancy"]
    assert relevancy.details["standalone_question"] == in_context
    assert relevancy.score == pytest.approx(0.8)  # its P(yes)
    assert not seen_questions  # no question written, no rewrite asked
    assert any(in_context in prompt for prompt in yes_no_prompts)
    # Every verdict on the follow-up's two contexts (and the evidence-free baseline they
    # share) reads the earlier question before it; none reads the follow-up alone.
    on_follow_up = [prompt for prompt in likelihood_prompts if FOLLOW_UP in prompt]
    assert len(on_follow_up) >= 2
    assert all(in_context in prompt for prompt in on_follow_up)
