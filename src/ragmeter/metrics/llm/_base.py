"""Metrics judged by an LLM: thin compositions of shared steps.

They are per-sample metrics (:class:`ragmeter.metrics.SampleMetric`); ``JudgedMetric`` is
that class's former name, kept as an alias.
"""

from __future__ import annotations

from ragmeter._services import run_sync
from ragmeter.metrics._sample import SampleMetric

#: Deprecated alias of :class:`ragmeter.metrics.SampleMetric` (the protocol is not about a
#: judge: ``semantic_similarity`` and ``async def`` function metrics call none).
JudgedMetric = SampleMetric

__all__ = ["JudgedMetric", "run_sync"]
