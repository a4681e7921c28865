"""Conversations in the three formats become one sample per assistant turn; problems name the
row and the turn; samples with a history survive every writer and reader."""

from __future__ import annotations

import csv
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from ragmeter.dataset import (
    ChatMessage,
    Dataset,
    DatasetError,
    Sample,
    load_dataset,
    save_dataset,
    stream_jsonl,
)

Q1, A1 = "What are the Pulse S3?", "Wireless earbuds."
Q2, A2 = "and its price?", "$99."
C1, C2 = "Pulse S3: wireless earbuds.", "Pulse S3 price list: $99."
HISTORY_2 = [{"role": "user", "content": Q1}, {"role": "assistant", "content": A1}]

MESSAGES = {
    "id": "c1",
    "scenario": "shopping",
    "messages": [
        {"role": "system", "content": "You are a shop assistant."},
        {"role": "user", "content": Q1},
        {"role": "assistant", "content": A1, "contexts": [C1], "retrieved_context_ids": [1]},
        {"role": "user", "content": Q2},
        {"role": "assistant", "content": A2, "retrieval_context": [C2], "reference": "$99"},
    ],
}


def turns_of(records: list[dict]) -> list[dict]:
    return [s.to_record() for s in Dataset.from_records(records)]


def test_messages_give_one_sample_per_assistant_turn() -> None:
    assert turns_of([MESSAGES]) == [
        {
            "id": "c1#1",
            "user_input": Q1,
            "response": A1,
            "retrieved_contexts": [C1],  # "contexts": RAGAS 0.1's name
            "retrieved_context_ids": ["1"],
            "history": [],
            "metadata": {"scenario": "shopping", "conversation_id": "c1", "turn": 1},
        },
        {
            "id": "c1#2",
            "user_input": Q2,
            "response": A2,
            "retrieved_contexts": [C2],  # "retrieval_context": DeepEval's name
            "reference": "$99",
            "history": HISTORY_2,
            "metadata": {"scenario": "shopping", "conversation_id": "c1", "turn": 2},
        },
    ]


def test_deepeval_turns_in_both_styles() -> None:
    v3 = {
        "scenario": "a shopper asks",
        "expected_outcome": "learns the price",
        "chatbot_role": "shop assistant",
        "user_description": "a student",
        "turns": [
            {"role": "user", "content": Q1},
            {"role": "assistant", "content": A1, "retrieval_context": [C1]},
            {"role": "user", "content": Q2},
            {"role": "assistant", "content": A2, "retrieval_context": [C2]},
        ],
    }
    older = {
        "turns": [
            {"input": Q1, "actual_output": A1, "retrieval_context": [C1]},
            {"input": Q2, "actual_output": A2, "expected_output": "$99"},
        ]
    }
    _, second, third, fourth = turns_of([v3, older])
    assert (second["id"], second["user_input"], second["retrieved_contexts"]) == (
        "row-1#2",
        Q2,
        [C2],
    )
    assert second["history"] == HISTORY_2
    assert second["metadata"] == {
        "scenario": "a shopper asks",
        "expected_outcome": "learns the price",
        "chatbot_role": "shop assistant",
        "user_description": "a student",
        "conversation_id": "row-1",  # no id: the row
        "turn": 2,
    }
    assert (third["id"], third["retrieved_contexts"], third["history"]) == ("row-2#1", [C1], [])
    assert (fourth["user_input"], fourth["reference"], fourth["history"]) == (Q2, "$99", HISTORY_2)


def test_ragas_multi_turn_sample_with_tool_messages_as_contexts() -> None:
    record = {
        "session_id": "s-9",
        "user_input": [
            {"content": Q1, "type": "human"},
            {"content": "", "type": "ai", "tool_calls": [{"name": "search", "args": {}}]},
            {"content": C1, "type": "tool"},
            {"content": A1, "type": "ai"},
            {"content": Q2, "type": "human"},
            {"content": C2, "type": "tool"},
            {"content": A2, "type": "ai"},
        ],
        "reference": "The user learns the Pulse S3's price.",
        "reference_topics": ["earbuds"],
    }
    first, second = turns_of([record])
    assert (first["id"], first["retrieved_contexts"]) == ("s-9#1", [C1])
    assert (second["user_input"], second["retrieved_contexts"]) == (Q2, [C2])
    assert second["history"] == HISTORY_2  # the tool call and its result are not messages
    assert second["metadata"] == {
        "session_id": "s-9",
        "reference": "The user learns the Pulse S3's price.",  # the conversation's, as a tag
        "reference_topics": ["earbuds"],
        "conversation_id": "s-9",
        "turn": 2,
    }
    assert "reference" not in second


def test_two_user_messages_are_one_question_and_a_greeting_is_history() -> None:
    record = {
        "id": 7,
        "messages": [
            {"role": "assistant", "content": "Hi! How can I help?"},
            {"role": "user", "content": "I want earbuds."},
            {"role": "user", "content": Q1},
            {"role": "assistant", "content": A1},
        ],
    }
    (turn,) = turns_of([record])
    assert turn["id"] == "7#1"
    assert turn["user_input"] == f"I want earbuds.\n{Q1}"
    assert turn["history"] == [{"role": "assistant", "content": "Hi! How can I help?"}]


