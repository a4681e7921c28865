"""Experiments: a RAG pipeline run over a dataset under a concurrency limit, a timeout and
retries; its outputs, latency and errors recorded per sample; the outputs evaluated; the run
stored with its parameters so runs can be compared.

The decorator is ``ragmeter.experiment``; this package is named in the plural so that
importing it never shadows that name on the ``ragmeter`` package.
"""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.experiments._calls import CallPolicy as CallPolicy
    from ragmeter.experiments._calls import PipelineCall as PipelineCall
    from ragmeter.experiments._experiment import Experiment as Experiment
    from ragmeter.experiments._experiment import experiment as experiment
    from ragmeter.experiments._outputs import OUTPUT_FIELDS as OUTPUT_FIELDS
    from ragmeter.experiments._outputs import PipelineOutputError as PipelineOutputError
    from ragmeter.experiments._result import ExperimentResult as ExperimentResult

_lazy.attach(__name__, __file__)
