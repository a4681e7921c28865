"""Samples and datasets: loading, validating and saving evaluation data."""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.dataset._conversation import expand_conversation
    from ragmeter.dataset._dataset import Dataset, check_sample
    from ragmeter.dataset._io import (
        from_hf,
        from_pandas,
        load_dataset,
        parse_json_line,
        save_dataset,
        to_hf,
        to_pandas,
        to_records,
    )
    from ragmeter.dataset._problems import DatasetError, InvalidRow, Problem
    from ragmeter.dataset._sample import SAMPLE_FIELDS, ChatMessage, Sample, format_conversation
    from ragmeter.dataset._stream import (
        STREAM_CHUNK_SIZE,
        DatasetFingerprint,
        is_streamed,
        stream_jsonl,
    )
    from ragmeter.dataset._subset import head, sample
    from ragmeter.dataset._types import (
        DataFrameLike,
        DatasetLike,
        HFDatasetLike,
        RecordLike,
        RecordModel,
        SampleSetLike,
    )

__all__ = [
    "SAMPLE_FIELDS",
    "STREAM_CHUNK_SIZE",
    "ChatMessage",
    "DataFrameLike",
    "Dataset",
    "DatasetError",
    "DatasetFingerprint",
    "DatasetLike",
    "HFDatasetLike",
    "InvalidRow",
    "Problem",
    "RecordLike",
    "RecordModel",
    "Sample",
    "SampleSetLike",
    "check_sample",
    "expand_conversation",
    "format_conversation",
    "from_hf",
    "from_pandas",
    "head",
    "is_streamed",
    "load_dataset",
    "parse_json_line",
    "sample",
    "save_dataset",
    "stream_jsonl",
    "to_hf",
    "to_pandas",
    "to_records",
]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter.dataset._conversation": ("expand_conversation",),
        "ragmeter.dataset._dataset": ("Dataset", "check_sample"),
        "ragmeter.dataset._io": (
            "from_hf",
            "from_pandas",
            "load_dataset",
            "parse_json_line",
            "save_dataset",
            "to_hf",
            "to_pandas",
            "to_records",
        ),
        "ragmeter.dataset._problems": ("DatasetError", "InvalidRow", "Problem"),
        "ragmeter.dataset._sample": (
            "SAMPLE_FIELDS",
            "ChatMessage",
            "Sample",
            "format_conversation",
        ),
        "ragmeter.dataset._stream": (
            "STREAM_CHUNK_SIZE",
            "DatasetFingerprint",
            "is_streamed",
            "stream_jsonl",
        ),
        "ragmeter.dataset._subset": ("head", "sample"),
        "ragmeter.dataset._types": (
            "DataFrameLike",
            "DatasetLike",
            "HFDatasetLike",
            "RecordLike",
            "RecordModel",
            "SampleSetLike",
        ),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
