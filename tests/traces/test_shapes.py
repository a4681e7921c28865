"""The value shapes Langfuse and LangSmith record, read into questions, answers and documents
(each case a shape an SDK or integration writes; expected values by hand), each read from a
Langfuse trace by import_traces."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter.traces import Document, TraceFileError, import_traces

NOT_DOCUMENTS = "retriever or reranker observation whose output is not a list of documents"


@pytest.fixture
def langfuse(tmp_path: Path):
    """Reads one Langfuse trace (its question, answer, time and one retriever observation's
    output) with import_traces: ``(samples, the reasons of what was not mapped)``."""

    def read(
        question: object = "q?",
        answer: object = "a.",
        timestamp: object = "2026-11-20T09:14:03Z",
        retrieved: object = (),
    ) -> tuple[list[dict[str, Any]], list[str]]:
        observations = []
        if retrieved != ():
            retriever = {"id": "o1", "traceId": "t1", "type": "RETRIEVER", "name": "retrieve"}
            observations.append({**retriever, "input": {"query": "q?"}, "output": retrieved})
        trace = {"id": "t1", "timestamp": timestamp, "name": "chat", "input": question}
        path = tmp_path / "trace.json"
        path.write_text(json.dumps({**trace, "output": answer, "observations": observations}))
        result = import_traces("langfuse", path)
        return result.samples, [entry.reason for entry in result.unmapped]

    return read


@pytest.fixture
def question_text(langfuse):
    """The question read from a trace's input (``None``: the trace is left out for it)."""

    def read(value: object) -> str | None:
        samples, unmapped = langfuse(question=value)
        if not samples:
            assert unmapped and unmapped[0].startswith("trace without a question")
            return None
        return samples[0]["user_input"]

    return read


@pytest.fixture
def answer_text(langfuse):
    return lambda value: langfuse(answer=value)[0][0]["response"]


@pytest.fixture
def documents(langfuse):
    """The documents read from a retriever's output (texts, ids and scores of the sample),
    ``None`` where the output is not documents (said in what was not mapped)."""

    def read(value: object) -> list[Document] | None:
        ([sample], unmapped) = langfuse(retrieved=value)
        if "retrieved_contexts" not in sample:
            assert len(unmapped) == 1 and unmapped[0].startswith(NOT_DOCUMENTS)
            return None
        texts = sample["retrieved_contexts"]
        ids = sample.get("retrieved_context_ids", [None] * len(texts))
        scores = sample["metadata"].get("retrieved_context_scores", [None] * len(texts))
        return [Document(*document) for document in zip(texts, ids, scores, strict=True)]

    return read


@pytest.fixture
def parse_time(langfuse):
    """The trace's time as the sample's timestamp (``None``: no timestamp)."""

    def read(value: object) -> dt.datetime | None:
        timestamp = langfuse(timestamp=value)[0][0]["metadata"].get("timestamp")
        return None if timestamp is None else dt.datetime.fromisoformat(timestamp)

    return read


def lc(cls: str, content: str) -> dict[str, object]:
    return {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", cls],
        "kwargs": {"content": content},
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain?", "plain?"),
        ({"question": "q?", "chat_history": []}, "q?"),
        ({"query": "q?"}, "q?"),
        ({"args": ["q?", 3], "kwargs": {}}, "q?"),  # Langfuse @observe
        ({"args": [], "kwargs": {"question": "q?", "k": 3}}, "q?"),
        (  # OpenAI chat: the last user message
            [
                {"role": "system", "content": "s"},
                {"role": "user", "content": "first?"},
                {"role": "assistant", "content": "a"},
                {"role": "user", "content": [{"type": "text", "text": "second?"}]},
            ],
            "second?",
        ),
        ({"messages": [[lc("SystemMessage", "s"), lc("HumanMessage", "q?")]]}, "q?"),
        ({"messages": [{"type": "human", "content": "q?"}]}, "q?"),
        ({"prompts": ["Human: q?"]}, "Human: q?"),
        ({"foo": 1}, '{"foo": 1}'),  # no question key: kept whole, as JSON
        (None, None),
    ],
)
def test_question_text(question_text, value: object, expected: str | None) -> None:
    assert question_text(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"answer": "a."}, "a."),
        ({"output": "a."}, "a."),
        ({"role": "assistant", "content": "a."}, "a."),
        ({"choices": [{"message": {"role": "assistant", "content": "a."}}]}, "a."),
        ({"generations": [[{"text": "a.", "message": lc("AIMessage", "a.")}]]}, "a."),
        ({"generations": [[{"text": "", "message": lc("AIMessage", "tool")}]]}, "tool"),
        ({"messages": [{"role": "user", "content": "q?"}, {"role": "ai", "content": "a."}]}, "a."),
        ("答案。", "答案。"),
    ],
)
def test_answer_text(answer_text, value: object, expected: str) -> None:
    assert answer_text(value) == expected


def test_documents_in_the_shapes_integrations_record(documents) -> None:
    assert documents(["a", "b"]) == [Document("a"), Document("b")]
    langchain = {"page_content": "a", "metadata": {"id": 7, "score": 0.5}, "type": "Document"}
    assert documents([langchain]) == [Document("a", "7", 0.5)]
    serialized = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "document", "Document"],
        "kwargs": {"page_content": "a", "metadata": {"doc_id": "d1"}},
    }
    assert documents({"documents": [serialized]}) == [Document("a", "d1")]
    # a reranked document keeps its retrieval score: the reranker's relevance_score wins
    reranked = {"page_content": "a", "metadata": {"score": 0.2, "relevance_score": 0.9}}
    assert documents([reranked]) == [Document("a", None, 0.9)]
    llama_index = {"node": {"id_": "n1", "text": "a"}, "score": 0.3}
    assert documents({"source_nodes": [llama_index]}) == [Document("a", "n1", 0.3)]
    assert documents([[{"page_content": "a"}, 0.4]]) == [Document("a", None, 0.4)]
    assert documents({"context": [{"content": "a", "id": "c"}]}) == [Document("a", "c")]
    assert documents([]) == []
    # not documents: a list with anything else, an object without such a list
    assert documents([{"id": 1}]) is None
    assert documents(["a", 1]) is None
    assert documents({"status": "ok"}) is None
    assert documents("text") is None


def test_parse_time(parse_time) -> None:
    utc = dt.timezone.utc
    assert parse_time("2026-11-20T09:14:03.120Z") == dt.datetime(
        2026, 11, 20, 9, 14, 3, 120000, utc
    )
    assert parse_time("2026-11-20T09:14:03") == dt.datetime(2026, 11, 20, 9, 14, 3, tzinfo=utc)
    assert parse_time("2026-11-20 10:14:03+01:00") == dt.datetime(
        2026, 11, 20, 9, 14, 3, tzinfo=utc
    )
    # 1_795_000_000 s = 20775 days (2026-11-18) + 40000 s (11:06:40); given in milliseconds
    assert parse_time(1_795_000_000_000) == dt.datetime(2026, 11, 18, 11, 6, 40, tzinfo=utc)
    assert parse_time(None) is None
    # a time that does not read is an error naming the record and the field (it was dropped)
    with pytest.raises(TraceFileError, match=r"trace\.json: field 'timestamp': not a time: 'yes"):
        parse_time("yesterday")
