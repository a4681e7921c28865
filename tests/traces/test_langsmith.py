"""LangSmith run exports -> samples.

``fixtures/langsmith_runs.jsonl`` holds runs as ``client.list_runs(project_name=...)`` yields
them, each dumped with ``run.model_dump(mode="json")`` (the fields of
``langsmith.schemas.Run``, LangSmith Python SDK 0.11: ``id``, ``trace_id``,
``parent_run_id``, ``dotted_order``, ``run_type``, ``inputs``, ``outputs``, ``error``,
``extra.metadata`` with LangChain's ``ls_*`` keys, ``tags``, ``prompt_tokens``...), in the
shapes LangChain's tracer records: retriever outputs ``{"documents": [Document...]}``, chat
model inputs ``{"messages": [[serialized messages]]}`` and outputs ``LLMResult``. Four traces:
three turns of thread ``th-9`` (an LCEL RAG chain with prompt and parser runs; two
retrievers; a compression retriever reranking, then a model call that timed out) and a
LangGraph agent answering in Chinese, tokens only in the AI message's ``usage_metadata``.

Every expected value below is read off the fixture by hand.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from ragmeter.traces import TraceFileError, import_traces

# The reasons a user reads for what was not mapped, word for word.
NO_TRACE = (
    "LangSmith run without trace_id, dotted_order or a parent in the files: its trace is unknown"
)
NOT_DOCUMENTS = (
    "retriever run whose outputs are not a list of documents (outputs.documents of "
    "page_content objects, or texts): no contexts read from it"
)
NOT_MAPPED = {
    "parser": "LangSmith parser run: the model output parsed, the root's output is the answer",
    "prompt": "LangSmith prompt run: a prompt template filled in, no sample field holds it",
}

FIXTURE = Path(__file__).parent / "fixtures" / "langsmith_runs.jsonl"


def run_id(trace: int, n: int) -> str:
    return f"1f0c7a52-{trace:04x}-4b8e-9c3d-{n:012x}"


L1, L2, L3, L4 = (run_id(t, 1) for t in (1, 2, 3, 4))
D_EXPORT = "Settings > Data > Export sends a ZIP of CSV files to the account email."
D_LIMITS = "Exports are limited to one per hour per workspace."
D_DELETE = "Deleting a workspace removes all of its data after 30 days."
D_FAQ = "FAQ: You can run one export per hour; further requests are queued."
D_POLICY = "Fair-use policy: bulk exports above 10 GB may be throttled."
D_SCHED = "Scheduled exports (daily or weekly) are available on the Business plan."
D_API = "The export API endpoint POST /v1/exports starts an export programmatically."
#: The thread's first answer, in the later turns' history.
A_EXPORT = "Go to Settings > Data and click Export; you get a ZIP of CSV files by email."
THREAD = {
    "session_id": "th-9",
    "conversation_id": "th-9",
    "user_id": "u-3",
    "tags": ["prod"],  # the root's tags: not the children's seq:step:N
    "revision_id": "v1.4.0-3-gabc1234",
    "app_version": "1.4.0",
}

EXPECTED = [
    {  # turn 1: one retriever (no scores), the model, its tokens; feedback averaged
        "id": L1,
        "user_input": "How do I export my data?",
        "response": "Go to Settings > Data and click Export; you get a ZIP of CSV files by email.",
        "retrieved_contexts": [D_EXPORT, D_LIMITS, D_DELETE],
        "retrieved_context_ids": ["kb-41", "kb-42", "kb-77"],
        "history": [],
        "metadata": {
            "n_retrievals": 1,
            "model": "gpt-4o-mini",  # extra.metadata.ls_model_name
            "prompt_tokens": 640,
            "completion_tokens": 52,
            "llm_latency_s": 2.0,
            "timestamp": "2026-11-20T10:00:00+00:00",
            "latency_s": 2.5,
            **THREAD,
            "feedback": {"user_score": 1.0},
            "turn": 1,
        },
    },
    {  # turn 2: two retrievers in start order, kb-42 (found by both) once with its first score
        "id": L2,
        "user_input": "Is there a limit on how often I can export?",
        "response": "Yes: one export per hour per workspace.",
        "retrieved_contexts": [D_FAQ, D_LIMITS, D_POLICY],
        "retrieved_context_ids": ["faq-3", "kb-42", "pol-8"],
        "history": [
            {"role": "user", "content": "How do I export my data?"},
            {
                "role": "assistant",
                "content": A_EXPORT,
            },
        ],
        "metadata": {
            "n_retrievals": 2,
            "retrieved_context_scores": [0.91, 0.87, 0.66],
            "model": "gpt-4o-mini",
            "prompt_tokens": 402,
            "completion_tokens": 11,
            "llm_latency_s": 1.28,
            "timestamp": "2026-11-20T10:01:10+00:00",
            "latency_s": 2.0,
            **THREAD,
            "turn": 2,
        },
    },
    {  # turn 3: the compression retriever's output is the final ranking; the call timed out
        "id": L3,
        "user_input": "Can I schedule exports automatically?",
        "retrieved_contexts": [D_SCHED, D_API],
        "retrieved_context_ids": ["kb-90", "kb-91"],
        "history": [
            {"role": "user", "content": "How do I export my data?"},
            {
                "role": "assistant",
                "content": A_EXPORT,
            },
            {"role": "user", "content": "Is there a limit on how often I can export?"},
            {"role": "assistant", "content": "Yes: one export per hour per workspace."},
        ],
        "metadata": {
            "error": "APITimeoutError('Request timed out.')",
            "n_retrievals": 1,
            "pre_rerank_context_ids": ["kb-91", "kb-41", "kb-90"],
            "retrieved_context_scores": [0.97, 0.58],
            "model": "gpt-4o-mini",
            "llm_latency_s": 60.0,
            "timestamp": "2026-11-20T10:02:30+00:00",
            "latency_s": 61.0,
            **THREAD,
            "turn": 3,
        },
    },
    {  # LangGraph: messages in and out; tokens from the AI message's usage_metadata
        "id": L4,
        "user_input": "如何导出我的数据？",
        "response": "在“设置 > 数据”中点击“导出”，系统会把 CSV 压缩包发送到您的邮箱。",
        "retrieved_contexts": ["设置 > 数据 > 导出：将 CSV 压缩包发送到账户邮箱。"],
        "retrieved_context_ids": ["zh-12"],
        "metadata": {
            "n_retrievals": 1,
            "model": "claude-3-5-haiku-20241022",
            "prompt_tokens": 210,
            "completion_tokens": 38,
            "llm_latency_s": 2.4,
            "timestamp": "2026-11-21T01:00:00+00:00",
            "latency_s": 3.0,
            "user_id": "u-8",
            "tags": ["prod", "zh"],
            "revision_id": "v1.4.0-3-gabc1234",
            "locale": "zh-CN",
        },
    },
]


def test_run_export_gives_one_sample_per_trace() -> None:
    result = import_traces("langsmith", [FIXTURE])
    assert result.format == "langsmith"
    assert result.samples == EXPECTED
    assert (result.n_records, result.n_traces) == (19, 4)


def test_every_run_not_used_is_listed_with_its_reason() -> None:
    result = import_traces("langsmith", [FIXTURE])
    chain = "chain span below the root: only the root's question and answer are read"
    found = sorted((u.trace_id, u.span_id, u.reason) for u in result.unmapped)
    assert found == sorted(
        [
            (L1, run_id(1, 2), chain),  # RunnableParallel<context,question>
            (L1, run_id(1, 4), NOT_MAPPED["prompt"]),
            (L1, run_id(1, 6), NOT_MAPPED["parser"]),
            (L2, run_id(2, 2), chain),
            (L4, run_id(4, 2), "embedding span: vectors are not sample fields"),
        ]
    )
    prompt = next(u for u in result.unmapped if u.span_id == run_id(1, 4))
    assert prompt.source == f"{FIXTURE}, line 4"


def _run(rid: str, run_type: str, **fields: object) -> dict[str, object]:
    return {"id": rid, "name": rid, "run_type": run_type, "inputs": {}, "outputs": None, **fields}


def test_nested_child_runs_and_a_runs_object(tmp_path: Path) -> None:
    # client.read_run(id, load_child_runs=True).model_dump(mode="json"), wrapped in {"runs"}
    tree = _run(
        "r",
        "chain",
        start_time="2026-11-22T08:00:00",  # the SDK's naive times are UTC
        end_time="2026-11-22T08:00:04",
        inputs={"input": "Which plans include SSO?"},
        outputs={"answer": "Business and Enterprise."},
        extra={"metadata": {"conversation_id": "c-1", "ls_run_depth": 0}},
        reference_example_id="ex-5",
        child_runs=[
            _run(
                "k",
                "retriever",
                start_time="2026-11-22T08:00:01",
                outputs={"documents": [{"page_content": "SSO: Business, Enterprise."}]},
            ),
            _run(
                "m",
                "llm",
                start_time="2026-11-22T08:00:02",
                end_time="2026-11-22T08:00:03.5",
                inputs={"prompts": ["Human: Which plans include SSO?"]},
                outputs={"generations": [[{"text": "Business and Enterprise."}]]},
                extra={"invocation_params": {"model_name": "gpt-4.1-nano"}},
                prompt_tokens=30,
                completion_tokens=4,
            ),
        ],
    )
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"runs": [tree]}))
    result = import_traces("langsmith", [path])
    assert result.samples == [
        {
            "id": "r",  # a root without trace_id is its own trace
            "user_input": "Which plans include SSO?",
            "response": "Business and Enterprise.",
            "retrieved_contexts": ["SSO: Business, Enterprise."],
            "history": [],
            "metadata": {
                "n_retrievals": 1,
                "model": "gpt-4.1-nano",
                "prompt_tokens": 30,
                "completion_tokens": 4,
                "llm_latency_s": 1.5,
                "timestamp": "2026-11-22T08:00:00+00:00",
                "latency_s": 4.0,
                "session_id": "c-1",
                "conversation_id": "c-1",
                "reference_example_id": "ex-5",
                "turn": 1,
            },
        }
    ]
    assert result.unmapped == [] and result.n_records == 3


def test_trace_and_parent_are_read_from_dotted_order_when_the_ids_are_missing(
    tmp_path: Path,
) -> None:
    root = "11111111-1111-4111-8111-111111111111"
    child = "22222222-2222-4222-8222-222222222222"
    stray = "33333333-3333-4333-8333-333333333333"
    order = f"20261122T080000000000Z{root}"
    path = tmp_path / "runs.jsonl"
    records = [
        _run(
            root, "chain", dotted_order=order, inputs={"question": "q?"}, outputs={"output": "a."}
        ),
        _run(
            child,
            "retriever",
            dotted_order=f"{order}.20261122T080001000000Z{child}",
            outputs={"documents": ["doc text"]},
        ),
        # a child whose parent was not exported and that says nothing of its trace
        _run(stray, "llm", parent_run_id="44444444-4444-4444-8444-444444444444"),
        ["not", "a", "run"],
        {"id": "x"},  # no run_type
    ]
    path.write_text("\n".join(json.dumps(r) for r in records))
    result = import_traces("langsmith", [path])
    (sample,) = result.samples
    assert (sample["id"], sample["retrieved_contexts"]) == (root, ["doc text"])
    assert {(u.span_id, u.source, u.reason) for u in result.unmapped} == {
        (stray, f"{path}, line 3", NO_TRACE),
        (None, f"{path}, line 4", "not a JSON object: a LangSmith export holds run objects"),
        ("x", f"{path}, line 5", "not a LangSmith run (no id or run_type)"),
    }


def test_a_retriever_whose_outputs_are_not_documents_is_unmapped(tmp_path: Path) -> None:
    path = tmp_path / "runs.json"
    path.write_text(
        json.dumps(
            [
                _run("t", "chain", inputs={"question": "q?"}, outputs={"output": "a."}),
                _run("k", "retriever", parent_run_id="t", trace_id="t", outputs={"ids": [1, 2]}),
            ]
        )
    )
    result = import_traces("langsmith", [path])
    assert "retrieved_contexts" not in result.samples[0]
    (entry,) = result.unmapped
    assert (entry.span_id, entry.reason) == ("k", NOT_DOCUMENTS)


def test_a_broken_export_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "runs.json"
    path.write_text('[{"id": "r", "run_type": "chain"},')
    with pytest.raises(TraceFileError, match=r"runs\.json, line 1: invalid JSON"):
        import_traces("langsmith", [path])


def test_import_traces_reads_the_langsmith_format() -> None:
    from ragmeter.traces import import_traces

    assert import_traces("langsmith", FIXTURE).samples == EXPECTED


def test_bulk_export_parquet_with_json_text_columns(tmp_path: Path) -> None:
    # LangSmith's bulk export writes Parquet with the run fields; object columns as JSON text
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    runs = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    columns = (
        "id",
        "trace_id",
        "parent_run_id",
        "dotted_order",
        "name",
        "run_type",
        "error",
        "inputs",
        "outputs",
        "extra",
        "tags",
        "feedback_stats",
        "reference_example_id",
        "prompt_tokens",
        "completion_tokens",
    )
    table = {c: [r[c] for r in runs] for c in columns}
    for column in ("inputs", "outputs", "extra", "tags", "feedback_stats"):
        table[column] = [
            None if v is None else json.dumps(v, ensure_ascii=False) for v in table[column]
        ]
    for column in ("start_time", "end_time"):  # timestamp columns, not text
        table[column] = [
            dt.datetime.fromisoformat(r[column]).astimezone(dt.timezone.utc) for r in runs
        ]
    path = tmp_path / "export.parquet"
    pq.write_table(pa.table(table), path)
    result = import_traces("langsmith", [path])
    assert result.samples == EXPECTED
    assert len(result.unmapped) == 5


def test_runs_exported_with_run_id_instead_of_id(tmp_path: Path) -> None:
    # the LangSmith trace-export skill writes {"run_id", "trace_id", "parent_run_id", ...}
    path = tmp_path / "runs.jsonl"
    records = [
        {
            "run_id": "r",
            "trace_id": "r",
            "parent_run_id": None,
            "name": "agent",
            "run_type": "chain",
            "inputs": {"input": "q?"},
            "outputs": {"output": "a."},
        },
        {
            "run_id": "k",
            "trace_id": "r",
            "parent_run_id": "r",
            "name": "search",
            "run_type": "tool",
            "inputs": {"query": "q?"},
            "outputs": {"output": ["t1", "t2"]},
        },
    ]
    path.write_text("\n".join(json.dumps(r) for r in records))
    (sample,) = import_traces("langsmith", [path]).samples
    # a tool named like a search that returned texts is a retrieval
    assert (sample["id"], sample["user_input"], sample["response"]) == ("r", "q?", "a.")
    assert sample["retrieved_contexts"] == ["t1", "t2"]
