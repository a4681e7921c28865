"""Test kit: helpers for testing code that uses ragmeter (and ragmeter itself).

``assert_metric`` scores a sample or a dataset and fails with the reasons; the pytest plugin
(:mod:`ragmeter.testing.pytest_plugin`, loaded automatically) adds fixtures, a marker and a
session summary. Names load on first use, so the plugin's import stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter.testing._assertions import assert_metric, findings
    from ragmeter.testing._embeddings import ScriptedEmbeddings, unit_vector_with_cosine
    from ragmeter.testing._fake_server import (
        DEFAULT_MALFORMED_CONTENT,
        FakeOpenAIServer,
        Fault,
        RecordedRequest,
        ScriptedReply,
        tokenize,
    )
    from ragmeter.testing._fake_server._anthropic import FakeAnthropicServer, input_tokens_of
    from ragmeter.testing._ray_cluster import Node, join_ray_node, local_ray_cluster
    from ragmeter.testing._scripted import ScriptedCall, ScriptedJudge
    from ragmeter.testing._testset import data_blocks, generation_responder, scripted_testset_judge

_WHERE = {
    "DEFAULT_MALFORMED_CONTENT": "_fake_server",
    "FakeAnthropicServer": "_fake_server._anthropic",
    "FakeOpenAIServer": "_fake_server",
    "Fault": "_fake_server",
    "RecordedRequest": "_fake_server",
    "ScriptedCall": "_scripted",
    "ScriptedEmbeddings": "_embeddings",
    "ScriptedJudge": "_scripted",
    "ScriptedReply": "_fake_server",
    "assert_metric": "_assertions",
    "findings": "_assertions",
    "scripted_testset_judge": "_testset",
    "data_blocks": "_testset",
    "generation_responder": "_testset",
    "input_tokens_of": "_fake_server._anthropic",
    "Node": "_ray_cluster",
    "tokenize": "_fake_server",
    "join_ray_node": "_ray_cluster",
    "local_ray_cluster": "_ray_cluster",
    "unit_vector_with_cosine": "_embeddings",
}

__all__ = [
    "DEFAULT_MALFORMED_CONTENT",
    "FakeAnthropicServer",
    "FakeOpenAIServer",
    "Fault",
    "Node",
    "RecordedRequest",
    "ScriptedCall",
    "ScriptedEmbeddings",
    "ScriptedJudge",
    "ScriptedReply",
    "assert_metric",
    "data_blocks",
    "findings",
    "generation_responder",
    "input_tokens_of",
    "join_ray_node",
    "local_ray_cluster",
    "scripted_testset_judge",
    "tokenize",
    "unit_vector_with_cosine",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
