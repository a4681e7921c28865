"""Which metadata fields become "by TAG" breakdowns: low-cardinality text chosen
automatically, never scores, numbers, free text or ids; tags the user names always."""

import pytest

from ragmeter import EvaluationResult, evaluate

# Six samples; exact_match is 1 on a, b, d (response == reference) and 0 on c, e, f.
ROWS = [
    {
        "id": letter,
        "response": "yes",
        "reference": "yes" if letter in "abd" else "no",
        "question_type": "single" if letter in "abc" else "multi",  # 2 values, 3 samples each
        "faithfulness": score,  # a score column of a RAGAS export, read from CSV as text
        "focus": f"free text number {i}",  # one value per sample
        "source_document_ids": [f"doc{i % 2}"],  # id lists: 2 values, 3 samples each
        "difficulty": 1 + i % 2,  # numbers
        "reviewed": i % 2 == 0,  # booleans: a grouping
    }
    for i, (letter, score) in enumerate(zip("abcdef", ["0.5", "1.0", "0.5", "1.0", "0.5", "1.0"]))
]


def test_automatic_tags_are_low_cardinality_text_and_booleans_only():
    result = evaluate(ROWS, ["exact_match"])
    groups = result.breakdowns()
    assert sorted(groups) == ["question_type", "reviewed"]
    means = {g.value: g.aggregates["exact_match"].mean for g in groups["question_type"]}
    assert means == {"single": pytest.approx(2 / 3), "multi": pytest.approx(1 / 3)}
    reviewed = {
        g.value: (g.n_samples, g.aggregates["exact_match"].mean) for g in groups["reviewed"]
    }
    # reviewed: a (i=0), c (2), e (4) -> 1, 0, 0; b, d, f -> 1, 1, 0
    assert reviewed == {"True": (3, pytest.approx(1 / 3)), "False": (3, pytest.approx(2 / 3))}
    assert "tags" not in result.config


def test_named_tags_are_used_whatever_their_values_and_kept_with_the_run(tmp_path):
    result = evaluate(
        ROWS, ["exact_match"], tags=["faithfulness", "source_document_ids"], run_dir=tmp_path / "r"
    )
    assert result.config["tags"] == ["faithfulness", "source_document_ids"]
    groups = result.breakdowns()
    assert sorted(groups) == ["faithfulness", "source_document_ids"]
    # faithfulness 0.5: a, c, e -> 1, 0, 0; 1.0: b, d, f -> 1, 1, 0
    by_score = {g.value: g.aggregates["exact_match"].mean for g in groups["faithfulness"]}
    assert by_score == {"0.5": pytest.approx(1 / 3), "1.0": pytest.approx(2 / 3)}
    # doc0: i = 0, 2, 4 (a, c, e); doc1: b, d, f: the same split
    by_doc = {g.value: g.n_samples for g in groups["source_document_ids"]}
    assert by_doc == {"doc0": 3, "doc1": 3}
    assert EvaluationResult.load(tmp_path / "r").breakdowns() == groups
    assert result.summary()["breakdowns"].keys() == groups.keys()
    # The argument still wins over what the run recorded.
    assert list(result.breakdowns(["focus"])) == ["focus"]


def test_tags_as_one_comma_separated_string_and_an_unknown_tag():
    result = evaluate(ROWS, ["exact_match"], tags="difficulty, reviewed")
    assert result.config["tags"] == ["difficulty", "reviewed"]
    assert sorted(result.breakdowns()) == ["difficulty", "reviewed"]
    with pytest.raises(ValueError) as error:
        evaluate(ROWS, ["exact_match"], tags=["persona"])
    assert str(error.value) == (
        "no sample carries tag(s) ['persona']; the metadata fields of this dataset are "
        "['difficulty', 'faithfulness', 'focus', 'question_type', 'reviewed', "
        "'source_document_ids']"
    )


def test_an_empty_list_of_tags_means_no_breakdowns():
    assert evaluate(ROWS, ["exact_match"], tags=[]).breakdowns() == {}


@pytest.mark.parametrize(
    ("name", "values", "chosen"),
    [
        ("language", ["en", "zh", "en", "zh"], True),
        ("language", ["en", "zh", "en"], False),  # 1.5 samples a value
        ("score", ["0.1", "0.2", "0.1", "0.2"], False),  # numeric text
        ("mixed", ["1", "2", "n/a", "1", "2", "n/a"], False),  # 2 of 3 values numeric
        ("grade", ["A", "B", "1", "A", "B", "1"], True),  # 1 of 3 values numeric
        ("doc_id", ["x", "y", "x", "y"], False),
        ("docIds", ["x", "y", "x", "y"], False),
        ("hybrid", ["x", "y", "x", "y"], True),  # ends in "id", but not as a word
        ("same", ["x", "x", "x", "x"], False),  # one value
    ],
)
def test_the_automatic_rule(name, values, chosen):
    rows = [
        {"id": str(i), "response": "a", "reference": "a", name: v} for i, v in enumerate(values)
    ]
    assert (name in evaluate(rows, ["exact_match"]).breakdowns()) is chosen
