"""Judges and embeddings sent to another process (a Ray worker) by pickling."""

import pickle

from ragmeter.embed import EmbeddingsConfig, OpenAIEmbeddings
from ragmeter.judge import JudgeConfig, MemoryCache, OpenAIJudge, Usage
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
