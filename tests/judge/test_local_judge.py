"""The embedded offline judge, end to end on the real bundled model (needs ragmeter[local])."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ragmeter.judge import _llama

if not _llama.available():
    pytest.skip("the prebuilt llama.cpp binding is not installed", allow_module_level=True)

from pydantic import BaseModel, Field

from ragmeter.judge import (
    BinaryVerdict,
    JudgeConfigError,
    JudgeTruncatedError,
    LocalJudge,
    LocalModelMissingError,
    MemoryCache,
    Message,
    TextLikelihood,
    _local,
    model_path,
)


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    try:
        model_path()
    except LocalModelMissingError as error:
        pytest.skip(str(error))
    return LocalJudge()


def verdict(judge: LocalJudge, prompt: str) -> Any:
    return asyncio.run(judge.generate([Message("user", prompt)], BinaryVerdict, prompt_version="t"))


EN_SUPPORT = (
    "Context: The Eiffel Tower is a wrought-iron tower in Paris, France. It was completed "
    "in 1889.\n\nClaim: {claim}\n\nIs the claim supported by the context?"
)
ZH_CONTAINS = (
    "段落：长城是中国古代的军事防御工程，总长度超过两万公里。\n\n问题：{question}\n\n"
    "根据上面的段落，能回答这个问题吗？"
)
ZH_SUPPORT = (
    "段落：北京是中华人民共和国的首都，2020年常住人口约为2189万人。\n\n陈述：{claim}\n\n"
    "这个陈述是否得到段落的支持？"
)

# Chosen with a margin: P(yes) at temperature 0 was 0.72 / 0.25 / 0.84 / 0.37 / 0.82 / 0.30.
CLEAR_CUT = [
    pytest.param(EN_SUPPORT.format(claim="The Eiffel Tower is in Paris."), 1, id="en-yes"),
    pytest.param(EN_SUPPORT.format(claim="The Eiffel Tower is in Berlin."), 0, id="en-no"),
    pytest.param(ZH_CONTAINS.format(question="长城的总长度是多少？"), 1, id="zh-yes"),
    pytest.param(ZH_CONTAINS.format(question="苹果公司的创始人是谁？"), 0, id="zh-no"),
    pytest.param(ZH_SUPPORT.format(claim="北京是中国的首都。"), 1, id="zh-claim-yes"),
    pytest.param(ZH_SUPPORT.format(claim="北京是日本的首都。"), 0, id="zh-claim-no"),
]


@pytest.mark.parametrize(("prompt", "expected"), CLEAR_CUT)
def test_clear_cut_verdicts(judge: LocalJudge, prompt: str, expected: int) -> None:
    judgment = verdict(judge, prompt)
    assert judgment.output.verdict == expected
    assert judgment.probabilities is not None and len(judgment.probabilities) == 1
    p_yes = judgment.probabilities[0]
    assert (p_yes >= 0.5) == bool(expected)
    assert judgment.usage.calls == 1 and judgment.usage.prompt_tokens > 20
    assert judgment.usage.cost == 0


class Claims(BaseModel):
    claims: list[str] = Field(min_length=1)


def test_json_schema_generation_is_validated(judge: LocalJudge) -> None:
    messages = [
        Message("system", "You split text into short, self-contained factual claims."),
        Message(
            "user",
            "Text: Marie Curie was born in Warsaw. She won two Nobel Prizes.\n\n"
            "List the claims in the text.",
        ),
    ]
    judgment = asyncio.run(judge.generate(messages, Claims, prompt_version="t"))
    assert isinstance(judgment.output, Claims)
    assert all(isinstance(claim, str) and claim.strip() for claim in judgment.output.claims)
    assert judgment.usage.calls >= 1
    assert judgment.usage.completion_tokens > 0


def test_model_is_loaded_once_and_shared(judge: LocalJudge) -> None:
    first = judge.llama
    loaded = dict(_local._RUNTIMES)
    other = LocalJudge(cache=MemoryCache())
    assert other.llama is first
    assert loaded == _local._RUNTIMES  # nothing new was loaded


def test_second_identical_call_is_served_from_the_cache(
    judge: LocalJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = LocalJudge(cache=MemoryCache())
    prompt = EN_SUPPORT.format(claim="The Eiffel Tower was completed in 1889.")
    first = verdict(local, prompt)
    assert not first.cached and local.ledger.total.calls == 1

    def no_model_call(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was called again")

    monkeypatch.setattr(local, "_verdict", no_model_call)
    second = verdict(local, prompt)
    assert second.cached
    assert second.output == first.output and second.probabilities == first.probabilities
    assert local.ledger.total.calls == 1 and local.ledger.total.cached_calls == 1


def test_describe_and_identity(judge: LocalJudge) -> None:
    described = judge.describe()
    assert described["kind"] == "local"
    assert described["sha256"] == judge.model.sha256[:12]
    assert judge.model.sha256[:12] in judge.identity and judge.model.name in judge.identity
    assert "bench/RESULTS_meta_eval.md" in described["quality_note"]
    assert described["verdict_method"] == "likelihood" and "useful" in described["calibration"]
    assert judge.supports_batched_verdicts is False


def test_truncated_json_is_retried_once_then_an_error(
    judge: LocalJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_local, "JSON_MAX_TOKENS", 3)
    messages = [Message("user", "List three claims about Paris.")]
    with pytest.raises(JudgeTruncatedError, match="cut off at 6 tokens"):
        asyncio.run(judge.generate(messages, Claims, prompt_version="t-trunc"))


def test_every_list_without_a_bound_gets_one_and_the_grammar_ends_it(
    judge: LocalJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "free": {"type": "array", "items": {"type": "string"}},
            "set": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        },
        "$defs": {"Inner": {"type": "array", "items": {"type": "integer"}}},
    }
    bounded = _local._bounded(schema)
    assert bounded["properties"]["free"]["maxItems"] == _local.MAX_LIST_ITEMS
    assert bounded["properties"]["set"]["maxItems"] == 2  # a declared bound is kept
    assert bounded["$defs"]["Inner"]["maxItems"] == _local.MAX_LIST_ITEMS
    assert "maxItems" not in schema["properties"]["free"]  # the input is not modified

    class Words(BaseModel):
        words: list[str]

    # A request the small model answers with a long list: the grammar stops it at the bound
    # instead of letting greedy decoding run into the token budget.
    monkeypatch.setattr(_local, "MAX_LIST_ITEMS", 3)
    messages = [Message("user", 'Reply with JSON {"words": [...]} listing "yes" 40 times.')]
    answer = asyncio.run(judge.generate(messages, Words, prompt_version="t-bound"))
    assert 1 <= len(answer.output.words) <= 3


def likelihood(judge: LocalJudge, context: str, text: str) -> Any:
    messages = [Message("user", f"<text>\n{context}\n</text>\n\nState one fact from the text.")]
    return asyncio.run(
        judge.generate([*messages, Message("assistant", text)], TextLikelihood, prompt_version="t")
    )


def test_likelihood_rises_with_the_evidence_that_states_the_text(judge: LocalJudge) -> None:
    context = "The Eiffel Tower is a wrought-iron tower in Paris. It was completed in 1889."
    stated = likelihood(judge, context, "The Eiffel Tower was completed in 1889.")
    other_year = likelihood(judge, context, "The Eiffel Tower was completed in 1925.")
    without = likelihood(judge, "", "The Eiffel Tower was completed in 1889.")
    assert stated.output.tokens == other_year.output.tokens > 5
    assert stated.output.logprob > other_year.output.logprob
    assert stated.output.logprob > without.output.logprob
    assert stated.usage.calls == 1 and stated.usage.completion_tokens == 0


def test_likelihood_matches_token_by_token_evaluation(judge: LocalJudge) -> None:
    """The batched scoring gives the same log-probabilities as feeding one token at a time
    (up to the rounding of batched matrix products)."""
    runtime = judge._runtime()
    prefix = runtime.render([{"role": "user", "content": "Name the capital of France."}])
    tokens = runtime.llm.tokenize(b"The capital of France is Paris.", add_bos=False, special=False)
    text = list(tokens)
    with runtime.borrow() as llm:
        batched = _local._continuation_logprobs(llm, prefix, text)
        one_by_one = []
        _local._prefill(llm, prefix)
        for token in text:
            one_by_one.append(_local._log_softmax_at(_local._last_logits(llm), token))
            llm.eval([token])
    assert len(batched) == len(text)
    assert batched == pytest.approx(one_by_one, abs=0.2)


def test_a_likelihood_request_must_end_with_the_text_to_score(judge: LocalJudge) -> None:
    with pytest.raises(JudgeConfigError, match="must end with the assistant message"):
        asyncio.run(judge.generate([Message("user", "hello")], TextLikelihood, prompt_version="t"))
