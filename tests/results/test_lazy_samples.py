"""A sample read back from a run (``SampleResult.from_dict``, a run's store) is built from its
stored record when first read: until then ``sample_value`` reads its fields from the record.
Whichever way a result was made, it is the same result: its sample, equality, repr, pickle,
copies and ``to_dict``."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from ragmeter import MetricResult, evaluate
from ragmeter.dataset import SAMPLE_FIELDS, Sample
from ragmeter.results import EvaluationResult, SampleResult

#: A stored record holding every field (as Sample.to_record writes it).
RECORD: dict[str, Any] = {
    "id": "q1",
    "user_input": "And its price?",
    "response": "$249.",
    "retrieved_contexts": ["AirPods Pro 2 cost $249."],
    "retrieved_context_ids": ["d1", "d2"],
    "reference": "$249",
    "reference_contexts": ["AirPods Pro 2 cost $249."],
    "reference_context_ids": ["d1"],
    "relevance": {"d1": 2.0, "d2": 0.0},
    "history": [
        {"role": "user", "content": "What are the AirPods Pro 2?"},
        {"role": "assistant", "content": "Earbuds."},
    ],
    "metadata": {"question_type": "follow_up", "turn": 2},
}
USAGE = {"calls": 1, "prompt_tokens": 10, "completion_tokens": 2}


def _stored(record: dict[str, Any]) -> dict[str, Any]:
    """What SampleResult.to_dict writes for ``record`` with one mrr score."""
    return {
        "index": 0,
        "row": 1,
        "id": "q1",
        "sample": record,
        "metrics": {"mrr": {"score": 0.5, "status": "ok"}},
        "usage": USAGE,
    }


def _built() -> SampleResult:
    """The same result made with its sample validated by hand."""
    return SampleResult(
        0, 1, "q1", Sample.model_validate(RECORD), {"mrr": MetricResult.ok(0.5)}, USAGE
    )


def test_each_field_read_from_the_record_is_the_samples():
    expected = Sample.model_validate(RECORD)
    for name in SAMPLE_FIELDS:
        assert SampleResult.from_dict(_stored(RECORD)).sample_value(name) == getattr(
            expected, name
        ), name
    assert SampleResult.from_dict(_stored({"id": "q1"})).sample_value("metadata") == {}
    assert SampleResult.from_dict(_stored({"id": "q1"})).sample_value("user_input") is None


def test_the_sample_read_back_is_the_validated_sample():
    read = SampleResult.from_dict(_stored(RECORD))
    assert isinstance(read.sample, Sample)
    assert read.sample == Sample.model_validate(RECORD)
    assert read.sample is read.sample  # built once


def test_a_result_read_back_is_the_same_result_as_one_built():
    built = _built()
    assert SampleResult.from_dict(_stored(RECORD)) == built
    assert built == SampleResult.from_dict(_stored(RECORD))
    assert repr(SampleResult.from_dict(_stored(RECORD))) == repr(built)
    assert SampleResult.from_dict(_stored(RECORD)).to_dict() == built.to_dict()
    assert dataclasses.asdict(SampleResult.from_dict(_stored(RECORD))) == dataclasses.asdict(built)
    assert copy.copy(SampleResult.from_dict(_stored(RECORD))) == built
    assert copy.deepcopy(SampleResult.from_dict(_stored(RECORD))) == built


def test_a_result_read_back_pickles_as_one_built():
    # its state is the fields, the sample built, whether the sample was read before or not
    built = _built()
    unread, read = SampleResult.from_dict(_stored(RECORD)), SampleResult.from_dict(_stored(RECORD))
    assert read.sample.user_input == "And its price?"
    for result in (unread, read):
        again = pickle.loads(pickle.dumps(result))
        assert again == built
        assert vars(again) == vars(built)
        assert list(vars(again)) == [f.name for f in dataclasses.fields(SampleResult)]


def test_a_record_in_other_tools_names_is_read_as_the_sample():
    # a record written by hand with RAGAS 0.1's names: the sample's fields, not the record's
    read = SampleResult.from_dict(_stored({"question": "q", "contexts": ["c"]}))
    assert read.sample_value("user_input") == "q"
    assert read.sample_value("retrieved_contexts") == ["c"]
    assert read.sample_value("metadata") == {}


def test_a_sample_set_by_hand_is_the_one_read():
    read = SampleResult.from_dict(_stored(RECORD))
    read.sample = Sample(user_input="another question", metadata={"lang": "en"})
    assert read.sample_value("user_input") == "another question"
    assert read.sample_value("metadata") == {"lang": "en"}
    assert read.to_dict()["sample"] == {
        "user_input": "another question",
        "metadata": {"lang": "en"},
    }


def test_an_unknown_field_is_an_attribute_error_as_on_the_sample():
    with pytest.raises(AttributeError, match="nope"):
        SampleResult.from_dict(_stored(RECORD)).sample_value("nope")
    with pytest.raises(AttributeError, match="nope"):
        _ = SampleResult.from_dict(_stored(RECORD)).nope  # type: ignore[attr-defined]


def test_an_edited_results_file_is_checked_as_it_is_read(tmp_path):
    # results.jsonl (a file a person may have edited): a sample that is no longer valid is
    # reported when the run is loaded, not later when one of its samples is read
    rows = [{"id": "a", "retrieved_context_ids": ["x"], "reference_context_ids": ["x"]}]
    run_dir = evaluate(rows, ["mrr"]).save(tmp_path / "run")
    results = run_dir / "results.jsonl"
    stored = results.read_text(encoding="utf-8")
    results.write_text(stored.replace('"metadata": {}', '"response": 3'), encoding="utf-8")
    assert '"response": 3' in results.read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="response"):
        EvaluationResult.load(run_dir)
