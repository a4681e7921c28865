"""@experiment on LangChain pipelines, with the real langchain-core, offline: a vector store
with fake embeddings, its retriever, a prompt and a fake chat model composed with LCEL.

The store holds FAQ questions and each sample asks one of them word for word:
``DeterministicFakeEmbedding`` gives equal texts equal vectors (cosine 1), so that entry
ranks first; the other ranks are arbitrary (random vectors), so the references name only the
first-ranked entry or entries that are not in the store, and every score below follows.
"""

from __future__ import annotations

import subprocess
import sys
from operator import itemgetter
from pathlib import Path
from typing import Any

import pytest

from ragmeter import Sample
from ragmeter.experiments import ExperimentResult, experiment
from ragmeter.store import Store
from tests._integrations import require

require("langchain_core", "langchain")

from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.language_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.output_parsers import StrOutputParser  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate  # noqa: E402
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402

pytestmark = pytest.mark.usefixtures("offline")

FAQ = {
    "f1": "How do I reset my password?",
    "f2": "How do I change my email address?",
    "f3": "How do I delete my account?",
}
ANSWER = "Use the link on the sign-in page."

#: Per sample: the question (FAQ entry asked), the reference ids, and by hand, with the
#: asked entry first among the 2 retrieved: recall@2 = |relevant in top 2| / |relevant|,
#: mrr = 1 / rank of the first relevant (0 if none in the top 2).
ROWS = [
    {"id": "q1", "user_input": FAQ["f1"], "reference_context_ids": ["f1"], "reference": ANSWER},
    {"id": "q2", "user_input": FAQ["f2"], "reference_context_ids": ["f2", "f9"], "reference": "-"},
    {"id": "q3", "user_input": FAQ["f3"], "reference_context_ids": ["f9"], "reference": "-"},
]
RECALL_AT_2 = [1.0, 0.5, 0.0]
MRR = [1.0, 1.0, 0.0]


def vector_store() -> InMemoryVectorStore:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=64))
    store.add_documents([Document(page_content=text, id=key) for key, text in FAQ.items()])
    return store


def retrieval_chain(parse: bool = True) -> Runnable[Any, Any]:
    """``create_retrieval_chain(retriever, stuff_chain)`` in LCEL: ``{"input"}`` in,
    ``{"input", "context": [Document], "answer"}`` out."""
    retriever = vector_store().as_retriever(search_kwargs={"k": 2})
    prompt = ChatPromptTemplate.from_template(
        "Answer from these FAQ entries:\n{context}\n\n{input}"
    )
    stuff = RunnablePassthrough.assign(
        context=lambda x: "\n".join(d.page_content for d in x["context"])
    )
    answer = stuff | prompt | FakeListChatModel(responses=[ANSWER])
    return RunnablePassthrough.assign(context=itemgetter("input") | retriever).assign(
        answer=answer | StrOutputParser() if parse else answer
    )


def others(key: str) -> set[str]:
    return set(FAQ) - {key}


def check_retrieval(out: ExperimentResult) -> None:
    """Each sample's contexts and ids in rank order: the asked entry, then another one."""
    for sample, asked in zip(out, ["f1", "f2", "f3"], strict=True):
        ids = sample.sample.retrieved_context_ids
        assert ids is not None and len(ids) == 2
        assert ids[0] == asked and ids[1] in others(asked)
        assert sample.sample.retrieved_contexts == [FAQ[i] for i in ids]
    assert out.result.scores("recall@2") == RECALL_AT_2
    assert out.result.scores("mrr") == MRR


def test_a_retrieval_chain_passed_to_experiment_is_stored_with_its_contexts_and_ids(
    tmp_path: Path,
):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    chain = retrieval_chain()
    rag = experiment(ROWS, ["recall@2", "mrr", "exact_match"], name="faq", store=url)(chain)
    assert rag.name == "faq"
    out = rag.run()
    assert out.failed == []
    check_retrieval(out)
    assert [s.sample.response for s in out] == [ANSWER] * 3
    assert out.result.scores("exact_match") == [1.0, 0.0, 0.0]
    assert out.aggregates["recall@2"].mean == pytest.approx(0.5)  # (1 + 0.5 + 0) / 3
    assert out.aggregates["mrr"].mean == pytest.approx(2 / 3)  # (1 + 1 + 0) / 3
    # the chain's other keys are kept in the record; its documents became the outputs
    assert out.pipeline[1]["extra"] == {"input": FAQ["f2"]}
    assert out.pipeline[1]["outputs"]["retrieved_contexts"][0] == FAQ["f2"]

    assert out.run is not None
    store = Store(url)
    loaded = store.load(out.run.id)
    assert [s.sample.retrieved_context_ids for s in loaded] == [
        s.sample.retrieved_context_ids for s in out
    ]
    assert loaded.scores("recall@2") == RECALL_AT_2
    assert store.pipeline_outputs(out.run.id) == out.pipeline
    assert out.run.config["experiment"]["pipeline"].endswith(".RunnableSequence")


def test_a_function_returning_a_chain_output_with_a_message_answer():
    chain = retrieval_chain(parse=False)  # the answer is the model's AIMessage

    @experiment(ROWS, ["recall@2", "mrr", "exact_match"], store=False)
    def rag(sample: Sample) -> Any:
        return chain.invoke({"input": sample.user_input})

    out = rag.run()
    assert out.failed == []
    check_retrieval(out)
    assert out.result.scores("exact_match") == [1.0, 0.0, 0.0]
    assert out.pipeline[0]["outputs"]["response"] == ANSWER


