"""Samples and datasets: loading, validating and saving evaluation data."""

from ragmeter.dataset._dataset import Dataset, check_sample
from ragmeter.dataset._io import (
    from_hf,
    from_pandas,
    load_dataset,
    save_dataset,
    to_hf,
    to_pandas,
    to_records,
)
from ragmeter.dataset._problems import DatasetError, InvalidRow, Problem
from ragmeter.dataset._sample import SAMPLE_FIELDS, Sample

__all__ = [
    "SAMPLE_FIELDS",
    "Dataset",
    "DatasetError",
    "InvalidRow",
    "Problem",
    "Sample",
    "check_sample",
    "from_hf",
    "from_pandas",
    "load_dataset",
    "save_dataset",
    "to_hf",
    "to_pandas",
    "to_records",
]
