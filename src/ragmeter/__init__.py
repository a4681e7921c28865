"""ragmeter: tells a RAG team whether their system is good, where it fails, and whether a
change made it better or worse."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter._version import __version__ as __version__
    from ragmeter.dataset import Dataset as Dataset
    from ragmeter.dataset import DatasetError as DatasetError
    from ragmeter.dataset import Sample as Sample
    from ragmeter.dataset import load_dataset as load_dataset
    from ragmeter.dataset import save_dataset as save_dataset
    from ragmeter.experiments import ExperimentResult as ExperimentResult
    from ragmeter.experiments import experiment as experiment
    from ragmeter.metrics import Direction as Direction
    from ragmeter.metrics import Metric as Metric
    from ragmeter.metrics import MetricResult as MetricResult
    from ragmeter.metrics import Status as Status
    from ragmeter.metrics import get_metric as get_metric
    from ragmeter.results import EvaluationResult as EvaluationResult
    from ragmeter.runner import RayBackend as RayBackend
    from ragmeter.runner import aevaluate as aevaluate
    from ragmeter.runner import estimate as estimate
    from ragmeter.runner import evaluate as evaluate
    from ragmeter.tracking import log_to_mlflow as log_to_mlflow
    from ragmeter.tracking import log_to_wandb as log_to_wandb

# The public names load on first use, so that importing ragmeter (e.g. by its pytest plugin,
# in every pytest session of an environment that has it, or by `ragmeter --help`) costs
# nothing until it is used; even the version, read from the installed metadata. So does
# ragmeter._lazy, which then takes these two hooks over (see it).
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        from ragmeter._lazy import attach

        return getattr(attach(__name__, __file__), name)

    def __dir__() -> list[str]:
        from ragmeter._lazy import attach

        return dir(attach(__name__, __file__))
