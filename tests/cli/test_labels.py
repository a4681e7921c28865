"""``ragmeter labels import / export / list``: people's labels in the run store."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.mining import LABEL_COLUMNS
from ragmeter.store import Store, sample_key
from tests.store.test_labels import RECORD

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "240"})


def record(**changes) -> dict:
    """The label record of the shared format's example, as a JSONL line holds it."""
    return {**RECORD, "created_at": "2026-12-06T13:00:00Z", **changes}


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_import_keeps_every_label_and_importing_again_adds_nothing(tmp_path: Path, store_url):
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            record(),
            record(labeller="bob", value="no"),
            record(level="context", item=0, value=1, metric="context_precision"),
            record(level="sample", item=None, value="pass", created_at=None),
        ],
    )
    first = invoke("labels", "import", str(labels), "--store", store_url)
    assert first.exit_code == 0, first.output
    assert "4 new label(s) kept, 0 already there" in first.output
    again = invoke("labels", "import", str(labels), "--store", store_url)
    assert "0 new label(s) kept, 4 already there" in again.output
    kept = Store(store_url).labels()
    assert len(kept) == 4
    by_who = {(k.labeller, k.level): k.value for k in kept}
    assert by_who[("bob", "claim")] is False and by_who[("alice", "context")] is True
    assert by_who[("alice", "sample")] == "pass"


def test_a_bad_line_is_named_with_its_field_and_fix_and_nothing_is_imported(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            record(),
            record(level="context", item="first", value=True),
            record(value="maybe"),
            record(labeller=""),
        ],
    )
    with (tmp_path / "labels.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("{not json\n")
    done = invoke("labels", "import", str(labels), "--store", url)
    assert done.exit_code == 2
    text = " ".join(done.output.split())
    assert "row 2, field 'item'" in text and "0-based index" in text
    assert "row 3, field 'value'" in text and "write true" in text
    assert "row 4, field 'labeller'" in text and "--labeller" in text
    assert "row 5" in text and "invalid JSON" in text
    assert "Nothing was imported" in text
    assert Store(url).labels() == []


def test_a_missing_labeller_is_filled_by_the_option(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    labels = write_jsonl(
        tmp_path / "l.jsonl", [{k: v for k, v in record().items() if k != "labeller"}]
    )
    done = invoke("labels", "import", str(labels), "--labeller", "carol", "--store", url)
    assert done.exit_code == 0, done.output
    assert [k.labeller for k in Store(url).labels()] == ["carol"]


def mined_rows() -> list[dict]:
    rows = []
    for i, label in enumerate(["pass", "", "0.25", "fail"]):
        row: dict = {column: "" for column in LABEL_COLUMNS}
        row.update(
            id=f"m{i}",
            user_input=f"question {i}?",
            response=f"answer {i}",
            retrieved_contexts=[f"context {i}"],
            label=label,
            reason="wrong year" if label == "fail" else "",
            metadata={},
        )
        rows.append(row)
    return rows


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_filled_mine_file_is_imported_as_sample_labels(tmp_path: Path, suffix: str):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    rows = mined_rows()
    for row in rows:
        for empty in ("reference", "reference_context_ids", "retrieved_context_ids"):
            row.pop(empty, None)
    mined = tmp_path / f"to_label{suffix}"
    if suffix == ".json":
        mined.write_text(json.dumps(rows, ensure_ascii=False), "utf-8")
    else:
        write_jsonl(mined, rows)
    refused = invoke("labels", "import", str(mined), "--store", url)
    assert refused.exit_code == 2 and "--metric M --labeller NAME" in refused.output
    done = invoke(
        "labels", "import", str(mined), "-m", "faithfulness", "--labeller", "dan", "--store", url
    )
    assert done.exit_code == 0, done.output
    kept = {k.sample_id: k for k in Store(url).labels()}
    assert sorted(kept) == ["m0", "m2", "m3"]  # m1 has no label
    assert kept["m2"].value == 0.25 and kept["m0"].value == "pass"
    assert kept["m3"].note == "wrong year" and kept["m3"].level == "sample"
    expected = sample_key(
        {"user_input": "question 3?", "response": "answer 3", "retrieved_contexts": ["context 3"]}
    )
    assert kept["m3"].sample_key == expected


def test_a_mine_csv_with_a_label_out_of_range_names_its_row(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    path = tmp_path / "to_label.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "user_input", "response", "label", "reason"])
        writer.writerow(["a", "q?", "r", "pass", ""])
        writer.writerow(["b", "q2?", "r2", "7", ""])
    done = invoke(
        "labels", "import", str(path), "-m", "faithfulness", "--labeller", "dan", "--store", url
    )
    assert done.exit_code == 2
    assert "row 2, field 'label'" in " ".join(done.output.split())
    assert Store(url).labels() == []


def test_export_writes_what_import_reads_and_list_counts_per_metric_level_labeller(
    tmp_path: Path,
):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    rows = [
        record(),
        record(labeller="bob"),
        record(item="Another claim.", labeller="bob"),
        record(level="context", item=1, value=False, metric="context_precision"),
    ]
    invoke("labels", "import", str(write_jsonl(tmp_path / "in.jsonl", rows)), "--store", url)
    out = tmp_path / "out" / "labels.jsonl"
    exported = invoke("labels", "export", str(out), "--metric", "faithfulness", "--store", url)
    assert exported.exit_code == 0, exported.output
    written = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert sorted(written, key=json.dumps) == sorted(rows[:3], key=json.dumps)
    other = f"sqlite:///{tmp_path / 'other.db'}"
    assert invoke("labels", "import", str(out), "--store", other).exit_code == 0
    assert Store(other).labels() == Store(url).labels(metric="faithfulness")
    listed = invoke("labels", "list", "--json", "--store", url)
    assert json.loads(listed.output) == {
        "n_labels": 4,
        "counts": [
            {
                "metric": "context_precision",
                "level": "context",
                "labeller": "alice",
                "labels": 1,
                "items": 1,
            },
            {
                "metric": "faithfulness",
                "level": "claim",
                "labeller": "alice",
                "labels": 1,
                "items": 1,
            },
            {
                "metric": "faithfulness",
                "level": "claim",
                "labeller": "bob",
                "labels": 2,
                "items": 2,
            },
        ],
    }
    table = invoke("labels", "list", "--store", url)
    assert table.exit_code == 0 and "context_precision" in table.output
