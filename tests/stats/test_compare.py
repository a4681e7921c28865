"""compare(): paired and unpaired comparisons of two runs, Holm, verdicts, direction."""

import json

import numpy as np
import pytest
from scipy import stats

from ragmeter.metrics import Direction
from ragmeter.stats import (
    Comparison,
    Interval,
    bootstrap_ci,
    compare,
    difference_ci,
    holm,
    label_permutation_test,
    min_detectable_effect,
    samples_needed,
    sign_flip_test,
)
from tests.stats._build import (
    DEEPSEEK,
    DEEPSEEK_LABEL,
    GPT,
    GPT_LABEL,
    evaluated,
    judged_config,
    run,
)

RNG = np.random.default_rng(42)
BEFORE = np.clip(RNG.beta(6, 3, size=80), 0, 1)
AFTER = np.clip(BEFORE + RNG.normal(0.06, 0.08, size=80), 0, 1)
FAST = {"n_resamples": 2000}


def comparison(**overrides):
    figures = {
        "metric": "answer_correctness",
        "direction": Direction.HIGHER_IS_BETTER,
        "paired": True,
        "n_baseline": 50,
        "n_candidate": 50,
        "n_pairs": 50,
        "baseline_mean": 0.72,
        "candidate_mean": 0.69,
        "difference": -0.03,
        "ci": Interval(-0.07, 0.01, 0.95, "bca"),
        "p_value": 0.19,
        "p_adjusted": 0.19,
        "test": "sign-flip permutation",
        "effect_size": -0.19,
        "min_detectable_effect": 0.045,
        "samples_needed": 173,
        "alpha": 0.05,
        "level": 0.95,
    }
    return Comparison(**{**figures, **overrides})


# -- verdicts -------------------------------------------------------------------------------
def test_verdict_not_significant_says_how_many_samples_would_do():
    assert comparison().verdict() == (
        "answer_correctness -0.03 (95% CI -0.07 to +0.01, p = 0.19): not significant with 50 "
        "samples; about 180 samples would detect a 0.03 drop."
    )


def test_verdict_significant_says_better_or_worse():
    c = comparison(
        difference=0.05,
        ci=Interval(0.02, 0.08, 0.95, "bca"),
        p_value=0.003,
        p_adjusted=0.003,
        n_pairs=120,
        n_baseline=120,
        n_candidate=120,
    )
    assert c.verdict() == (
        "answer_correctness +0.05 (95% CI +0.02 to +0.08, p = 0.003): significant with 120 "
        "samples, better."
    )
    assert (c.significant, c.change) == (True, "better")


@pytest.mark.parametrize(
    ("direction", "difference", "change"),
    [
        (Direction.HIGHER_IS_BETTER, 0.05, "better"),
        (Direction.HIGHER_IS_BETTER, -0.05, "worse"),
        (Direction.LOWER_IS_BETTER, -0.05, "better"),
        (Direction.LOWER_IS_BETTER, 0.05, "worse"),
    ],
)
def test_change_reads_the_metric_direction(direction, difference, change):
    c = comparison(
        metric="noise_sensitivity", direction=direction, difference=difference, p_adjusted=0.01
    )
    assert c.change == change
    assert c.verdict().endswith(f"significant with 50 samples, {change}.")
    assert comparison(direction=direction, difference=difference).change == "no significant change"


def test_verdict_rise_holm_unpaired_and_rounding():
    rise = comparison(difference=0.03, ci=Interval(-0.01, 0.07, 0.95, "bca"))
    assert rise.verdict().endswith("about 180 samples would detect a 0.03 rise.")
    holm_adjusted = comparison(p_value=0.012, p_adjusted=0.072, samples_needed=None)
    assert "p = 0.012, Holm-adjusted 0.072): not significant with 50 samples." in (
        holm_adjusted.verdict()
    )
    unpaired = comparison(paired=False, n_pairs=0, n_candidate=60, test="permutation (unpaired)")
    assert unpaired.verdict() == (
        "answer_correctness -0.03 (95% CI -0.07 to +0.01, p = 0.19): not significant with 50 "
        "and 60 samples (unpaired: different samples); about 180 samples per run would detect "
        "a 0.03 drop."
    )
    tiny = comparison(difference=-0.0042, ci=Interval(-0.009, 0.0006, 0.9, "bca"), level=0.9)
    assert tiny.verdict().startswith("answer_correctness -0.004 (90% CI -0.009 to +0.001,")


def test_no_plan_when_the_dataset_is_already_large_enough():
    assert comparison(samples_needed=40).verdict().endswith("not significant with 50 samples.")


