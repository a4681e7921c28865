"""``agreement_on_labels``: a run's metric against the team's stored labels, per level."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from scipy import stats

from ragmeter import Metric, MetricResult, evaluate
from ragmeter.align import (
    agreement_on_labels,
    judge_error_pairs,
    label_value,
    pairwise_agreement,
    pairwise_counts,
    preference_agreement,
)
from ragmeter.metrics import Requirements
from ragmeter.store import Label, sample_key

WHEN = dt.datetime(2026, 12, 6, 13, 0, tzinfo=dt.timezone.utc)


def kappa(a: list, b: list) -> float:
    """Cohen's kappa by its definition, for the tests' own figures."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b)) / n
    expected = sum((a.count(v) / n) * (b.count(v) / n) for v in set(a) | set(b))
    return (observed - expected) / (1 - expected)


class Judging(Metric):
    """Per sample id: a score, claims (text, verdict, P(yes), reason) and contexts."""

    name = "faithfulness"
    requires: Requirements = ()

    def __init__(self, given: dict) -> None:
        self.given = given

    def score(self, sample):
        found = self.given[sample.id]
        if found is None:
            raise RuntimeError("the judge timed out")
        score, claims, contexts = found
        return MetricResult.ok(
            score,
            reason=f"judged {sample.id}",
            claims=[
                {"claim": t, "supported": v, "p_supported": p, "reason": f"why {t}"}
                for t, v, p in claims
            ],
            contexts=[
                {"rank": i + 1, "useful": v, "p_useful": p, "reason": ""}
                for i, (v, p) in enumerate(contexts)
            ],
        )


def rows(n: int) -> list[dict]:
    return [
        {
            "id": f"q{i}",
            "user_input": f"question {i}?",
            "response": f"answer {i}",
            "retrieved_contexts": [f"context {i}", "other"],
        }
        for i in range(n)
    ]


def key(i: int) -> str:
    return sample_key(
        {
            "user_input": f"question {i}?",
            "response": f"answer {i}",
            "retrieved_contexts": [f"context {i}", "other"],
        }
    )


def label(i: int, level: str, item, value, labeller: str = "alice", **extra) -> Label:
    return Label(
        f"q{i}",
        key(i),
        extra.pop("metric", "faithfulness"),
        level,
        item,
        value,
        labeller,
        extra.pop("created_at", WHEN),
        extra.pop("note", ""),
    )


# Claim verdicts of the judge (P(yes)) and the people's labels, 10 samples with 1 claim each.
P_YES = [0.95, 0.9, 0.8, 0.7, 0.6, 0.4, 0.35, 0.3, 0.2, 0.1]
HUMAN = [True, True, False, True, True, False, True, False, False, False]


def judged_run():
    given = {
        f"q{i}": (
            0.5 + i / 40,
            [(f"claim {i}", p >= 0.5, p)],
            [(i % 2 == 0, 0.8 if i % 2 == 0 else 0.3), (False, 0.1)],
        )
        for i, p in enumerate(P_YES)
    }
    given["q9"] = None  # failed: its labels are not scored, and listed
    return evaluate(rows(10), [Judging(given)], progress=False)


