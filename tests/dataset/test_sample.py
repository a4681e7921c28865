import pytest
from pydantic import ValidationError

from ragmeter import Dataset, Sample


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
    column_map = {"q": "user_input", "docs": "contexts"}
    [sample] = Dataset.from_records([{"q": "x", "docs": ["c"]}], column_map=column_map)
    assert sample.model_dump(exclude_defaults=True, exclude={"history"}) == {
        "user_input": "x",
        "retrieved_contexts": ["c"],
    }


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
    # one naming no column) takes the loop: both make the same sample, the order of its
    # metadata included, or refuse the record with the same problems.
    def read(column_map):
        dataset = Dataset.from_records([record], column_map=column_map, skip_invalid=True)
        samples = [(s.model_dump(), list(s.metadata.items())) for s in dataset]
        return samples, [row.problems for row in dataset.invalid]

    quick = read(None)
    assert quick == read({"no such column": "reference"})

    def validated(data):
        try:
            return Sample.model_validate(data)
        except ValidationError as error:
            return [e["loc"] for e in error.errors()]  # a text for metadata: refused by both

    samples, problems = quick  # and as the sample itself reads the record
    direct = validated(record)
    if isinstance(direct, Sample):
        assert samples == [(direct.model_dump(), list(direct.metadata.items()))]
    else:
        assert samples == [] and problems
