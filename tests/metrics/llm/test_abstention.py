"""The abstention metric: the four outcomes of its docstring's worked example, how "should
abstain" is decided (metadata, the reference's statements, the contexts' relevance), the
refusal phrases used for likelihood judges, call counts, and failures (never NaN)."""

import ast

import pytest

from ragmeter import Status, evaluate
from ragmeter.judge import BinaryVerdict, JudgeError
from ragmeter.metrics import AbstentionOutcome, Details, get_metric
from ragmeter.metrics.llm import Abstention
from ragmeter.testing import ScriptedJudge

PYTHON = "When was Python released?"
PYTHON_CONTEXTS = ["Python was released in 1991 by Guido van Rossum."]
PYTHON_REFERENCE = "Python was released in 1991."
REFUND = "What is the refund period?"
REFUND_CONTEXTS = ["Orders ship within 2 days."]
REFUND_REFERENCE = "The refund period is 30 days."
#: The responses that abstain (what the scripted judge answers for "abstains").
REFUSALS = {"I don't know.", "I could not find that."}


def _sample(i, question, contexts, reference, response, **more):
    return {
        "id": f"s{i}",
        "user_input": question,
        "retrieved_contexts": contexts,
        "reference": reference,
        "response": response,
        **more,
    }


#: The worked example of the docstring: (sample, expected outcome, expected score).
EXAMPLE = [
    (_sample(1, PYTHON, PYTHON_CONTEXTS, PYTHON_REFERENCE, "Python was released in 1991."),
     "answered", 1.0),
    (_sample(2, PYTHON, PYTHON_CONTEXTS, PYTHON_REFERENCE, "I don't know."),
     "wrongly_refused", 0.0),
    (_sample(3, REFUND, REFUND_CONTEXTS, REFUND_REFERENCE, "I could not find that."),
     "abstained", 1.0),
    (_sample(4, REFUND, REFUND_CONTEXTS, REFUND_REFERENCE, "The refund period is 14 days."),
     "hallucinated_instead_of_refusing", 0.0),
]  # fmt: skip


def _block(prompt, tag):
    return prompt.split(f"<{tag}>")[1].split(f"</{tag}>")[0] if f"<{tag}>" in prompt else ""


def answer(messages, schema):
    """Claims: the response's one sentence unless it refuses; abstains as REFUSALS says;
    the reference's one statement is in the contexts when they mention 1991; a context is
    relevant when it shares the question's topic word; one-at-a-time verdicts say yes for
    the Python context only."""
    name = schema.__name__
    prompt = messages[-1].content
    if name.startswith("ResponseAnalysis"):
        response = _block(prompt, "answer").strip()
        refuses = response in REFUSALS
        return {
            "claims": [] if refuses else [response],
            "abstains": int(refuses),
            "abstains_reason": "says it does not know" if refuses else "answers",
        }
    if name.startswith("ReferenceReview"):
        reference = _block(prompt, "reference").strip()
        found = [1] if "1991" in _block(prompt, "contexts") else []
        return {"statements": [{"text": reference, "contexts": found}]}
    if name.startswith("ContextRelevance"):
        useful = int("Python" in _block(prompt, "contexts"))
        return {"usefulness": [{"index": 1, "useful": useful, "reason": "topic"}]}
    if name == "VerifySupport":
        return {"support": [{"claim": 1, "passages": [1], "reason": "stated"}]}
    if schema is BinaryVerdict:  # one verdict at a time: only the Python context says yes
        return {"verdict": int("Python" in _block(prompt, "text"))}
    raise AssertionError(f"unexpected schema {name}")


def judge(batched=True):
    made = ScriptedJudge(answer)
    made.supports_batched_verdicts = batched
    return made


def _finding(result, i=0):
    return result.samples[i].scores["abstention"].details.abstention


