"""One sample's extreme grades fail that sample with a reason, never its whole batch."""

from __future__ import annotations

import math
import warnings

import pytest

import ragmeter
from ragmeter import Dataset, Sample, Status
from ragmeter.metrics import BatchContext, get_metric

RANKING = ["precision@3", "recall@3", "f1@3", "hit@3", "mrr", "map", "ndcg@3", "ndcg_exp@3"]

GOOD = [
    Sample(id="g1", retrieved_context_ids=["a", "b", "c"], relevance={"a": 3, "c": 1}),
    Sample(id="g2", retrieved_context_ids=["x", "y"], reference_context_ids=["y"]),
    Sample(id="g3", retrieved_context_ids=["p", "q", "r"], relevance={"r": 2, "s": 1}),
]


def _score(metric: str, samples: list[Sample]) -> list[ragmeter.MetricResult]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow warning escapes either
        return get_metric(metric).score_batch(samples, BatchContext())


def _with_bad(bad: Sample) -> list[Sample]:
    return [GOOD[0], bad, GOOD[1], GOOD[2]]


def test_a_grade_too_large_for_exponential_gain_fails_only_its_sample():
    bad = Sample(id="huge", retrieved_context_ids=["a", "b"], relevance={"a": 1100, "b": 1})
    expected = _score("ndcg_exp@3", GOOD)
    results = _score("ndcg_exp@3", _with_bad(bad))
    assert results[1].status is Status.FAILED
    assert results[1].error == (
        "grade 1100 of 'a' is too large for ndcg_exp@3: 2^grade overflows; "
        "use ndcg (linear gain) or grades <= 1000"
    )
    assert [results[0], results[2], results[3]] == expected  # exactly as before
    # Linear gain scores it; a grade of 1000 still fits exponential gain.
    assert _score("ndcg@3", [bad])[0].status is Status.OK
    fits = Sample(retrieved_context_ids=["a", "b"], relevance={"a": 1000, "b": 1000})
    assert math.isfinite(_score("ndcg_exp@3", [fits])[0].score)


@pytest.mark.parametrize(
    ("grade", "reason"),
    [
        (float("nan"), "relevance grade of 'b' is NaN: use finite grades >= 0"),
        (float("inf"), "relevance grade of 'b' is inf: use finite grades >= 0"),
        (-1.0, "relevance grade of 'b' is -1, below 0: use finite grades >= 0"),
    ],
)
def test_nan_infinite_and_negative_grades_fail_their_sample_with_a_reason(grade, reason):
    bad = Sample(id="bad", retrieved_context_ids=["a", "b"], relevance={"a": 1, "b": grade})
    for metric in RANKING:
        expected = _score(metric, GOOD)
        results = _score(metric, _with_bad(bad))
        assert results[1].status is Status.FAILED, metric
        assert results[1].error.startswith(reason), metric
        assert [results[0], results[2], results[3]] == expected, metric


def test_a_score_that_does_not_add_up_to_a_finite_number_fails_its_sample():
    grades = dict.fromkeys("abc", 1e308)  # each finite, their discounted sum is not
    bad = Sample(id="big", retrieved_context_ids=["a", "b", "c"], relevance=grades)
    results = _score("ndcg@3", _with_bad(bad))
    assert results[1].status is Status.FAILED
    assert "ndcg@3 is nan for this sample: its relevance grades are too large" in results[1].error
    assert [results[0], results[2], results[3]] == _score("ndcg@3", GOOD)


def test_evaluate_keeps_every_other_sample_and_metric(tmp_path):
    bad = Sample(id="huge", retrieved_context_ids=["a", "b"], relevance={"a": 1100})
    result = ragmeter.evaluate(
        Dataset(_with_bad(bad)), ["ndcg_exp@3", "ndcg@3", "mrr"], run_dir=tmp_path / "run"
    )
    statuses = {s.sample_id: s.scores["ndcg_exp@3"].status for s in result}
    assert statuses == {"g1": Status.OK, "huge": Status.FAILED, "g2": Status.OK, "g3": Status.OK}
    assert all(s.scores["ndcg@3"].status is Status.OK for s in result)
    assert "too large for ndcg_exp@3" in list(result)[1].scores["ndcg_exp@3"].error
