"""Running metrics over datasets."""

from ragmeter.runner._evaluate import aevaluate, check_inputs, evaluate
from ragmeter.runner._task import SampleTask, TaskOutcome, run_task

__all__ = ["SampleTask", "TaskOutcome", "aevaluate", "check_inputs", "evaluate", "run_task"]