def test_claim_labels_are_measured_against_the_judges_verdicts_and_p_yes():
    labels = [label(i, "claim", f"claim {i}", h) for i, h in enumerate(HUMAN)]
    found = agreement_on_labels(judged_run(), labels, "faithfulness", n_resamples=200)
    claims = found.levels["claim"]
    m = claims.measurement
    scored = range(9)  # q9 failed
    human = [HUMAN[i] for i in scored]
    judge = [P_YES[i] >= 0.5 for i in scored]
    assert m.n_compared == 9 and len(m.sample_ids) == 10
    assert m.agreement["accuracy"].value == pytest.approx(
        np.mean([h == j for h, j in zip(human, judge)])
    )
    assert m.agreement["cohen_kappa"].value == pytest.approx(kappa(human, judge))
    p = [P_YES[i] for i in scored]
    assert m.agreement["spearman"].value == pytest.approx(stats.spearmanr(human, p).statistic)
    positives = [x for x, h in zip(p, human) if h]
    negatives = [x for x, h in zip(p, human) if not h]
    auc = stats.mannwhitneyu(positives, negatives).statistic / (len(positives) * len(negatives))
    assert m.agreement["pairwise_agreement"].value == pytest.approx(auc)
    assert all(a.ci is not None for a in m.agreement.values())
    # human True: the judge says yes on q0 q1 q3 q4, no on q6; human False: yes on q2 only
    assert m.confusion == {"True": {"True": 4, "False": 1}, "False": {"True": 1, "False": 3}}
    # the worst first: the judge surest of the wrong answer (P 0.8 for q2, which is false)
    # (gap 0.8), then q6 (true, P 0.35: gap 0.65)
    assert [d.sample_id for d in m.disagreements] == ['q2 claim "claim 2"', 'q6 claim "claim 6"']
    assert m.disagreements[0].reason == "why claim 2"
    assert [(u.sample_id, u.status) for u in m.unscored] == [('q9 claim "claim 9"', "failed")]
    assert "the judge timed out" in m.unscored[0].message


def test_context_and_sample_labels_are_measured_at_their_own_level():
    contexts = [label(i, "context", 0, i % 3 != 0) for i in range(9)]  # judge: useful if even
    samples = [label(i, "sample", None, s) for i, s in enumerate([0.5, 0.6, 0.7, 0.9, 0.55, 0.8])]
    found = agreement_on_labels(judged_run(), contexts + samples, "faithfulness", n_resamples=200)
    ctx = found.levels["context"].measurement
    human = [i % 3 != 0 for i in range(9)]
    judge = [i % 2 == 0 for i in range(9)]
    assert found.levels["context"].kind == "discrete"
    assert ctx.agreement["cohen_kappa"].value == pytest.approx(kappa(human, judge))
    sample = found.levels["sample"]
    assert sample.kind == "numeric" and list(sample.measurement.agreement) == [
        "spearman",
        "pairwise_agreement",
    ]
    scores = [0.5 + i / 40 for i in range(6)]
    expected = stats.spearmanr([0.5, 0.6, 0.7, 0.9, 0.55, 0.8], scores).statistic
    assert sample.measurement.agreement["spearman"].value == pytest.approx(expected)
    assert found.validation.level == "sample" and found.validation.n_labels == 6


def test_pass_fail_sample_labels_compare_the_verdict_at_one_half():
    words = ["pass", "fail", "yes", "no", "pass", "fail", "pass", "fail", "pass"]
    labels = [label(i, "sample", None, w) for i, w in enumerate(words)]
    found = agreement_on_labels(judged_run(), labels, "faithfulness", n_resamples=200)
    m = found.levels["sample"].measurement
    assert found.levels["sample"].kind == "discrete"
    human = [w in ("pass", "yes") for w in words]
    judge = [0.5 + i / 40 >= 0.5 for i in range(9)]  # every score is at least 0.5
    assert m.agreement["accuracy"].value == pytest.approx(
        np.mean([h == j for h, j in zip(human, judge)])
    )
    # the judge passes everything: no agreement beyond chance
    assert m.agreement["cohen_kappa"].value == pytest.approx(kappa(human, judge)) == 0.0


def test_items_the_run_did_not_score_are_counted_and_listed_never_dropped():
    other = Label("z1", "0" * 16, "faithfulness", "claim", "c", True, "alice", WHEN)
    labels = [
        label(0, "claim", "claim 0", True),
        label(1, "claim", "a claim the judge never saw", True),
        label(9, "claim", "claim 9", False),
        other,
        label(0, "claim", "claim 0", True, metric="context_precision"),  # another metric's
    ]
    found = agreement_on_labels(judged_run(), labels, "faithfulness", n_resamples=100)
    m = found.levels["claim"].measurement
    assert found.n_labels == 4 and len(m.sample_ids) == 4 and m.n_compared == 1
    statuses = sorted(u.status for u in m.unscored)
    assert statuses == ["failed", "not_in_run", "not_judged"]
    assert "not_in_run" in found.summary()


