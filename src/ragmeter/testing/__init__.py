"""Test kit: helpers for testing code that uses ragmeter (and ragmeter itself)."""

from ragmeter.testing._fake_server import FakeOpenAIServer, Fault, RecordedRequest, ScriptedReply

__all__ = ["FakeOpenAIServer", "Fault", "RecordedRequest", "ScriptedReply"]
