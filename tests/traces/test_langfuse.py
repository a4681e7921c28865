"""Langfuse exports -> samples.

The fixtures follow the shapes of the Langfuse public API as typed by the Langfuse Python SDK
4.14 (``langfuse/api/commons/types``: ``Trace``/``TraceWithDetails`` with observation ids,
``TraceWithFullDetails`` with observation and score objects, ``Observation`` with ``usage``,
``usageDetails``, ``costDetails``, ``level``, ``statusMessage``; pages ``{"data", "meta"}``),
and the Langfuse LangChain callback's record of a retriever's output (``Document`` dumped as
``{"id", "metadata", "page_content", "type": "Document"}``):

* ``langfuse_traces.json``: ``GET /api/public/traces``, four traces (three turns of session
  ``sess-42``: a reranked retrieval, a multi-query retrieval, a rate-limited call without
  output; and a trace whose observations were not exported).
* ``langfuse_observations.json``: ``GET /api/public/observations`` for the first three (with
  an EVENT that maps to nothing).
* ``langfuse_trace_zh.json``: ``GET /api/public/traces/{id}``, a Chinese question with its
  observations, a GUARDRAIL, and a user-feedback score embedded.

Every expected value below is read off the fixtures by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragmeter.traces import TraceFileError, import_traces

# The reasons a user reads for what was not mapped, word for word.
DATASET_ITEM = (
    "Langfuse dataset item, not a trace: give dataset items to ragmeter eval or "
    "load_dataset, which read their input, expectedOutput and metadata"
)
MISSING_OBSERVATION = (
    "observation listed by its trace but not in the files: export the observations too (GET "
    "/api/public/observations?traceId=...)"
)
NOT_A_RECORD = "not a Langfuse trace, observation or score (no id, type or timestamp)"
NOT_AN_OBJECT = "not a JSON object: a Langfuse export holds trace, observation and score objects"
NOT_DOCUMENTS = (
    "retriever or reranker observation whose output is not a list of documents (texts, or "
    "objects with page_content / content / text): no contexts read from it"
)
NOT_MAPPED = {
    "EVALUATOR": "Langfuse EVALUATOR observation: an evaluation of the output, not part of "
    "the RAG run (its scores are read from the trace's scores)",
    "EVENT": "Langfuse EVENT observation: a point-in-time log entry, no sample field holds it",
    "GUARDRAIL": "Langfuse GUARDRAIL observation: a content check, no sample field holds it",
}

FIXTURES = Path(__file__).parent / "fixtures"
FILES = [
    FIXTURES / "langfuse_traces.json",
    FIXTURES / "langfuse_observations.json",
    FIXTURES / "langfuse_trace_zh.json",
]
T1, T2, T3 = (f"7f3c2a1e9b4d4c0f8a6e5d4c3b2a1f0{n}" for n in (1, 2, 3))
T4 = "c4d19e0b5a2f4e6d9c8b7a6f5e4d3c21"
T5 = "e5a07b3c1d2e4f5a6b7c8d9e0f1a2b05"

Q1 = "What is the refund window for annual plans?"
A1 = (
    "Annual plans can be refunded in full within 30 days of purchase; after that, unused "
    "months are refunded pro rata."
)
Q2 = "And if I cancel after two months?"
A2 = (
    "After two months you are past the 30-day window, so you get a pro rata refund for the "
    "remaining ten months."
)
Q3 = "Can I get the refund as store credit instead?"
REFUND1 = "Annual plans can be refunded in full within 30 days of purchase."
REFUND3 = "After 30 days, annual plans are refunded pro rata for the unused months."
CANCEL4 = "You can cancel an annual plan at any time from Settings > Billing."
BILLING9 = "Refunds are paid to the original payment method within 5-10 business days."
CREDIT5 = "Store credit is not offered for refunds; refunds go to the original payment method."
RATE = "RateLimitError: Error code: 429 - Rate limit reached for gpt-4o-mini"
TRACE_TAGS = {
    "channel": "web",
    "release": "2026.11.3",
    "version": "rag-v2",
    "environment": "production",
}
SESSION = {
    "session_id": "sess-42",
    "user_id": "u-17",
    "tags": ["production", "rag-v2"],
    "conversation_id": "sess-42",
}

EXPECTED = [
    {  # turn 1: one retrieval of three documents, reranked to two (new order, new scores)
        "id": T1,
        "user_input": Q1,
        "response": A1,
        "retrieved_contexts": [REFUND3, REFUND1],
        "retrieved_context_ids": ["kb-refund-3", "kb-refund-1"],
        "history": [],
        "metadata": {
            "n_retrievals": 1,
            "pre_rerank_context_ids": ["kb-refund-1", "kb-billing-2", "kb-refund-3"],
            "retrieved_context_scores": [0.94, 0.71],
            "model": "gpt-4o-mini",
            "prompt_tokens": 812,
            "completion_tokens": 64,
            "llm_latency_s": 1.25,  # 09:14:05.050 - 09:14:03.800
            "timestamp": "2026-11-20T09:14:03.120000+00:00",
            "latency_s": 2.412,
            **SESSION,
            **TRACE_TAGS,
            "turn": 1,
        },
    },
    {  # turn 2: two retrievals (multi-query), kb-cancel-4 found by both is kept once
        "id": T2,
        "user_input": Q2,
        "response": A2,
        "retrieved_contexts": [REFUND3, CANCEL4, BILLING9],
        "retrieved_context_ids": ["kb-refund-3", "kb-cancel-4", "kb-billing-9"],
        "history": [{"role": "user", "content": Q1}, {"role": "assistant", "content": A1}],
        "metadata": {
            "n_retrievals": 2,
            "retrieved_context_scores": [0.82, 0.77, 0.61],
            "model": "gpt-4o-mini",
            "prompt_tokens": 1033,
            "completion_tokens": 88,
            "llm_latency_s": 2.3,
            "timestamp": "2026-11-20T09:15:40+00:00",
            "latency_s": 3.1,
            **SESSION,
            **TRACE_TAGS,
            "turn": 2,
        },
    },
    {  # turn 3: the model call failed (429): no response, the error kept, no usage reported
        "id": T3,
        "user_input": Q3,
        "retrieved_contexts": [CREDIT5, BILLING9],
        "retrieved_context_ids": ["kb-credit-5", "kb-billing-9"],
        "history": [
            {"role": "user", "content": Q1},
            {"role": "assistant", "content": A1},
            {"role": "user", "content": Q2},
            {"role": "assistant", "content": A2},
        ],
        "metadata": {
            "error": RATE,
            "n_retrievals": 1,
            "model": "gpt-4o-mini",
            "llm_latency_s": 1.59,
            "timestamp": "2026-11-20T09:17:02.500000+00:00",
            "latency_s": 1.9,
            **SESSION,
            **TRACE_TAGS,
            "turn": 3,
        },
    },
    {  # input a chat (the last user message is the question); observations not exported
        "id": T5,
        "user_input": "Do you offer student discounts?",
        "response": "Yes, students get 40% off with a valid .edu address.",
        "metadata": {
            "timestamp": "2026-11-20T10:02:00+00:00",
            "latency_s": 0.9,
            "user_id": "u-23",
            "tags": ["production"],
            "release": "2026.11.3",
            "version": "rag-v2",
            "environment": "production",
        },
    },
    {  # a single-trace download: retrieval span by name, texts without ids, a score
        "id": T4,
        "user_input": "年度订阅的退款期限是多久？",
        "response": "年度订阅可在购买后 30 天内申请全额退款。",
        "retrieved_contexts": ["年度订阅在购买后 30 天内可全额退款。", "月度订阅不支持退款。"],
        "metadata": {
            "n_retrievals": 1,
            "model": "qwen-plus",
            "prompt_tokens": 356,
            "completion_tokens": 41,
            "llm_latency_s": 1.4,
            "timestamp": "2026-11-21T02:30:11+00:00",
            "latency_s": 1.8,
            "user_id": "u-88",
            "tags": ["production", "zh"],
            "channel": "app",
            "release": "2026.11.3",
            "version": "rag-v2",
            "environment": "production",
            "scores": {"user_feedback": 1},
        },
    },
]


def test_api_exports_give_one_sample_per_trace_in_time_order() -> None:
    result = import_traces("langfuse", FILES)
    assert result.format == "langfuse"
    assert result.samples == EXPECTED
    # 4 traces + 12 observations + 1 trace with 3 observations and 1 score
    assert result.n_records == 21
    assert result.n_traces == 5


def test_every_observation_not_used_is_listed_with_its_reason() -> None:
    result = import_traces("langfuse", FILES)
    found = sorted((u.trace_id or "", u.span_id or "", u.reason) for u in result.unmapped)
    chain = "chain span below the root: only the root's question and answer are read"
    assert found == sorted(
        [
            (T1, "a1b2c3d4e5f60005", NOT_MAPPED["EVENT"]),
            (T1, "a1b2c3d4e5f60001", chain),  # the pipeline span below the trace
            (T2, "b1b2c3d4e5f60001", chain),
            (T3, "c1b2c3d4e5f60001", chain),
            (T4, "d1b2c3d4e5f60003", NOT_MAPPED["GUARDRAIL"]),
            (T5, "e5a07b3c1d2e0001", MISSING_OBSERVATION),
            (T5, "e5a07b3c1d2e0002", MISSING_OBSERVATION),
        ]
    )
    event = next(u for u in result.unmapped if u.span_id == "a1b2c3d4e5f60005")
    assert event.source == f"{FIXTURES / 'langfuse_observations.json'}, record 2"


def test_observations_alone_take_the_question_and_answer_from_the_root_observation() -> None:
    result = import_traces("langfuse", [FIXTURES / "langfuse_observations.json"])
    first = result.samples[0]
    # @observe recorded the root function's arguments {"args": [question], "kwargs": {}}
    assert first["user_input"] == Q1
    assert first["response"] == A1
    assert first["retrieved_context_ids"] == ["kb-refund-3", "kb-refund-1"]
    assert first["metadata"]["latency_s"] == 2.412  # 09:14:05.532 - 09:14:03.120
    assert "session_id" not in first["metadata"]  # v1 observations do not carry it
    third = result.samples[2]
    assert "response" not in third
    assert third["metadata"]["error"] == RATE  # the failed root observation's status
    assert [s["id"] for s in result.samples] == [T1, T2, T3]


def _write(path: Path, records: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n")
    return path


def test_jsonl_of_sdk_objects_dumped_with_snake_case_names(tmp_path: Path) -> None:
    # langfuse.api.trace.get(...).model_dump(mode="json"): snake_case field names
    path = _write(
        tmp_path / "export.jsonl",
        [
            {
                "id": "t-9",
                "timestamp": "2026-11-22T08:00:00Z",
                "name": "qa",
                "input": {"query": "Which regions are supported?"},
                "output": {"output": "EU and US."},
                "session_id": "s-1",
                "user_id": "u-1",
                "tags": [],
                "metadata": None,
            },
            {
                "id": "o-1",
                "trace_id": "t-9",
                "type": "RETRIEVER",
                "name": "kb",
                "start_time": "2026-11-22T08:00:00.100Z",
                "end_time": "2026-11-22T08:00:00.200Z",
                "input": "Which regions are supported?",
                "output": {"context": [{"text": "Data is hosted in the EU and the US.", "id": 7}]},
                "parent_observation_id": None,
            },
            {
                "id": "o-2",
                "trace_id": "t-9",
                "type": "GENERATION",
                "name": "llm",
                "start_time": "2026-11-22T08:00:00.300Z",
                "end_time": "2026-11-22T08:00:01.300Z",
                "provided_model_name": "claude-haiku",
                "usage_details": {"input": 100, "output": 5, "total": 105},
                "output": {
                    "choices": [{"message": {"role": "assistant", "content": "EU and US."}}]
                },
            },
        ],
    )
    (sample,) = import_traces("langfuse", [path]).samples
    assert sample == {
        "id": "t-9",
        "user_input": "Which regions are supported?",
        "response": "EU and US.",
        "retrieved_contexts": ["Data is hosted in the EU and the US."],
        "retrieved_context_ids": ["7"],
        "history": [],
        "metadata": {
            "n_retrievals": 1,
            "model": "claude-haiku",
            "prompt_tokens": 100,
            "completion_tokens": 5,
            "llm_latency_s": 1.0,
            "timestamp": "2026-11-22T08:00:00+00:00",
            "session_id": "s-1",
            "conversation_id": "s-1",
            "user_id": "u-1",
            "turn": 1,
        },
    }


def test_ui_csv_export_cells_holding_json_are_decoded(tmp_path: Path) -> None:
    path = tmp_path / "traces.csv"
    path.write_text(
        "id,timestamp,name,input,output,sessionId,userId,tags,metadata,latency\n"
        't-1,2026-11-22T08:00:00.000Z,qa,"{""question"": ""Is SSO included?""}",'
        '"{""answer"": ""Yes, on the Business plan.""}",,u-5,"[""beta""]",'
        '"{""plan"": ""business""}",0.5\n',
        encoding="utf-8",
    )
    result = import_traces("langfuse", [path])
    assert result.samples == [
        {
            "id": "t-1",
            "user_input": "Is SSO included?",
            "response": "Yes, on the Business plan.",
            "metadata": {
                "timestamp": "2026-11-22T08:00:00+00:00",
                "latency_s": 0.5,
                "user_id": "u-5",
                "tags": ["beta"],
                "plan": "business",
            },
        }
    ]
    assert result.unmapped == []


def test_ui_session_download_gives_the_turns_of_its_session(tmp_path: Path) -> None:
    path = tmp_path / "session-s-7.json"
    path.write_text(
        json.dumps(
            {
                "id": "s-7",
                "createdAt": "2026-11-22T08:00:00Z",
                "traces": [
                    {"id": "b", "timestamp": "2026-11-22T08:05:00Z", "input": "second?"},
                    {"id": "a", "timestamp": "2026-11-22T08:01:00Z", "input": "first?"},
                ],
            }
        )
    )
    result = import_traces("langfuse", [path])
    assert [
        (s["id"], s["metadata"]["session_id"], s["metadata"]["turn"]) for s in result.samples
    ] == [
        ("a", "s-7", 1),
        ("b", "s-7", 2),
    ]
    # neither trace recorded an answer: kept, and said so
    assert all("response" not in s for s in result.samples)


def test_ui_trace_download_with_trace_and_observations_side_by_side(tmp_path: Path) -> None:
    path = tmp_path / "trace-t-3.json"
    path.write_text(
        json.dumps(
            {
                "trace": {
                    "id": "t-3",
                    "timestamp": "2026-11-22T09:00:00Z",
                    "input": "q?",
                    "output": "a.",
                },
                "observations": [
                    {
                        "id": "o-1",
                        "type": "TOOL",
                        "name": "web-search",
                        "startTime": "2026-11-22T09:00:00.1Z",
                        "output": ["result one", "result two"],
                    }
                ],
            }
        )
    )
    (sample,) = import_traces("langfuse", [path]).samples
    # a TOOL named like a search that returned texts is a retrieval
    assert sample["retrieved_contexts"] == ["result one", "result two"]
    assert "retrieved_context_ids" not in sample


def test_a_retriever_whose_output_is_not_documents_is_unmapped_not_an_empty_retrieval(
    tmp_path: Path,
) -> None:
    path = _write(
        tmp_path / "obs.jsonl",
        [
            {"id": "t", "timestamp": "2026-11-22T09:00:00Z", "input": "q?", "output": "a."},
            {
                "id": "r",
                "traceId": "t",
                "type": "RETRIEVER",
                "name": "vector-search",
                "startTime": "2026-11-22T09:00:01Z",
                "output": {"status": "timeout"},
            },
            "not an object",
            {"foo": 1},
            {"id": "i-1", "datasetId": "d-1", "input": "q?", "expectedOutput": "a."},
        ],
    )
    result = import_traces("langfuse", [path])
    assert "retrieved_contexts" not in result.samples[0]
    assert "n_retrievals" not in result.samples[0]["metadata"]
    reasons = {(u.span_id, u.source, u.reason) for u in result.unmapped}
    assert reasons == {
        ("r", f"{path}, line 2", NOT_DOCUMENTS),
        (None, f"{path}, line 3", NOT_AN_OBJECT),
        (None, f"{path}, line 4", NOT_A_RECORD),
        ("i-1", f"{path}, line 5", DATASET_ITEM),
    }
    assert result.n_records == 5


def test_a_broken_file_is_an_error_naming_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "obs.jsonl"
    path.write_text('{"id": "t", "input": "q"}\n{"id": "u", "input": \n')
    with pytest.raises(TraceFileError, match=r"obs\.jsonl, line 2: invalid JSON"):
        import_traces("langfuse", [path])
    # a file that cannot be opened is an OSError (exit 4), as in every format
    with pytest.raises(FileNotFoundError, match="No such file"):
        import_traces("langfuse", [tmp_path / "missing.json"])


def test_import_traces_reads_the_langfuse_format() -> None:
    from ragmeter.traces import import_traces

    assert import_traces("langfuse", FILES).samples == EXPECTED


def test_json_text_in_a_json_export_stays_text(tmp_path: Path) -> None:
    # only CSV cells are decoded: an answer that reads as JSON is still the answer
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            [
                {
                    "id": "t",
                    "timestamp": "2026-11-22T08:00:00Z",
                    "input": "Give the config as JSON",
                    "output": '{"answer": 1}',
                }
            ]
        )
    )
    (sample,) = import_traces("langfuse", [path]).samples
    assert sample["response"] == '{"answer": 1}'
