"""Spans -> samples: the builder's rules on spans written by hand (every expected value below
follows from the rules in ragmeter.traces._build, not from running it)."""

from __future__ import annotations

import datetime as dt

import pytest

from ragmeter.traces import Document, Span, TraceImport, Unmapped
from ragmeter.traces._build import (  # private: samples from Span objects
    NO_QUESTION,
    ORPHAN,
    build_samples,
)

T0 = dt.datetime(2026, 1, 5, 8, 0, tzinfo=dt.timezone.utc)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def span(span_id: str, parent: str | None = None, trace: str = "t1", **fields: object) -> Span:
    fields.setdefault("start", at(0))
    fields.setdefault("end", at(1))
    return Span(trace_id=trace, span_id=span_id, parent_id=parent, name=span_id, **fields)  # type: ignore[arg-type]


def build(*spans: Span) -> TraceImport:
    return build_samples(spans, format="test", n_records=len(spans))


def test_root_gives_question_and_answer_and_llm_spans_give_model_tokens_latency() -> None:
    result = build(
        span("root", kind="chain", input="q?", output="a.", start=at(0), end=at(3)),
        span(
            "llm1",
            "root",
            kind="llm",
            model="m-small",
            prompt_tokens=10,
            completion_tokens=2,
            start=at(0.5),
            end=at(1),
        ),
        span(
            "llm2",
            "root",
            kind="llm",
            model="m-large",
            prompt_tokens=100,
            completion_tokens=20,
            start=at(1),
            end=at(2.5),
        ),
    )
    assert result.samples == [
        {
            "id": "t1",
            "user_input": "q?",
            "response": "a.",
            "metadata": {
                "model": "m-large",  # the last call's
                "prompt_tokens": 110,
                "completion_tokens": 22,
                "llm_latency_s": 2.0,  # 0.5 + 1.5
                "timestamp": "2026-01-05T08:00:00+00:00",
                "latency_s": 3.0,
            },
        }
    ]
    assert result.unmapped == [] and result.n_traces == 1


def test_multi_query_retrievals_join_in_start_order_without_duplicates() -> None:
    result = build(
        span("root", kind="chain", input="q", output="a", end=at(5)),
        # listed out of order: the retrieval that started first comes first
        span(
            "r2",
            "root",
            kind="retriever",
            start=at(2),
            documents=[Document("text B", "b", 0.5), Document("text C", "c", 0.4)],
        ),
        span(
            "r1",
            "root",
            kind="retriever",
            start=at(1),
            documents=[Document("text A", "a", 0.9), Document("text B", "b", 0.8)],
        ),
    )
    (sample,) = result.samples
    assert sample["retrieved_contexts"] == ["text A", "text B", "text C"]
    assert sample["retrieved_context_ids"] == ["a", "b", "c"]
    assert sample["metadata"]["retrieved_context_scores"] == [0.9, 0.8, 0.4]
    assert sample["metadata"]["n_retrievals"] == 2


def test_documents_without_ids_are_deduplicated_by_text_and_give_no_ids() -> None:
    result = build(
        span("root", kind="chain", input="q", output="a"),
        span(
            "r1", "root", kind="retriever", start=at(0.1), documents=[Document("x"), Document("y")]
        ),
        span(
            "r2", "root", kind="retriever", start=at(0.2), documents=[Document("y"), Document("z")]
        ),
    )
    (sample,) = result.samples
    assert sample["retrieved_contexts"] == ["x", "y", "z"]
    assert "retrieved_context_ids" not in sample
    assert "retrieved_context_scores" not in sample["metadata"]


def test_reranker_output_is_the_final_ranking_and_fills_texts_from_the_retrieval() -> None:
    result = build(
        span("root", kind="chain", input="q", output="a", end=at(5)),
        span(
            "r",
            "root",
            kind="retriever",
            start=at(1),
            documents=[Document("A", "a", 0.9), Document("B", "b", 0.8), Document("C", "c", 0.7)],
        ),
        # this reranker reports ids and scores only
        span(
            "rr",
            "root",
            kind="reranker",
            start=at(2),
            documents=[Document(None, "c", 0.99), Document(None, "a", 0.5)],
        ),
    )
    (sample,) = result.samples
    assert sample["retrieved_contexts"] == ["C", "A"]
    assert sample["retrieved_context_ids"] == ["c", "a"]
    assert sample["metadata"]["retrieved_context_scores"] == [0.99, 0.5]
    assert sample["metadata"]["pre_rerank_context_ids"] == ["a", "b", "c"]


def test_a_failed_root_without_output_is_a_sample_without_response() -> None:
    result = build(span("root", kind="chain", input="q", error="Timeout: 30 s"))
    assert result.samples == [
        {
            "id": "t1",
            "user_input": "q",
            "metadata": {
                "error": "Timeout: 30 s",
                "timestamp": "2026-01-05T08:00:00+00:00",
                "latency_s": 1.0,
            },
        }
    ]


def test_a_root_without_output_is_noted_even_without_an_error_status() -> None:
    (sample,) = build(span("root", kind="chain", input="q")).samples
    assert "response" not in sample
    assert sample["metadata"]["error"].startswith("the trace recorded no answer")


