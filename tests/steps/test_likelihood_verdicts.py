"""Likelihood verdicts: a judge that scores likelihoods (the embedded one) decides each
verdict from how much the evidence raises the claim's likelihood, reading only the sentences
of a long context that bear on the claim."""

from __future__ import annotations

import math
import re

import pytest

from ragmeter import evaluate
from ragmeter.judge import TextLikelihood
from ragmeter.testing import ScriptedJudge
from tests.metrics.llm import scripts

FILLER = "Shops list their opening hours for every city. " * 12
CONTEXT = (
    "AirPods Pro 2 come with a one-year limited warranty. "
    + FILLER
    + "AppleCare+ for headphones extends coverage to two years."
)
SAMPLE = {
    "user_input": "How long is the AirPods Pro 2 warranty?",
    "response": "The warranty lasts one year. AppleCare+ extends it to three years.",
    "retrieved_contexts": [CONTEXT],
}
CLAIMS = ["AirPods Pro 2 warranty lasts one year.", "AppleCare+ extends it to three years."]


def data(prompt: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.DOTALL)
    assert found, tag
    return found.group(1)


def responder(messages, schema):
    if schema is TextLikelihood:
        text = data(messages[-2].content, "text")
        scored = messages[-1].content
        if not text:
            return {"logprob": -3.0, "tokens": 5}
        # The evidence raises the first claim's likelihood a lot, the second's a little.
        return {
            "logprob": -0.5 if "one-year" in text and "one year" in scored else -2.5,
            "tokens": 5,
        }
    return {"claims": CLAIMS}


def logistic(task: str, language: str, gain: float) -> float:
    assert (task, language) == ("supported", "en")
    return 1 / (1 + math.exp(-(2.0 * gain - 2.0)))


def likelihood_judge() -> ScriptedJudge:
    judge = ScriptedJudge(responder, likelihood_probability=logistic)
    judge.supports_batched_verdicts = False
    return judge


def test_faithfulness_scores_the_mean_calibrated_probability() -> None:
    judge = likelihood_judge()
    outcome = evaluate([SAMPLE], ["faithfulness"], judge=judge).samples[0].scores["faithfulness"]
    p_first, p_second = logistic("supported", "en", 2.5), logistic("supported", "en", 0.5)
    assert outcome.score == pytest.approx((p_first + p_second) / 2)
    assert [c["supported"] for c in outcome.details["claims"]] == [True, False]
    assert outcome.details["verdict_score"] == 0.5


def test_each_claim_is_checked_against_its_evidence_not_the_whole_context() -> None:
    judge = likelihood_judge()
    evaluate([SAMPLE], ["faithfulness"], judge=judge)
    scored = [c for c in judge.calls if c.schema is TextLikelihood]
    # per claim: one call with its evidence, one with an empty text
    assert len(scored) == 4
    texts = {data(c.messages[-2].content, "text") for c in scored}
    assert "" in texts
    assert all("opening hours" not in t for t in texts)
    assert "AirPods Pro 2 come with a one-year limited warranty." in texts
    assert "AppleCare+ for headphones extends coverage to two years." in texts


def test_verdict_counting_stays_the_score_for_judges_without_likelihoods() -> None:
    result = evaluate([scripts.SAMPLE], ["faithfulness"], judge=scripts.judge())
    assert result.scores("faithfulness")[0] == pytest.approx(2 / 3)


def relevance_responder(messages, schema):
    assert schema is TextLikelihood
    text = data(messages[-2].content, "text")
    assert messages[-1].content == SAMPLE["user_input"]  # the question is what is scored
    if not text:
        return {"logprob": -3.0, "tokens": 9}
    return {"logprob": -1.0 if "warranty" in text else -3.5, "tokens": 9}


def test_context_relevance_scores_the_mean_p_relevant_and_shares_the_baseline() -> None:
    judge = ScriptedJudge(
        relevance_responder,
        likelihood_probability=lambda task, lang, g: 1 / (1 + math.exp(-(g - 1))),
    )
    judge.supports_batched_verdicts = False
    sample = {
        "user_input": SAMPLE["user_input"],
        "retrieved_contexts": ["The warranty lasts one year.", "Shops open at nine."],
    }
    outcome = (
        evaluate([sample], ["context_relevance"], judge=judge)
        .samples[0]
        .scores["context_relevance"]
    )
    p_relevant, p_other = 1 / (1 + math.exp(-1.0)), 1 / (1 + math.exp(1.5))
    assert outcome.score == pytest.approx((p_relevant + p_other) / 2)
    assert outcome.details["verdict_score"] == 0.5
    # two passages, one shared "without evidence" score
    assert len(judge.calls) == 3