def test_several_labellers_are_compared_with_each_other_and_their_majority_with_the_judge():
    labels = []
    for i, h in enumerate(HUMAN[:9]):
        labels.append(label(i, "claim", f"claim {i}", h, "alice"))
        labels.append(label(i, "claim", f"claim {i}", h if i % 4 else not h, "bob"))
        labels.append(label(i, "claim", f"claim {i}", h, "carol"))
    # alice changed her mind on q0 later: her latest label counts, wherever it comes
    labels.insert(
        0,
        label(
            0, "claim", "claim 0", not HUMAN[0], "alice", created_at=WHEN + dt.timedelta(hours=1)
        ),
    )
    found = agreement_on_labels(judged_run(), labels, "faithfulness", n_resamples=100)
    claims = found.levels["claim"]
    assert claims.n_shared == 9 and claims.labellers is not None
    alice = [not HUMAN[0], *HUMAN[1:9]]
    bob = [h if i % 4 else not h for i, h in enumerate(HUMAN[:9])]
    carol = list(HUMAN[:9])
    first = alice + alice + bob  # pairs (alice, bob), (alice, carol), (bob, carol)
    second = bob + carol + carol
    assert claims.labellers.value == pytest.approx(kappa(first, second))
    # q0: alice and bob now say not-true, carol true -> majority not-true; others as HUMAN
    majority = [not HUMAN[0], *HUMAN[1:9]]
    majority[4] = HUMAN[4]  # bob alone differs on q4 and q8
    judge = [p >= 0.5 for p in P_YES[:9]]
    assert claims.measurement.agreement["cohen_kappa"].value == pytest.approx(
        kappa(majority, judge)
    )


def test_an_even_split_between_labellers_is_listed_not_guessed():
    labels = [
        label(0, "claim", "claim 0", True, "alice"),
        label(0, "claim", "claim 0", False, "bob"),
    ]
    found = agreement_on_labels(judged_run(), labels, "faithfulness", n_resamples=100)
    m = found.levels["claim"].measurement
    assert m.n_compared == 0 and [u.status for u in m.unscored] == ["labellers_split"]
    assert found.validation.describe() == "not validated on your data"


def test_the_validation_line_gives_the_headline_with_its_interval():
    labels = [label(i, "claim", f"claim {i}", h) for i, h in enumerate(HUMAN)]
    found = agreement_on_labels(judged_run(), labels, "faithfulness", n_resamples=300)
    headline = found.levels["claim"].measurement.agreement["cohen_kappa"]
    assert headline.ci is not None
    assert found.validation.describe() == (
        f"validated on 9 of your labels (claim level): kappa {headline.value:.2f} "
        f"[{headline.ci.low:.2f}, {headline.ci.high:.2f}]"
    )
    assert found.to_dict()["validation"]["text"] == found.validation.describe()


def test_a_metric_the_run_does_not_have_is_refused():
    with pytest.raises(ValueError, match="no metric 'answer_relevancy'"):
        agreement_on_labels(judged_run(), [], "answer_relevancy")


def test_pairwise_agreement_counts_ties_half_on_any_labels():
    human = [1, 2, 3, 3, 5]
    metric = [0.1, 0.4, 0.4, 0.2, 0.9]
    pairs = [(i, j) for i in range(5) for j in range(5) if human[i] > human[j]]
    same = sum(metric[i] > metric[j] for i, j in pairs)
    tied = sum(metric[i] == metric[j] for i, j in pairs)
    assert pairwise_counts(human, metric) == (len(pairs), same, tied)
    assert pairwise_agreement(human, metric) == pytest.approx((same + tied / 2) / len(pairs))


