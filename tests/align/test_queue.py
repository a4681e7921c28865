"""``next_to_label``: what to label next."""

from __future__ import annotations

import pytest

from ragmeter import evaluate
from ragmeter.align import next_to_label
from tests.align.test_on_labels import Judging, key, label, rows

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
