import pytest
from pydantic import ValidationError

from ragmeter import Sample
from ragmeter.dataset._sample import (  # private: the quick path against the general one
    canonical_record,
)


def test_legacy_names_are_accepted():
    sample = Sample(question="q", answer="a", contexts=["c1", "c2"], ground_truth="g")
    assert (sample.user_input, sample.response, sample.retrieved_contexts, sample.reference) == (
        "q",
        "a",
        ["c1", "c2"],
        "g",
    )


def test_ground_truths_list_becomes_reference_and_keeps_the_rest():
    sample = Sample(ground_truths=["first", "second"])
    assert sample.reference == "first"
    assert sample.metadata["ground_truths"] == ["first", "second"]
    assert Sample(ground_truths=["only"]).metadata == {}


def test_unknown_columns_become_metadata():
    sample = Sample(user_input="q", question_type="multi_hop", persona="analyst")
    assert sample.metadata == {"question_type": "multi_hop", "persona": "analyst"}


def test_column_map_applies_before_legacy_names():
    record = canonical_record({"q": "x", "docs": ["c"]}, {"q": "user_input", "docs": "contexts"})
    assert record == {"user_input": "x", "retrieved_contexts": ["c"]}


def test_conflicting_columns_are_an_error():
    with pytest.raises(ValidationError, match="both map to 'user_input'"):
        Sample(question="a", user_input="b")


def test_wrong_type_is_rejected():
    with pytest.raises(ValidationError):
        Sample(retrieved_contexts="not a list")


def test_qrels_prefer_graded_relevance():
    sample = Sample(reference_context_ids=["a"], relevance={"b": 2})
    assert sample.qrels() == {"b": 2.0}


@pytest.mark.parametrize(
    "record",
    [
        {"id": 1, "user_input": "q", "retrieved_context_ids": ["a", 2]},
        {"metadata": {"lang": "zh"}, "user_input": "q", "response": None},
        {"user_input": "q", "metadata": {}},
        {"user_input": "q", "metadata": None},
        {"user_input": "q", "metadata": "not an object"},
        {"reference_context_ids": [], "relevance": {"a": 1}, "history": []},
    ],
)
def test_a_record_with_ragmeter_names_reads_as_the_general_renaming_reads_it(record):
    # Records that already use ragmeter's names skip the renaming loop; a column map (here
    # one naming no column) takes the loop: both make the same dict, key order included.
    quick = canonical_record(record)
    general = canonical_record(record, {"no such column": "reference"})
    assert list(quick.items()) == list(general.items())

    def validated(data):
        try:
            return Sample.model_validate(data)
        except ValidationError as error:
            return [e["loc"] for e in error.errors()]  # a text for metadata: refused by both

    assert validated(record) == validated(general)
