"""ragmeter: tells a RAG team whether their system is good, where it fails, and whether a
change made it better or worse."""

from ragmeter._version import __version__
from ragmeter.dataset import Dataset, DatasetError, Sample, load_dataset, save_dataset
from ragmeter.metrics import Direction, Metric, MetricResult, Status, get_metric
from ragmeter.results import EvaluationResult
from ragmeter.runner import evaluate

__all__ = [
    "Dataset",
    "DatasetError",
    "Direction",
    "EvaluationResult",
    "Metric",
    "MetricResult",
    "Sample",
    "Status",
    "__version__",
    "evaluate",
    "get_metric",
    "load_dataset",
    "save_dataset",
]
