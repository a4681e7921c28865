"""Loading and saving datasets: every format round-trips losslessly."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter import Dataset, DatasetError, Sample, load_dataset, save_dataset
from ragmeter.dataset import from_hf, from_pandas, to_hf, to_pandas

TRICKY = [
    Sample(
        id="zh-1",
        user_input="什么是 RAG？",
        response="",  # an explicitly empty answer is not a missing one
        retrieved_contexts=['检索增强生成，\n换行与"引号"', "[not json] ,comma"],
        retrieved_context_ids=["d1", "d2"],
        reference="RAG = retrieval-augmented generation 🚀",
        reference_contexts=[],
        reference_context_ids=[],
        relevance={"d1": 2.0, "d2": 0.0},
        metadata={"question_type": "single_hop", "nested": {"k": [1, 2]}},
    ),
    Sample(id="en-2", user_input="plain", retrieved_contexts=[]),
    Sample(id="3", reference="only a reference"),
]

FORMATS = ["jsonl", "json", "csv", "parquet"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_is_lossless(tmp_path, fmt):
    path = save_dataset(Dataset(TRICKY), tmp_path / f"data.{fmt}")
    loaded = load_dataset(path)
    assert loaded.samples == TRICKY
    assert loaded.ids == ["zh-1", "en-2", "3"]


def test_pandas_round_trip():
    frame = to_pandas(Dataset(TRICKY))
    assert from_pandas(frame).samples == TRICKY
    assert load_dataset(frame).samples == TRICKY


def test_hugging_face_round_trip():
    pytest.importorskip("datasets")
    hf = to_hf(Dataset(TRICKY))
    assert from_hf(hf).samples == TRICKY
    assert load_dataset(hf).samples == TRICKY


text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=20)
samples = st.lists(
    st.builds(
        Sample,
        user_input=st.none() | text,
        response=st.none() | text,
        retrieved_contexts=st.none() | st.lists(text, max_size=3),
        reference=st.none() | text,
        metadata=st.dictionaries(st.sampled_from(["question_type", "persona"]), text, max_size=2),
    ),
    max_size=5,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(samples, st.sampled_from(["jsonl", "json", "csv"]))
def test_random_samples_round_trip(tmp_path, data, fmt):
    path = save_dataset(Dataset(data), tmp_path / f"random.{fmt}")
    assert load_dataset(path).samples == data


def test_legacy_csv_with_json_list_cells_and_extra_columns(tmp_path):
    path = tmp_path / "legacy.csv"
    path.write_text(
        "question,answer,contexts,ground_truth,question_type\n"
        'q1,a1,"[""c1"", ""c2""]",g1,single_hop\n',
        encoding="utf-8",
    )
    sample = load_dataset(path)[0]
    assert sample.retrieved_contexts == ["c1", "c2"]
    assert sample.reference == "g1"
    assert sample.metadata == {"question_type": "single_hop"}


def test_json_file_with_samples_key(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"samples": [{"question": "q"}]}), encoding="utf-8")
    assert load_dataset(path)[0].user_input == "q"


def test_column_map_on_load(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"query_text": "q", "hits": ["a"]}) + "\n", encoding="utf-8")
    sample = load_dataset(
        path, column_map={"query_text": "user_input", "hits": "retrieved_context_ids"}
    )[0]
    assert (sample.user_input, sample.retrieved_context_ids) == ("q", ["a"])


def test_unknown_extension_says_how_to_fix(tmp_path):
    path = tmp_path / "data.txt"
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="format="):
        load_dataset(path)


def test_invalid_json_file_names_the_line(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('[{"question": "q"},\n {"question": }]', encoding="utf-8")
    with pytest.raises(DatasetError, match="line 2"):
        load_dataset(path)


def test_samples_with_no_field_survive_a_csv_round_trip(tmp_path):
    data = [Sample(), Sample()]
    assert load_dataset(save_dataset(Dataset(data), tmp_path / "empty.csv")).samples == data


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "json"])
def test_a_non_utf8_file_name_is_a_source_every_message_can_write(tmp_path, suffix):
    """A file name with a byte that is not UTF-8 (``\\xff``: a lone surrogate in Python's
    ``str``) is the dataset's source as text that UTF-8 can hold, so the run that names it,
    and each problem that does, can be written."""
    import os

    folder = os.fsencode(tmp_path)
    name = folder + b"/data\xff." + suffix.encode()
    rows = {
        "jsonl": b'{"id": "a", "user_input": "q"}\n{"id": "b", "user_input": 3}\n',
        "csv": b"id,user_input,metadata\na,q,\nb,q,[1]\n",
        "json": b'[{"id": "a", "user_input": "q"}, {"id": "b", "user_input": 3}]',
    }[suffix]
    with open(name, "wb") as handle:
        handle.write(rows)
    dataset = load_dataset(os.fsdecode(name), skip_invalid=True)
    assert dataset.source is not None and dataset.source.endswith(f"data\\udcff.{suffix}")
    dataset.source.encode("utf-8")  # no lone surrogate left
    problems = [str(p) for row in dataset.invalid for p in row.problems]
    assert problems and all("data\\udcff" in text for text in problems)
    "\n".join(problems).encode("utf-8")
