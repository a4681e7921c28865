"""The samples the fixtures must give, written by hand from what make_fixtures.py records
(times are seconds after 2026-03-02T09:00:00Z; trace ids 0xa1.. and 0xb1..)."""

from __future__ import annotations

from typing import Any

SESSION = {"session_id": "s-1", "user_id": "u-7", "tags": ["web", "beta"], "conversation_id": "s-1"}
#: The session's earlier turns (a failed turn, without an answer, gives its question only).
TURN_1 = [
    {"role": "user", "content": "What is RAG?"},
    {"role": "assistant", "content": "RAG is retrieval-augmented generation."},
]
TURN_2 = [
    {"role": "user", "content": "How does reranking help?"},
    {"role": "assistant", "content": "It puts the most relevant passages first."},
]

#: The OpenInference app: otel_openinference.jsonl, phoenix_spans.json / .parquet.
OPENINFERENCE: list[dict[str, Any]] = [
    {
        "id": "000000000000000000000000000000a1",
        "user_input": "What is RAG?",
        "response": "RAG is retrieval-augmented generation.",
        # the reranker's output order: d3 then d1 (d2 was retrieved twice, then cut)
        "retrieved_contexts": [
            "Retrieval-augmented generation grounds answers in documents.",
            "RAG retrieves passages and gives them to the model.",
        ],
        "retrieved_context_ids": ["d3", "d1"],
        "history": [],
        "metadata": {
            "n_retrievals": 2,
            "pre_rerank_context_ids": ["d1", "d2", "d3"],
            "retrieved_context_scores": [0.97, 0.95],
            "model": "gpt-4o-mini",
            "prompt_tokens": 412,
            "completion_tokens": 18,
            "llm_latency_s": 1.6,  # 0.8 s -> 2.4 s
            "timestamp": "2026-03-02T09:00:00+00:00",
            "latency_s": 2.5,
            **SESSION,
            "channel": "web",
            "turn": 1,
        },
    },
    {
        "id": "000000000000000000000000000000a2",
        "user_input": "How does reranking help?",
        "response": "It puts the most relevant passages first.",
        "retrieved_contexts": ["A reranker reorders retrieved passages by relevance."],
        "retrieved_context_ids": ["d4"],
        "history": TURN_1,
        "metadata": {
            "n_retrievals": 1,
            "retrieved_context_scores": [0.88],
            "model": "gpt-4o-mini",
            "prompt_tokens": 300,
            "completion_tokens": 12,
            "llm_latency_s": 1.25,
            "timestamp": "2026-03-02T09:01:00+00:00",
            "latency_s": 2.0,
            **SESSION,
            "turn": 2,
        },
    },
    {
        "id": "000000000000000000000000000000a3",
        "user_input": "Does it work for Chinese documents?",
        "history": [*TURN_1, *TURN_2],
        "metadata": {
            "error": "RateLimitError: 429",
            "model": "gpt-4o-mini",
            "llm_latency_s": 0.3,
            "timestamp": "2026-03-02T09:02:00+00:00",
            "latency_s": 1.0,
            **SESSION,
            "turn": 3,
        },
    },
    {
        "id": "000000000000000000000000000000a4",
        "user_input": "什么是检索增强生成？",
        "response": "检索增强生成先检索文档，再据此回答。",
        "retrieved_contexts": ["检索增强生成结合检索与生成。"],
        "metadata": {
            "n_retrievals": 1,
            "retrieved_context_scores": [0.7],
            "timestamp": "2026-03-03T09:00:00+00:00",
            "latency_s": 1.5,
        },
    },
]
#: What the OpenInference app's files leave out: the glossary and ping tools, the query
#: embedding, and the health check (no question).
OPENINFERENCE_UNMAPPED = {
    "tool span: tool calls are not sample fields": 2,
    "embedding span: vectors are not sample fields": 1,
    "trace without a question: no text input on its root or any chain/agent/LLM span": 1,
}

#: The GenAI-conventions app: otel_genai.json.
GENAI: list[dict[str, Any]] = [
    {
        "id": "000000000000000000000000000000b1",
        "user_input": "How long is the warranty?",
        "response": "Two years from purchase.",
        "retrieved_contexts": [
            "The warranty lasts two years.",
            "Returns are accepted for 30 days.",
        ],
        "retrieved_context_ids": ["w1", "w2"],
        "history": [],
        "metadata": {
            "n_retrievals": 1,
            "retrieved_context_scores": [0.82, 0.61],
            "model": "gpt-4o-2024-08-06",  # the response model before the request model
            "prompt_tokens": 230,
            "completion_tokens": 9,
            "llm_latency_s": 2.4,
            "timestamp": "2026-03-04T09:00:00+00:00",
            "latency_s": 3.0,
            "session_id": "conv-42",
            "conversation_id": "conv-42",
            "turn": 1,
        },
    },
    {
        "id": "000000000000000000000000000000b2",
        # the HTTP root has no text: the chat span's prompt/completion events give them
        "user_input": "Is shipping free?",
        "response": "Yes, over 50 euros.",
        # the documents have ids and scores only: no contexts
        "retrieved_context_ids": ["kb-9", "kb-2"],
        "metadata": {
            "n_retrievals": 1,
            "retrieved_context_scores": [0.5, 0.4],
            "model": "gpt-4o-mini",
            "prompt_tokens": 50,
            "completion_tokens": 7,
            "llm_latency_s": 1.5,
            "timestamp": "2026-03-04T10:00:00+00:00",
            "latency_s": 2.0,
        },
    },
]
