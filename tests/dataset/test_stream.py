"""A JSONL file read a chunk at a time holds what the whole file holds, problems included."""

import json

import pytest

from ragmeter import Dataset, load_dataset
from ragmeter.dataset import DatasetFingerprint, is_streamed, stream_jsonl
from ragmeter.dataset._stream import _SeenIds  # private: the on-disk table of seen ids

LINES = [
    json.dumps({"id": "a", "question": "q1"}),  # 1
    "",  # 2: blank, skipped
    json.dumps({"id": 7, "question": "q3"}),  # 3: an integer id is the string "7"
    '{"id": "x", "question": ',  # 4: not JSON
    json.dumps({"question": "q5"}),  # 5: no id: row-5
    json.dumps({"id": "b", "retrieved_contexts": ["c"], "retrieved_context_ids": ["1", "2"]}),
    json.dumps({"id": "a", "question": "again"}),  # 7: duplicate of line 1
    json.dumps({"id": "b", "question": "again"}),  # 8: duplicate of line 6, itself invalid
    json.dumps([1, 2]),  # 9: not an object
    json.dumps({"sample_id": 7, "question": "q"}),  # 10: "sample_id" is the id: "7" again
    None,  # 11: bytes that are not UTF-8
    json.dumps({"id": "c", "question": "last", "topic": "t"}),  # 12
]


def write(path, lines):
    data = b"".join(
        (b"\xff\xfe bad \n" if line is None else (line + "\n").encode()) for line in lines
    )
    path.write_bytes(data)
    return path


