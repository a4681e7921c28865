"""Reading the chunks of a test set on a real local Ray cluster (tests/_ray_cluster.py):
the same graph and questions as in this process, each chunk read once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragmeter.runner import RayBackend
from ragmeter.testing import ScriptedEmbeddings, scripted_testset_judge
from ragmeter.testset import generate_testset
from tests._ray_cluster import local_cluster
from tests.testset._helpers import CHINESE, ENGLISH

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    with local_cluster(num_cpus=2) as address:
        yield address


def _questions(result):
    return [(s.user_input, s.reference, s.reference_context_ids) for s in result.samples]


def test_the_chunks_are_read_on_the_workers_with_the_same_outcome(cluster: str) -> None:
    chunks = [*ENGLISH, *CHINESE]
    local_judge = scripted_testset_judge()
    local = generate_testset(
        chunks, judge=local_judge, embeddings=ScriptedEmbeddings(), n=4, personas=2
    )
    judge = scripted_testset_judge()
    remote = generate_testset(
        chunks,
        judge=judge,
        embeddings=ScriptedEmbeddings(),
        n=4,
        personas=2,
        backend=RayBackend(cluster, workers=2),
    )
    assert _questions(remote) == _questions(local)
    for node_id, node in local.graph.nodes.items():
        there = remote.graph.nodes[node_id]
        assert (there.summary, there.entities, there.keyphrases) == (
            node.summary,
            node.entities,
            node.keyphrases,
        )
    # The 10 chunk readings happened on the workers, not with this process's judge: its
    # calls are the personas, questions and checks only (the local judge made those and
    # the 10 readings).
    assert local_judge.n_calls - judge.n_calls == len(chunks)
    assert remote.usage["graph"].calls == local.usage["graph"].calls == len(chunks)


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="backend must be 'local', 'ray'"):
        generate_testset(ENGLISH, judge=scripted_testset_judge(), n=1, backend="spark")
