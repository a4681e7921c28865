"""Running metrics over datasets."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.runner._defaults import DEFAULT_CONCURRENCY as DEFAULT_CONCURRENCY
    from ragmeter.runner._defaults import DEFAULT_INTERRUPT_WAIT_S as DEFAULT_INTERRUPT_WAIT_S
    from ragmeter.runner._estimate import RunEstimate as RunEstimate
    from ragmeter.runner._estimate import aestimate as aestimate
    from ragmeter.runner._estimate import estimate as estimate
    from ragmeter.runner._evaluate import aevaluate as aevaluate
    from ragmeter.runner._evaluate import check_inputs as check_inputs
    from ragmeter.runner._evaluate import evaluate as evaluate
    from ragmeter.runner._progress import PlainProgress as PlainProgress
    from ragmeter.runner._progress import ProgressReporter as ProgressReporter
    from ragmeter.runner._progress import QuietProgress as QuietProgress
    from ragmeter.runner._progress import RichProgress as RichProgress
    from ragmeter.runner._progress import make_progress as make_progress
    from ragmeter.runner._ray import RayBackend as RayBackend
    from ragmeter.runner._ray import RayBackendError as RayBackendError
    from ragmeter.runner._ray import WorkerPool as WorkerPool
    from ragmeter.runner._task import SampleTask as SampleTask
    from ragmeter.runner._task import TaskOutcome as TaskOutcome
    from ragmeter.runner._task import combine_repeats as combine_repeats
    from ragmeter.runner._task import run_task as run_task

_lazy.attach(__name__, __file__)
