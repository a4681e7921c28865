"""Running metrics over datasets."""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.runner._defaults import DEFAULT_CONCURRENCY
    from ragmeter.runner._estimate import RunEstimate, aestimate, estimate
    from ragmeter.runner._evaluate import aevaluate, check_inputs, evaluate
    from ragmeter.runner._progress import ProgressReporter, QuietProgress, make_progress
    from ragmeter.runner._ray import RayBackend, RayBackendError, WorkerPool
    from ragmeter.runner._task import SampleTask, TaskOutcome, run_task

__all__ = [
    "DEFAULT_CONCURRENCY",
    "ProgressReporter",
    "QuietProgress",
    "RayBackend",
    "RayBackendError",
    "RunEstimate",
    "SampleTask",
    "TaskOutcome",
    "WorkerPool",
    "aestimate",
    "aevaluate",
    "check_inputs",
    "estimate",
    "evaluate",
    "make_progress",
    "run_task",
]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter.runner._defaults": ("DEFAULT_CONCURRENCY",),
        "ragmeter.runner._estimate": ("RunEstimate", "aestimate", "estimate"),
        "ragmeter.runner._evaluate": ("aevaluate", "check_inputs", "evaluate"),
        "ragmeter.runner._progress": ("ProgressReporter", "QuietProgress", "make_progress"),
        "ragmeter.runner._ray": ("RayBackend", "RayBackendError", "WorkerPool"),
        "ragmeter.runner._task": ("SampleTask", "TaskOutcome", "run_task"),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