def joined(chunks):
    samples, rows, ids, invalid = [], [], [], []
    for chunk in chunks:
        samples += chunk.samples
        rows += chunk.rows
        ids += chunk.ids
        invalid += chunk.invalid
    return samples, rows, ids, invalid


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 5, 100])
def test_chunks_hold_what_the_whole_file_holds(tmp_path, chunk_size):
    path = write(tmp_path / "data.jsonl", LINES)
    chunks = list(stream_jsonl(path, chunk_size=chunk_size))
    # 11 lines with content: the chunks are cut by lines, whether they read or not.
    assert len(chunks) == -(-11 // chunk_size)
    samples, rows, ids, invalid = joined(chunks)
    assert ids == ["a", "7", "row-5", "c"]
    assert rows == [1, 3, 5, 12]
    assert [r.row for r in invalid] == [4, 6, 7, 8, 9, 10, 11]
    messages = {r.row: [p.message for p in r.problems] for r in invalid}
    assert messages[7] == ["duplicate sample id 'a' (first seen in row 1)"]
    # An id counts from the first row that holds it, even when that row is invalid itself.
    assert messages[8] == ["duplicate sample id 'b' (first seen in row 6)"]
    assert messages[10] == ["duplicate sample id '7' (first seen in row 3)"]
    assert messages[6] == ["2 ids for 1 retrieved_contexts"]
    assert all(p.source == str(path) for r in invalid for p in r.problems)

    whole = load_dataset(path, skip_invalid=True)
    assert samples == whole.samples and rows == whole.rows and ids == whole.ids
    assert [str(p) for r in invalid for p in r.problems] == [
        str(p) for r in whole.invalid for p in r.problems
    ]


def test_unknown_columns_are_those_of_the_lines_read_so_far(tmp_path):
    lines = [
        json.dumps({"question": "q", "topic": "t"}),
        json.dumps({"question": "q", "persona": "p"}),
    ]
    path = write(tmp_path / "data.jsonl", lines)
    chunks = list(stream_jsonl(path, chunk_size=1, column_map={"persona": "role"}))
    assert [c.unknown_columns for c in chunks] == [
        {"topic": "topic"},
        {"topic": "topic", "persona": "role"},
    ]


@pytest.mark.parametrize("chunk_size", [1, 2, 4])
def test_the_fingerprint_of_the_chunks_is_the_datasets(tmp_path, chunk_size):
    path = write(tmp_path / "data.jsonl", LINES)
    fingerprint = DatasetFingerprint()
    for chunk in stream_jsonl(path, chunk_size=chunk_size):
        fingerprint.update(chunk)
    assert fingerprint.hexdigest() == load_dataset(path, skip_invalid=True).fingerprint()
    other = DatasetFingerprint()
    other.update(Dataset.from_records([{"id": "a", "question": "q1"}]))
    assert other.hexdigest() != fingerprint.hexdigest()


def test_a_file_without_samples_is_one_empty_chunk(tmp_path):
    path = write(tmp_path / "empty.jsonl", ["", "   "])
    chunks = list(stream_jsonl(path))
    assert len(chunks) == 1 and len(chunks[0]) == 0 and chunks[0].source == str(path)
    fingerprint = DatasetFingerprint()
    fingerprint.update(chunks[0])
    assert fingerprint.hexdigest() == Dataset([]).fingerprint()


def test_a_path_that_is_no_file_is_refused_before_reading(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such dataset file"):
        stream_jsonl(tmp_path / "missing.jsonl")  # not iterated: refused at once
    with pytest.raises(ValueError, match="is a directory"):
        stream_jsonl(tmp_path)
    with pytest.raises(ValueError, match="chunk_size must be at least 1"):
        stream_jsonl(write(tmp_path / "data.jsonl", LINES), chunk_size=0)


@pytest.mark.parametrize(
    ("source", "format", "streamed"),
    [
        ("data.jsonl", None, True),
        ("DATA.NDJSON", None, True),
        ("data.csv", None, False),
        ("data.json", None, False),
        ("data.parquet", None, False),
        ("data.txt", "jsonl", True),
        ("data.jsonl", "csv", False),
        ([{"question": "q"}], None, False),
        (Dataset([]), None, False),
    ],
)
def test_only_jsonl_paths_stream(tmp_path, source, format, streamed):
    if isinstance(source, str):
        source = tmp_path / source
    assert is_streamed(source, format) is streamed
    if isinstance(source, type(tmp_path)):
        assert is_streamed(str(source), format) is streamed


def test_seen_ids_behave_as_a_mapping_kept_on_disk():
    with _SeenIds() as seen:
        seen["a"] = 1
        seen["b"] = 2
        assert "a" in seen and seen["b"] == 2 and "c" not in seen
        seen.flush()  # now in the temporary file, not in memory
        assert seen._new == {}
        seen["c"] = 5
        assert seen["a"] == 1 and "c" in seen
        assert len(seen) == 3 and sorted(seen) == ["a", "b", "c"]
        del seen["a"]
        assert "a" not in seen and len(seen) == 2
        with pytest.raises(KeyError):
            del seen["zz"]


def test_seen_ids_looked_up_at_once_answer_as_one_by_one():
    with _SeenIds() as seen:
        seen.update({"a": 1, "b": 2})
        seen.flush()
        seen.prefetch(["a", "x", "a"])
        assert seen._looked_up == {"a": 1, "x": None}
        queries = []
        seen._db.set_trace_callback(queries.append)
        assert "a" in seen and seen["a"] == 1 and "x" not in seen
        with pytest.raises(KeyError):
            seen["x"]
        assert queries == []  # answered from what was looked up
        assert "b" in seen and seen["b"] == 2  # not looked up: asked of the file
        assert len(queries) == 2
        seen["x"] = 7  # new in this chunk: found, though looked up as absent
        assert "x" in seen and seen["x"] == 7
        del seen["a"]
        assert "a" not in seen
        seen.flush()
        assert seen._looked_up == {} and seen["x"] == 7


def test_a_repeated_id_across_chunks_is_still_caught(tmp_path):
    path = tmp_path / "data.jsonl"
    ids = ["a", "b", 3, "c", "3", "a"]
    path.write_text(
        "\n".join(json.dumps({"id": i, "retrieved_context_ids": ["x"]}) for i in ids),
        encoding="utf-8",
    )
    chunks = list(stream_jsonl(path, chunk_size=2))
    invalid = [(row.row, str(row.problems[0])) for chunk in chunks for row in chunk.invalid]
    assert [row for row, _ in invalid] == [5, 6]
    assert "duplicate sample id '3' (first seen in row 3)" in invalid[0][1]
    assert "duplicate sample id 'a' (first seen in row 1)" in invalid[1][1]
