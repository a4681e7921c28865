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


def test_a_row_without_the_misspelt_column_or_with_the_field_gets_no_suggestion():
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
    assert "column-map" not in str(problems[1])


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
