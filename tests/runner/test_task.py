"""SampleTask as plain data: what a scale-out backend will ship to its workers."""

import json

from ragmeter import Dataset
from ragmeter.runner import SampleTask
from tests.runner._fakes import samples


def _task(**changes):
    sample = Dataset.from_records(samples(1))[0]
    fields = {"index": 3, "sample_id": "case-0", "sample": sample, "metrics": ("faithfulness",)}
    return SampleTask(**{**fields, **changes})


def test_to_dict_writes_every_field_as_json():
    task = _task(language="zh", repeats=3)
    data = task.to_dict()
    assert data == {
        "index": 3,
        "sample_id": "case-0",
        "sample": task.sample.to_record(),
        "metrics": ["faithfulness"],
        "language": "zh",
        "repeats": 3,
    }
    assert json.loads(json.dumps(data)) == data


def test_from_dict_reads_back_what_to_dict_wrote():
    for task in (_task(), _task(language="en", repeats=2, metrics=("faithfulness", "x"))):
        assert SampleTask.from_dict(json.loads(json.dumps(task.to_dict()))) == task


def test_from_dict_defaults_language_and_repeats():
    task = _task()
    data = task.to_dict()
    del data["language"], data["repeats"]
    assert SampleTask.from_dict(data) == task
