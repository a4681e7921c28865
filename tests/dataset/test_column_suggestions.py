"""Misspelt columns: a missing field that an input column looks like says how to rename it."""

import json

import pytest
from typer.testing import CliRunner

from ragmeter import DatasetError, evaluate, load_dataset
from ragmeter.cli import app
from ragmeter.dataset import Dataset

runner = CliRunner()

TYPO_ROWS = [
    {"questoin": "What is RAG?", "answr": "Retrieval.", "referense": "Retrieval.", "topic": "x"},
    {"questoin": "Why?", "answr": "Because.", "referense": "Because.", "topic": "y"},
]
NEEDS = {"exact_match": [("response",), ("reference",)], "faithfulness": [("user_input",)]}


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_every_misspelt_column_is_one_problem_per_row_with_the_rename(tmp_path):
    dataset = load_dataset(write_jsonl(tmp_path / "d.jsonl", TYPO_ROWS))
    problems = dataset.problems_for(NEEDS)
    assert [(p.row, p.field) for p in problems] == [
        (1, "response"),
        (1, "reference"),
        (1, "user_input"),
        (2, "response"),
        (2, "reference"),
        (2, "user_input"),
    ]
    by_field = {p.field: p for p in problems if p.row == 1}
    assert str(by_field["user_input"]).endswith(
        "field 'user_input': missing; column 'questoin' looks like 'user_input' (question). "
        "Fix: rename it or pass --column-map questoin=user_input "
        "(column_map={'questoin': 'user_input'})"
    )
    assert by_field["response"].message == "missing; column 'answr' looks like 'response' (answer)"
    assert by_field["reference"].message == "missing; column 'referense' looks like 'reference'"


def test_case_and_separators_are_ignored_and_a_column_map_target_is_matched():
    dataset = Dataset.from_records(
        [{"User Input": "q", "docs": ["c"]}], column_map={"docs": "contxts"}
    )
    problems = dataset.problems_for(
        {"m": [("user_input",), ("retrieved_contexts", "retrieved_context_ids")]}
    )
    assert [p.fix for p in problems] == [
        "rename it or pass --column-map 'User Input=user_input' "
        "(column_map={'User Input': 'user_input'})",
        "rename it or pass --column-map docs=retrieved_contexts "
        "(column_map={'docs': 'retrieved_contexts'})",
    ]


def test_a_row_without_a_lookalike_lists_its_other_columns_and_the_field_gets_no_problem():
    rows = [
        {"questoin": "q"},
        {"topic": "x", "persona": "analyst"},
        {"question": "q", "questoin": "x"},
    ]
    dataset = Dataset.from_records(rows)
    assert dataset[1].metadata == {"topic": "x", "persona": "analyst"}  # close to no field
    assert dataset[2].metadata == {"questoin": "x"}
    problems = dataset.problems_for({"faithfulness": [("user_input",)]})
    assert [(p.row, p.message) for p in problems] == [
        (1, "missing; column 'questoin' looks like 'user_input' (question)"),
        (2, "missing, and metric 'faithfulness' needs it"),
    ]
    # No lookalike: the row's columns that name no field are listed with the mapping to use.
    assert problems[1].fix == (
        "add user_input to this row; or, if one of the columns that name no field "
        "('topic', 'persona') holds it, pass --column-map COLUMN=user_input "
        "(column_map={'COLUMN': 'user_input'}) with its name; or drop 'faithfulness' from the "
        "metrics"
    )


