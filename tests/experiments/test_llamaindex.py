"""@experiment on LlamaIndex pipelines, with the real llama-index-core, offline: a
``VectorStoreIndex`` built from documents with a mock embedding and a mock LLM, queried
through its query engine (plain and streaming) and its retriever.

Nothing is downloaded: the tokenizer (tiktoken by default) and the LLM and embedding model
are set locally, and the splitter is given a sentence splitter that needs no NLTK data.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragmeter import Sample
from ragmeter.experiments import ExperimentResult, experiment
from ragmeter.store import Store
from tests._integrations import require

require("llama_index.core", "llamaindex")

import llama_index.core  # noqa: E402
from llama_index.core import Document, Settings, VectorStoreIndex  # noqa: E402
from llama_index.core.embeddings import MockEmbedding  # noqa: E402
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.node_parser import SentenceSplitter  # noqa: E402

pytestmark = pytest.mark.usefixtures("offline")

VOCABULARY = ("france", "germany", "italy", "capital")


class WordEmbedding(MockEmbedding):
    """``MockEmbedding`` gives every text the same vector (every node ties); this one counts
    the words of ``VOCABULARY`` in the text, so the ranking below is computed by hand."""

    def _vector(self, text: str) -> list[float]:
        words = re.findall(r"[a-z]+", text.lower())
        return [float(words.count(word)) for word in VOCABULARY]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)


#: (france, germany, italy, capital) counts: d1 (1,0,0,1), d2 (1,1,0,1), d3 (0,0,1,1).
DOCUMENTS = {
    "d1": "Paris is the capital of France.",
    "d2": "Berlin is the capital of Germany, next to France.",
    "d3": "Rome is the capital of Italy.",
}
#: Cosine similarities by hand, top 2 of each question:
#: q1 (1,0,0,1): d1 2/(√2·√2) = 1, d2 2/(√2·√3) = 2/√6, d3 1/2 -> d1, d2
#: q2 (0,0,1,1): d3 1, d1 1/2, d2 1/√6 -> d3, d1
#: q3 (1,1,0,0): d2 2/√6, d1 1/2, d3 0 -> d2, d1
ROWS = [
    {"id": "q1", "user_input": "What is the capital of France?", "reference_context_ids": ["d1#0"]},
    {"id": "q2", "user_input": "What is the capital of Italy?", "reference_context_ids": ["d2#0"]},
    {"id": "q3", "user_input": "Is Germany next to France?",
     "reference_context_ids": ["d1#0", "d3#0"]},
]  # fmt: skip
RANKED = [["d1#0", "d2#0"], ["d3#0", "d1#0"], ["d2#0", "d1#0"]]
SCORES = [[1.0, 2 / math.sqrt(6)], [1.0, 0.5], [2 / math.sqrt(6), 0.5]]
#: recall@2 = relevant in the top 2 / relevant; mrr = 1 / rank of the first relevant.
RECALL_AT_2 = [1.0, 0.0, 0.5]
MRR = [1.0, 0.0, 0.5]
#: MockLLM(max_tokens=2) answers with that many tokens, each the word "text".
RESPONSE = "text text"


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch) -> Iterator[VectorStoreIndex]:
    """The index, with LlamaIndex's global settings set locally for the test (and put
    back after it): no default OpenAI model, no tiktoken or NLTK download."""
    for name in ("_llm", "_embed_model", "_node_parser", "_transformations"):
        monkeypatch.setattr(Settings, name, getattr(Settings, name))
    monkeypatch.setattr(llama_index.core, "global_tokenizer", llama_index.core.global_tokenizer)
    Settings.tokenizer = str.split
    Settings.llm = MockLLM(max_tokens=2)
    Settings.embed_model = WordEmbedding(embed_dim=len(VOCABULARY))
    splitter = SentenceSplitter(
        chunk_size=64,
        chunk_overlap=0,
        tokenizer=str.split,
        chunking_tokenizer_fn=lambda text: re.split(r"(?<=[.?!])\s+", text),
        id_func=lambda i, document: f"{document.doc_id}#{i}",
    )
    documents = [Document(text=text, id_=key) for key, text in DOCUMENTS.items()]
    yield VectorStoreIndex.from_documents(documents, transformations=[splitter])


def check_retrieval(out: ExperimentResult) -> None:
    assert out.failed == []
    for sample, ranked, scores, record in zip(out, RANKED, SCORES, out.pipeline, strict=True):
        assert sample.sample.retrieved_context_ids == ranked
        assert sample.sample.retrieved_contexts == [DOCUMENTS[i[:2]] for i in ranked]
        assert record["extra"]["retrieved_context_scores"] == pytest.approx(scores)
    assert out.result.scores("recall@2") == RECALL_AT_2
    assert out.result.scores("mrr") == MRR


def test_a_query_engine_passed_to_experiment_is_stored_with_its_node_ids(
    index: VectorStoreIndex, tmp_path: Path
):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    engine = index.as_query_engine(similarity_top_k=2)
    out = experiment(ROWS, ["recall@2", "mrr"], name="capitals", store=url)(engine).run()
    check_retrieval(out)
    assert [s.sample.response for s in out] == [RESPONSE] * 3
    assert out.aggregates["recall@2"].mean == pytest.approx(0.5)  # (1 + 0 + 0.5) / 3
    assert out.aggregates["mrr"].mean == pytest.approx(0.5)

    assert out.run is not None and out.run.name == "capitals"
    store = Store(url)
    loaded = store.load(out.run.id)
    assert [s.sample.retrieved_context_ids for s in loaded] == RANKED
    assert loaded.scores("recall@2") == RECALL_AT_2
    assert store.pipeline_outputs(out.run.id) == out.pipeline
    assert out.run.config["experiment"]["pipeline"].endswith(".RetrieverQueryEngine")


def test_a_function_returning_a_response_and_a_retriever_passed_directly(
    index: VectorStoreIndex,
):
    engine = index.as_query_engine(similarity_top_k=2)

    @experiment(ROWS, ["recall@2", "mrr"], store=False)
    def rag(sample: Sample) -> Any:
        return engine.query(str(sample.user_input))

    check_retrieval(rag.run())

    retriever = index.as_retriever(similarity_top_k=2)
    out = experiment(ROWS, ["recall@2", "mrr"], store=False)(retriever).run()
    check_retrieval(out)
    assert all(s.sample.response is None for s in out)


def test_streaming_responses_are_read_to_their_end(index: VectorStoreIndex):
    engine = index.as_query_engine(similarity_top_k=2, streaming=True)

    @experiment(ROWS, ["recall@2", "mrr"], store=False)
    def rag(sample: Sample) -> Any:
        return engine.query(str(sample.user_input))  # a StreamingResponse

    out = rag.run()
    check_retrieval(out)
    assert [s.sample.response for s in out] == [RESPONSE] * 3

    streamed = experiment(ROWS, ["recall@2", "mrr"], store=False)(engine).run()  # aquery
    check_retrieval(streamed)
    assert [s.sample.response for s in streamed] == [RESPONSE] * 3
