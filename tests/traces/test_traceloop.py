"""OpenLLMetry (Traceloop) spans in OTLP files.

``otel_traceloop.jsonl`` and ``otel_openllmetry_legacy.jsonl`` were recorded by the real
instrumentation packages (LangChain, Chroma and Pinecone; fixtures/make_traceloop_fixtures.py
says which versions and what was stood in). The spans built by hand below are those the
packages not installed here write: the Traceloop SDK's ``@workflow`` decorator, OpenAI's
instrumentation (``llm.request.type``, ``gen_ai.prompt.N.*``), a reranker and a
``db.search.result`` vector store; their attribute names are those of
traceloop/openllmetry packages/opentelemetry-semantic-conventions-ai/opentelemetry/semconv_ai/
__init__.py (SpanAttributes, Events, EventAttributes, LLMRequestTypeValues,
TraceloopSpanKindValues) at commit 93429cf.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragmeter.traces import import_traces

FIXTURES = Path(__file__).parent / "fixtures"
NESTED = (
    "vector store query inside a retriever span: the same retrieval, read once (the "
    "retriever's documents, with the store's ids and scores)"
)
BELOW_ROOT = "chain span below the root: only the root's question and answer are read"


def test_langchain_over_chroma_and_pinecone_as_the_instrumentation_records_it() -> None:
    result = import_traces("otel", FIXTURES / "otel_traceloop.jsonl")
    first, second, pinecone = result.samples
    # the workflow's traceloop.entity.input/output; the retriever's documents with Chroma's
    # ids (its distances are no scores); the session from the association properties
    assert first["user_input"] == "What is RAG retrieval?"
    assert first["response"] == "RAG is retrieval-augmented generation."
    assert first["retrieved_contexts"] == [
        "RAG retrieves passages and gives them to the model.",
        "Retrieval-augmented generation grounds answers in documents.",
    ]
    assert first["retrieved_context_ids"] == ["d1", "d2"]
    assert "retrieved_context_scores" not in first["metadata"]
    assert first["metadata"]["session_id"] == "s-9"
    assert first["metadata"]["user_id"] == "u-3"
    assert first["metadata"]["n_retrievals"] == 1  # one retrieval, not two
    assert (first["metadata"]["prompt_tokens"], first["metadata"]["completion_tokens"]) == (
        412,
        18,
    )
    assert "model" not in first["metadata"]  # OpenLLMetry's "unknown"
    # the second turn of session s-9 carries the first as its history
    assert second["metadata"]["turn"] == 2
    assert second["history"] == [
        {"role": "user", "content": "What is RAG retrieval?"},
        {"role": "assistant", "content": "RAG is retrieval-augmented generation."},
    ]
    assert second["retrieved_context_ids"] == ["d2", "d1"]
    # Pinecone: ids and scores from its db.query.result events
    assert pinecone["retrieved_context_ids"] == ["p7", "p2"]
    assert pinecone["metadata"]["retrieved_context_scores"] == [0.91, 0.62]
    assert pinecone["retrieved_contexts"] == ["Refunds take seven days.", "Returns need a receipt."]
    assert result.unmapped_counts() == {
        BELOW_ROOT: 18,
        NESTED: 3,
        # the collection.add of the ingestion: a trace of its own, no question
        "trace without a question: no text input on its root or any chain/agent/LLM span": 1,
    }


def test_the_instrumentation_before_its_genai_migration() -> None:
    """opentelemetry-instrumentation-langchain 0.53.3: llm.request.type and the indexed
    gen_ai.prompt.N / gen_ai.completion.N attributes."""
    result = import_traces("otel", FIXTURES / "otel_openllmetry_legacy.jsonl")
    chain, chat = result.samples
    assert chain["user_input"] == "What is RAG?"
    assert chain["response"] == "RAG is retrieval-augmented generation."
    assert chain["retrieved_contexts"] == [
        "Retrieval-augmented generation grounds answers in documents."
    ]
    assert chain["metadata"]["session_id"] == "s-9"
    assert chat["user_input"] == "Say hello in French."
    assert chat["response"] == "Bonjour"
    assert (chat["metadata"]["prompt_tokens"], chat["metadata"]["completion_tokens"]) == (9, 2)
    assert result.unmapped_counts() == {BELOW_ROOT: 6}


def test_the_recorded_attributes_are_the_ones_read() -> None:
    """The fixtures hold what the instrumentation writes (so the reader is tested on it)."""
    keys: set[str] = set()
    events: set[str] = set()
    for name in ("otel_traceloop.jsonl", "otel_openllmetry_legacy.jsonl"):
        for line in (FIXTURES / name).read_text("utf-8").splitlines():
            for resource in json.loads(line)["resourceSpans"]:
                for scope in resource["scopeSpans"]:
                    for span in scope["spans"]:
                        keys |= {a["key"] for a in span.get("attributes", [])}
                        events |= {e["name"] for e in span.get("events", [])}
    assert {
        "traceloop.span.kind",
        "traceloop.entity.input",
        "traceloop.entity.output",
        "traceloop.association.properties.session_id",
        "llm.request.type",
        "gen_ai.prompt.1.content",
        "gen_ai.completion.0.content",
        "gen_ai.input.messages",
        "db.system",
    } <= keys
    assert "db.query.result" in events


# -- spans written from the source's attribute names ---------------------------------------------
def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": value}


def _span(
    span_id: int,
    parent: int | None,
    name: str,
    attrs: dict[str, Any],
    events: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]
    trace: int = 0xD1,
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "traceId": f"{trace:032x}",
        "spanId": f"{span_id:016x}",
        "name": name,
        "startTimeUnixNano": str(1772618400 * 10**9 + span_id * 10**6),
        "endTimeUnixNano": str(1772618400 * 10**9 + (span_id + 100) * 10**6),
        "attributes": [{"key": k, "value": _value(v)} for k, v in attrs.items()],
        "events": [
            {"name": n, "attributes": [{"key": k, "value": _value(v)} for k, v in a.items()]}
            for n, a in events
        ],
    }
    if parent is not None:
        found["parentSpanId"] = f"{parent:016x}"
    return found


def _write(tmp_path: Path, spans: list[dict[str, Any]]) -> Path:
    path = tmp_path / "spans.jsonl"
    path.write_text(
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n", "utf-8"
    )
    return path


def test_sdk_workflow_openai_call_rerank_and_search_results(tmp_path: Path) -> None:
    """The Traceloop SDK's @workflow (its arguments as {"args", "kwargs"}), an OpenAI call as
    its instrumentation records it, a Qdrant-style search (db.search.result events) and a
    Cohere-style rerank (llm.request.type rerank)."""
    spans = [
        _span(
            1,
            None,
            "answer.workflow",
            {
                "traceloop.span.kind": "workflow",
                "traceloop.entity.name": "answer",
                "traceloop.entity.input": json.dumps(
                    {"args": [], "kwargs": {"question": "Why is the sky blue?"}}
                ),
                "traceloop.entity.output": json.dumps("Rayleigh scattering."),
                "traceloop.association.properties.chat_id": "c-1",
                "traceloop.association.properties.user_id": "u-1",
                "traceloop.association.properties.tenant": "acme",
            },
        ),
        _span(
            2,
            1,
            "qdrant.search",
            {"db.system": "qdrant", "db.operation": "search", "db.vector.query.top_k": 2},
            [
                (
                    "db.search.result",
                    {
                        "db.search.result.id": "q1",
                        "db.search.result.score": 0.8,
                        "db.search.result.entity": json.dumps({"text": "Blue light scatters."}),
                    },
                ),
                (
                    "db.search.result",
                    {
                        "db.search.result.id": "q2",
                        "db.search.result.score": 0.5,
                        "db.search.result.entity": json.dumps({"text": "Sunsets are red."}),
                    },
                ),
            ],
        ),
        _span(
            3,
            1,
            "cohere.rerank",
            {
                "llm.request.type": "rerank",
                "gen_ai.request.model": "rerank-v3.5",
                "gen_ai.prompt.0.role": "system",
                "gen_ai.prompt.0.content": "Blue light scatters.",
                "gen_ai.prompt.1.role": "system",
                "gen_ai.prompt.1.content": "Sunsets are red.",
                "gen_ai.prompt.2.role": "user",
                "gen_ai.prompt.2.content": "Why is the sky blue?",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": "Doc 0, Score: 0.97",
            },
        ),
        _span(
            4,
            1,
            "openai.chat",
            {
                "llm.request.type": "chat",
                "gen_ai.system": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                "gen_ai.prompt.0.role": "system",
                "gen_ai.prompt.0.content": "Answer briefly.",
                "gen_ai.prompt.1.role": "user",
                "gen_ai.prompt.1.content": "Why is the sky blue?",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": "Rayleigh scattering.",
                "gen_ai.usage.prompt_tokens": 30,
                "gen_ai.usage.completion_tokens": 4,
            },
        ),
    ]
    result = import_traces("otel", _write(tmp_path, spans))
    (sample,) = result.samples
    assert sample["user_input"] == "Why is the sky blue?"
    assert sample["response"] == "Rayleigh scattering."
    # the search found two; Cohere's rerank (top_n=1) kept the first, with its score
    assert sample["retrieved_contexts"] == ["Blue light scatters."]
    assert sample["metadata"]["retrieved_context_scores"] == [0.97]
    assert sample["metadata"]["model"] == "gpt-4o-mini-2024-07-18"
    assert (sample["metadata"]["prompt_tokens"], sample["metadata"]["completion_tokens"]) == (30, 4)
    assert (sample["metadata"]["session_id"], sample["metadata"]["user_id"]) == ("c-1", "u-1")
    assert sample["metadata"]["tenant"] == "acme"  # the root's other association properties

    # the same search alone: its documents with their ids and scores
    alone = import_traces("otel", _write(tmp_path, [spans[0], spans[1]])).samples[0]
    assert alone["retrieved_context_ids"] == ["q1", "q2"]
    assert alone["retrieved_contexts"] == ["Blue light scatters.", "Sunsets are red."]
    assert alone["metadata"]["retrieved_context_scores"] == [0.8, 0.5]
    # a rerank traced without its content (TRACELOOP_TRACE_CONTENT=false) ranks nothing
    blind = _span(3, 1, "cohere.rerank", {"llm.request.type": "rerank"})
    kept = import_traces("otel", _write(tmp_path, [spans[0], spans[1], blind])).samples[0]
    assert kept["retrieved_context_ids"] == ["q1", "q2"]


def test_a_retriever_and_a_store_that_disagree_keep_the_retrievers_documents(
    tmp_path: Path,
) -> None:
    """LangChain filtered the store's hits: the counts differ, the retriever's list stands."""
    docs = [{"page_content": "Kept.", "metadata": {"id": "k1"}}]
    spans = [
        _span(
            1,
            None,
            "chain.workflow",
            {
                "traceloop.span.kind": "workflow",
                "traceloop.entity.input": json.dumps({"inputs": "Q?"}),
                "traceloop.entity.output": json.dumps({"outputs": "A."}),
            },
        ),
        _span(
            2,
            1,
            "vector_db_retrieve R",
            {
                "gen_ai.operation.name": "vector_db_retrieve",
                "traceloop.span.kind": "task",
                "traceloop.entity.output": json.dumps({"documents": docs}),
            },
        ),
        _span(
            3,
            2,
            "pinecone.query",
            {"db.system": "Pinecone"},
            [
                (
                    "db.query.result",
                    {
                        "db.query.result.id": "x1",
                        "db.query.result.score": 0.9,
                        "db.query.result.metadata": "{'text': 'Dropped.'}",
                    },
                ),
                (
                    "db.query.result",
                    {
                        "db.query.result.id": "k1",
                        "db.query.result.score": 0.7,
                        "db.query.result.metadata": "{'text': 'Kept.'}",
                    },
                ),
            ],
        ),
        _span(4, 3, "pinecone.child", {"db.system": "Pinecone", "db.operation": "describe"}),
    ]
    result = import_traces("otel", _write(tmp_path, spans))
    (sample,) = result.samples
    assert sample["retrieved_contexts"] == ["Kept."]
    assert sample["retrieved_context_ids"] == ["k1"]
    assert result.unmapped_counts()[NESTED] == 1
    # the store's child hangs from the retriever now: a span of no known kind, not an orphan
    assert not any("orphan" in reason for reason in result.unmapped_counts())


def test_a_store_query_without_a_retriever_above_is_the_retrieval(tmp_path: Path) -> None:
    """Pinecone's query called directly (no LangChain): its events are the documents, the
    metadata's Python repr read for the text; a malformed repr gives no text, no error."""
    spans = [
        _span(
            1,
            None,
            "rag.workflow",
            {
                "traceloop.span.kind": "workflow",
                "traceloop.entity.input": json.dumps({"args": ["Q?"], "kwargs": {}}),
                "traceloop.entity.output": json.dumps("A."),
            },
        ),
        _span(
            2,
            1,
            "pinecone.query",
            {"db.system": "Pinecone"},
            [
                (
                    "db.query.result",
                    {
                        "db.query.result.id": "p1",
                        "db.query.result.score": 0.9,
                        "db.query.result.metadata": "{'text': 'One.', 'page': 3}",
                    },
                ),
                (
                    "db.query.result",
                    {
                        "db.query.result.id": "p2",
                        "db.query.result.metadata": "{'text': __import__('os')}",
                    },
                ),
            ],
        ),
    ]
    result = import_traces("otel", _write(tmp_path, spans))
    (sample,) = result.samples
    assert sample["user_input"] == "Q?"
    assert sample["retrieved_context_ids"] == ["p1", "p2"]
    assert "retrieved_contexts" not in sample  # p2 has no text: contexts need every text


def test_the_command_reads_them_under_otel_or_its_traceloop_alias(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ragmeter.cli import app

    out = tmp_path / "samples.jsonl"
    done = CliRunner().invoke(
        app,
        ["import", "traceloop", str(FIXTURES / "otel_traceloop.jsonl"), "-o", str(out)],
        env={"COLUMNS": "200"},
    )
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[0] == (
        "4 traces -> 3 samples (from 31 otel records); 22 not mapped:"
    )
    assert f"wrote 3 samples to {out}" in done.output
    written = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert written == import_traces("otel", FIXTURES / "otel_traceloop.jsonl").samples