@pytest.mark.parametrize("batched", [True, False])
def test_the_four_outcomes_of_the_worked_example(batched):
    result = evaluate([s for s, _, _ in EXAMPLE], ["abstention"], judge=judge(batched))
    assert result.scores("abstention") == [score for *_, score in EXAMPLE]
    assert [_finding(result, i).outcome.value for i in range(4)] == [o for _, o, _ in EXAMPLE]
    assert result.aggregates["abstention"].mean == pytest.approx((1 + 0 + 1 + 0) / 4)
    refused = _finding(result, 1)
    assert refused.basis == "reference" and refused.should_abstain is False
    assert refused.why == "1 of 1 reference statements are in the contexts"
    assert refused.abstained is True and refused.reason == "says it does not know"
    hallucinated = result.samples[3].scores["abstention"]
    assert hallucinated.reason == (
        "hallucinated_instead_of_refusing: should abstain "
        "(0 of 1 reference statements are in the contexts) and answered"
    )


def test_the_details_are_a_typed_record_stored_and_read_back():
    result = evaluate([EXAMPLE[1][0]], ["abstention"], judge=judge())
    details = result.samples[0].scores["abstention"].details
    stored = details.to_dict()
    assert stored["abstention"]["outcome"] == "wrongly_refused"
    assert stored["abstention"]["decided_by"] == "judge"
    back = Details.from_dict(stored)
    assert back.abstention == details.abstention
    assert back.abstention.outcome is AbstentionOutcome.WRONGLY_REFUSED
    assert not back.abstention.outcome.right


def test_without_reference_the_contexts_relevance_decides():
    samples = [
        _sample(1, PYTHON, PYTHON_CONTEXTS, None, "Python was released in 1991."),
        _sample(2, REFUND, REFUND_CONTEXTS, None, "The refund period is 14 days."),
    ]
    result = evaluate(samples, ["abstention"], judge=judge())
    assert result.scores("abstention") == [1.0, 0.0]
    assert _finding(result, 0).basis == "contexts"
    assert _finding(result, 0).why == "1 of 1 contexts are relevant to the question"
    assert _finding(result, 1).outcome is AbstentionOutcome.HALLUCINATED_INSTEAD_OF_REFUSING


def test_with_no_context_it_should_abstain_unless_metadata_says_answerable():
    made = judge()
    samples = [
        _sample(1, REFUND, [], REFUND_REFERENCE, "I could not find that."),
        _sample(2, REFUND, [], REFUND_REFERENCE, "I don't know.", metadata={"answerable": True}),
    ]
    result = evaluate(samples, ["abstention"], judge=made)
    assert result.scores("abstention") == [1.0, 0.0]
    assert _finding(result, 0).basis == "no_contexts"
    assert _finding(result, 1).outcome is AbstentionOutcome.WRONGLY_REFUSED
    # only the response is read: one call per sample
    assert [c.schema.__name__ for c in made.calls] == ["ResponseAnalysisAbstains"] * 2


def test_metadata_answerable_decides_before_the_contexts():
    made = judge()
    # the contexts support an answer, but the sample is marked unanswerable
    unanswerable = _sample(
        1, PYTHON, PYTHON_CONTEXTS, PYTHON_REFERENCE, "Python was released in 1991.",
        metadata={"answerable": False},
    )  # fmt: skip
    result = evaluate([unanswerable], ["abstention"], judge=made)
    assert result.scores("abstention") == [0.0]
    finding = _finding(result)
    assert finding.basis == "metadata" and finding.why == "the sample is marked unanswerable"
    assert finding.outcome is AbstentionOutcome.HALLUCINATED_INSTEAD_OF_REFUSING
    assert len(made.calls) == 1  # no reference review: the metadata decided
    # expected="contexts" ignores the metadata: the reference's statement is in context 1
    ignored = evaluate([unanswerable], [Abstention(expected="contexts")], judge=judge())
    assert ignored.scores("abstention") == [1.0]
    assert _finding(ignored).basis == "reference"
    # text from a CSV
    text = {**unanswerable, "metadata": {"answerable": "false"}}
    assert evaluate([text], ["abstention"], judge=judge()).scores("abstention") == [0.0]
    # a generated test set's record has it at the top level: read into the metadata
    generated = {k: v for k, v in unanswerable.items() if k != "metadata"} | {"answerable": False}
    assert _finding(evaluate([generated], ["abstention"], judge=judge())).basis == "metadata"