def test_to_dict_is_json_ready():
    data = json.loads(json.dumps(comparison().to_dict()))
    assert data["direction"] == "higher"
    assert data["ci"] == {"low": -0.07, "high": 0.01, "level": 0.95, "method": "bca"}
    assert (data["significant"], data["change"]) == (False, "no significant change")
    assert data["verdict"].startswith("answer_correctness -0.03")


# -- paired ---------------------------------------------------------------------------------
def test_paired_when_runs_share_sample_ids():
    baseline = run({"answer_correctness": BEFORE})
    candidate = run({"answer_correctness": AFTER})
    (c,) = compare(baseline, candidate, **FAST)
    d = AFTER - BEFORE
    assert (c.paired, c.n_pairs, c.n_baseline, c.n_candidate) == (True, 80, 80, 80)
    assert c.test == "sign-flip permutation"
    assert c.difference == pytest.approx(d.mean())
    assert (c.baseline_mean, c.candidate_mean) == pytest.approx((BEFORE.mean(), AFTER.mean()))
    assert c.ci == bootstrap_ci(d, n_resamples=2000)
    assert c.p_value == c.p_adjusted == sign_flip_test(d, n_resamples=2000)
    assert c.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
    assert c.min_detectable_effect == pytest.approx(min_detectable_effect(d.std(ddof=1), 80))
    assert c.samples_needed == samples_needed(d.mean(), d.std(ddof=1))
    assert (c.significant, c.change) == (True, "better")
    assert c.verdict().startswith("answer_correctness +0.0")
    assert c.verdict().endswith("significant with 80 samples, better.")


def test_paired_on_shared_samples_scored_in_both_in_baseline_order():
    baseline = run({"m": [0.5, 0.6, None, 0.8, 0.9]}, ids=["a", "b", "c", "d", "e"])
    candidate = run({"m": [1.0, 0.7, 0.9, None, 0.4, 0.2]}, ids=["e", "b", "c", "d", "a", "x"])
    (c,) = compare(baseline, candidate, **FAST)
    # Pairs: a (0.5 -> 0.4), b (0.6 -> 0.7), e (0.9 -> 1.0); c and d lack a score in one run.
    assert (c.paired, c.n_pairs, c.n_baseline, c.n_candidate) == (True, 3, 4, 5)
    assert c.baseline_mean == pytest.approx((0.5 + 0.6 + 0.9) / 3)
    assert c.candidate_mean == pytest.approx((0.4 + 0.7 + 1.0) / 3)
    assert c.p_value == sign_flip_test([-0.1, 0.1, 0.1])


def test_wilcoxon_option_uses_scipy():
    (c,) = compare(run({"m": BEFORE}), run({"m": AFTER}), test="wilcoxon", **FAST)
    assert c.test == "wilcoxon"
    assert c.p_value == stats.wilcoxon(AFTER - BEFORE).pvalue


def test_fewer_than_two_pairs_is_not_tested_and_says_why():
    baseline = run({"m": [0.5, None, 0.7]})
    one = compare(baseline, run({"m": [0.6, 0.9, None]}), **FAST)[0]
    assert (one.n_pairs, one.p_value, one.p_adjusted, one.ci) == (1, None, None, None)
    assert one.difference == pytest.approx(0.1)
    assert one.verdict() == (
        "m +0.10 on 1 sample: not tested; a paired comparison needs at least 2 samples scored "
        "in both runs."
    )
    assert one.change == "no significant change"
    none = compare(baseline, run({"m": [None, 0.9, None]}), **FAST)[0]
    assert (none.n_pairs, none.difference, none.baseline_mean) == (0, None, None)
    assert none.verdict() == (
        "m: not compared: no sample was scored in both runs (a paired comparison needs at least 2)."
    )


def test_identical_scores_give_p_one_and_a_zero_ci():
    scores = [0.2, 0.5, 0.9, 0.4]
    (c,) = compare(run({"m": scores}), run({"m": scores}), **FAST)
    assert (c.p_value, c.difference, c.effect_size, c.samples_needed) == (1.0, 0.0, 0.0, None)
    assert (c.ci.low, c.ci.high) == (0.0, 0.0)
    assert c.verdict() == (
        "m +0.00 (95% CI +0.00 to +0.00, p = 1.00): not significant with 4 samples; no sample's "
        "score changed."
    )