def test_a_retriever_and_a_scored_search_are_read_as_ranked_contexts():
    store = vector_store()
    retriever = store.as_retriever(search_kwargs={"k": 2})
    out = experiment(ROWS, ["recall@2", "mrr"], store=False)(retriever).run()
    assert out.failed == []
    check_retrieval(out)
    assert all(s.sample.response is None for s in out)
    assert "extra" not in out.pipeline[0]  # Documents from a retriever carry no score

    @experiment(ROWS, ["recall@2", "mrr"], store=False)
    def search(sample: Sample) -> Any:
        return store.similarity_search_with_score(str(sample.user_input), k=2)

    scored = search.run()
    check_retrieval(scored)
    for record in scored.pipeline:
        first, second = record["extra"]["retrieved_context_scores"]
        assert first == pytest.approx(1.0)  # the asked entry: equal vectors, cosine 1
        assert -1.0 <= second < 1.0


def test_message_parts_and_document_metadata_ids():
    documents = {
        "q1": [
            Document(page_content="a", metadata={"source": "guide.pdf", "page": 3}),
            Document(page_content="b", metadata={"doc_id": 7, "source": "x"}),
            Document(page_content="c", metadata={"source": "notes.md"}),
            Document(page_content="d", metadata={"id": "m1"}, id="own"),
            Document(page_content="e", metadata={"source": "s.txt", "start_index": 120}),
        ],
        "q2": [Document(page_content="a"), Document(page_content="b")],
    }
    parts = AIMessage(
        content=[
            {"type": "text", "text": "Use the "},
            {"type": "tool_use", "id": "t1", "name": "search", "input": {}},
            "link on the sign-in page.",
        ]
    )

    @experiment(ROWS[:2], ["exact_match"], store=False)
    def rag(sample: Sample) -> Any:
        return {"output": parts, "source_documents": documents[str(sample.id)], "tokens": 3}

    out = rag.run()
    assert out.failed == []
    assert out.result.scores("exact_match") == [1.0, 0.0]  # the text parts, joined
    first, second = out.pipeline
    assert first["outputs"]["retrieved_context_ids"] == [
        "guide.pdf#3", 7, "notes.md", "own", "s.txt#120",
    ]  # fmt: skip
    assert first["extra"] == {"tokens": 3}
    assert second["outputs"] == {"response": ANSWER, "retrieved_contexts": ["a", "b"]}


def test_documents_with_and_without_ids_fail_that_sample_clearly():
    def rag(sample: Sample) -> Any:
        hits = [Document(page_content="first", id="f1"), Document(page_content="second")]
        return hits if sample.id == "q2" else [Document(page_content="x", id="f1")]

    out = experiment(ROWS, ["recall@2"], store=False, retries=2)(rag).run()
    assert out.failed == ["q2"]
    assert out.pipeline[1]["attempts"] == 1  # not retried: the same value comes back
    assert out.pipeline[1]["error"] == {
        "type": "PipelineOutputError",
        "message": "sample 'q2': retrieved document 2 of 2 has no id while others have one "
        "('second'): give every document an id (Document.id, or metadata id, doc_id, "
        "document_id or source) or none",
    }


def test_documents_given_as_the_contexts_and_a_message_without_text():
    def rag(sample: Sample) -> Any:
        if sample.id == "q2":  # an agent that stopped at a tool call
            return AIMessage(content=[{"type": "tool_use", "id": "t1", "name": "s", "input": {}}])
        hits = [Document(page_content=FAQ["f1"], id="f1"), Document(page_content="x", id="f5")]
        return {"response": AIMessage(content=ANSWER), "retrieved_contexts": hits}

    out = experiment(ROWS[:2], ["recall@2", "exact_match"], store=False)(rag).run()
    assert out.pipeline[0]["outputs"] == {
        "response": ANSWER,
        "retrieved_contexts": [FAQ["f1"], "x"],
        "retrieved_context_ids": ["f1", "f5"],
    }
    assert out.result.scores("recall@2") == [1.0, None]
    assert out.failed == ["q2"]
    assert out.pipeline[1]["error"]["message"].startswith(
        "sample 'q2': the AIMessage returned holds no text (content list [{'type': 'tool_use'"
    )


def test_a_chain_taking_more_than_the_question_is_refused_when_declared():
    prompt = ChatPromptTemplate.from_template("{context} {question}")
    chain = prompt | FakeListChatModel(responses=[ANSWER])
    with pytest.raises(TypeError, match=r"takes \['context', 'question'\], not one question"):
        experiment(ROWS, ["exact_match"], store=False)(chain)
    # a Runnable taking the question itself gets it as a str
    echo = RunnableLambda(lambda question: f"asked: {question}")
    out = experiment(ROWS[:1], ["exact_match"], store=False)(echo).run()
    assert out.pipeline[0]["outputs"] == {"response": f"asked: {FAQ['f1']}"}


def test_a_sample_without_a_question_fails_when_the_chain_is_called_for_it():
    rows = [{"id": "q1", "reference": "-"}]
    out = experiment(rows, ["exact_match"], store=False, retries=0)(retrieval_chain()).run()
    assert out.pipeline[0]["error"] == {
        "type": "ValueError",
        "message": "sample 'q1' has no user_input: the pipeline is called with the sample's "
        "question",
    }


def test_importing_ragmeter_and_reading_outputs_imports_neither_library():
    code = (
        "import sys, ragmeter, ragmeter.experiments\n"
        "rows = [{'id': 'q', 'user_input': 'q', 'reference': 'x'}]\n"
        "pipeline = lambda question: {'response': 'x', 'context': []}\n"
        "out = ragmeter.experiment(rows, ['exact_match'], store=False)(pipeline).run()\n"
        "assert out.result.scores('exact_match') == [1.0], out.pipeline\n"
        "print(sorted(m for m in sys.modules if m.startswith(('langchain', 'llama_index'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
