"""The worked examples of the seed documents (shared/seeds/004_*, 000_*), reproduced exactly."""

import pytest

from ragmeter import Sample, evaluate
from ragmeter.metrics.retrieval import (
    MAP,
    MRR,
    NDCG,
    PrecisionAtK,
    RecallAtK,
    average_precision,
    dcg_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)

# 004: four relevant documents; the top 5 are relevant, not, relevant, relevant, not.
TOP5 = [1, 0, 1, 1, 0]


def test_precision_and_recall_at_5():
    assert precision_at_k(TOP5, 5)[0] == pytest.approx(0.6, abs=1e-12)
    assert recall_at_k(TOP5, 4, 5)[0] == pytest.approx(0.75, abs=1e-12)


def test_average_precision_and_map():
    ap = average_precision([[1, 0, 1, 0, 0, 1]], n_relevant=[3])[0]
    assert round(ap, 3) == 0.722
    assert ap == pytest.approx((1 + 2 / 3 + 3 / 6) / 3, abs=1e-12)
    # "two queries with AP 0.722 and 0.500": MAP = 0.611
    aps = average_precision([[1, 0, 1, 0, 0, 1], [0, 1, 0, 0, 0, 0]], n_relevant=[3, 1])
    assert aps[1] == 0.5
    assert round(aps.mean(), 3) == 0.611


def test_mrr():
    # first relevant document at ranks 2, 1 and 4
    rr = reciprocal_rank([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1]])
    assert rr.tolist() == [0.5, 1.0, 0.25]
    assert round(rr.mean(), 3) == 0.583


def test_ndcg_exponential_gain():
    grades = [3, 0, 2, 1, 2]
    # the seed's terms: 7.000 + 0.000 + 1.500 + 0.431 + 1.161 and ideal [3, 2, 2, 1, 0]
    assert dcg_at_k(grades, 5, gain="exponential")[0] == pytest.approx(
        7 + 0 + 3 / 2 + 1 / 2.321928094887362 + 3 / 2.584962500721156, abs=1e-12
    )
    # the seed prints IDCG 10.824, the sum of its terms rounded to three places (exact: 10.8235)
    assert dcg_at_k([3, 2, 2, 1, 0], 5, gain="exponential")[0] == pytest.approx(10.824, abs=1e-3)
    assert round(ndcg_at_k(grades, grades, 5, gain="exponential")[0], 3) == 0.932


@pytest.mark.parametrize(
    ("useful", "expected"),
    [([1, 0, 1, 0, 0], 0.833), ([1, 1, 0, 0, 0], 1.0), ([0, 0, 0, 1, 1], 0.325)],
)
def test_context_precision_is_average_precision_over_judged_contexts(useful, expected):
    # 000 and 004: useful contexts at ranks {1,3}, {1,2}, {4,5} of 5
    assert round(average_precision([useful])[0], 3) == expected


def test_context_precision_of_four_contexts():
    # 004: relevance [1, 0, 1, 0] -> (1.0 + 0.667) / 2 = 0.833
    assert round(average_precision([[1, 0, 1, 0]])[0], 3) == 0.833


def test_seed_examples_through_samples_and_evaluate():
    ids = ["A", "B", "C", "D", "E"]
    top5 = Sample(id="p", retrieved_context_ids=ids, reference_context_ids=["A", "C", "D", "F"])
    assert PrecisionAtK(5).score(top5).score == pytest.approx(0.6)
    assert RecallAtK(5).score(top5).score == pytest.approx(0.75)

    graded = Sample(
        id="n", retrieved_context_ids=ids, relevance={"A": 3, "B": 0, "C": 2, "D": 1, "E": 2}
    )
    assert round(NDCG(5, gain="exponential").score(graded).score, 3) == 0.932

    map_samples = [
        Sample(
            id="q1", retrieved_context_ids=list("abcdef"), reference_context_ids=["a", "c", "f"]
        ),
        Sample(id="q2", retrieved_context_ids=["x", "y"], reference_context_ids=["y"]),
    ]
    result = evaluate(map_samples, [MAP()])
    assert round(result.aggregates["map"].mean, 3) == 0.611

    mrr_samples = [
        Sample(id=f"m{i}", retrieved_context_ids=["r", "s", "t", "u"], reference_context_ids=[rel])
        for i, rel in enumerate(["s", "r", "u"])
    ]
    assert round(evaluate(mrr_samples, [MRR()]).aggregates["mrr"].mean, 3) == 0.583
