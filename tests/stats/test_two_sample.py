"""The unpaired two-sample comparison a monitor window is tested with."""

import pytest

from ragmeter.stats import two_sample_test


def test_separated_groups_give_the_exact_permutation_p_value():
    # 4 + 4 scores: C(8, 4) = 70 relabellings; only the observed split and its mirror are
    # as extreme, so p = 2 / 70.
    t = two_sample_test([0.8, 0.9, 0.85, 0.95], [0.4, 0.5, 0.45, 0.55])
    assert t.p_value == pytest.approx(2 / 70)
    assert t.baseline_mean == pytest.approx(0.875)
    assert t.candidate_mean == pytest.approx(0.475)
    assert t.difference == pytest.approx(-0.4)
    assert t.ci.low < -0.3 and t.ci.high < 0  # the whole interval is a drop
    assert t.n_baseline == 4 and t.n_candidate == 4
    assert "unpaired" in t.test


def test_identical_groups_are_no_change():
    t = two_sample_test([0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
    assert t.p_value == 1.0 and t.difference == 0.0
    assert (t.ci.low, t.ci.high) == (0.0, 0.0)


def test_overlapping_groups_are_not_significant():
    t = two_sample_test([0.2, 0.8, 0.5, 0.6, 0.4], [0.3, 0.7, 0.5, 0.55, 0.45], n_resamples=2000)
    assert t.p_value > 0.5
    assert t.ci.low < 0 < t.ci.high


def test_too_few_scores_is_a_clear_error():
    with pytest.raises(ValueError, match="at least 2 scores per group"):
        two_sample_test([0.5], [0.4, 0.6])
