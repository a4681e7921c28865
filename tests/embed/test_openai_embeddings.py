"""OpenAIEmbeddings against the fake OpenAI-compatible server (and httpx.MockTransport)."""

from __future__ import annotations

import asyncio
import json
import math

import httpx
import numpy as np
import pytest

from ragmeter.embed import EmbeddingsConfig, OpenAIEmbeddings, default_embeddings
from ragmeter.judge import JudgeConfigError, JudgeTransientError, MemoryCache, SQLiteCache
from ragmeter.testing import FakeOpenAIServer, Fault

SECRET = "sk-embed-secret-0123456789"


@pytest.fixture
def server():
    with FakeOpenAIServer(embedding_dimensions=16) as fake:
        yield fake


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr("ragmeter._services._http.MAX_BACKOFF_S", 0.0)


def make(server: FakeOpenAIServer, **overrides) -> OpenAIEmbeddings:
    settings = {"model": "embed-a", "base_url": server.base_url, "max_retries": 3, **overrides}
    cache = settings.pop("cache", None)
    return OpenAIEmbeddings(EmbeddingsConfig(**settings), cache=cache)


def expected(text: str, dimensions: int = 16) -> np.ndarray:
    return np.asarray(FakeOpenAIServer.embedding_for(text, dimensions), dtype=np.float32)


def embedding_requests(server: FakeOpenAIServer) -> list:
    return [r for r in server.requests if r.path.endswith("/embeddings")]


