"""What ``evaluate()`` and ``load_dataset()`` accept as a dataset, as one public type.

Tables from pandas, Hugging Face ``datasets`` and RAGAS are described by the attribute
each has (protocols), so that no library is imported to type-check a call and a type
checker or an IDE shows what may be passed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeAlias, runtime_checkable

from ragmeter.dataset._dataset import Dataset


@runtime_checkable
class DataFrameLike(Protocol):
    """A pandas ``DataFrame`` (or any table with ``columns`` and ``to_dict``)."""

    @property
    def columns(self) -> Any: ...

    def to_dict(self, *args: Any, **kwargs: Any) -> Any: ...


@runtime_checkable
class HFDatasetLike(Protocol):
    """A Hugging Face ``datasets.Dataset`` (a table with ``column_names``)."""

    @property
    def column_names(self) -> Any: ...


@runtime_checkable
class SampleSetLike(Protocol):
    """A RAGAS ``EvaluationDataset`` (an object with its rows in ``samples``)."""

    @property
    def samples(self) -> Any: ...


@runtime_checkable
class RecordModel(Protocol):
    """One row as a model object: a :class:`~ragmeter.dataset.Sample` or a RAGAS
    ``SingleTurnSample`` (anything pydantic with ``model_dump``)."""

    def model_dump(self) -> dict[str, Any]: ...


#: One row of a dataset given in memory: field name -> value, or a sample object.
RecordLike: TypeAlias = Mapping[str, Any] | RecordModel

#: What ``evaluate(dataset=...)`` and ``load_dataset`` take: a :class:`Dataset`; a file path
#: (JSONL, JSON, CSV, Parquet); rows (a list of dicts or of sample objects); columns (a dict
#: of lists); a pandas DataFrame, a Hugging Face dataset or a RAGAS EvaluationDataset.
DatasetLike: TypeAlias = (
    Dataset
    | str
    | os.PathLike[str]
    | Sequence[RecordLike]
    | Mapping[str, Sequence[Any]]
    | DataFrameLike
    | HFDatasetLike
    | SampleSetLike
)
