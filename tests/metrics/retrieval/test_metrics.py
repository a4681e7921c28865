"""Per-sample ranking metrics: applicability, duplicates, names, agreement with evaluate_run."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter import Sample, Status
from ragmeter.metrics import BatchContext, get_metric
from ragmeter.metrics.retrieval import MAP, MRR, NDCG, HitAtK, PrecisionAtK, RecallAtK, evaluate_run

ALL = [
    "precision@3",
    "recall@3",
    "f1@3",
    "hit@3",
    "mrr",
    "map",
    "map@2",
    "ndcg@3",
    "ndcg_exp",
    "r_precision",
]


def test_no_relevant_context_is_not_applicable_except_for_precision():
    sample = Sample(retrieved_context_ids=["a", "b"], reference_context_ids=[])
    assert PrecisionAtK(2).score(sample).score == 0.0
    for metric in (RecallAtK(2), MAP(), MRR(), NDCG(2), HitAtK(2)):
        result = metric.score(sample)
        assert result.status is Status.NOT_APPLICABLE
        assert result.score is None
        assert "no relevant context" in result.reason


def test_graded_relevance_zero_means_not_relevant():
    sample = Sample(retrieved_context_ids=["a", "b"], relevance={"a": 0, "b": 2})
    assert MRR().score(sample).score == 0.5
    assert RecallAtK(1).score(sample).score == 0.0


def test_a_repeated_retrieved_id_counts_once():
    sample = Sample(retrieved_context_ids=["a", "a", "b"], reference_context_ids=["a"])
    assert PrecisionAtK(3).score(sample).score == pytest.approx(1 / 3)
    assert MAP().score(sample).score == 1.0


def test_missing_fields_fail_the_sample_not_the_batch():
    good = Sample(retrieved_context_ids=["a"], reference_context_ids=["a"])
    bad = Sample(retrieved_context_ids=["a"])
    results = MRR().score_batch([good, bad, good])
    assert [r.status for r in results] == [Status.OK, Status.FAILED, Status.OK]
    assert "reference_context_ids or relevance" in results[1].error


def test_ids_are_compared_as_strings():
    sample = Sample(retrieved_context_ids=[3, 7], reference_context_ids=[7])
    assert sample.retrieved_context_ids == ["3", "7"]
    assert MRR().score(sample).score == 0.5


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_invalid_cutoff_is_rejected(k):
    with pytest.raises(ValueError, match="positive integer"):
        PrecisionAtK(k)


samples_strategy = st.lists(
    st.builds(
        lambda ranked, judged, grades: Sample(
            retrieved_context_ids=ranked, relevance=dict(zip(judged, grades))
        ),
        st.lists(st.sampled_from("abcdefgh"), max_size=8),
        st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=8, unique=True),
        st.lists(st.integers(0, 3), min_size=8, max_size=8),
    ),
    min_size=1,
    max_size=10,
)


@settings(max_examples=100, deadline=None)
@given(samples_strategy)
def test_sample_metrics_agree_with_evaluate_run_where_applicable(samples):
    run = {str(i): s.retrieved_context_ids for i, s in enumerate(samples)}
    qrels = {str(i): s.qrels() for i, s in enumerate(samples)}
    batch = evaluate_run(run, qrels, ALL)
    context = BatchContext()
    for name in ALL:
        results = get_metric(name).score_batch(samples, context)
        for sample, result, expected in zip(samples, results, batch.scores[name]):
            has_relevant = any(g >= 1 for g in sample.qrels().values())
            if has_relevant or name.startswith("precision"):
                assert result.status is Status.OK
                assert result.score == pytest.approx(expected, abs=1e-12)
            else:
                assert result.status is Status.NOT_APPLICABLE
