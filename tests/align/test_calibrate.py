"""``calibrate_on_labels``: the team's claim / context labels lined up with a run's verdicts
and a verdict calibration fitted on them (what ``ragmeter calibrate fit`` calls)."""

from __future__ import annotations

import pytest

from ragmeter.align import calibrate_on_labels, labelled_verdicts
from ragmeter.judge import CalibrationError, fit_calibration
from tests.align.test_on_labels import HUMAN, P_YES, judged_run, key, label


def test_claim_and_context_labels_pair_with_the_verdicts_they_name():
    claims = [label(i, "claim", f"claim {i}", h) for i, h in enumerate(HUMAN)]
    contexts = [label(i, "context", 0, i % 4 == 0) for i in range(6)]
    noise = [label(0, "claim", "a claim the run never made", True), label(1, "sample", None, 1.0)]
    found = labelled_verdicts(judged_run(), claims + contexts + noise)
    # q9 failed: its claim has no verdict; the sample label is no claim/context label.
    assert found.pairs["supported"] == [(p, h) for p, h in zip(P_YES[:9], HUMAN[:9])]
    useful_p = [0.8 if i % 2 == 0 else 0.3 for i in range(6)]
    assert found.pairs["useful"] == [(p, i % 4 == 0) for i, p in enumerate(useful_p)]
    assert found.groups["supported"] == [key(i) for i in range(9)]
    assert (found.matched, found.n_labels) == (15, 17)
    assert labelled_verdicts(judged_run(), claims, metrics=["other"]).matched == 0


def test_the_fit_is_the_judge_packages_fit_on_those_pairs():
    claims = [label(i, "claim", f"claim {i}", h) for i, h in enumerate(HUMAN)]
    calibration, cv, used = calibrate_on_labels(judged_run(), claims, folds=3, fitted_on="t")
    pairs = {"supported": [(p, h) for p, h in zip(P_YES[:9], HUMAN[:9])]}
    groups = {"supported": [key(i) for i in range(9)]}
    expected, expected_cv = fit_calibration(pairs, folds=3, groups=groups, fitted_on="t")
    assert calibration == expected and cv == expected_cv
    assert used.matched == 9


def test_labels_that_match_no_verdict_are_an_error_saying_what_to_label():
    unmatched = [label(0, "claim", "never said", True)]
    with pytest.raises(CalibrationError, match="none of the 1 claim/context labels matches"):
        calibrate_on_labels(judged_run(), unmatched)
