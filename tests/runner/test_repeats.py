"""Judge-noise runs: every sample judged R times, each repeat cached apart."""

import itertools

import pytest

from ragmeter import evaluate
from ragmeter.judge import SQLiteCache
from ragmeter.metrics import MetricResult, Status
from ragmeter.runner import combine_repeats
from ragmeter.testing import ScriptedJudge
from tests.metrics.llm import scripts
from tests.runner._fakes import samples


def noisy_judge(cache=None):
    """The scripted answers, except that every other verify call finds nothing supported."""
    flips = itertools.count()

    def answer(messages, schema):
        out = scripts.answer(messages, schema)
        if schema.__name__.startswith("VerifySupport") and next(flips) % 2:
            out["support"] = [{**item, "passages": []} for item in out["support"]]
        return out

    return ScriptedJudge(answer, cache=cache)


def test_each_repeat_is_judged_and_the_score_is_their_mean(tmp_path):
    judge = noisy_judge(cache=SQLiteCache(tmp_path / "cache.db"))
    result = evaluate(samples(4), ["faithfulness", "rouge_l"], judge=judge, repeats=2)
    assert len(judge.calls) == 4 * 2 * 2  # claims and verify, per sample and repeat
    per_repeat = result.repeat_scores("faithfulness")
    assert all(sorted(r) == [0.0, pytest.approx(2 / 3)] for r in per_repeat)
    assert result.scores("faithfulness") == [pytest.approx(1 / 3)] * 4
    assert result.repeat_scores("rouge_l") == [[s] for s in result.scores("rouge_l")]
    assert result.config["repeats"] == 2
    # Run again: every repeat's answers come from the cache, none is shared between repeats.
    again = noisy_judge(cache=SQLiteCache(tmp_path / "cache.db"))
    evaluate(samples(4), ["faithfulness"], judge=again, repeats=2)
    assert again.calls == []


def test_repeats_must_match_on_resume(tmp_path):
    evaluate(samples(1), ["faithfulness"], judge=scripts.judge(), run_dir=tmp_path / "r")
    with pytest.raises(ValueError, match="repeats"):
        evaluate(
            samples(1),
            ["faithfulness"],
            judge=scripts.judge(),
            run_dir=tmp_path / "r",
            resume=True,
            repeats=3,
        )


def test_combining_repeats_keeps_failures_visible():
    failed = MetricResult.failed("timeout")
    assert combine_repeats([failed, MetricResult.ok(0.5, "r")]).score == 0.5
    both = combine_repeats([failed, failed])
    assert both.status is Status.FAILED and both.details["repeats"] == [None, None]


def test_probabilistic_verdicts_measure_less_judge_noise():
    from ragmeter.judge import BinaryVerdict
    from ragmeter.stats import judge_noise

    flips = itertools.count()

    def answer(messages, schema):
        if schema is BinaryVerdict:  # a judge torn on every claim: its yes/no flips
            return {"verdict": next(flips) % 2}
        return scripts.answer(messages, schema)

    def probability(output):
        if not isinstance(output, BinaryVerdict):
            return None
        return [0.55 if output.verdict else 0.45]

    judge = ScriptedJudge(answer, probabilities=probability)
    judge.supports_batched_verdicts = False
    result = evaluate(samples(8), ["faithfulness"], judge=judge, repeats=3)
    details = result.samples[0].scores["faithfulness"].details
    # two claims torn between 0.45 and 0.55; the third states "3 年", which no context holds:
    # P 0 in every repeat, decided without the judge
    assert all(0.9 / 3 <= p <= 1.1 / 3 for p in details["soft_repeats"])
    assert [c["p_supported"] for c in details["claims"]][2] == 0.0
    noise = judge_noise(result)["faithfulness"]
    assert noise.probabilistic is not None
    assert noise.probabilistic.within_variance < noise.within_variance / 10
    assert "less judge variance" in noise.summary()
