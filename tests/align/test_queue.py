"""``next_to_label``: what to label next."""

from __future__ import annotations

import pytest

from ragmeter import evaluate
from ragmeter.align import agreement_on_labels, next_to_label, preference_pairs
from ragmeter.store import Label, sample_key
from tests.align.test_on_labels import WHEN, Judging, key, label, rows

# P(yes) of each sample's one claim, and each sample's score
P_YES = [0.95, 0.52, 0.8, 0.45, 0.6, 0.1, 0.49, 0.3, 0.7, 0.05]
SCORES = [0.9, 0.3, 0.8, 0.2, 0.6, 0.95, 0.1, 0.5, 0.7, 0.4]


def run(tagged: bool = False):
    given: dict = {
        f"q{i}": (SCORES[i], [(f"claim {i}", p >= 0.5, p)], []) for i, p in enumerate(P_YES)
    }
    data = rows(10)
    if tagged:
        for i, row in enumerate(data):
            row["metadata"] = {"lang": "zh" if i < 3 else "en"}
    return evaluate(data, [Judging(given)], progress=False)


def claims(items) -> list[str]:
    return [item.judged.item for item in items]


def test_uncertain_takes_the_verdicts_nearest_one_half_and_leaves_out_what_is_labelled():
    assert claims(next_to_label(run(), "faithfulness", n=4)) == [
        "claim 6",
        "claim 1",
        "claim 3",
        "claim 4",
    ]  # |P - 0.5|: .01 .02 .05 .10
    done = [label(6, "claim", "claim 6", True, "bob")]
    assert claims(next_to_label(run(), "faithfulness", labels=done, n=2)) == ["claim 1", "claim 3"]


def test_uncertain_spreads_over_the_tag_groups():
    picked = next_to_label(run(tagged=True), "faithfulness", n=4, by="lang")
    # en: q6 (.01), q3 (.05), q4 (.10) ...; zh: q1 (.02), q2 (.30), q0 (.45): in turn
    assert claims(picked) == ["claim 6", "claim 1", "claim 3", "claim 2"]
    assert [item.group for item in picked] == ["en", "zh", "en", "zh"]


def test_worst_takes_the_lowest_scored_samples_first():
    assert claims(next_to_label(run(), "faithfulness", n=3, strategy="worst")) == [
        "claim 6",
        "claim 3",
        "claim 1",
    ]  # scores 0.1, 0.2, 0.3
    samples = next_to_label(run(), "faithfulness", n=2, strategy="worst", level="sample")
    assert [(item.judged.level, item.judged.sample_id) for item in samples] == [
        ("sample", "q6"),
        ("sample", "q3"),
    ]


def test_random_is_seeded_and_stratified_by_the_judges_verdict():
    first = next_to_label(run(), "faithfulness", n=4, strategy="random", seed=3)
    again = next_to_label(run(), "faithfulness", n=4, strategy="random", seed=3)
    assert claims(first) == claims(again)
    verdicts = [item.judged.result.details.get("label") for item in first]
    assert sorted(verdicts) == [False, False, True, True]  # 5 yes and 5 no: 2 of each
    other = next_to_label(run(), "faithfulness", n=10, strategy="random", seed=4)
    assert sorted(claims(other)) == sorted(f"claim {i}" for i in range(10))


def test_a_queue_record_is_a_label_to_fill_with_what_the_labeller_reads():
    item = next_to_label(run(), "faithfulness", n=1)[0]
    record = item.to_dict("alice")
    assert record["sample_key"] == key(6) and record["level"] == "claim"
    assert record["item"] == "claim 6" and record["value"] is None
    assert record["metric"] == "faithfulness" and record["labeller"] == "alice"
    assert record["user_input"] == "question 6?" and record["response"] == "answer 6"
    assert record["judge"] == {
        "verdict": False,
        "probability": 0.49,
        "score": None,
        "reason": "why claim 6",
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"strategy": "best"}, "strategy must be one of"),
        ({"n": 0}, "positive integer"),
        ({"level": "answer"}, "level must be one of"),
    ],
)
def test_bad_options_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        next_to_label(run(), "faithfulness", **options)


def answered(version: str, scores: list[float]):
    """A run whose q{i} asks "question {i}?" and answers "{version} answer {i}"."""
    data = rows(len(scores))
    for row in data:
        row["response"] = f"{version} {row['response']}"
    given: dict = {f"q{i}": (s, [], []) for i, s in enumerate(scores)}
    return evaluate(data, [Judging(given)], progress=False)


def test_preference_pairs_put_two_runs_answers_side_by_side_closest_scores_first():
    before = answered("old", [0.2, 0.5, 0.9, 0.4])
    after = answered("new", [0.8, 0.55, 0.3, 0.4])
    found = preference_pairs(after, before, "faithfulness", n=3, seed=1)
    # |after - before| per question: 0.6, 0.05, 0.6, 0.0 -> q3, q1, then q0 (a stable sort)
    assert [r["user_input"] for r in found] == ["question 3?", "question 1?", "question 0?"]
    for record in found:
        answers = {record["response"], record["other_response"]}
        i = record["user_input"].split()[1].rstrip("?")
        assert answers == {f"old answer {i}", f"new answer {i}"}
        assert record["level"] == "preference" and record["value"] is None
        assert record["item"] != record["sample_key"] and "judge" not in record  # blind
    # the A/B order is shuffled: not always the first run's answer first
    firsts = {
        r["response"].split()[0]
        for r in preference_pairs(after, before, "faithfulness", n=4, seed=3)
    }
    assert firsts == {"old", "new"}
    # a pair labelled either way round is left out
    done = Label(
        "q3",
        found[0]["item"],
        "faithfulness",
        "preference",
        found[0]["sample_key"],
        "tie",
        "ana",
        WHEN,
    )
    again = preference_pairs(after, before, "faithfulness", labels=[done], n=3, seed=1)
    assert "question 3?" not in [r["user_input"] for r in again]


def test_preference_labels_across_two_runs_are_measured_with_versus():
    before = answered("old", [0.2, 0.5, 0.9, 0.4])
    after = answered("new", [0.8, 0.55, 0.3, 0.4])
    old, new = ([sample_key(s.sample) for s in run] for run in (before, after))
    labels = [
        Label("q0", new[0], "faithfulness", "preference", old[0], "better", "ana", WHEN),
        Label("q1", new[1], "faithfulness", "preference", old[1], "better", "ana", WHEN),
        Label("q2", new[2], "faithfulness", "preference", old[2], "better", "ana", WHEN),
    ]
    found = agreement_on_labels(after, labels, "faithfulness", versus=before, n_resamples=100)
    m = found.levels["preference"].measurement
    # q0 and q1: the metric also scores the new answer higher; q2: it scores it lower
    assert m.n_compared == 3
    assert m.agreement["preference_agreement"].value == pytest.approx(2 / 3)
    assert [d.sample_id for d in m.disagreements] == ["q2 vs q2@other run"]
    alone = agreement_on_labels(after, labels, "faithfulness", n_resamples=100)
    assert alone.levels["preference"].measurement.n_compared == 0  # the old answers: not in run
