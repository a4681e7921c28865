"""Test kit: helpers for testing code that uses ragmeter (and ragmeter itself).

``assert_metric`` scores a sample or a dataset and fails with the reasons; the pytest plugin
(:mod:`ragmeter.testing.pytest_plugin`, loaded automatically) adds fixtures, a marker and a
session summary. Names load on first use, so the plugin's import stays cheap.
"""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.testing._assertions import assert_metric as assert_metric
    from ragmeter.testing._assertions import findings as findings
    from ragmeter.testing._embeddings import ScriptedEmbeddings as ScriptedEmbeddings
    from ragmeter.testing._embeddings import unit_vector_with_cosine as unit_vector_with_cosine
    from ragmeter.testing._fake_judge import FakeJudgeServer as FakeJudgeServer
    from ragmeter.testing._fake_judge import fake_embedding as fake_embedding
    from ragmeter.testing._fake_judge import fake_judge_answer as fake_judge_answer
    from ragmeter.testing._fake_judge import fake_judge_environment as fake_judge_environment
    from ragmeter.testing._fake_judge import fake_judge_responder as fake_judge_responder
    from ragmeter.testing._fake_server import DEFAULT_MALFORMED_CONTENT as DEFAULT_MALFORMED_CONTENT
    from ragmeter.testing._fake_server import FakeOpenAIServer as FakeOpenAIServer
    from ragmeter.testing._fake_server import Fault as Fault
    from ragmeter.testing._fake_server import RecordedRequest as RecordedRequest
    from ragmeter.testing._fake_server import ScriptedReply as ScriptedReply
    from ragmeter.testing._fake_server import tokenize as tokenize
    from ragmeter.testing._fake_server._anthropic import FakeAnthropicServer as FakeAnthropicServer
    from ragmeter.testing._fake_server._anthropic import input_tokens_of as input_tokens_of
    from ragmeter.testing._ray_cluster import Node as Node
    from ragmeter.testing._ray_cluster import join_ray_node as join_ray_node
    from ragmeter.testing._ray_cluster import local_ray_cluster as local_ray_cluster
    from ragmeter.testing._scripted import ScriptedCall as ScriptedCall
    from ragmeter.testing._scripted import ScriptedJudge as ScriptedJudge
    from ragmeter.testing._testset import data_blocks as data_blocks
    from ragmeter.testing._testset import generation_responder as generation_responder
    from ragmeter.testing._testset import scripted_testset_judge as scripted_testset_judge

_lazy.attach(__name__, __file__)
