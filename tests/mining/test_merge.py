"""``merge_labelled()``: labelled rows join the golden set with their provenance."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter.dataset import Sample, load_dataset
from ragmeter.mining import MergeConflict, is_labelled, merge_labelled, mine
from tests.mining import corpus

MINED = "2026-06-01T12:00:00+00:00"
MERGED = "2026-06-03T09:00:00+00:00"


def labelling_file(tmp_path: Path, n: int = 4, name: str = "to_label.jsonl") -> Path:
    out = tmp_path / name
    mine(corpus.records(), n, embeddings=corpus.embeddings(), clusters=4, mined_at=MINED,
         output=out)  # fmt: skip
    return out


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def label(path: Path) -> list[str]:
    """Fill the file as a person would: a reference in row 1, relevant ids in row 2, a label
    in row 3, nothing in row 4 (its reason alone is not a label). Returns the ids."""
    rows = read_rows(path)
    rows[0]["reference"] = "The reference answer."
    rows[1]["reference_context_ids"] = ["doc-x"]
    rows[2]["label"] = "fail"
    rows[2]["reason"] = "wrong product"
    rows[3]["reason"] = "not sure"
    write_rows(path, rows)
    return [r["id"] for r in rows]


def test_labelled_rows_merge_with_provenance_and_the_rest_are_counted(tmp_path):
    ids = label(labelling_file(tmp_path))
    golden = tmp_path / "golden.jsonl"
    result = merge_labelled(
        tmp_path / "to_label.jsonl", golden, labelled_by="ana", labelled_at="2026-06-02",
        merged_at=MERGED,
    )  # fmt: skip
    assert result.added == ids[:3] and result.unlabelled == [ids[3]]
    assert (result.updated, result.skipped_existing, result.n_golden) == ([], [], 3)
    merged = load_dataset(golden)
    assert merged.ids == ids[:3]
    first, second, third = merged
    assert first.reference == "The reference answer." and first.reference_context_ids is None
    assert second.reference is None and second.reference_context_ids == ["doc-x"]
    assert third.metadata["label"] == "fail" and third.metadata["reason"] == "wrong product"
    for sample in merged:
        meta = sample.metadata
        assert meta["source"] == "production" and meta["mined_at"] == MINED
        assert meta["labelled_by"] == "ana" and meta["labelled_at"] == "2026-06-02"
        assert meta["merged_at"] == MERGED and meta["mined_because"] == "cluster"
        assert meta["original_id"] == sample.id and meta["trace_id"].startswith("trace-")
        assert not {"mined_cluster", "mined_duplicates", "mined_score"} & set(meta)
    assert "label" not in first.metadata and "reason" not in first.metadata


def test_an_id_already_in_the_golden_set_is_refused_unless_asked(tmp_path):
    ids = label(labelling_file(tmp_path))
    golden = tmp_path / "golden.jsonl"
    old = [
        {"id": "g1", "question": "old", "ground_truth": "x"},
        {"id": ids[0], "question": "t0 q2", "ground_truth": "old answer"},
    ]
    write_rows(golden, old)
    before = golden.read_text(encoding="utf-8")
    with pytest.raises(MergeConflict, match=f"1 labelled row.*'{ids[0]}'.*--update"):
        merge_labelled(tmp_path / "to_label.jsonl", golden)
    assert golden.read_text(encoding="utf-8") == before  # nothing written

    skipped = merge_labelled(tmp_path / "to_label.jsonl", golden, on_conflict="skip")
    assert skipped.skipped_existing == [ids[0]] and skipped.added == ids[1:3]
    # appended as it is: the rows before keep their own column names
    assert golden.read_text(encoding="utf-8").startswith(before)
    assert load_dataset(golden).ids == ["g1", ids[0], ids[1], ids[2]]

    updated = merge_labelled(tmp_path / "to_label.jsonl", golden, on_conflict="update")
    assert updated.updated == ids[:3] and updated.added == []
    reloaded = load_dataset(golden)
    assert reloaded.ids == ["g1", ids[0], ids[1], ids[2]]  # replaced where they stood
    assert reloaded[1].reference == "The reference answer."
    assert reloaded[0].reference == "x"


def test_a_csv_labelling_file_filled_in_a_spreadsheet_merges(tmp_path):
    path = labelling_file(tmp_path, 2, "to_label.csv")
    with path.open(encoding="utf-8", newline="") as handle:
        table = list(csv.reader(handle))
    header = table[0]
    table[1][header.index("reference")] = "Filled in a spreadsheet."
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(table)
    result = merge_labelled(path, tmp_path / "golden.csv")
    assert len(result.added) == 1 and len(result.unlabelled) == 1
    golden = load_dataset(tmp_path / "golden.csv")
    assert golden[0].reference == "Filled in a spreadsheet."
    assert golden[0].metadata["source"] == "production"


def test_rows_without_an_id_are_refused(tmp_path):
    path = tmp_path / "hand.jsonl"
    write_rows(path, [{"user_input": "q", "reference": "r"}])
    with pytest.raises(ValueError, match=r"row\(s\) 1 .* have no id"):
        merge_labelled(path, tmp_path / "golden.jsonl")
    assert not (tmp_path / "golden.jsonl").exists()


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, False),
        ({"reference": "  "}, False),
        ({"reference_context_ids": []}, False),
        ({"metadata": {"label": "", "reason": "why"}}, False),
        ({"reference": "r"}, True),
        ({"reference_context_ids": ["d"]}, True),
        ({"relevance": {"d": 2}}, True),
        ({"metadata": {"label": "pass"}}, True),
        ({"metadata": {"label": False}}, True),
    ],
)
def test_what_counts_as_labelled(fields, expected):
    assert is_labelled(Sample(user_input="q", **fields)) is expected
