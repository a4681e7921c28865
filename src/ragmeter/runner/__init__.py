"""Running metrics over datasets."""

from ragmeter.runner._evaluate import aevaluate, evaluate
from ragmeter.runner._task import SampleTask, TaskOutcome, run_task

__all__ = ["SampleTask", "TaskOutcome", "aevaluate", "evaluate", "run_task"]