# -- unpaired -------------------------------------------------------------------------------
def test_unpaired_when_runs_share_no_sample():
    baseline = run({"m": BEFORE[:50]}, ids=[f"old{i}" for i in range(50)])
    candidate = run({"m": AFTER[30:]}, ids=[f"new{i}" for i in range(50)])
    (c,) = compare(baseline, candidate, **FAST)
    b, a = BEFORE[:50], AFTER[30:]
    assert (c.paired, c.n_pairs, c.n_baseline, c.n_candidate) == (False, 0, 50, 50)
    assert c.test == "permutation (unpaired)"
    assert c.difference == pytest.approx(a.mean() - b.mean())
    assert c.p_value == label_permutation_test(b, a, n_resamples=2000)
    assert c.ci == difference_ci(b, a, n_resamples=2000)
    se = np.sqrt(b.var(ddof=1) / 50 + a.var(ddof=1) / 50)
    assert c.min_detectable_effect == pytest.approx(min_detectable_effect(float(se), 1))
    assert "(unpaired: different samples)" in c.verdict()
    with pytest.raises(ValueError, match="wilcoxon"):
        compare(baseline, candidate, test="wilcoxon")


def test_unpaired_with_too_few_scores_says_why():
    baseline = run({"m": [0.5, 0.6]}, ids=["a", "b"])
    candidate = run({"m": [0.9, None]}, ids=["c", "d"])
    (c,) = compare(baseline, candidate, **FAST)
    assert (c.paired, c.p_value, c.ci) == (False, None, None)
    assert c.verdict() == (
        "m +0.35 (unpaired: different samples): not tested with 2 and 1 scored samples; each "
        "run needs at least 2."
    )


# -- several metrics, tags, store-backed runs -----------------------------------------------
def test_holm_across_the_metrics_of_one_call():
    noise = RNG.normal(0, 0.1, size=80)
    baseline = run({"a": BEFORE, "b": BEFORE, "c": BEFORE})
    candidate = run({"a": AFTER, "b": np.clip(BEFORE + noise, 0, 1), "c": BEFORE + noise / 10})
    results = compare(baseline, candidate, **FAST)
    assert [c.metric for c in results] == ["a", "b", "c"]
    raw = [c.p_value for c in results]
    assert [c.p_adjusted for c in results] == holm(raw)
    alone = compare(baseline, candidate, metrics=["b"], **FAST)[0]
    assert alone.p_adjusted == alone.p_value == raw[1]


def test_lower_is_better_metric_that_drops_is_better():
    baseline = run({"noise_sensitivity": AFTER}, lower_is_better=["noise_sensitivity"])
    candidate = run({"noise_sensitivity": BEFORE}, lower_is_better=["noise_sensitivity"])
    (c,) = compare(baseline, candidate, **FAST)
    assert c.difference < 0 and c.direction is Direction.LOWER_IS_BETTER
    assert c.change == "better" and c.verdict().endswith(", better.")


def test_tag_and_value_restrict_both_runs():
    tags = [{"question_type": "multi-hop" if i % 4 == 0 else "simple"} for i in range(80)]
    baseline = run({"m": BEFORE}, tags=tags)
    candidate = run({"m": AFTER}, tags=tags)
    (c,) = compare(baseline, candidate, tag="question_type", value="multi-hop", **FAST)
    d = (AFTER - BEFORE)[::4]
    assert (c.n_pairs, c.n_baseline) == (20, 20)
    assert c.difference == pytest.approx(d.mean())
    assert c.p_value == sign_flip_test(d, n_resamples=2000)
    with pytest.raises(ValueError, match=r"values of 'question_type': \['multi-hop', 'simple'\]"):
        compare(baseline, candidate, tag="question_type", value="comparison")
    with pytest.raises(ValueError, match="together"):
        compare(baseline, candidate, tag="question_type")


def test_store_backed_runs_from_evaluate():
    ids = [f"q{i}" for i in range(30)]
    tags = [{"lang": ["en", "zh"][i % 2]} for i in range(30)]
    baseline = evaluated({"m": list(BEFORE[:30])}, ids=ids, tags=tags)
    candidate = evaluated({"m": list(AFTER[:30])}, ids=ids, tags=tags)
    in_memory = compare(run({"m": BEFORE[:30]}, ids=ids), run({"m": AFTER[:30]}, ids=ids), **FAST)
    assert compare(baseline, candidate, **FAST) == in_memory
    (zh,) = compare(baseline, candidate, tag="lang", value="zh", **FAST)
    assert zh.n_pairs == 15


