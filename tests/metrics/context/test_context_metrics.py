import pytest
from rapidfuzz.distance import Levenshtein

from ragmeter import Sample, Status
from ragmeter.metrics.context import (
    IDContextPrecision,
    IDContextRecall,
    StringContextPrecision,
    StringContextRecall,
)


@pytest.mark.parametrize(
    ("relevant_ranks", "expected"), [({1, 3}, 0.833), ({1, 2}, 1.0), ({4, 5}, 0.325)]
)
def test_id_context_precision_reproduces_the_seed_examples(relevant_ranks, expected):
    ids = [f"c{rank}" for rank in range(1, 6)]
    sample = Sample(
        retrieved_context_ids=ids, reference_context_ids=[f"c{r}" for r in relevant_ranks]
    )
    result = IDContextPrecision().score(sample)
    assert round(result.score, 3) == expected
    assert result.details["verdicts"] == [int(r in relevant_ranks) for r in range(1, 6)]


def test_id_context_precision_without_any_retrieved_context_is_not_applicable():
    result = IDContextPrecision().score(
        Sample(retrieved_context_ids=[], reference_context_ids=["a"])
    )
    assert result.status is Status.NOT_APPLICABLE


def test_id_context_recall_counts_unique_reference_ids():
    sample = Sample(retrieved_context_ids=["a", "a", "z"], reference_context_ids=["a", "b", "c"])
    result = IDContextRecall().score(sample)
    assert result.score == pytest.approx(1 / 3)
    assert result.details["missing"] == ["b", "c"]


def test_id_context_recall_with_graded_relevance():
    sample = Sample(retrieved_context_ids=["a"], relevance={"a": 1, "b": 0})
    assert IDContextRecall().score(sample).score == 1.0


def test_string_context_precision_uses_best_match_and_threshold():
    reference = ["The Eiffel Tower was completed in 1889."]
    retrieved = [
        "Bananas are rich in potassium.",
        "The Eiffel Tower was completed in 1889!",
        "Completely unrelated text here.",
    ]
    sample = Sample(retrieved_contexts=retrieved, reference_contexts=reference)
    result = StringContextPrecision().score(sample)
    best = [Levenshtein.normalized_similarity(c, reference[0]) for c in retrieved]
    assert result.details["similarities"] == [round(x, 4) for x in best]
    assert result.details["verdicts"] == [int(x >= 0.5) for x in best] == [0, 1, 0]
    assert result.score == pytest.approx(0.5)  # one useful context, at rank 2


def test_string_context_recall_and_threshold_parameter():
    sample = Sample(
        retrieved_contexts=["巴黎是法国的首都。"],
        reference_contexts=["巴黎是法国首都。", "柏林位于德国东北部，人口约三百七十万。"],
    )
    assert StringContextRecall().score(sample).score == 0.5
    assert StringContextRecall(threshold=0.0).score(sample).score == 1.0
    assert StringContextRecall(threshold=1.0).score(sample).score == 0.0


def test_string_context_recall_with_nothing_retrieved_is_zero():
    sample = Sample(retrieved_contexts=[], reference_contexts=["x"])
    assert StringContextRecall().score(sample).score == 0.0


def test_unknown_measure_is_rejected():
    with pytest.raises(ValueError, match="unknown similarity measure"):
        StringContextPrecision(measure="cosine")
