"""The value shapes Langfuse and LangSmith record, read into questions, answers and documents
(each case a shape an SDK or integration writes; expected values by hand)."""

from __future__ import annotations

import datetime as dt

import pytest

from ragmeter.traces import Document
from ragmeter.traces._shapes import (  # private: the shapes every format reads
    answer_text,
    documents,
    parse_time,
    question_text,
)


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
def test_question_text(value: object, expected: str | None) -> None:
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
def test_answer_text(value: object, expected: str) -> None:
    assert answer_text(value) == expected


def test_documents_in_the_shapes_integrations_record() -> None:
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


def test_parse_time() -> None:
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
    assert parse_time("yesterday") is None and parse_time(None) is None
