"""Bad input: every problem reported at once, naming the row, the field and the fix."""

import json

import pytest

from ragmeter import DatasetError, evaluate, load_dataset

BAD_LINES = [
    {"id": "ok-1", "question": "fine", "contexts": ["c"]},
    "{not json",
    {"id": "wrong-type", "contexts": "a single string"},
    {"id": "lengths", "contexts": ["a", "b"], "retrieved_context_ids": ["d1"]},
    {"id": "ok-1", "question": "duplicate id"},
    {"id": "bad-grade", "relevance": {"d1": -1}},
    {"id": "ok-2", "question": "fine too"},
]


def write_jsonl(path, rows):
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_all_problems_are_reported_together(tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", BAD_LINES)
    with pytest.raises(DatasetError) as raised:
        load_dataset(path)
    problems = raised.value.problems
    by_row = {p.row: p for p in problems}
    assert sorted(by_row) == [2, 3, 4, 5, 6]
    assert "invalid JSON" in by_row[2].message
    assert by_row[3].field == "retrieved_contexts"
    assert "wrap" in by_row[3].fix
    assert by_row[4].field == "retrieved_context_ids"
    assert "1 ids for 2 retrieved_contexts" in by_row[4].message
    assert by_row[5].field == "id" and "first seen in row 1" in by_row[5].message
    assert by_row[6].field == "relevance"
    message = str(raised.value)
    assert str(path) in message and "row 3" in message and "Fix:" in message


def test_skip_invalid_keeps_valid_rows_and_lists_the_rest(tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", BAD_LINES)
    dataset = load_dataset(path, skip_invalid=True)
    assert dataset.ids == ["ok-1", "ok-2"]
    assert dataset.rows == [1, 7]
    assert [r.row for r in dataset.invalid] == [2, 3, 4, 5, 6]


def test_blank_lines_are_skipped_but_row_numbers_stay_line_numbers(tmp_path):
    path = tmp_path / "gaps.jsonl"
    path.write_text('{"question": "a"}\n\n{"question": "b"}\n', encoding="utf-8")
    dataset = load_dataset(path)
    assert dataset.rows == [1, 3]
    assert dataset.ids == ["row-1", "row-3"]


def test_csv_list_cell_that_is_not_json(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("question,contexts\nq,just text\n", encoding="utf-8")
    with pytest.raises(DatasetError) as raised:
        load_dataset(path)
    (problem,) = raised.value.problems
    assert (problem.row, problem.field) == (1, "retrieved_contexts")


def test_missing_fields_for_metrics_are_reported_per_row_and_metric():
    from ragmeter import evaluate

    records = [
        {"id": "a", "retrieved_context_ids": ["x"]},
        {"id": "b", "retrieved_context_ids": ["x"], "reference_context_ids": ["x"]},
        {"id": "c"},
    ]
    with pytest.raises(DatasetError) as raised:
        evaluate(records, ["mrr", "exact_match"])
    fields = sorted((p.sample_id, p.field) for p in raised.value.problems)
    assert ("a", "reference_context_ids or relevance") in fields
    assert ("c", "retrieved_context_ids") in fields
    assert ("b", "response") in fields and ("b", "reference") in fields


def test_file_problems_and_missing_fields_are_reported_in_one_round(tmp_path):
    from ragmeter import evaluate

    path = write_jsonl(
        tmp_path / "mixed.jsonl",
        [
            {"id": "a", "retrieved_context_ids": ["x"], "reference_context_ids": ["x"]},
            "{broken",
            {"id": "c", "retrieved_context_ids": ["x"]},
        ],
    )
    with pytest.raises(DatasetError) as raised:
        evaluate(path, ["mrr"])
    assert [(p.row, p.field) for p in raised.value.problems] == [
        (2, None),
        (3, "reference_context_ids or relevance"),
    ]
    result = evaluate(path, ["mrr"], skip_invalid=True)
    assert [s.sample_id for s in result] == ["a"]
    assert [r.row for r in result.skipped] == [2, 3]


def test_invalid_json_column_points_into_the_line(tmp_path):
    path = write_jsonl(tmp_path / "comma.jsonl", ['{"question": "q",'])
    with pytest.raises(DatasetError) as raised:
        load_dataset(path)
    assert "column 1:" not in raised.value.problems[0].message


def test_a_problem_repeated_in_many_rows_is_one_line_and_no_other_problem_is_lost(tmp_path):
    rows = [{"id": f"q{i}", "contexts": f"text {i}"} for i in range(1000)]
    rows[3], rows[4] = {"id": "q3", "question": "fine"}, {"id": "q4", "question": "fine"}
    rows[500] = {"id": "q500", "contexts": ["a", "b"], "retrieved_context_ids": ["d1"]}
    rows += [{"id": "q3", "question": "a duplicate id"}, {"id": "q4", "question": "another"}]
    with pytest.raises(DatasetError) as raised:
        load_dataset(write_jsonl(tmp_path / "big.jsonl", rows))
    assert len(raised.value.problems) == 1000  # every one is still there, for code
    lines = str(raised.value).splitlines()
    assert lines[0] == "1000 problem(s) in 1000 row(s):"
    assert len(lines) == 5, lines  # the header, 3 kinds of problem, the hint
    wrap = lines[1]
    said = "field 'retrieved_contexts': Input should be a valid list, got str 'text 0' (row 1; "
    assert said in wrap
    assert "in 997/1002 rows (first rows 1, 2, 3, 6, 7)" in wrap
    assert 'Fix: wrap a single item in a list, e.g. ["text 0"]' in wrap
    assert "row 501, field 'retrieved_context_ids': 1 ids for 2 retrieved_contexts" in lines[2]
    assert "duplicate sample id 'q3' (first seen in row 4) (row 1001; the others alike)" in lines[3]
    assert "in 2/1002 rows (rows 1001, 1002). Fix: give every sample a unique id" in lines[3]


def test_a_problem_in_a_few_rows_names_each_of_them():
    rows = [{"id": i, "contexts": ["x"]} for i in ("a", "b", "c")]
    with pytest.raises(DatasetError) as raised:
        evaluate(rows, ["faithfulness"])
    text = str(raised.value)
    assert "field 'response': missing, and metric 'faithfulness' needs it, in 3/3 rows" in text
    assert "(rows 1, 2, 3; ids 'a', 'b', 'c'). Fix: add response" in text
    assert "first rows" not in text and "row 2" not in text
