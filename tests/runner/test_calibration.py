"""A run with a verdict calibration: every judge's verdict P(yes) goes through it after the
judge's own, the verdict is P >= 0.5 of the calibrated value, the run record names it, and the
judge's answers stay cached under the same keys (a calibration changes no answer)."""

from __future__ import annotations

import math

import pytest

from ragmeter import evaluate
from ragmeter.judge import (
    BinaryVerdict,
    CalibrationError,
    MemoryCache,
    TaskCalibration,
    VerdictCalibration,
    save_calibration,
)
from ragmeter.testing import ScriptedJudge

SAMPLE = {
    "user_input": "How long is the AirPods Pro 2 warranty?",
    "response": "The warranty lasts one year. AppleCare+ extends it to three years.",
    "retrieved_contexts": ["AirPods Pro 2 come with a one-year limited warranty."],
}
CLAIMS = ["AirPods Pro 2 warranty lasts one year.", "AppleCare+ extends it to three years."]
#: The judge's P(yes) for each claim: "one year" 0.7, the other 0.4.
P_YES = {CLAIMS[0]: 0.7, CLAIMS[1]: 0.4}


def _judge(name: str = "scripted", cache=None) -> ScriptedJudge:
    """A yes/no judge answering each claim's verdict with P(yes) from ``P_YES``."""
    last: dict[str, float] = {}

    def respond(messages, schema):
        if schema is BinaryVerdict:
            text = "\n".join(m.content for m in messages)
            claim = next(c for c in CLAIMS if c in text)
            last["p"] = P_YES[claim]
            return {"verdict": 1 if P_YES[claim] >= 0.5 else 0}
        return {"claims": CLAIMS}

    judge = ScriptedJudge(
        respond,
        name=name,
        cache=cache,
        probabilities=lambda out: [last["p"]] if isinstance(out, BinaryVerdict) else None,
    )
    judge.supports_batched_verdicts = False
    return judge


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


#: Shifts the logit of P(yes) by -1: 0.7 -> 0.46 (a no), 0.4 -> 0.20.
SHIFT = VerdictCalibration(
    "platt", {"supported": TaskCalibration("platt", 1.0, -1.0)}, judge="kind=scripted name=scripted"
)


def claims_of(result):
    return result.samples[0].scores["faithfulness"].details["claims"]


def test_verdicts_are_decided_on_the_calibrated_probability() -> None:
    plain = claims_of(evaluate([SAMPLE], ["faithfulness"], judge=_judge()))
    assert [c["supported"] for c in plain] == [True, False]
    calibrated = evaluate([SAMPLE], ["faithfulness"], judge=_judge(), calibration=SHIFT)
    claims = claims_of(calibrated)
    expected = [sigmoid(math.log(0.7 / 0.3) - 1), sigmoid(math.log(0.4 / 0.6) - 1)]
    assert [c["p_supported"] for c in claims] == pytest.approx(expected)
    assert [c["supported"] for c in claims] == [False, False]
    recorded = calibrated.config["judges"]["faithfulness"]["verdict_calibration"]
    assert recorded == SHIFT.label and SHIFT.content_hash in recorded


def test_likelihood_verdicts_go_through_it_after_the_judges_own() -> None:
    from ragmeter.judge import TextLikelihood

    def respond(messages, schema):
        if schema is TextLikelihood:
            return {"logprob": -1.0, "tokens": 3}
        return {"claims": CLAIMS[:1]}

    def make():
        judge = ScriptedJudge(respond, likelihood_probability=lambda t, lang, gain: 0.6)
        judge.supports_batched_verdicts = False
        return judge

    result = evaluate([SAMPLE], ["faithfulness"], judge=make(), calibration=SHIFT)
    claims = claims_of(result)
    assert claims and all(
        c["p_supported"] == pytest.approx(sigmoid(math.log(0.6 / 0.4) - 1)) for c in claims
    )
    assert not any(c["supported"] for c in claims)


def test_no_answer_is_asked_again_under_a_calibration() -> None:
    cache = MemoryCache()
    first = _judge(cache=cache)
    evaluate([SAMPLE], ["faithfulness"], judge=first)
    asked = first.n_calls
    again = _judge(cache=cache)
    evaluate([SAMPLE], ["faithfulness"], judge=again, calibration=SHIFT)
    assert asked > 0 and again.n_calls == 0


def test_uncalibrated_runs_record_none() -> None:
    result = evaluate([SAMPLE], ["faithfulness"], judge=_judge())
    assert "verdict_calibration" not in result.config["judges"]["faithfulness"]


def test_a_calibration_for_another_judge_is_refused_unless_forced() -> None:
    with pytest.raises(CalibrationError, match=r"fitted for judge 'kind=scripted name=scripted'"):
        evaluate([SAMPLE], ["faithfulness"], judge=_judge("other"), calibration=SHIFT)
    forced = evaluate(
        [SAMPLE], ["faithfulness"], judge=_judge("other"), calibration=SHIFT, force_calibration=True
    )
    assert [c["supported"] for c in claims_of(forced)] == [False, False]


def test_a_saved_calibration_is_used_by_name(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    save_calibration(SHIFT, "team")
    result = evaluate([SAMPLE], ["faithfulness"], judge=_judge(), calibration="team")
    assert result.config["judges"]["faithfulness"]["verdict_calibration"].startswith("team@v1 ")
    with pytest.raises(CalibrationError, match=r"no calibration named 'nope'.*team"):
        evaluate([SAMPLE], ["faithfulness"], judge=_judge(), calibration="nope")


def test_a_run_is_not_resumed_under_another_calibration(tmp_path) -> None:
    run = tmp_path / "run"
    evaluate([SAMPLE], ["faithfulness"], judge=_judge(), run_dir=run)
    saved = save_calibration(SHIFT, "team", root=tmp_path / "cal")[0]
    with pytest.raises(ValueError, match="verdict calibration none, now team@v1"):
        evaluate(
            [SAMPLE], ["faithfulness"], judge=_judge(), run_dir=run, resume=True, calibration=saved
        )
    calibrated = tmp_path / "calibrated"
    evaluate([SAMPLE], ["faithfulness"], judge=_judge(), run_dir=calibrated, calibration=saved)
    with pytest.raises(ValueError, match=r"verdict calibration team@v1 .*, now none"):
        evaluate([SAMPLE], ["faithfulness"], judge=_judge(), run_dir=calibrated, resume=True)
