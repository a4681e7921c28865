"""The fake judge (``ragmeter.testing.FakeJudgeServer``): every built-in judged metric and
every kind of custom prompt metric computed through a real OpenAI-compatible judge pointed at
it, with plausible scores; deterministic; reading only the last user message; the pytest
plugin's fixtures judging with it from the environment."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragmeter import evaluate
from ragmeter.metrics import SampleMetric, resolve_metrics
from ragmeter.metrics.custom import PromptMetric
from ragmeter.testing import (
    FakeJudgeServer,
    fake_embedding,
    fake_judge_answer,
    fake_judge_responder,
)

pytest_plugins = ["pytester"]

ROOT = Path(__file__).parents[2]
DEMO = ROOT / "examples" / "demo.jsonl"
#: Every built-in metric that calls a judge (``ragmeter metrics``, family llm), and one that
#: uses embeddings only.
LLM_METRICS = [
    "faithfulness",
    "answer_relevancy",
    "answer_correctness",
    "context_precision",
    "context_utilization",
    "context_recall",
    "context_relevance",
    "context_entity_recall",
    "noise_sensitivity_relevant",
    "noise_sensitivity_irrelevant",
    "noise_sensitivity_all",
    "hallucination",
    "self_knowledge",
    "claim_context_utilization",
    "abstention",
    "factual_correctness",
    "semantic_similarity",
]
CUSTOM = [
    PromptMetric(
        "tone", kind="discrete", instruction="Is the answer polite?", labels=["polite", "rude"]
    ),
    PromptMetric("grounded", kind="numeric", instruction="How grounded is it?", low=0, high=10),
    PromptMetric(
        "rubric",
        kind="rubric",
        instruction="Rate the answer.",
        levels={1: "bad", 2: "poor", 3: "fair", 4: "good", 5: "great"},
        inputs=("user_input", "response", "reference"),
    ),
    PromptMetric(
        "order",
        kind="ranking",
        instruction="Rank the contexts by relevance.",
        inputs=("user_input",),
        items="retrieved_contexts",
    ),
]


def cases() -> dict[str, str]:
    rows = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]
    return {row["id"]: row["metadata"]["case"] for row in rows}


@pytest.fixture
def fake_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RAGMETER_JUDGE_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAGMETER_CACHE", str(tmp_path / "cache.db"))
    with FakeJudgeServer() as server:
        for name, value in server.environment().items():
            monkeypatch.setenv(name, value)
        yield server


def test_every_judged_metric_and_custom_kind_is_computed_with_plausible_scores(fake_env):
    metrics = [*resolve_metrics(",".join(LLM_METRICS)), *CUSTOM]
    assert all(isinstance(m, SampleMetric) for m in metrics)
    result = evaluate(DEMO, metrics, progress=False)
    statuses = {(r.sample_id, name): s.status for r in result for name, s in r.scores.items()}
    assert len(statuses) == 12 * len(metrics)
    failed = {key: s for key, s in statuses.items() if s not in ("ok", "not_applicable")}
    assert not failed
    for name in [*LLM_METRICS, "tone", "grounded", "rubric", "order"]:
        scores = [s for s in result.scores(name) if s is not None]
        assert len(scores) >= 10, name  # n/a only where the metric has nothing to score
        assert all(0.0 <= s <= 1.0 for s in scores), name
    kind = cases()
    faithfulness = dict(zip([r.sample_id for r in result], result.scores("faithfulness")))
    grounded = [faithfulness[i] for i, c in kind.items() if c == "grounded"]
    made_up = [faithfulness[i] for i, c in kind.items() if c in ("hallucinated", "off_topic")]
    assert min(grounded) == 1.0  # type: ignore[type-var]
    assert max(made_up) < 1.0  # type: ignore[type-var]
    recall = dict(zip([r.sample_id for r in result], result.scores("context_recall")))
    assert all(recall[i] == 0.0 for i, c in kind.items() if c == "missed_retrieval")
    assert all(recall[i] == 1.0 for i, c in kind.items() if c == "grounded" and "s3" in i)
    # the embeddings endpoint was used (semantic similarity, answer relevancy)
    assert any(r.path.endswith("/embeddings") for r in fake_env.requests)


def chat(system: str, *turns: str, schema: dict) -> dict:
    messages = [{"role": "system", "content": system}]
    for i, turn in enumerate(turns):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": turn})
    return {
        "messages": messages,
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
    }


SUPPORT_SCHEMA = {
    "title": "VerifySupport",
    "type": "object",
    "$defs": {
        "SupportItem": {
            "type": "object",
            "properties": {
                "claim": {"type": "integer"},
                "passages": {"type": "array", "items": {"type": "integer"}},
                "reason": {"type": "string"},
            },
        }
    },
    "properties": {"support": {"type": "array", "items": {"$ref": "#/$defs/SupportItem"}}},
}


def blocks(claims: list[str], passages: list[str]) -> str:
    def items(values: list[str]) -> str:
        return "\n".join(f'<item index="{i}">{v}</item>' for i, v in enumerate(values, 1))

    return f"<claims>\n{items(claims)}\n</claims>\n\n<passages>\n{items(passages)}\n</passages>"


def test_claims_are_checked_against_the_last_user_message_only():
    example = blocks(["Python came out in 1991.", "It is popular."], ["Python: 1991."])
    task = blocks(
        ["The warranty lasts one year.", "AppleCare+ extends it to three years."],
        ["AirPods warranty: the warranty lasts one year from purchase.", "Robot vacuum."],
    )
    body = chat("Verify.", example, '{"support": []}', task, schema=SUPPORT_SCHEMA)
    answer = fake_judge_answer(body)
    assert [(s["claim"], s["passages"]) for s in answer["support"]] == [(1, [1]), (2, [])]
    assert fake_judge_responder(body) == fake_judge_responder(body)  # deterministic


def test_a_field_no_prompt_names_still_gets_a_valid_value():
    schema = {
        "type": "object",
        "properties": {
            "mood": {"enum": ["calm", "angry"]},
            "count": {"type": "integer", "minimum": 2, "maximum": 4},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    answer = fake_judge_answer(chat("Classify.", "<text>\nhello\n</text>", schema=schema))
    assert answer == {"mood": "calm", "count": 3, "tags": []}


def test_embeddings_of_texts_sharing_words_are_closer():
    def cosine(a: str, b: str) -> float:
        return sum(x * y for x, y in zip(fake_embedding(a), fake_embedding(b)))

    question = "How long is the warranty of the K75 keyboard?"
    assert cosine(question, "The K75 keyboard warranty lasts two years.") > cosine(
        question, "Shipping to Norway takes five days."
    )
    assert math.isclose(sum(v * v for v in fake_embedding("保修一年")), 1.0)
    assert fake_embedding("") == fake_embedding("")


def test_the_pytest_plugin_judges_with_the_fake_judge_from_the_environment(
    fake_env, pytester: pytest.Pytester
):
    pytester.makepyfile(
        """
        import pytest

        GROUNDED = {
            "user_input": "How long is the K75 warranty?",
            "response": "The K75 keyboard has a two-year warranty.",
            "retrieved_contexts": ["The K75 keyboard has a two-year warranty from purchase."],
        }
        MADE_UP = dict(GROUNDED, response="The K75 comes with free lifetime repairs in Oslo.")

        @pytest.mark.ragmeter_judge
        def test_grounded(ragmeter_assert, ragmeter_judge):
            assert ragmeter_judge.describe()["model"] == "ragmeter-fake-judge"
            ragmeter_assert(GROUNDED, "faithfulness", ge=0.9)
            ragmeter_assert(GROUNDED, "answer_relevancy", ge=0.1)

        @pytest.mark.ragmeter_judge
        def test_made_up(ragmeter_assert):
            ragmeter_assert(MADE_UP, "faithfulness", ge=0.9)
        """
    )
    result = pytester.runpytest("--strict-markers", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*faithfulness = 0.0000, expected >= 0.9*"])
