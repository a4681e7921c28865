"""Context precision and recall without an LLM: by ids or by string similarity."""

from ragmeter.metrics.context.id_context_precision import IDContextPrecision
from ragmeter.metrics.context.id_context_recall import IDContextRecall
from ragmeter.metrics.context.string_context_precision import StringContextPrecision
from ragmeter.metrics.context.string_context_recall import StringContextRecall

__all__ = [
    "IDContextPrecision",
    "IDContextRecall",
    "StringContextPrecision",
    "StringContextRecall",
]
