"""Judges and embeddings sent to another process (a Ray worker) by pickling."""

import asyncio
import pickle

import pytest
from pydantic import BaseModel

from ragmeter.embed import EmbeddingsConfig, OpenAIEmbeddings
from ragmeter.judge import (
    AnthropicConfig,
    AnthropicJudge,
    JudgeConfig,
    MemoryCache,
    Message,
    OpenAIJudge,
    Usage,
)
from ragmeter.testing import FakeAnthropicServer
from tests.metrics.llm import scripts


def test_an_endpoint_judge_travels_without_what_belongs_to_its_process():
    judge = OpenAIJudge(
        JudgeConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key="sk-secret-1234")
    )
    judge.cache.put("key", {"answer": 1})
    judge.ledger.record(Usage(calls=3), sample_id="case-1")
    copy = pickle.loads(pickle.dumps(judge))
    # The same judge: its settings (the key included, for the worker's requests) ...
    assert copy.config == judge.config and copy.identity == judge.identity
    # ... with a cache, ledger, HTTP client and limiter of its own, made afresh.
    assert isinstance(copy.cache, MemoryCache) and copy.cache.get("key") is None
    assert copy.ledger.total == Usage()
    assert copy.http is not judge.http and copy.limiter is copy.http.limiter
    assert copy._in_flight == {}


class Claims(BaseModel):
    claims: list[str]


def test_an_anthropic_judge_travels_and_answers_in_its_new_process():
    key = "sk-ant-fake-0123456789abcdef-secret"
    with FakeAnthropicServer(responder=lambda body: {"claims": ["sky"]}, api_key=key) as server:
        judge = AnthropicJudge(
            AnthropicConfig(model="claude-fake", base_url=server.base_url, api_key=key)
        )
        judge.ledger.record(Usage(calls=3), sample_id="case-1")
        copy = pickle.loads(pickle.dumps(judge))
        assert copy.config == judge.config and copy.identity == judge.identity
        assert copy.ledger.total == Usage() and copy._in_flight == {}
        assert copy.http is not judge.http and copy.limiter is copy.http.limiter
        assert copy.http.anthropic_version == judge.http.anthropic_version

        async def ask():
            try:
                return await copy.generate(
                    [Message("user", "Is the sky blue?")], Claims, prompt_version="t@1"
                )
            finally:
                await copy.aclose()

        judgment = asyncio.run(ask())
        assert judgment.output.claims == ["sky"] and judgment.usage.calls == 1
        (request,) = [r for r in server.requests if r.path == "/v1/messages"]
        assert request.authorized  # the key travelled, in x-api-key


def test_embeddings_and_the_scripted_judge_travel_too():
    embeddings = OpenAIEmbeddings(
        EmbeddingsConfig(model="e", base_url="http://127.0.0.1:9/v1", api_key="x")
    )
    copy = pickle.loads(pickle.dumps(embeddings))
    assert copy.config == embeddings.config and copy.http is not embeddings.http
    assert copy.ledger is not embeddings.ledger

    scripted = scripts.judge()
    again = pickle.loads(pickle.dumps(scripted))
    assert again._lock is not scripted._lock and again._lock.acquire(timeout=1)


def test_a_litellm_judge_travels_and_imports_litellm_again():
    pytest.importorskip("litellm")
    from ragmeter.judge import LiteLLMJudge

    judge = LiteLLMJudge("openai/gpt-4o-mini", api_key="sk-x", base_url="http://127.0.0.1:9/v1")
    copy = pickle.loads(pickle.dumps(judge))
    assert copy.config == judge.config and copy.provider == "openai"
    assert copy._litellm is not None and copy.limiter is not None
