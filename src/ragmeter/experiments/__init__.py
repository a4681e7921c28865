"""Experiments: a RAG pipeline run over a dataset under a concurrency limit, a timeout and
retries; its outputs, latency and errors recorded per sample; the outputs evaluated; the run
stored with its parameters so runs can be compared.

The decorator is ``ragmeter.experiment``; this package is named in the plural so that
importing it never shadows that name on the ``ragmeter`` package.
"""

from ragmeter.experiments._calls import CallPolicy, PipelineCall
from ragmeter.experiments._experiment import Experiment, experiment
from ragmeter.experiments._outputs import OUTPUT_FIELDS, PipelineOutputError
from ragmeter.experiments._result import ExperimentResult

__all__ = [
    "OUTPUT_FIELDS",
    "CallPolicy",
    "Experiment",
    "ExperimentResult",
    "PipelineCall",
    "PipelineOutputError",
    "experiment",
]
