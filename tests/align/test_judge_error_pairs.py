"""``judge_error_pairs`` and ``validations``: what the summaries, reports and gate read of a
run's metric from the team's labels (issue 39)."""

from __future__ import annotations

from ragmeter import evaluate
from ragmeter.align import judge_error_pairs, validations
from ragmeter.stats import LabelledPairs, Validation, with_judge_error
from tests.align.test_on_labels import HUMAN, P_YES, Judging, judged_run, label, rows


def share_run():
    """Each sample's score is the share of its two claims the judge supported."""
    given = {
        f"q{i}": ((p >= 0.5) / 2 + 0.5, [(f"claim {i}", p >= 0.5, p), (f"also {i}", True, 0.9)], [])
        for i, p in enumerate(P_YES)
    }
    return evaluate(rows(10), [Judging(given)], progress=False)


def test_claim_labels_of_a_share_of_verdicts_give_verdict_pairs_for_rogan_gladen():
    labels = [label(i, "claim", f"claim {i}", h) for i, h in enumerate(HUMAN)]
    labels.append(label(0, "claim", "claim 0", not HUMAN[0], "bob"))  # split: left out
    found = judge_error_pairs(share_run(), labels, "faithfulness")
    expected = tuple((float(p >= 0.5), float(h)) for p, h in zip(P_YES[1:], HUMAN[1:]))
    assert found == LabelledPairs(expected, "rogan-gladen", "claim")


def test_claim_labels_of_a_score_that_is_no_share_give_no_pairs_and_sample_labels_come_first():
    claims = [label(i, "claim", f"claim {i}", h) for i, h in enumerate(HUMAN)]
    found = judge_error_pairs(judged_run(), claims, "faithfulness")  # scores 0.5 + i / 40
    assert found is not None and found.pairs == () and found.level == "claim"
    assert "not the share of its claim verdicts" in (found.reason or "")
    assert "level sample" in (found.reason or "")  # ...and says what labels would do
    said = with_judge_error(judged_run(), "faithfulness", found)
    assert not said.ok and said.basis == "" and said.reason == found.reason
    samples = [label(i, "sample", None, "pass" if i % 2 else "fail") for i in range(4)]
    found = judge_error_pairs(judged_run(), claims + samples, "faithfulness")
    assert found == LabelledPairs(
        tuple((0.5 + i / 40, float(i % 2)) for i in range(4)), "ppi", "sample"
    )
    assert judge_error_pairs(judged_run(), claims, "other") is None


def test_validations_cover_each_metric_asked_and_not_validated_without_labels():
    run = judged_run()
    labels = [label(i, "claim", f"claim {i}", h) for i, h in enumerate(HUMAN)]
    found = validations(run, labels, ["faithfulness", "missing"], n_resamples=100)
    assert list(found) == ["faithfulness"]  # the run has no metric "missing"
    assert found["faithfulness"].n_labels == 9 and found["faithfulness"].level == "claim"
    assert validations(run, [], ["faithfulness"]) == {"faithfulness": Validation("faithfulness", 0)}
