"""Generating a test set on a real local Ray cluster (tests/_ray_cluster.py): the chunks
read and the questions written and checked on the workers give the same graph and questions
as in this process, with the same calls."""

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


def test_chunks_read_and_questions_written_on_workers_give_the_same_outcome(cluster: str) -> None:
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
    # The chunk readings, the questions and their checks happened on the workers, with the
    # same number of calls as here; this process's judge only chose the personas.
    assert remote.usage["graph"].calls == local.usage["graph"].calls == len(chunks)
    for phase in ("questions", "answerability"):
        assert remote.usage[phase].calls == local.usage[phase].calls > 0
    assert judge.n_calls == remote.usage["personas"].calls == local.usage["personas"].calls
    assert local_judge.n_calls == sum(u.calls for u in local.usage.values())


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="backend must be 'local', 'ray'"):
        generate_testset(ENGLISH, judge=scripted_testset_judge(), n=1, backend="spark")