def test_a_last_question_without_a_reply_is_left_out_with_a_warning() -> None:
    record = {**MESSAGES, "messages": [*MESSAGES["messages"], {"role": "user", "content": "ok"}]}
    data = Dataset.from_records([{"user_input": "single"}, record])
    assert data.ids == ["row-1", "c1#1", "c1#2"]
    assert data.rows == [1, 2, 2]
    assert data.column_warnings() == [
        "1 conversation(s) end with a user message that has no assistant reply (row(s) 2); "
        "that message is not evaluated"
    ]


def test_problems_name_the_row_and_the_turn() -> None:
    record = {
        "id": "c2",
        "messages": [
            {"role": "user", "content": Q1},
            {"role": "assistant", "content": A1},
            {"role": "user", "content": Q2},
            {"role": "assistant", "content": A2, "retrieved_contexts": C2},
            {"role": "bot", "content": "?"},
            {"role": "user", "content": ["not", "text"]},
        ],
    }
    with pytest.raises(DatasetError) as raised:
        Dataset.from_records([MESSAGES, record])
    lines = sorted(str(p) for p in raised.value.problems)
    assert lines == [
        "row 2, turn 2, field 'retrieved_contexts': Input should be a valid list, got str "
        f"'{C2}'. Fix: wrap a single item in a list, e.g. [\"Pulse S3 price list:\"]",
        "row 2, turn 3, field 'messages': message 5 has role 'bot'. Fix: give each message a "
        '"role": "user" or "assistant" (RAGAS: a "type": "human", "ai" or "tool")',
        "row 2, turn 3, field 'messages': message 6 (user) has content list ['not', 'text']. "
        "Fix: give each message's content as a string",
    ]


def test_a_conversation_without_a_reply_is_a_problem() -> None:
    with pytest.raises(DatasetError, match="row 1, turn 1, field 'messages': the conversation"):
        Dataset.from_records([{"messages": [{"role": "user", "content": Q1}]}])


def test_a_history_given_directly_is_checked_message_by_message() -> None:
    with pytest.raises(DatasetError) as raised:
        Dataset.from_records(
            [
                {"user_input": Q2, "history": [{"role": "user", "content": Q1}, {"role": "bot"}]},
                {"user_input": Q2, "history": [{"role": "user", "content": 3}]},
            ]
        )
    first, second = raised.value.problems
    assert (first.row, first.field) == (1, "history")
    assert first.message.startswith("message 2: ")
    assert (second.row, second.field) == (2, "history")
    assert second.message.startswith("message 1: Input should be a valid string")


def test_a_single_turn_sample_has_no_history() -> None:
    sample = Sample(user_input=Q1)
    assert sample.history is None and sample.conversation is None
    assert "history" not in sample.to_record()
    assert Sample(user_input=Q2, history=HISTORY_2).history == [  # type: ignore[arg-type]  # dicts read as messages
        ChatMessage(role="user", content=Q1),
        ChatMessage(role="assistant", content=A1),
    ]


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv", ".parquet"])
def test_turns_survive_every_file_format(tmp_path: Path, suffix: str) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    data = Dataset.from_records([MESSAGES])
    path = save_dataset(data, tmp_path / f"turns{suffix}")
    assert [s.to_record() for s in load_dataset(path)] == [s.to_record() for s in data]


def test_conversations_in_a_csv_file_and_a_dataframe(tmp_path: Path) -> None:
    path = tmp_path / "conversations.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "messages"])
        writer.writerow(["c1", json.dumps(MESSAGES["messages"])])
    assert [s.id for s in load_dataset(path)] == ["c1#1", "c1#2"]
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([MESSAGES])
    assert [s.history for s in load_dataset(frame)][1] == [
        ChatMessage(role="user", content=Q1),
        ChatMessage(role="assistant", content=A1),
    ]


def test_one_conversation_given_alone_and_a_streamed_file(tmp_path: Path) -> None:
    assert load_dataset({"messages": MESSAGES["messages"]}).ids == ["row-1#1", "row-1#2"]
    path = tmp_path / "turns.jsonl"
    path.write_text(
        "\n".join(json.dumps(r) for r in [MESSAGES, {**MESSAGES, "id": "c2"}]) + "\n",
        encoding="utf-8",
    )
    chunks = list(stream_jsonl(path, chunk_size=1))
    assert [c.ids for c in chunks] == [["c1#1", "c1#2"], ["c2#1", "c2#2"]]
    assert [c.rows for c in chunks] == [[1, 1], [2, 2]]


def test_a_sample_read_back_without_validation_keeps_its_history() -> None:
    """A run's store gives streamed samples back with ``model_construct`` (plain dicts)."""
    record = Sample(user_input=Q2, history=HISTORY_2).to_record()  # type: ignore[arg-type]  # dicts read as messages
    stored = Sample.model_construct(**record)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no serializer warning for the dicts
        assert stored.to_record() == record
    assert stored.conversation == f"user: {Q1}\nassistant: {A1}"


def test_column_map_reaches_the_messages_and_a_bad_turn_tag_is_a_problem() -> None:
    record: dict[str, Any] = {
        "thread_id": "t-1",
        "messages": [
            {"role": "user", "content": Q1},
            {"role": "assistant", "content": A1, "hits": [C1], "metadata": "oops"},
        ],
    }
    with pytest.raises(DatasetError) as raised:
        Dataset.from_records([record])
    (problem,) = raised.value.problems
    assert (problem.row, problem.turn, problem.field) == (1, 1, "metadata")
    record["messages"][1].pop("metadata")
    (turn,) = Dataset.from_records([record], column_map={"hits": "retrieved_contexts"})
    assert (turn.id, turn.retrieved_contexts) == ("t-1#1", [C1])
