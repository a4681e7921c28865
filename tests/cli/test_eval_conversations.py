"""`ragmeter eval conv.jsonl`: a file of conversations evaluates turn by turn, against the fake
OpenAI-compatible server (judge and embeddings), with per-turn results that name their
conversation and turn, and a follow-up scored against its standalone question."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter import EvaluationResult
from ragmeter.cli import app
from ragmeter.testing import FakeOpenAIServer, unit_vector_with_cosine

KEY = "sk-conversations-key"
Q1, A1 = "What are the Pulse S3?", "The Pulse S3 are wireless earbuds."
Q2, A2 = "and its price?", "The Pulse S3 costs $99."
STANDALONE = "What is the price of the Pulse S3?"
QUESTIONS = ["How much does the Pulse S3 cost?", "What is the Pulse S3's price?", "S3 cost?"]
CONVERSATION = {
    "id": "c1",
    "scenario": "shopping",
    "messages": [
        {"role": "user", "content": Q1},
        {"role": "assistant", "content": A1, "retrieved_contexts": ["Pulse S3: earbuds."]},
        {"role": "user", "content": Q2},
        {"role": "assistant", "content": A2, "retrieved_contexts": ["Pulse S3: $99."]},
    ],
}


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """One claim per answer, supported by passage 1; the questions; the standalone rewrite."""
    schema = body["response_format"]["json_schema"]["schema"]["properties"]
    out: dict[str, Any] = {}
    if "claims" in schema:
        out["claims"] = ["The Pulse S3 costs $99."]
    if "questions" in schema:
        out |= {"questions": QUESTIONS, "noncommittal": 0}
    if "standalone" in schema:
        out["standalone"] = STANDALONE
    if "support" in schema:
        out["support"] = [{"claim": 1, "passages": [1], "reason": "stated"}]
    return out


def embedder(text: str) -> list[float]:
    """The first question and the standalone one on the first axis; the generated questions
    at cosines 0.9, 0.8 and 0.85 with it; the bare follow-up orthogonal to all of them."""
    cosines = dict(zip(QUESTIONS, (0.9, 0.8, 0.85)))
    if text in (Q1, STANDALONE):
        return unit_vector_with_cosine(1.0, 1)
    if text in cosines:
        return unit_vector_with_cosine(cosines[text], 2 + QUESTIONS.index(text))
    return [0.0] * 6 + [1.0] + [0.0] * 9


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with FakeOpenAIServer(
        responder=reply, api_key=KEY, embedder=embedder, embedding_dimensions=16
    ) as fake:
        monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", KEY)
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_MODEL", "fake-embed")
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_BASE_URL", fake.base_url)
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_API_KEY", KEY)
        yield fake


def test_eval_of_a_conversation_file_scores_each_turn(tmp_path: Path, server) -> None:
    data = tmp_path / "conv.jsonl"
    data.write_text(json.dumps(CONVERSATION) + "\n", encoding="utf-8")
    judge = tmp_path / "judge.toml"
    judge.write_text(
        f'[judge]\nmodel = "m"\nbase_url = "{server.base_url}"\nmax_retries = 0\n'
        'api_key_env = "RAGMETER_JUDGE_API_KEY"\n',
        encoding="utf-8",
    )
    run_dir = tmp_path / "run"
    args = ["eval", str(data), "-m", "faithfulness,answer_relevancy", "-o", str(run_dir)]
    args += ["--judge-config", str(judge), "--no-cache", "--no-store", "-q"]
    done = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output

    result = EvaluationResult.load(run_dir)
    rows = [
        (r.sample_id, r.sample.metadata["conversation_id"], r.sample.metadata["turn"])
        for r in result.samples
    ]
    assert rows == [("c1#1", "c1", 1), ("c1#2", "c1", 2)]
    assert result.scores("faithfulness") == [1.0, 1.0]  # 1 claim of 1 supported
    # both turns: mean(0.9, 0.8, 0.85) = 0.85, turn 2 against its standalone question
    assert result.scores("answer_relevancy") == pytest.approx([0.85, 0.85], abs=1e-5)
    second = result.samples[1]
    assert second.scores["answer_relevancy"].details["standalone_question"] == STANDALONE
    assert [m.content for m in second.sample.history or []] == [Q1, A1]

    chats = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    with_history = [b for b in chats if "<conversation>" in b["messages"][-1]["content"]]
    # turn 2's response analysis (standalone) only: the reverse-generated questions see the
    # answer alone, and verify has no question
    assert len(with_history) == 1
    assert f"user: {Q1}\nassistant: {A1}" in with_history[0]["messages"][-1]["content"]
    assert len(chats) == 6  # 3 calls per turn, as for single-turn samples