def test_question_falls_back_to_the_first_chain_then_llm_span() -> None:
    result = build(
        span("http", kind="other"),  # a root with no text at all
        span("llm", "http", kind="llm", input="from llm", output="llm answer", start=at(0.1)),
        span("chain", "http", kind="chain", input="from chain", start=at(0.2)),
    )
    (sample,) = result.samples
    assert sample["user_input"] == "from chain"  # chain spans are tried before LLM spans
    assert sample["response"] == "llm answer"  # no chain span has an output
    assert result.unmapped == []


def test_trace_without_question_is_unmapped_with_its_spans() -> None:
    result = build(
        span("root", kind="chain"),
        span("tool", "root", kind="tool", start=at(0.5)),
    )
    assert result.samples == []
    assert result.unmapped == [
        Unmapped(NO_QUESTION, trace_id="t1", span_id="root"),
        Unmapped("tool span: tool calls are not sample fields", trace_id="t1", span_id="tool"),
    ]
    assert result.summary() == (
        "1 traces -> 0 samples (from 2 test records); 2 not mapped:\n"
        f"  1 x {NO_QUESTION}\n"
        "  1 x tool span: tool calls are not sample fields"
    )


def test_orphans_retrievers_are_used_and_other_orphans_are_unmapped() -> None:
    result = build(
        span("root", kind="chain", input="q", output="a"),
        span("lost-r", "gone", kind="retriever", start=at(0.1), documents=[Document("A", "a")]),
        span("lost", "gone", kind="other", start=at(0.2)),
    )
    (sample,) = result.samples
    assert sample["retrieved_contexts"] == ["A"]
    assert result.unmapped == [Unmapped(ORPHAN, trace_id="t1", span_id="lost")]


def test_sessions_number_their_turns_by_start_time_and_keep_tags() -> None:
    def turn(trace: str, start: float, session: str | None) -> Span:
        return span(
            "root",
            trace=trace,
            kind="chain",
            input=f"q {trace}",
            output="a",
            start=at(start),
            end=at(start + 1),
            session_id=session,
            user_id="u1",
            tags=["beta"],
            metadata={"channel": "app"},
        )

    result = build(
        turn("t3", 30, "s"), turn("t1", 10, "s"), turn("x", 20, None), turn("t2", 20, "s")
    )
    assert [s["id"] for s in result.samples] == ["t1", "t2", "x", "t3"]
    assert [s["metadata"].get("turn") for s in result.samples] == [1, 2, None, 3]
    assert result.samples[0]["metadata"] == {
        "timestamp": "2026-01-05T08:00:10+00:00",
        "latency_s": 1.0,
        "session_id": "s",
        "conversation_id": "s",
        "user_id": "u1",
        "tags": ["beta"],
        "channel": "app",
        "turn": 1,
    }


def test_a_span_id_seen_twice_is_counted() -> None:
    result = build(span("root", kind="chain", input="q", output="a"), span("root", kind="chain"))
    assert len(result.samples) == 1
    assert [u.reason for u in result.unmapped] == [
        "span id seen twice in the trace (the first record is used)"
    ]


def test_naive_times_are_utc_and_the_dataset_validates() -> None:
    result = build(
        span(
            "root",
            kind="chain",
            input="q",
            output="a",
            start=dt.datetime(2026, 1, 5, 8, 0),
            end=dt.datetime(2026, 1, 5, 8, 0, 2),
        ),
    )
    dataset = result.to_dataset()
    assert dataset.ids == ["t1"]
    assert dataset[0].metadata["timestamp"] == "2026-01-05T08:00:00+00:00"


@pytest.mark.parametrize("kind", ["embedding", "tool", "chain", "agent"])
def test_each_kind_without_use_has_its_reason(kind: str) -> None:
    result = build(
        span("root", kind="chain", input="q", output="a"),
        span("child", "root", kind=kind, start=at(0.5)),  # type: ignore[arg-type]
    )
    (entry,) = result.unmapped
    assert entry.span_id == "child" and entry.reason.startswith(f"{kind} span")


def test_spans_of_a_trace_without_question_are_each_listed() -> None:
    result = build(
        span("root", kind="chain"),
        span("r", "root", kind="retriever", start=at(0.1), documents=[Document("A", "a")]),
        span("rr1", "root", kind="reranker", start=at(0.2)),
    )
    assert [(u.span_id, u.reason) for u in result.unmapped] == [
        ("root", NO_QUESTION),
        ("r", "retriever span of a trace without a question"),
        ("rr1", "reranker span of a trace without a question"),
    ]


def test_an_earlier_reranker_is_listed_once() -> None:
    result = build(
        span("root", kind="chain", input="q", output="a"),
        span("r", "root", kind="retriever", start=at(0.1), documents=[Document("A", "a")]),
        span("rr1", "root", kind="reranker", start=at(0.2), documents=[Document("A", "a")]),
        span("rr2", "root", kind="reranker", start=at(0.3), documents=[Document(None, "a", 0.3)]),
    )
    assert [(u.span_id, u.reason) for u in result.unmapped] == [
        ("rr1", "reranker span superseded by a later reranker in the same trace")
    ]
    assert result.samples[0]["retrieved_contexts"] == ["A"]
    assert result.samples[0]["metadata"]["retrieved_context_scores"] == [0.3]


def test_parents_that_loop_still_give_a_root() -> None:
    result = build(
        span("a", "b", kind="chain", input="q", output="x", start=at(0)),
        span("b", "a", kind="chain", start=at(1)),
    )
    assert result.samples[0]["user_input"] == "q"
