import asyncio
import logging
import math

import pytest
from pydantic import BaseModel

from ragmeter.judge import (
    JudgeConfig,
    JudgeOutputError,
    Message,
    OpenAIJudge,
    extract_json,
    parse_output,
    repaired_answers,
    verdict_probabilities,
)
from ragmeter.testing import FakeOpenAIServer


class Claims(BaseModel):
    claims: list[str]


class Verdicts(BaseModel):
    verdicts: list[int]


@pytest.mark.parametrize(
    "text",
    [
        '{"claims": ["a", "b"]}',
        '```json\n{"claims": ["a", "b"]}\n```',
        'Here you go:\n{"claims": ["a", "b"]}\nHope this helps!',
        '思考过程……最终答案：{"claims": ["a", "b"]}',
        '["a", "b"]',  # a bare list for a one-field object
    ],
)
def test_tolerant_extraction(text):
    assert parse_output(text, Claims).claims == ["a", "b"]


def test_braces_inside_strings_do_not_confuse_extraction():
    text = 'Answer: {"claims": ["set {x}", "a \\"quoted\\" }"]} trailing }'
    assert parse_output(text, Claims).claims == ["set {x}", 'a "quoted" }']


def test_no_json_is_an_error_with_the_raw_text():
    with pytest.raises(JudgeOutputError) as raised:
        extract_json("I cannot answer that.")
    assert raised.value.raw == "I cannot answer that."


def test_schema_mismatch_names_the_field():
    with pytest.raises(JudgeOutputError, match="claims"):
        parse_output('{"claim": "a"}', Claims)


def test_truncated_json_is_an_error():
    with pytest.raises(JudgeOutputError):
        parse_output('{"claims": ["a", "b', Claims)


def lp(token, **alternatives):
    return {
        "token": token,
        "logprob": math.log(alternatives.get(token, 1.0)),
        "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in alternatives.items()],
    }


def test_verdict_probabilities_in_order():
    content = [
        {"token": '{"verdicts": [', "logprob": 0.0, "top_logprobs": []},
        lp("1", **{"1": 0.9, "0": 0.1}),
        {"token": ", ", "logprob": 0.0, "top_logprobs": []},
        lp("0", **{"0": 0.7, "1": 0.2, "2": 0.1}),
        {"token": "]}", "logprob": 0.0, "top_logprobs": []},
    ]
    probabilities = verdict_probabilities(content)
    assert probabilities == pytest.approx([0.9, 0.2 / 0.9])


def test_yes_no_tokens_and_missing_logprobs():
    assert verdict_probabilities([lp("Yes", Yes=0.6, No=0.3)]) == pytest.approx([0.6 / 0.9])
    assert verdict_probabilities(None) is None
    assert verdict_probabilities([{"token": "hello", "top_logprobs": []}]) is None


# -- the repair of sloppy JSON, before any paid re-ask ---------------------------------------


class Flags(BaseModel):
    supported: bool
    partial: bool
    note: str | None


SLOPPY_CLAIMS = {
    "trailing commas": '{"claims": ["a", "b",],}',
    "single quotes": "{'claims': ['a', 'b']}",
    "a line comment": '{"claims": [\n  "a", // the first\n  "b"\n]}',
    "a block comment": '{"claims": [/* both */ "a", "b"]}',
    "full-width colon and commas": '{"claims"：["a"，"b"]}',
    "full-width quotes": "{“claims”：[“a”，“b”]}",
    "prose around it": "Sure! Here it is: {'claims': ['a', 'b',]} Hope this helps.",
    "a markdown fence": "```json\n{'claims': ['a', 'b',]}\n```",
    "prose with braces first": "The set {x} is empty. Answer: {'claims': ['a', 'b']}",
    "a bare sloppy list": "['a', 'b',]",
}


@pytest.mark.parametrize("text", SLOPPY_CLAIMS.values(), ids=SLOPPY_CLAIMS.keys())
def test_sloppy_json_is_repaired_without_a_re_ask(text):
    before = repaired_answers()
    assert parse_output(text, Claims) == Claims(claims=["a", "b"])
    assert repaired_answers() == before + 1


def test_python_literals_are_repaired():
    text = "{'supported': True, 'partial': False, 'note': None}"
    assert parse_output(text, Flags) == Flags(supported=True, partial=False, note=None)


def test_raw_newlines_in_strings_are_kept():
    text = '{"claims": ["line one\nline two", "b"],}'
    assert parse_output(text, Claims).claims == ["line one\nline two", "b"]


def test_full_width_punctuation_inside_strings_is_kept():
    text = '{"claims": ["北京，中国的首都：是", "他说“好”"],}'
    assert parse_output(text, Claims).claims == ["北京，中国的首都：是", "他说“好”"]
    text = "{“claims”：[“北京，中国”，'it's: fine']}"
    assert parse_output(text, Claims).claims == ["北京，中国", "it's: fine"]


def test_a_repaired_answer_that_breaks_the_schema_is_still_an_error():
    before = repaired_answers()
    with pytest.raises(JudgeOutputError, match="does not match the schema: claims"):
        parse_output("{'claims': 'not a list',}", Claims)
    with pytest.raises(JudgeOutputError, match="does not match the schema: verdicts"):
        parse_output("{'verdicts': ['maybe',],}", Verdicts)
    # Prose in brackets repairs to JSON too, but is no answer: "{x}" to ["x}"], "[see
    # above]" to a list that is not the whole answer, an object without the schema's fields.
    for text in ["I would say [see above] and {x}.", "{'note': 'no such field'}"]:
        with pytest.raises(JudgeOutputError):
            parse_output(text, Claims)
    assert repaired_answers() == before


def test_an_unclosed_answer_is_never_repaired():
    with pytest.raises(JudgeOutputError, match="not closed"):
        parse_output("{'claims': ['a', 'b',", Claims)
    with pytest.raises(JudgeOutputError, match="not closed"):
        parse_output('Here: {"claims": ["a", "b"', Claims)


def test_the_repair_can_be_turned_off():
    with pytest.raises(JudgeOutputError):
        parse_output("{'claims': ['a', 'b']}", Claims, allow_repair=False)


def test_a_repair_is_logged_at_debug(caplog):
    with caplog.at_level(logging.DEBUG, logger="ragmeter.judge"):
        parse_output("{'claims': ['a']}", Claims)
    assert any("repairing its JSON" in r.getMessage() for r in caplog.records)


def test_the_openai_judge_sends_no_re_ask_for_sloppy_json():
    responder = lambda body: "{'claims': ['x',],}"  # noqa: E731
    with FakeOpenAIServer(responder=responder) as server:
        judge = OpenAIJudge(JudgeConfig(model="judge-model", base_url=server.base_url))

        async def ask():
            try:
                return await judge.generate(
                    [Message("user", "List the claims.")], Claims, prompt_version="t@1"
                )
            finally:
                await judge.aclose()

        judgment = asyncio.run(ask())
        assert judgment.output == Claims(claims=["x"])
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
        assert len(chats) == 1
        assert judgment.usage.calls == 1
