"""Samples and datasets: loading, validating and saving evaluation data."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.dataset._conversation import expand_conversation as expand_conversation
    from ragmeter.dataset._dataset import Dataset as Dataset
    from ragmeter.dataset._dataset import check_sample as check_sample
    from ragmeter.dataset._fields import SAMPLE_FIELDS as SAMPLE_FIELDS
    from ragmeter.dataset._io import from_hf as from_hf
    from ragmeter.dataset._io import from_pandas as from_pandas
    from ragmeter.dataset._io import load_dataset as load_dataset
    from ragmeter.dataset._io import parse_json_line as parse_json_line
    from ragmeter.dataset._io import read_csv_rows as read_csv_rows
    from ragmeter.dataset._io import save_dataset as save_dataset
    from ragmeter.dataset._io import to_hf as to_hf
    from ragmeter.dataset._io import to_pandas as to_pandas
    from ragmeter.dataset._io import to_records as to_records
    from ragmeter.dataset._problems import DatasetError as DatasetError
    from ragmeter.dataset._problems import InvalidRow as InvalidRow
    from ragmeter.dataset._problems import Problem as Problem
    from ragmeter.dataset._problems import ProblemKind as ProblemKind
    from ragmeter.dataset._problems import grouped_problems as grouped_problems
    from ragmeter.dataset._problems import problem_kind as problem_kind
    from ragmeter.dataset._sample import ChatMessage as ChatMessage
    from ragmeter.dataset._sample import Sample as Sample
    from ragmeter.dataset._sample import format_conversation as format_conversation
    from ragmeter.dataset._stream import STREAM_CHUNK_SIZE as STREAM_CHUNK_SIZE
    from ragmeter.dataset._stream import DatasetFingerprint as DatasetFingerprint
    from ragmeter.dataset._stream import is_streamed as is_streamed
    from ragmeter.dataset._stream import stream_jsonl as stream_jsonl
    from ragmeter.dataset._subset import head as head
    from ragmeter.dataset._subset import sample as sample
    from ragmeter.dataset._types import DataFrameLike as DataFrameLike
    from ragmeter.dataset._types import DatasetLike as DatasetLike
    from ragmeter.dataset._types import HFDatasetLike as HFDatasetLike
    from ragmeter.dataset._types import RecordLike as RecordLike
    from ragmeter.dataset._types import RecordModel as RecordModel
    from ragmeter.dataset._types import SampleSetLike as SampleSetLike
    from ragmeter.dataset._values import lone_surrogate as lone_surrogate
    from ragmeter.dataset._values import utf8_text as utf8_text

_lazy.attach(__name__, __file__)