@pytest.mark.parametrize(("n", "batch_size"), [(10, 3), (7, 7), (8, 1), (1, 64)])
def test_batches_make_ceil_n_over_b_calls_and_keep_order(server, n, batch_size):
    texts = [f"text number {i}" for i in range(n)]
    embeddings = make(server, batch_size=batch_size)
    vectors = embeddings.embed_sync(texts, kind="passage")
    sent = [r.body["input"] for r in embedding_requests(server)]
    assert len(sent) == math.ceil(n / batch_size)
    assert all(len(batch) <= batch_size for batch in sent)
    assert sorted(text for batch in sent for text in batch) == sorted(texts)
    assert all(r.body["model"] == "embed-a" for r in embedding_requests(server))
    assert vectors.shape == (n, 16) and vectors.dtype == np.float32
    for text, vector in zip(texts, vectors):
        np.testing.assert_allclose(vector, expected(text), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embeddings.dimension == 16
    assert embeddings.ledger.total.calls == len(sent)
    assert embeddings.ledger.total.prompt_tokens > 0


def test_duplicates_are_embedded_once(server):
    embeddings = make(server, batch_size=10)
    vectors = embeddings.embed_sync(["b", "a", "b", "a", "c"])
    (request,) = embedding_requests(server)
    assert request.body["input"] == ["b", "a", "c"]
    np.testing.assert_array_equal(vectors[0], vectors[2])
    np.testing.assert_array_equal(vectors[1], vectors[3])
    assert not np.allclose(vectors[0], vectors[1])


def test_second_run_is_served_from_cache_with_zero_calls(server):
    cache = MemoryCache()
    texts = [f"passage {i}" for i in range(9)]
    first = make(server, batch_size=4, cache=cache).embed_sync(texts, kind="passage")
    assert len(embedding_requests(server)) == 3
    server.reset_stats()
    again = make(server, batch_size=4, cache=cache)
    second = again.embed_sync(texts, kind="passage")
    assert embedding_requests(server) == []
    np.testing.assert_array_equal(first, second)
    assert again.ledger.total.calls == 0 and again.ledger.total.cached_calls == 9
    # A query is not a passage: another kind misses the cache.
    again.embed_sync(texts[:1], kind="query")
    assert len(embedding_requests(server)) == 1


def test_partial_cache_hit_sends_only_new_texts(server):
    embeddings = make(server, batch_size=100)
    embeddings.embed_sync(["old one", "old two"])
    server.reset_stats()
    vectors = embeddings.embed_sync(["old two", "new", "old one"])
    (request,) = embedding_requests(server)
    assert request.body["input"] == ["new"]
    np.testing.assert_allclose(vectors[1], expected("new"), atol=1e-6)


def test_sqlite_cache_survives_a_new_process_worth_of_objects(server, tmp_path):
    path = tmp_path / "cache.sqlite"
    texts = ["巴黎是法国的首都", "retrieval"]
    first = make(server, cache=SQLiteCache(path)).embed_sync(texts)
    server.reset_stats()
    second = make(server, cache=SQLiteCache(path)).embed_sync(texts)
    assert embedding_requests(server) == []
    np.testing.assert_array_equal(first, second)


def test_a_different_model_misses_the_cache(server):
    cache = MemoryCache()
    make(server, cache=cache).embed_sync(["same text"])
    server.reset_stats()
    other = make(server, model="embed-b", cache=cache)
    other.embed_sync(["same text"])
    (request,) = embedding_requests(server)
    assert request.body["model"] == "embed-b"
    assert other.ledger.total.cached_calls == 0


def test_prefixes_are_sent_by_kind_and_keep_vectors_apart(server):
    embeddings = make(server, query_prefix="query: ", passage_prefix="passage: ")
    query = embeddings.embed_sync(["x"], kind="query")
    passage = embeddings.embed_sync(["x"], kind="passage")
    inputs = [r.body["input"] for r in embedding_requests(server)]
    assert inputs == [["query: x"], ["passage: x"]]
    np.testing.assert_allclose(query[0], expected("query: x"), atol=1e-6)
    np.testing.assert_allclose(passage[0], expected("passage: x"), atol=1e-6)


def test_401_fails_fast_naming_the_variable_and_never_the_key():
    with FakeOpenAIServer(api_key="the-right-key") as server:
        embeddings = make(server, api_key=SECRET, max_retries=5)
        with pytest.raises(JudgeConfigError) as raised:
            embeddings.embed_sync(["hello"])
        assert len(server.requests) == 1  # no retry
    message = str(raised.value)
    assert "RAGMETER_EMBEDDINGS_API_KEY" in message
    assert "401" in message
    assert SECRET not in message and SECRET not in repr(raised.value)
    assert SECRET not in str(embeddings.describe())
    assert embeddings.describe()["api_key_set"] is True


def test_retries_on_500_then_succeeds(server):
    server.inject(Fault.server_error(), Fault.server_error())
    embeddings = make(server, max_retries=3)
    vectors = embeddings.embed_sync(["retry me"])
    assert len(embedding_requests(server)) == 3
    np.testing.assert_allclose(vectors[0], expected("retry me"), atol=1e-6)
    assert embeddings.ledger.total.retries == 2


def test_gives_up_after_max_retries(server):
    server.inject(*[Fault.server_error()] * 3)
    embeddings = make(server, max_retries=2)
    with pytest.raises(JudgeTransientError, match="gave up after 3 attempts"):
        embeddings.embed_sync(["never"])
    assert len(embedding_requests(server)) == 3


def test_response_order_follows_index_not_position():
    def handler(request: httpx.Request) -> httpx.Response:
        inputs = json.loads(request.content)["input"]
        data = [
            {"object": "embedding", "index": i, "embedding": [float(i + 1), 1.0, 0.0]}
            for i in range(len(inputs))
        ]
        return httpx.Response(200, json={"object": "list", "data": data[::-1]})

    config = EmbeddingsConfig(model="m", base_url="http://mock/v1", api_key="k")
    embeddings = OpenAIEmbeddings(config, transport=httpx.MockTransport(handler))
    vectors = embeddings.embed_sync(["first", "second", "third"])
    raw = np.array([[1.0, 1.0, 0.0], [2.0, 1.0, 0.0], [3.0, 1.0, 0.0]], dtype=np.float32)
    np.testing.assert_allclose(vectors, raw / np.linalg.norm(raw, axis=1, keepdims=True))
    # No usage in the answer: tokens are estimated and said to be.
    assert embeddings.ledger.total.estimated_calls == 1
    assert embeddings.ledger.total.prompt_tokens > 0


def test_embed_sync_works_inside_a_running_event_loop(server):
    embeddings = make(server)

    async def notebook_cell() -> np.ndarray:
        return embeddings.embed_sync(["inside a loop"])

    vectors = asyncio.run(notebook_cell())
    np.testing.assert_allclose(vectors[0], expected("inside a loop"), atol=1e-6)


def test_async_embed_and_empty_input(server):
    embeddings = make(server)

    async def main() -> tuple[np.ndarray, np.ndarray]:
        try:
            return await embeddings.embed(["a"]), await embeddings.embed([])
        finally:
            await embeddings.aclose()

    one, none = asyncio.run(main())
    assert one.shape == (1, 16) and none.shape == (0, 16)
    with pytest.raises(TypeError):
        embeddings.embed_sync("not a list")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        embeddings.embed_sync(["a"], kind="document")  # type: ignore[arg-type]


def test_config_from_env_falls_back_for_url_and_key_only():
    assert EmbeddingsConfig.from_env({}) is None
    assert EmbeddingsConfig.from_env({"OPENAI_API_KEY": SECRET, "OPENAI_MODEL": "x"}) is None
    config = EmbeddingsConfig.from_env(
        {
            "RAGMETER_EMBEDDINGS_MODEL": "text-embedding-v3",
            "OPENAI_BASE_URL": "https://dashscope.example/v1",
            "OPENAI_API_KEY": SECRET,
        }
    )
    assert config is not None
    assert config.base_url == "https://dashscope.example/v1"
    assert config.api_key is not None and config.api_key.get_secret_value() == SECRET
    own = EmbeddingsConfig.from_env(
        {
            "RAGMETER_EMBEDDINGS_MODEL": "bge-m3",
            "RAGMETER_EMBEDDINGS_BASE_URL": "http://own/v1",
            "RAGMETER_EMBEDDINGS_API_KEY": "own-key",
            "RAGMETER_EMBEDDINGS_BATCH_SIZE": "5",
            "OPENAI_BASE_URL": "http://other/v1",
            "OPENAI_API_KEY": "other-key",
        }
    )
    assert own is not None and own.base_url == "http://own/v1" and own.batch_size == 5
    assert own.api_key is not None and own.api_key.get_secret_value() == "own-key"
    with pytest.raises(ValueError, match="RAGMETER_EMBEDDINGS_MODEL"):
        EmbeddingsConfig.from_env({"RAGMETER_EMBEDDINGS_BASE_URL": "http://own/v1"})
    assert SECRET not in repr(config) and SECRET not in json.dumps(config.describe())


def test_default_embeddings_picks_the_api_when_a_model_is_configured(server):
    chosen = default_embeddings(
        env={"RAGMETER_EMBEDDINGS_MODEL": "embed-a", "RAGMETER_EMBEDDINGS_BASE_URL": "http://x/v1"}
    )
    assert isinstance(chosen, OpenAIEmbeddings)
    assert chosen.identity == "http://x/v1|embed-a"


def test_openai_api_key_is_sent_only_to_the_endpoint_it_belongs_to():
    model = {"RAGMETER_EMBEDDINGS_MODEL": "e", "OPENAI_API_KEY": SECRET}
    to_openai = EmbeddingsConfig.from_env(model)
    assert to_openai is not None and to_openai.api_key is not None
    assert to_openai.api_key.get_secret_value() == SECRET
    for config in (
        EmbeddingsConfig.from_env({**model, "RAGMETER_EMBEDDINGS_BASE_URL": "http://other/v1"}),
        EmbeddingsConfig.from_env(model, base_url="http://other/v1"),
    ):
        assert config is not None and config.api_key is None
    own = EmbeddingsConfig.from_env(
        {**model, "RAGMETER_EMBEDDINGS_API_KEY": "own-key", "OPENAI_BASE_URL": "http://gw/v1"},
        base_url="http://other/v1",
    )
    assert own is not None and own.api_key is not None
    assert own.api_key.get_secret_value() == "own-key"


def test_credentials_in_the_base_url_are_used_but_shown_nowhere():
    url = "https://emb:s3cretpw@gw.example/v1?key=s3cretkey"
    embeddings = OpenAIEmbeddings(EmbeddingsConfig(model="e", base_url=url))
    assert embeddings.config.base_url == url
    assert embeddings.describe()["base_url"] == "https://gw.example/v1?key=***"
    assert embeddings.identity == "https://gw.example/v1?key=***|e"
    for text in (repr(embeddings.config), json.dumps(embeddings.describe())):
        assert "s3cret" not in text


def test_a_wrong_embeddings_variable_is_said_by_its_name_without_pydantic():
    env = {"RAGMETER_EMBEDDINGS_MODEL": "bge-m3", "RAGMETER_EMBEDDINGS_BASE_URL": "no-url"}
    with pytest.raises(ValueError) as raised:
        default_embeddings(env=env)
    said = str(raised.value)
    assert said.startswith("the embeddings settings of the environment: ")
    assert "RAGMETER_EMBEDDINGS_BASE_URL: base_url must be the endpoint's http(s) API root" in said
    assert "pydantic" not in said
