"""One number behind each verdict: for every verdict-based metric, a verdict is yes exactly
when its P(yes) is at least 0.5, and a score read from those probabilities can never say
"0 of 1 claims are supported" and 0.95 (issue 35: faithfulness took the best P of a claim
over every passage checked, the reference's too, when answer correctness ran beside it)."""

from __future__ import annotations

import hashlib
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter import evaluate
from ragmeter.judge import TextLikelihood
from ragmeter.steps import ContextVerdict, Support
from ragmeter.testing import ScriptedEmbeddings, ScriptedJudge

SAMPLE = {
    "user_input": "How long is the AirPods Pro 2 warranty?",
    "response": "The AirPods Pro 2 warranty lasts one year. AppleCare+ extends it to three years.",
    "reference": "The AirPods Pro 2 warranty lasts one year from the date of purchase.",
    "retrieved_contexts": [
        "AirPods Pro 2 come with a one-year limited warranty.",
        "AppleCare+ for headphones extends coverage to two years.",
        "Shops list their opening hours for every city.",
    ],
}
CLAIMS = ["The AirPods Pro 2 warranty lasts one year.", "AppleCare+ extends it to three years."]
STATEMENTS = ["The warranty lasts one year.", "The warranty starts at the date of purchase."]
METRICS = [
    "faithfulness",
    "answer_correctness",
    "context_recall",
    "context_precision",
    "context_relevance",
]


def _data(prompt: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.DOTALL)
    return found.group(1) if found else ""


def _judge(seed: int) -> ScriptedJudge:
    """Likelihoods drawn from ``seed`` and the texts: every verdict a different gain."""

    def responder(messages, schema):
        if schema is TextLikelihood:
            text, scored = _data(messages[-2].content, "text"), messages[-1].content
            digest = hashlib.sha256(f"{seed}|{text}|{scored}".encode()).digest()
            return {"logprob": -3.0 if not text else -6.0 * digest[0] / 255, "tokens": 5}
        out = {}
        if "claims" in schema.model_fields:
            out["claims"] = CLAIMS
        if "questions" in schema.model_fields:
            out |= {"questions": ["How long is the warranty?"], "noncommittal": 0}
        if "statements" in schema.model_fields:
            out["statements"] = [{"text": s, "contexts": []} for s in STATEMENTS]
        return out

    judge = ScriptedJudge(
        responder, likelihood_probability=lambda task, language, gain: 1 / (1 + math.exp(-gain))
    )
    judge.supports_batched_verdicts = False
    return judge


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_no_verdict_contradicts_its_probability(seed: int) -> None:
    outcome = evaluate(
        [SAMPLE], METRICS, judge=_judge(seed), embeddings=ScriptedEmbeddings()
    ).samples[0]
    for name in METRICS:
        assert outcome.scores[name].status == "ok", (name, outcome.scores[name].reason)
    faithfulness = outcome.scores["faithfulness"]
    claims = faithfulness.details["claims"]
    for claim in claims:
        assert claim["supported"] == (claim["p_supported"] >= 0.5), claim
    supported = sum(c["supported"] for c in claims)
    assert faithfulness.score == pytest.approx(sum(c["p_supported"] for c in claims) / len(claims))
    assert faithfulness.score is not None and faithfulness.reason is not None
    assert f"{supported} of {len(claims)} claims" in faithfulness.reason
    if supported == 0:
        assert faithfulness.score < 0.5
    if supported == len(claims):
        assert faithfulness.score >= 0.5
    for name in ("context_precision", "context_relevance"):
        for context in outcome.scores[name].details["contexts"]:
            p = next(v for k, v in context.items() if k.startswith("p_"))
            verdict = context.get("useful", context.get("relevant"))
            assert verdict == (p >= 0.5), (name, context)


def test_a_contradicting_verdict_cannot_be_built() -> None:
    with pytest.raises(ValueError, match="contradict"):
        Support(("a claim",), ("context:1",), ((False,),), ("",), ((0.95,),))
    with pytest.raises(ValueError, match="contradict"):
        ContextVerdict(True, "", 0.2)


def test_a_claims_probability_reads_only_the_passages_asked_about() -> None:
    support = Support(
        ("a claim",), ("reference", "contexts:any"), ((True, False),), ("",), ((0.95, 0.3),)
    )
    assert support.probability(0, {1}) == 0.3
    assert not support.supported(0, {1})
    assert support.probability(0) == 0.95
