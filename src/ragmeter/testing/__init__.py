"""Test kit: helpers for testing code that uses ragmeter (and ragmeter itself)."""

from ragmeter.testing._embeddings import ScriptedEmbeddings, unit_vector_with_cosine
from ragmeter.testing._fake_server import FakeOpenAIServer, Fault, RecordedRequest, ScriptedReply
from ragmeter.testing._scripted import ScriptedCall, ScriptedJudge

__all__ = [
    "FakeOpenAIServer",
    "Fault",
    "RecordedRequest",
    "ScriptedCall",
    "ScriptedEmbeddings",
    "ScriptedJudge",
    "ScriptedReply",
    "unit_vector_with_cosine",
]
