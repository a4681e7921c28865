"""ragmeter: tells a RAG team whether their system is good, where it fails, and whether a
change made it better or worse."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter._version import __version__
    from ragmeter.dataset import Dataset, DatasetError, Sample, load_dataset, save_dataset
    from ragmeter.experiments import ExperimentResult, experiment
    from ragmeter.metrics import Direction, Metric, MetricResult, Status, get_metric
    from ragmeter.results import EvaluationResult
    from ragmeter.runner import RayBackend, aevaluate, estimate, evaluate
    from ragmeter.tracking import log_to_mlflow, log_to_wandb

# The public names load on first use, so that importing ragmeter (e.g. by its pytest plugin,
# in every pytest session of an environment that has it, or by `ragmeter --help`) costs
# nothing until it is used; even the version, read from the installed metadata.
_PUBLIC = {
    "__version__": "ragmeter._version",
    "Dataset": "ragmeter.dataset",
    "DatasetError": "ragmeter.dataset",
    "Sample": "ragmeter.dataset",
    "load_dataset": "ragmeter.dataset",
    "save_dataset": "ragmeter.dataset",
    "Direction": "ragmeter.metrics",
    "Metric": "ragmeter.metrics",
    "MetricResult": "ragmeter.metrics",
    "Status": "ragmeter.metrics",
    "get_metric": "ragmeter.metrics",
    "EvaluationResult": "ragmeter.results",
    "ExperimentResult": "ragmeter.experiments",
    "experiment": "ragmeter.experiments",
    "aevaluate": "ragmeter.runner",
    "evaluate": "ragmeter.runner",
    "estimate": "ragmeter.runner",
    "RayBackend": "ragmeter.runner",
    "log_to_mlflow": "ragmeter.tracking",
    "log_to_wandb": "ragmeter.tracking",
}

__all__ = [
    "Dataset",
    "DatasetError",
    "Direction",
    "EvaluationResult",
    "ExperimentResult",
    "Metric",
    "MetricResult",
    "RayBackend",
    "Sample",
    "Status",
    "__version__",
    "aevaluate",
    "estimate",
    "evaluate",
    "experiment",
    "get_metric",
    "load_dataset",
    "log_to_mlflow",
    "log_to_wandb",
    "save_dataset",
]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'ragmeter' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
