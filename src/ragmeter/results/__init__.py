"""Evaluation results: per sample, per metric, and how to save and read them back."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.results._conversations import ConversationAggregate as ConversationAggregate
    from ragmeter.results._conversations import ConversationMetric as ConversationMetric
    from ragmeter.results._conversations import ConversationResult as ConversationResult
    from ragmeter.results._conversations import conversation_scales as conversation_scales
    from ragmeter.results._conversations import worst_conversations as worst_conversations
    from ragmeter.results._result import Aggregate as Aggregate
    from ragmeter.results._result import EvaluationResult as EvaluationResult
    from ragmeter.results._result import Group as Group
    from ragmeter.results._result import MetricInfo as MetricInfo
    from ragmeter.results._result import SampleResult as SampleResult
    from ragmeter.results._result import aggregate as aggregate
    from ragmeter.results._store import STORE_FILE as STORE_FILE
    from ragmeter.results._store import RunDatabase as RunDatabase
    from ragmeter.results._store import RunStorageError as RunStorageError
    from ragmeter.results._store import sqlite_code as sqlite_code
    from ragmeter.results._store import storage_error as storage_error
    from ragmeter.results._store import tags_of as tags_of

_lazy.attach(__name__, __file__)