def test_evaluate_lists_every_misspelt_column_in_one_error(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", TYPO_ROWS)
    with pytest.raises(DatasetError) as error:
        evaluate(path, ["exact_match", "rouge_l"])
    assert len(error.value.problems) == 4  # 2 columns x 2 rows, once whichever metric needs it
    message = str(error.value)
    assert "--column-map answr=response" in message
    assert "--column-map referense=reference" in message
    # skip_invalid still leaves those rows out and evaluates the others
    rows = [*TYPO_ROWS, {"answer": "a", "ground_truth": "a"}]
    result = evaluate(write_jsonl(tmp_path / "e.jsonl", rows), ["exact_match"], skip_invalid=True)
    assert len(result) == 1


def test_cli_reports_every_misspelt_column_with_exit_2(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", TYPO_ROWS)
    result = runner.invoke(
        app, ["eval", str(path), "-m", "exact_match", "-o", str(tmp_path / "r"), "--no-store"]
    )
    assert result.exit_code == 2
    assert result.output.count("error:") == 1
    assert "column 'answr' looks like 'response' (answer)" in result.output
    assert "--column-map answr=response" in result.output
    assert "--column-map referense=reference" in result.output
    fixed = runner.invoke(
        app,
        [
            "eval",
            str(path),
            "-m",
            "exact_match",
            "-o",
            str(tmp_path / "fixed"),
            "--no-store",
            "--column-map",
            "answr=response",
            "--column-map",
            "referense=reference",
        ],
    )
    assert fixed.exit_code == 0, fixed.output


# -- notes on columns, whichever metrics run ---------------------------------------------------
def test_a_column_that_looks_like_a_field_is_a_warning_even_if_no_metric_needs_it():
    rows = [{"question": "q", "answer": "a", "retreived_contexts": ["c"], "topic": "geo"}]
    dataset = Dataset.from_records(rows)
    assert dataset.problems_for({"exact_match": [("response",)]}) == []
    assert dataset.column_warnings() == [
        "column 'retreived_contexts' names no field and is kept as a tag, but looks like "
        "'retrieved_contexts'; if it is, pass --column-map retreived_contexts=retrieved_contexts "
        "(column_map={'retreived_contexts': 'retrieved_contexts'})"
    ]
    # Mapped as the warning says, the column is the field and the warning is gone.
    fixed = Dataset.from_records(rows, column_map={"retreived_contexts": "retrieved_contexts"})
    assert fixed[0].retrieved_contexts == ["c"] and fixed.column_warnings() == []


def test_a_lookalike_of_a_field_another_column_gives_is_no_warning():
    rows = [{"user_input": "q", "retrieved_contexts": ["a"], "retrieved_context": ["b"]}]
    assert Dataset.from_records(rows).column_warnings() == []


def test_deepeval_context_is_read_as_the_reference_and_the_other_reading_is_offered():
    dataset = Dataset.from_records([{"question": "q", "context": ["the passage"]}])
    assert dataset[0].reference_contexts == ["the passage"]
    fix = "--column-map context=retrieved_contexts (column_map={'context': 'retrieved_contexts'})"
    assert dataset.column_warnings() == [
        "column 'context' is read as 'reference_contexts' (DeepEval's name for the ideal "
        f"context); if it holds the retrieved contexts, pass {fix}"
    ]
    (problem,) = dataset.problems_for({"faithfulness": [("retrieved_contexts",)]})
    assert problem.fix == (
        "column 'context' was read as 'reference_contexts' (DeepEval's name for the ideal "
        f"context); if it holds the retrieved contexts, pass {fix}; or drop 'faithfulness' "
        "from the metrics"
    )
    # With DeepEval's retrieval_context beside it, context is what DeepEval means: no note.
    both = Dataset.from_records([{"input": "q", "context": ["a"], "retrieval_context": ["b"]}])
    assert both.column_warnings() == []


def test_a_missing_field_names_the_one_column_that_could_hold_it():
    dataset = Dataset.from_records([{"prompt_text": "q", "answer": "a"}])
    (problem,) = dataset.problems_for({"answer_relevancy": [("user_input",)]})
    assert problem.fix == (
        "add user_input to this row; or, if column 'prompt_text' holds it, pass "
        "--column-map prompt_text=user_input (column_map={'prompt_text': 'user_input'}); or "
        "drop 'answer_relevancy' from the metrics"
    )


def test_evaluate_keeps_the_column_warnings_in_the_run_config(tmp_path):
    rows = [
        {"id": "a", "answer": "x", "ground_truth": "x", "retreived_contexts": ["c"]},
        {"id": "b", "answer": "y", "ground_truth": "x", "retreived_contexts": ["d"]},
    ]
    expected = [
        "column 'retreived_contexts' names no field and is kept as a tag, but looks like "
        "'retrieved_contexts'; if it is, pass --column-map retreived_contexts=retrieved_contexts "
        "(column_map={'retreived_contexts': 'retrieved_contexts'})"
    ]
    for data in (rows, write_jsonl(tmp_path / "d.jsonl", rows)):  # in memory, streamed
        result = evaluate(data, ["exact_match"])
        assert result.scores("exact_match") == [1.0, 0.0]
        assert result.config["column_warnings"] == expected
    clean = evaluate([{"answer": "x", "ground_truth": "x", "topic": "t"}], ["exact_match"])
    assert "column_warnings" not in clean.config
