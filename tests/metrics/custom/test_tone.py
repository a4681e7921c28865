"""The shipped Chinese customer-service tone rubric."""

from __future__ import annotations

import json

import pytest

from ragmeter import Sample
from ragmeter.metrics.custom.tone import tone_rubric_zh
from ragmeter.testing import ScriptedJudge

COLD = Sample(id="c", user_input="快递三天了还没到，怎么回事？", response="等着。")


def test_the_rubric_asks_in_chinese_with_its_levels_and_examples():
    judge = ScriptedJudge(lambda m, s: {"reason": "生硬", "score": 2})
    result = tone_rubric_zh(judge=judge).score(COLD)
    assert result.score == pytest.approx(0.25) and result.details["level"] == 2
    messages = judge.calls[0].messages
    system = messages[0].content
    assert "客服质检员" in system and "5: 非常好" in system
    examples = [json.loads(m.content) for m in messages if m.role == "assistant"]
    assert [e["score"] for e in examples] == [1, 5]
    assert "快递三天了还没到" in messages[-1].content


def test_english_samples_get_the_english_instruction():
    judge = ScriptedJudge(lambda m, s: {"reason": "warm", "score": 5})
    sample = Sample(user_input="Where is my parcel?", response="So sorry! It arrives tomorrow.")
    assert tone_rubric_zh(judge=judge).score(sample).score == 1.0
    assert "senior customer-service quality reviewer" in judge.calls[0].messages[0].content
