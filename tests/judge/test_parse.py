import math

import pytest
from pydantic import BaseModel

from ragmeter.judge import JudgeOutputError, extract_json, parse_output, verdict_probabilities


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
