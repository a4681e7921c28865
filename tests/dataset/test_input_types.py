"""Any column type pandas, Parquet and Hugging Face produce, and any file encoding or shape a
user has, gets a clear answer: metadata is kept as strict JSON, a bad line is a bad row."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import os
import uuid

import numpy as np
import pandas as pd
import pytest

import ragmeter
from ragmeter import DatasetError, Sample, load_dataset
from ragmeter.dataset import from_hf, from_pandas

RETRIEVAL = {"retrieved_context_ids": ["d1", "d2", "d3"], "reference_context_ids": ["d1"]}
GOOD = json.dumps({"id": "good", **RETRIEVAL})


def _no_constants(name: str) -> None:
    raise ValueError(f"not strict JSON: {name}")


def strict_loads(text: str) -> object:
    """``json.loads`` that refuses ``NaN`` and ``Infinity``, as strict JSON parsers do."""
    return json.loads(text, parse_constant=_no_constants)


def typed_frame() -> pd.DataFrame:
    """Two rows, a metadata column of every type pandas / Parquet / Hugging Face produce; the
    second row holds the missing value of each type."""
    return pd.DataFrame(
        {
            "id": ["a", "b"],
            "retrieved_context_ids": [["d1", "d2"], ["d2", "d3"]],
            "reference_context_ids": [["d1"], ["d3"]],
            "timestamp": pd.to_datetime(["2024-01-02 03:04:05.123456", None]),
            "timestamp_tz": pd.to_datetime(["2024-01-02 03:04:05", None]).tz_localize("UTC"),
            "timestamp_ns": pd.Series(
                [np.datetime64("2024-01-02T03:04:05.000000001"), np.datetime64("NaT")],
                dtype="datetime64[ns]",
            ),
            "date": [dt.date(2024, 1, 2), None],
            "time": [dt.time(3, 4, 5), None],
            "duration": pd.to_timedelta([1.5, None], unit="s"),
            "decimal": [decimal.Decimal("1.25"), decimal.Decimal("NaN")],
            "decimal_int": [decimal.Decimal("42"), None],
            "utf8_bytes": [b"caf\xc3\xa9", None],
            "binary": [b"\x00\xff\xfe", None],
            "np_int": np.array([7, 8], dtype=np.int32),
            "np_float": np.array([0.5, np.nan]),
            "np_bool": np.array([True, False]),
            "infinite": [float("inf"), float("-inf")],
            "category": pd.Categorical(["multi_hop", None]),
            "nullable_int": pd.array([1, None], dtype="Int64"),
            "nullable_str": pd.array(["x", None], dtype="string"),
            "uuid": [uuid.UUID(int=1), None],
            "nested": [{"when": pd.Timestamp("2024-01-02"), "scores": [np.float32(0.5)]}, None],
        }
    )


EXPECTED_FIRST = {
    "timestamp": "2024-01-02T03:04:05.123456",
    "timestamp_tz": "2024-01-02T03:04:05+00:00",
    "timestamp_ns": "2024-01-02T03:04:05.000000001",
    "date": "2024-01-02",
    "time": "03:04:05",
    "duration": 1.5,
    "decimal": 1.25,
    "decimal_int": 42,
    "utf8_bytes": "café",
    "binary": "base64:" + base64.b64encode(b"\x00\xff\xfe").decode(),
    "np_int": 7,
    "np_float": 0.5,
    "np_bool": True,
    "infinite": "inf",
    "category": "multi_hop",
    "nullable_int": 1,
    "nullable_str": "x",
    "uuid": "00000000-0000-0000-0000-000000000001",
    "nested": {"when": "2024-01-02T00:00:00", "scores": [0.5]},
}


def _check_strict(dataset: ragmeter.Dataset) -> None:
    for sample in dataset:
        strict_loads(json.dumps(sample.to_record(), allow_nan=False))
    assert len(dataset.fingerprint()) == 16


def test_every_pandas_column_type_becomes_strict_json_metadata():
    dataset = from_pandas(typed_frame())
    first, second = (s.metadata for s in dataset)
    assert first == EXPECTED_FIRST
    # Missing values (NaT, NA, NaN, None) are missing; NaN as a Decimal is null, -inf a string.
    assert second == {"np_int": 8, "np_bool": False, "infinite": "-inf", "decimal": None}
    _check_strict(dataset)


def test_a_dataframe_without_a_header_keeps_its_numbered_columns_as_tags():
    frame = pd.DataFrame({"id": ["a"], **{k: [v] for k, v in RETRIEVAL.items()}, 0: [1.5]})
    assert from_pandas(frame)[0].metadata == {"0": 1.5}


def test_a_parquet_file_with_every_column_type_loads_as_strict_json(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    frame = typed_frame().drop(columns=["uuid", "nested", "time"])
    path = tmp_path / "typed.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    dataset = load_dataset(path)
    expected = {k: v for k, v in EXPECTED_FIRST.items() if k not in ("uuid", "nested", "time")}
    # Parquet keeps microseconds: the nanosecond column's last digit is rounded away there.
    assert dataset[0].metadata["timestamp_ns"].startswith("2024-01-02T03:04:05")
    del expected["timestamp_ns"]
    assert {k: v for k, v in dataset[0].metadata.items() if k != "timestamp_ns"} == expected
    _check_strict(dataset)


def test_a_hugging_face_dataset_with_dates_and_bytes_loads_as_strict_json():
    datasets = pytest.importorskip("datasets")
    hf = datasets.Dataset.from_pandas(
        typed_frame()[["id", "retrieved_context_ids", "reference_context_ids", "timestamp"]]
    )
    dataset = from_hf(hf)
    assert dataset[0].metadata == {"timestamp": "2024-01-02T03:04:05.123456"}
    _check_strict(dataset)


def test_evaluate_a_typed_dataframe_writes_strict_json_results(tmp_path):
    result = ragmeter.evaluate(typed_frame(), ["precision@3"], run_dir=tmp_path / "run")
    assert result.scores("precision@3") == pytest.approx([1 / 3, 1 / 3])
    lines = (tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    records = [strict_loads(line) for line in lines]
    assert len(records) == 2
    assert records[0]["sample"]["metadata"]["timestamp"] == "2024-01-02T03:04:05.123456"


def test_nan_and_infinity_in_a_jsonl_file_never_reach_the_results(tmp_path):
    path = tmp_path / "nan.jsonl"
    path.write_text(
        json.dumps({"id": "a", **RETRIEVAL, "metadata": {"score": float("nan")}})
        + "\n"
        # a top-level unknown column lands in metadata too
        + json.dumps({"id": "b", **RETRIEVAL, "weight": float("inf")})
        + "\n",
        encoding="utf-8",
    )
    result = ragmeter.evaluate(path, ["precision@3"], run_dir=tmp_path / "run")
    assert [s.sample.metadata for s in result] == [{"score": None}, {"weight": "inf"}]
    for line in (tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines():
        strict_loads(line)


def test_metadata_nested_past_the_limit_is_a_row_problem():
    deep: object = "leaf"
    for _ in range(300):
        deep = {"k": deep}
    with pytest.raises(DatasetError) as raised:
        ragmeter.Dataset.from_records([{"id": "a", "metadata": {"tree": deep}}])
    assert "row 1" in str(raised.value) and "'metadata'" in str(raised.value)
    assert "nested more than 100 levels" in str(raised.value)


def test_sample_built_directly_keeps_strict_json_metadata():
    sample = Sample(metadata={"when": dt.datetime(2024, 1, 2), "vals": {1, 2}, "x": np.int64(3)})
    assert sample.metadata == {"when": "2024-01-02T00:00:00", "vals": [1, 2], "x": 3}


# -- encodings ---------------------------------------------------------------------------
def test_a_latin1_line_is_one_invalid_row_with_its_line_and_byte_offset(tmp_path):
    path = tmp_path / "mixed.jsonl"
    bad = '{"id": "b", "user_input": "café", ' + GOOD[1:].replace('"good", ', "", 1)
    last = GOOD.replace("good", "c")
    data = f"{GOOD}\n".encode() + bad.encode("latin-1") + f"\n{last}".encode()
    path.write_bytes(data)
    with pytest.raises(DatasetError) as raised:
        load_dataset(path)
    message = str(raised.value)
    offset = len(GOOD) + 1 + bad.encode("latin-1").index(b"\xe9")
    assert "row 2" in message and f"byte offset {offset}" in message
    assert "not valid UTF-8" in message and "iconv -f latin1 -t utf-8" in message
    loaded = load_dataset(path, skip_invalid=True)
    assert loaded.ids == ["good", "c"] and loaded.rows == [1, 3]
    assert [row.row for row in loaded.invalid] == [2]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-16-le"])
def test_utf16_and_utf32_files_load(tmp_path, encoding):
    text = GOOD + "\r\n" + GOOD.replace("good", "zh-问题") + "\n"
    bom = {"utf-16-be": "\ufeff"}.get(encoding, "")  # utf-16 / utf-32 write their own BOM
    for suffix, body in (
        ("jsonl", text),
        ("csv", 'id,retrieved_context_ids\ngood,"[""d1""]"\r\nzh-问题,"[""d2""]"\n'),
        ("json", f"[{GOOD},\n{GOOD.replace('good', 'zh-问题')}]"),
    ):
        path = tmp_path / f"data.{suffix}"
        path.write_bytes((bom + body).encode(encoding))
        assert load_dataset(path).ids == ["good", "zh-问题"], suffix


def test_a_csv_row_with_undecodable_bytes_names_its_line(tmp_path):
    path = tmp_path / "latin.csv"
    data = (
        b'id,user_input,retrieved_context_ids\na,ok,"[""d1""]"\nb,caf\xe9,"[""d1""]"\n'
        b'c,"multi\nline",[]\n'
    )
    path.write_bytes(data)
    offset = data.index(b"\xe9")
    with pytest.raises(DatasetError, match=rf"row 2: line 3 is not valid UTF-8.*offset {offset}\b"):
        load_dataset(path)
    loaded = load_dataset(path, skip_invalid=True)
    assert loaded.ids == ["a", "c"] and loaded[1].user_input == "multi\nline"


def test_an_undecodable_json_file_names_the_line_and_the_fix(tmp_path):
    path = tmp_path / "latin.json"
    path.write_bytes(b'[\n{"id": "a"},\n{"id": "caf\xe9"}\n]')
    with pytest.raises(DatasetError, match=r"row 3: line 3 is not valid UTF-8.*iconv"):
        load_dataset(path)


def test_nul_bytes_in_a_line_say_so(tmp_path):
    path = tmp_path / "nul.jsonl"
    path.write_bytes(GOOD.encode() + b"\n\x00" + GOOD.replace("good", "b").encode() + b"\n")
    with pytest.raises(DatasetError, match=r"row 2: invalid JSON.*NUL bytes"):
        load_dataset(path)


def test_lone_carriage_returns_still_end_lines(tmp_path):
    path = tmp_path / "mac.jsonl"
    path.write_bytes(f"{GOOD}\r\xe9\r{GOOD.replace('good', 'c')}\r".encode("latin-1"))
    loaded = load_dataset(path, skip_invalid=True)
    assert loaded.ids == ["good", "c"] and loaded.rows == [1, 3]
    assert [row.row for row in loaded.invalid] == [2]


# -- shapes ------------------------------------------------------------------------------
def test_deeply_nested_json_is_a_row_problem_not_a_recursion_error(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text(GOOD + "\n" + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="row 2: JSON nested too deeply"):
        load_dataset(path)
    assert load_dataset(path, skip_invalid=True).ids == ["good"]
    whole = tmp_path / "deep.json"
    whole.write_text("[\n" + GOOD + ",\n" + "[" * 100_000 + "]" * 100_000 + "]", encoding="utf-8")
    with pytest.raises(DatasetError, match="row 3: JSON nested too deeply"):
        load_dataset(whole)


def test_a_directory_or_a_special_file_is_a_clear_error(tmp_path):
    folder = tmp_path / "data.jsonl"
    folder.mkdir()
    with pytest.raises(ValueError, match="is a directory, not a dataset file"):
        load_dataset(folder)
    with pytest.raises(ValueError, match="is a device, not a dataset file"):
        load_dataset(os.devnull, format="jsonl")
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe.jsonl"
        os.mkfifo(fifo)
        with pytest.raises(ValueError, match=r"is a named pipe \(FIFO\)"):
            load_dataset(fifo)  # before opening it: opening would wait for a writer


def test_csv_extra_cells_name_the_line_and_the_count(tmp_path):
    path = tmp_path / "extra.csv"
    path.write_text(
        'id,retrieved_context_ids\na,"[""d1""]"\nb,d1,d2,d3\nc,"[""d1""]",,\n', encoding="utf-8"
    )
    with pytest.raises(DatasetError, match=r"row 2: line 3: 2 more cell\(s\) than the header's 2"):
        load_dataset(path)
    # Trailing empty cells lose nothing: row c loads.
    assert load_dataset(path, skip_invalid=True).ids == ["a", "c"]


def test_csv_cells_of_any_size_load(tmp_path):
    path = tmp_path / "big.csv"
    big = "x" * 1_000_000
    path.write_text(f"id,user_input\na,{big}\n", encoding="utf-8")
    assert load_dataset(path)[0].user_input == big


def test_csv_unclosed_quote_and_duplicate_header_are_named(tmp_path):
    path = tmp_path / "quote.csv"
    path.write_text('id,user_input\na,ok\nb,"never closed\nc,lost\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="row 2: line 3: a quote opened here is never closed"):
        load_dataset(path)
    dup = tmp_path / "dup.csv"
    dup.write_text("id,id\na,b\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 1 \(the header\): column 'id' appears twice"):
        load_dataset(dup)


def test_an_empty_json_file_and_a_broken_parquet_file_are_named(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("  \n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"empty\.json, row 1: the file is empty"):
        load_dataset(empty)
    pytest.importorskip("pyarrow")
    broken = tmp_path / "broken.parquet"
    broken.write_text(GOOD, encoding="utf-8")
    with pytest.raises(ValueError, match=r"cannot read .*broken\.parquet.* as Parquet"):
        load_dataset(broken)


def test_a_huge_integer_is_a_row_problem(tmp_path):
    path = tmp_path / "int.jsonl"
    path.write_text(GOOD + '\n{"id": ' + "9" * 5000 + "}\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"row 2: a number too long to read \(over 4300 digits"):
        load_dataset(path)