def test_expected_metadata_fails_a_sample_without_it_naming_the_field():
    made = judge()
    sample = EXAMPLE[0][0]
    result = evaluate([sample], [Abstention(expected="metadata")], judge=made)
    found = result.samples[0].scores["abstention"]
    assert found.status is Status.FAILED and found.score is None
    assert "metadata.answerable is missing" in found.error
    assert "expected='auto'" in found.error
    assert made.calls == []  # nothing asked for a sample that cannot be scored
    bad = {**sample, "metadata": {"answerable": "maybe"}}
    found = evaluate([bad], ["abstention"], judge=judge()).samples[0].scores["abstention"]
    assert found.status is Status.FAILED
    assert found.error.startswith("field metadata.answerable is 'maybe': set it to true or false")


def test_a_failed_judgment_fails_the_sample_never_nan():
    def broken(messages, schema):
        if schema.__name__.startswith("ResponseAnalysis"):
            raise JudgeError("the judge timed out")
        return answer(messages, schema)

    result = evaluate([EXAMPLE[0][0]], ["abstention"], judge=ScriptedJudge(broken))
    found = result.samples[0].scores["abstention"]
    assert found.status is Status.FAILED and found.score is None
    assert "timed out" in found.error
    assert result.aggregates["abstention"].n_failed == 1


def _calls(names, samples, batched=True):
    made = judge(batched)
    evaluate(samples, names, judge=made)
    return sorted(c.schema.__name__ for c in made.calls)


@pytest.mark.parametrize("batched", [True, False])
def test_no_new_call_next_to_faithfulness_and_context_recall(batched):
    samples = [s for s, _, _ in EXAMPLE]
    before = _calls(["faithfulness", "context_recall"], samples, batched)
    after = _calls(["faithfulness", "context_recall", "abstention"], samples, batched)
    assert len(after) == len(before)
    if batched:
        # a response analysis per sample (4), a reference review per question (2: samples
        # 1-2 and 3-4 share the same prompt, asked once), a verification for the 2 samples
        # with a claim (1 and 4): 4 + 2 + 2 = 8, claims and abstains in one call
        assert len(after) == 8
        assert after.count("ResponseAnalysisClaimsAbstains") == 4


def test_no_new_call_next_to_faithfulness_alone_when_metadata_decides():
    samples = [{**s, "metadata": {"answerable": True}} for s, _, _ in EXAMPLE]
    before = _calls(["faithfulness"], samples)
    assert _calls(["faithfulness", "abstention"], samples) == sorted(
        name.replace("ResponseAnalysisClaims", "ResponseAnalysisClaimsAbstains") for name in before
    )
    assert len(before) == 4 + 2  # 4 response analyses, 2 verifications


def test_no_new_call_next_to_faithfulness_and_context_relevance():
    samples = [{**s, "reference": None} for s, _, _ in EXAMPLE]
    before = _calls(["faithfulness", "context_relevance"], samples)
    assert len(_calls(["faithfulness", "context_relevance", "abstention"], samples)) == len(before)


def test_a_likelihood_judge_decides_by_refusal_phrases_without_a_call():
    made = ScriptedJudge(answer, likelihood_probability=lambda task, language, gain: 0.5)
    made.supports_batched_verdicts = False
    unanswerable = {"answerable": False}
    samples = [
        _sample(1, REFUND, [], None, "抱歉，文档中没有找到相关信息。", metadata=unanswerable),
        _sample(2, REFUND, [], None, "退款期限为 14 天。", metadata=unanswerable),
    ]
    result = evaluate(samples, ["abstention"], judge=made)
    assert made.calls == []
    assert result.scores("abstention") == [1.0, 0.0]
    assert _finding(result, 0).decided_by == "phrases"
    assert _finding(result, 0).reason == "refusal phrase '没有找到'"
    assert _finding(result, 1).reason == "no refusal phrase"