def test_the_motivating_question_0_69_vs_0_72_on_50_samples():
    rng = np.random.default_rng(7)
    truth = rng.beta(7, 3, size=50)
    last_week = np.clip(truth + rng.normal(0, 0.15, 50), 0, 1)
    now = np.clip(truth + rng.normal(0.0, 0.15, 50), 0, 1)
    (c,) = compare(run({"answer_correctness": last_week}), run({"answer_correctness": now}))
    assert not c.significant and c.change == "no significant change"
    assert "not significant with 50 samples; about" in c.verdict()


def test_metric_selection_and_bad_arguments():
    baseline, candidate = run({"a": BEFORE, "b": BEFORE}), run({"b": AFTER, "c": AFTER})
    assert [c.metric for c in compare(baseline, candidate, **FAST)] == ["b"]
    with pytest.raises(ValueError, match="no metric"):
        compare(baseline, candidate, metrics=["a"])
    with pytest.raises(ValueError, match="share no metric"):
        compare(run({"a": BEFORE}), run({"c": AFTER}))
    with pytest.raises(ValueError, match="test must be"):
        compare(baseline, candidate, test="t-test")
    with pytest.raises(ValueError, match="alpha"):
        compare(baseline, candidate, alpha=5)
    flipped = run({"b": AFTER}, lower_is_better=["b"])
    with pytest.raises(ValueError, match="opposite directions"):
        compare(baseline, flipped)


def test_samples_paired_by_row_ids_must_ask_the_same_question():
    from ragmeter import evaluate

    before = evaluate([{"user_input": "q1", "response": "a", "reference": "a"}], ["exact_match"])
    after = evaluate([{"user_input": "other", "response": "a", "reference": "a"}], ["exact_match"])
    with pytest.raises(ValueError, match=r"different question.*give every sample an id"):
        compare(before, after)


# -- across judges ---------------------------------------------------------------------------
RETRIEVAL = np.linspace(0.2, 0.9, 80)


def judged_pair(before_judge, after_judge, *, unpaired=False):
    ids = [f"u{i}" for i in range(80)] if unpaired else None
    baseline = run({"faithfulness": BEFORE, "mrr": RETRIEVAL}, config=judged_config(before_judge))
    candidate = run(
        {"faithfulness": AFTER, "mrr": RETRIEVAL + 0.3}, ids=ids, config=judged_config(after_judge)
    )
    return baseline, candidate


@pytest.mark.parametrize("unpaired", [False, True])
def test_no_verdict_on_a_judged_metric_whose_judge_changed(unpaired):
    faith, mrr = compare(*judged_pair(GPT, DEEPSEEK, unpaired=unpaired), **FAST)
    assert faith.not_comparable == f"judge changed ({GPT_LABEL} vs {DEEPSEEK_LABEL})"
    assert (faith.p_value, faith.p_adjusted, faith.ci, faith.effect_size) == (None,) * 4
    assert not faith.significant and faith.change == "not comparable"
    assert faith.baseline_mean == pytest.approx(BEFORE.mean())
    assert faith.verdict().startswith(
        f"faithfulness: not comparable: judge changed ({GPT_LABEL} vs {DEEPSEEK_LABEL}); means "
    )
    assert "no test and no winner" in faith.verdict()
    assert faith.differences == (f"faithfulness: judge differs: {GPT_LABEL} vs {DEEPSEEK_LABEL}",)
    # The retrieval metric has no judge: it still compares, alone in Holm's correction.
    assert mrr.not_comparable is None and mrr.differences == ()
    assert mrr.p_value is not None and mrr.p_adjusted == mrr.p_value and mrr.change == "better"
    data = json.loads(json.dumps(faith.to_dict()))
    assert data["not_comparable"] and data["change"] == "not comparable"


def test_allow_judge_change_compares_and_keeps_the_differences():
    faith, _ = compare(*judged_pair(GPT, DEEPSEEK), allow_judge_change=True, **FAST)
    assert faith.not_comparable is None and faith.change == "better"
    assert faith.differences == (f"faithfulness: judge differs: {GPT_LABEL} vs {DEEPSEEK_LABEL}",)
    assert faith.verdict().startswith("faithfulness +0.")


def test_the_same_judge_or_no_record_compares_as_before():
    for judges in ((GPT, GPT), (None, None), (None, DEEPSEEK)):
        faith, _ = compare(*judged_pair(*judges), **FAST)
        assert faith.not_comparable is None and faith.change == "better"
    faith, _ = compare(*judged_pair(GPT, GPT), **FAST)
    assert faith.differences == ()
    (unknown, _) = compare(*judged_pair(None, DEEPSEEK), **FAST)
    assert unknown.differences[0].startswith("faithfulness: judge unknown: the baseline run")