def test_the_validation_is_the_first_level_with_a_defined_headline():
    labels = [label(i, "claim", f"claim {i}", h) for i, h in enumerate(HUMAN)]
    labels.append(label(1, "sample", None, "pass"))  # one sample label: kappa undefined
    found = agreement_on_labels(judged_run(), labels, "faithfulness", n_resamples=100)
    assert found.levels["sample"].headline.value is None
    assert found.validation.level == "claim" and found.validation.n_labels == 9


# -- preferences between two samples --------------------------------------------------------

#: Scores of q0..q9 (q9 fails), for the preference tests.
SCORES = [0.5, 0.5, 0.9, 0.2, 0.6, 0.7, 0.3, 0.8, 0.4, None]


def scored_run():
    given = {
        f"q{i}": None if s is None else (s, [(f"claim {i}", True, 0.9)], [])
        for i, s in enumerate(SCORES)
    }
    return evaluate(rows(10), [Judging(given)], progress=False)


def prefer(i: int, j: int, value: str, labeller: str = "alice") -> Label:
    """``q{i}`` is ``value`` (better, worse, tie) than ``q{j}``."""
    return Label(f"q{i}", key(i), "faithfulness", "preference", key(j), value, labeller, WHEN)


def test_preferences_are_measured_against_the_order_of_the_two_scores():
    labels = [
        prefer(0, 1, "better"),  # the metric scores them level (0.5, 0.5): half
        prefer(2, 3, "better"),  # 0.9 > 0.2: agrees
        prefer(4, 5, "better"),  # 0.6 < 0.7: disagrees
        prefer(6, 7, "worse"),  # q7 better, written from q6: 0.8 > 0.3 agrees
        prefer(8, 9, "better"),  # q9 failed: listed, not compared
        prefer(2, 4, "tie"),  # people saw no difference: listed, not compared
    ]
    found = agreement_on_labels(scored_run(), labels, "faithfulness", n_resamples=200)
    level = found.levels["preference"]
    m = level.measurement
    assert level.kind == "preference" and level.n_labels == 6
    assert m.n_compared == 4 and len(m.sample_ids) == 6
    headline = m.agreement["preference_agreement"]
    assert headline.value == pytest.approx((0.5 + 1 + 0 + 1) / 4)
    assert sorted((u.sample_id, u.status) for u in m.unscored) == [
        ("q2 vs q4", "tie"),
        ("q8 vs q9", "failed"),
    ]
    # the disagreement first, then the level pair; each says who people preferred
    assert [(d.sample_id, d.human_label) for d in m.disagreements] == [
        ("q4 vs q5", "q4 better"),
        ("q0 vs q1", "q0 better"),
    ]
    assert found.validation.describe().startswith(
        f"validated on 4 of your labels (preference level): preference agreement "
        f"{headline.value:.2f} ["
    )
    summary = found.summary()
    assert "q4 vs q5: human q4 better, metric q4 0.6, q5 0.7" in summary
    assert "q2 vs q4 (tie)" in summary


def test_one_comparison_written_both_ways_by_two_people_is_one_target():
    labels = [prefer(2, 3, "better", "alice"), prefer(3, 2, "worse", "bob")]
    found = agreement_on_labels(scored_run(), labels, "faithfulness", n_resamples=100)
    level = found.levels["preference"]
    assert level.measurement.n_compared == 1 and level.n_shared == 1
    split = [prefer(2, 3, "better", "alice"), prefer(3, 2, "better", "bob")]
    m = agreement_on_labels(scored_run(), split, "faithfulness").levels["preference"].measurement
    assert m.n_compared == 0 and [u.status for u in m.unscored] == ["labellers_split"]


def test_preference_agreement_counts_a_level_score_half():
    assert preference_agreement([1, 0, 1, 0], [0.3, -0.1, 0.0, 0.2]) == pytest.approx(2.5 / 4)
    assert label_value("preference", " WORSE ") == "worse"


def test_preference_labels_give_no_interval_with_judge_error_and_say_why():
    pairs = judge_error_pairs(scored_run(), [prefer(2, 3, "better")], "faithfulness")
    assert pairs is not None and pairs.pairs == () and pairs.level == "preference"
    assert "label whole samples" in (pairs.reason or "")