def refusal_phrase(text: str) -> str | None:
    """The refusal phrase a likelihood judge's abstention finds in ``text``, read from the
    finding's reason (``None``: no refusal phrase), decided without a judge call."""
    made = ScriptedJudge(answer, likelihood_probability=lambda task, language, gain: 0.5)
    made.supports_batched_verdicts = False
    sample = _sample(1, REFUND, [], None, text, metadata={"answerable": False})
    result = evaluate([sample], ["abstention"], judge=made)
    assert made.calls == []
    if not text:  # nothing to read a refusal in: not scored, not taken for one
        score = result.samples[0].scores["abstention"]
        assert (score.status, score.reason) == (Status.NOT_APPLICABLE, "empty response")
        return None
    finding = _finding(result)
    assert finding is not None and finding.decided_by == "phrases"
    if finding.reason == "no refusal phrase":
        return None
    assert finding.reason.startswith("refusal phrase ")
    return ast.literal_eval(finding.reason.removeprefix("refusal phrase "))


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("I don't know.", "i don't know"),
        ("I’m sorry, I couldn’t find that in the documents.", "couldn't find"),
        ("The documents do not mention the refund period. Please contact support.",
         "do not mention"),
        ("Based on the provided documents, there is no information about it.",
         "there is no information"),
        ("Sorry, I cannot answer that question.", "cannot answer"),
        ("抱歉，我没有找到相关信息。", "没有找到"),
        ("根据提供的资料，无法回答这个问题。", "无法回答"),
        ("文档中未提及退货运费，建议联系客服。", "未提及"),
        ("我不知道", "不知道"),
        ("很抱歉，提供的文档中并没有包含这方面的内容。", "文档中并没有包含"),
    ],
)  # fmt: skip
def test_refusal_phrases_find_abstentions(text, phrase):
    assert refusal_phrase(text) == phrase


@pytest.mark.parametrize(
    "text",
    [
        "Python was released in 1991.",
        "I don't know the exact date, but it was around 1991.",  # a caveat, then an answer
        "The refund period is 30 days; the warranty is not specified.",
        "Please contact support at 555-0100, open 9 to 5.",  # a deflection with facts
        "",
        "退货运费由买家承担。",
        "AirPods 保修 1 年，但文档未提及是否包含进水损坏。",  # a partial answer with a caveat
        "我知道答案：保修期为两年。",
    ],
)
def test_refusal_phrases_leave_answers_alone(text):
    assert refusal_phrase(text) is None


def test_registered_by_name_with_its_parameter():
    metric = get_metric("abstention")
    assert isinstance(metric, Abstention) and metric.params() == {"expected": "auto"}
    assert Abstention(expected="contexts").params() == {"expected": "contexts"}
    with pytest.raises(ValueError, match="expected must be one of auto, metadata, contexts"):
        Abstention(expected="always")


def test_the_diagnosis_tells_the_two_wrong_outcomes_apart_from_the_details():
    from ragmeter.diagnosis import diagnose

    # The worked example twice (s1-s4, then t1-t4): s2/t2 wrongly refused, s4/t4
    # hallucinated instead of refusing. u1 is marked unanswerable but its context is on
    # the question's topic (relevant) and it answered: hallucinated, though a rule reading
    # context relevance would have called it a wrong refusal.
    samples = [s for s, _, _ in EXAMPLE] + [{**s, "id": "t" + s["id"][1:]} for s, _, _ in EXAMPLE]
    samples.append(
        _sample(
            "u1", PYTHON, PYTHON_CONTEXTS, None, "Python 4 came out in 2030.",
            metadata={"answerable": False},
        )
    )  # fmt: skip
    result = evaluate(samples, ["abstention", "context_relevance"], judge=judge())
    found = {f.rule_id: f for f in diagnose(result)}
    answers = found["answers_when_it_should_abstain"]
    assert answers.area == "generation"
    assert sorted(answers.sample_ids) == ["s4", "su1", "t4"]
    assert (answers.n_matching, answers.n_evaluated) == (3, 9)  # 3 / 9 = 33%
    refuses = found["refuses_answerable_questions"]
    assert sorted(refuses.sample_ids) == ["s2", "t2"] and refuses.n_evaluated == 9
    zh = {f.rule_id: f for f in diagnose(result, language="zh")}
    assert zh["refuses_answerable_questions"].title == "系统拒答了本可回答的问题"
