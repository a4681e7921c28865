"""Traces of one session are the turns of a conversation: each turn's sample carries the
conversation id and the earlier turns as its history, ordered by start time (expected values
written from the rules in ragmeter.traces._build)."""

from __future__ import annotations

from ragmeter.dataset import Dataset
from ragmeter.traces import Span
from tests.traces.test_build import at, build


def turn(
    trace: str,
    start: float,
    session: str | None,
    answer: str | None = "a",
    error: str | None = None,
) -> Span:
    return Span(
        trace_id=trace,
        span_id=f"root-{trace}",
        parent_id=None,
        name="root",
        kind="chain",
        input=f"q {trace}",
        output=answer,
        start=at(start),
        end=at(start + 1),
        session_id=session,
        error=error,
    )


def test_each_turn_holds_the_earlier_turns_of_its_session_by_start_time() -> None:
    result = build(
        turn("t3", 30, "s", answer="a3"),
        turn("t1", 10, "s", answer="a1"),
        turn("u1", 15, "other", answer="b1"),
        turn("t2", 20, "s", answer=None, error="timeout"),  # no answer: its question only
        turn("x", 25, None),
    )
    by_id = {sample["id"]: sample for sample in result.samples}
    assert by_id["t1"]["history"] == []
    assert by_id["t2"]["history"] == [
        {"role": "user", "content": "q t1"},
        {"role": "assistant", "content": "a1"},
    ]
    assert by_id["t3"]["history"] == [
        {"role": "user", "content": "q t1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q t2"},
    ]
    assert by_id["u1"]["history"] == []  # another session: its own conversation
    assert [
        (by_id[t]["metadata"]["conversation_id"], by_id[t]["metadata"]["turn"])
        for t in (
            "t1",
            "t2",
            "t3",
            "u1",
        )
    ] == [("s", 1), ("s", 2), ("s", 3), ("other", 1)]
    assert "history" not in by_id["x"]  # no session: a single-turn sample
    assert "conversation_id" not in by_id["x"]["metadata"]


def test_imported_turns_load_as_samples_with_a_history() -> None:
    result = build(turn("t1", 10, "s", answer="a1"), turn("t2", 20, "s", answer="a2"))
    data = Dataset.from_records(result.samples)
    assert data.ids == ["t1", "t2"]  # the trace ids stay the turns' ids
    assert data[1].conversation == "user: q t1\nassistant: a1"
    assert data[0].conversation is None
