"""Running metrics over datasets."""

from ragmeter.runner._evaluate import DEFAULT_CONCURRENCY, aevaluate, check_inputs, evaluate
from ragmeter.runner._progress import ProgressReporter, QuietProgress, make_progress
from ragmeter.runner._task import SampleTask, TaskOutcome, run_task

__all__ = [
    "DEFAULT_CONCURRENCY",
    "ProgressReporter",
    "QuietProgress",
    "SampleTask",
    "TaskOutcome",
    "aevaluate",
    "check_inputs",
    "evaluate",
    "make_progress",
    "run_task",
]
