"""The public type of what evaluate() takes as a dataset."""

import typing

import pytest

from ragmeter import evaluate
from ragmeter.dataset import (
    DataFrameLike,
    DatasetLike,
    HFDatasetLike,
    RecordModel,
    Sample,
    SampleSetLike,
)
from ragmeter.runner import aevaluate


def test_evaluate_and_aevaluate_take_a_dataset_like():
    for function in (evaluate, aevaluate):
        hints = typing.get_type_hints(function)
        assert hints["dataset"] == DatasetLike
    members = typing.get_args(DatasetLike)
    assert str in members and DataFrameLike in members and SampleSetLike in members


def test_the_table_protocols_recognise_the_libraries_objects():
    pd = pytest.importorskip("pandas")
    datasets = pytest.importorskip("datasets")
    frame = pd.DataFrame({"user_input": ["q"]})
    hf = datasets.Dataset.from_dict({"user_input": ["q"]})
    assert isinstance(frame, DataFrameLike) and not isinstance(frame, HFDatasetLike)
    assert isinstance(hf, HFDatasetLike)
    assert isinstance(Sample(user_input="q"), RecordModel)

    class EvaluationDataset:  # RAGAS's, duck-typed
        samples: typing.ClassVar[list[Sample]] = []

    assert isinstance(EvaluationDataset(), SampleSetLike)
    assert not isinstance("data.jsonl", DataFrameLike | HFDatasetLike | SampleSetLike)
