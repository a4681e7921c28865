"""The knowledge graph: one judge call per chunk, entity and similarity edges, files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from ragmeter.judge import JudgeConfigError, JudgeOutputError
from ragmeter.testing import ScriptedEmbeddings, generation_responder, scripted_testset_judge
from ragmeter.testset import KnowledgeGraph, LinkSettings, abuild_graph, entity_key
from tests.testset._helpers import CHINESE, ENGLISH, chunk


def build(chunks, judge=None, embeddings=None, **options):
    judge = judge or scripted_testset_judge()
    embeddings = embeddings or ScriptedEmbeddings()
    return asyncio.run(abuild_graph(chunks, judge=judge, embeddings=embeddings, **options))


def pairs(graph, kind):
    return {(e.source, e.target) for e in graph.edges_of(kind)}


def test_each_chunk_costs_one_judge_call_and_one_embedding():
    judge = scripted_testset_judge()
    embeddings = ScriptedEmbeddings()
    graph = build(ENGLISH, judge, embeddings)
    assert len(judge.calls) == len(ENGLISH)
    assert sorted(embeddings.calls) == sorted(c.text for c in ENGLISH)
    node = graph.nodes["a#0"]
    assert node.summary == "Orion X2 was released by Vega Labs in March 2021."
    assert node.entities == ("Orion X2", "Vega Labs", "March 2021")
    assert node.embedding is not None and node.embedding.shape == (16,)
    assert graph.meta["prompt_versions"] == ["chunk_analysis@1/en"]


def test_entity_edges_join_chunks_that_share_an_entity_but_not_overlapping_neighbours():
    graph = build(ENGLISH)
    edges = {(e.source, e.target): e.shared for e in graph.edges_of("entity")}
    assert edges == {
        ("a#0", "a#2"): ("Vega Labs",),
        ("a#0", "b#0"): ("Vega Labs",),
        ("a#0", "b#1"): ("Orion X2",),
        ("a#2", "b#0"): ("Vega Labs",),
    }


def test_chinese_chunks_are_read_with_chinese_prompts():
    judge = scripted_testset_judge()
    graph = build(CHINESE, judge)
    assert all(node.language == "zh" for node in graph.nodes.values())
    assert "你负责为问答出题系统整理" in judge.calls[0].messages[0].content
    assert ("zh-a#0", "zh-b#1") in pairs(graph, "entity")
    assert graph.nodes["zh-a#0"].entities == ("星河耳机", "听澜科技")


def test_entity_names_match_across_case_width_spacing_and_small_variants():
    assert entity_key("The Vega-Labs") == entity_key("ＶＥＧＡ labs") == "vegalabs"
    chunks = [
        chunk("p#0", "Vega Labs makes phones."),
        chunk("q#0", "[[vega-labs]] is in Oslo."),
        chunk("r#0", "[[Vega Lab]] has a store."),  # vegalab: the same as vegalabs
        chunk("s#0", "[[Vegas]] has a casino."),  # vegas: too short to match fuzzily
    ]
    graph = build(chunks)
    assert graph.nodes["s#0"].entities == ("Vegas",)
    assert pairs(graph, "entity") == {("p#0", "q#0"), ("p#0", "r#0"), ("q#0", "r#0")}


def test_an_entity_in_too_many_chunks_makes_no_edges():
    chunks = [chunk(f"d{i}#0", f"Acme sells item {i}.") for i in range(6)]
    linked = build(chunks, settings=LinkSettings(max_entity_chunks=6))
    assert len(linked.edges_of("entity")) == 15  # all pairs of 6
    unlinked = build(chunks, settings=LinkSettings(max_entity_chunks=5))
    assert unlinked.edges_of("entity") == []
    assert unlinked.meta["entities_too_common"] == 1


def similar_vectors(groups: dict[str, int]):
    """Chunks in the same group get nearly the same vector; groups are orthogonal."""

    def vector(text: str) -> list[float]:
        for marker, axis in groups.items():
            if marker in text:
                v = np.zeros(16)
                v[axis] = 1.0
                v[15] = 0.1 * (len(text) % 3)
                return v.tolist()
        v = np.zeros(16)
        v[14] = 1.0
        return v.tolist()

    return vector


def test_similarity_edges_link_each_chunk_to_its_nearest_above_the_threshold():
    chunks = [
        chunk("x#0", "Plan Alpha costs 10 dollars."),
        chunk("y#0", "Plan Alpha includes support."),
        chunk("z#0", "Plan Alpha starts in May, yes."),
        chunk("w#0", "Unrelated text entirely here."),
    ]
    embeddings = ScriptedEmbeddings(similar_vectors({"Alpha": 1}))
    graph = build(chunks, embeddings=embeddings, settings=LinkSettings(similarity_threshold=0.9))
    assert pairs(graph, "similarity") == {("x#0", "y#0"), ("x#0", "z#0"), ("y#0", "z#0")}
    assert all(0.9 <= e.score <= 1.0 for e in graph.edges_of("similarity"))
    graph.link(LinkSettings(similarity_threshold=0.9, max_similar=1))
    assert len(graph.edges_of("similarity")) <= 3
    assert all(len([e for e in graph.edges_of("similarity") if c in (e.source, e.target)]) >= 1
               for c in ("x#0", "y#0", "z#0"))  # fmt: skip


def test_similarity_skips_overlapping_neighbours_of_the_same_document():
    chunks = [
        chunk("d#0", "Plan Alpha costs 10 dollars.", index=0),
        chunk("d#1", "Plan Alpha includes support.", index=1),
        chunk("d#2", "Plan Alpha starts in May, yes.", index=2),
    ]
    embeddings = ScriptedEmbeddings(similar_vectors({"Alpha": 1}))
    graph = build(chunks, embeddings=embeddings, settings=LinkSettings(similarity_threshold=0.9))
    assert pairs(graph, "similarity") == {("d#0", "d#2")}


def test_saved_graph_loads_equal_and_relinks_without_the_judge(tmp_path: Path):
    graph = build(ENGLISH)
    path = graph.save(tmp_path / "graph.json")
    loaded = KnowledgeGraph.load(path)
    assert loaded.edges == graph.edges
    assert loaded.settings == graph.settings
    for node_id, node in graph.nodes.items():
        other = loaded.nodes[node_id]
        assert (other.summary, other.entities, other.keyphrases, other.index) == (
            node.summary,
            node.entities,
            node.keyphrases,
            node.index,
        )
        np.testing.assert_array_equal(other.embedding, node.embedding)
    loaded.link(LinkSettings(max_entity_chunks=2))  # Vega Labs (3 chunks) no longer links
    assert pairs(loaded, "entity") == {("a#0", "b#1")}


def test_loading_something_else_says_what_is_wrong(tmp_path: Path):
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"nodes": []}))
    with pytest.raises(ValueError, match="not a ragmeter knowledge graph"):
        KnowledgeGraph.load(path)
    path.write_text("{")
    with pytest.raises(ValueError, match="not a readable knowledge graph"):
        KnowledgeGraph.load(path)


def test_checkpoint_resumes_a_build_and_reanalyses_changed_chunks(tmp_path: Path):
    checkpoint = tmp_path / "nodes.jsonl"
    build(ENGLISH, checkpoint=checkpoint)
    with checkpoint.open("a") as out:
        out.write('{"id": "cut sh')  # a line cut short by a kill
    judge = scripted_testset_judge()
    changed = [*ENGLISH[:-1], chunk("b#1", "Orion X2 now has a 6.3 inch screen.", index=1)]
    graph = build(changed, judge, checkpoint=checkpoint)
    assert len(judge.calls) == 1  # only the changed chunk
    assert graph.nodes["b#1"].summary == "Orion X2 now has a 6.3 inch screen."
    assert list(graph.nodes) == [c.id for c in changed]


def test_a_chunk_the_judge_cannot_read_is_kept_with_its_error():
    respond = generation_responder()

    def flaky(messages, schema):
        if "battery" in messages[-1].content:
            return JudgeOutputError("no JSON in the answer")
        return respond(messages, schema)

    from ragmeter.testing import ScriptedJudge

    graph = build(ENGLISH, ScriptedJudge(flaky))
    assert "JudgeOutputError" in graph.nodes["a#1"].error
    assert len(graph.analysed) == 4
    assert graph.summary()["analysed"] == 4


def test_a_judge_that_refuses_its_configuration_stops_the_build():
    from ragmeter.testing import ScriptedJudge

    judge = ScriptedJudge(lambda m, s: JudgeConfigError("401: invalid API key"))
    with pytest.raises(JudgeConfigError):
        build(ENGLISH, judge)


def test_duplicate_chunk_ids_are_refused():
    with pytest.raises(ValueError, match="share the id 'a#0'"):
        build([ENGLISH[0], ENGLISH[0]])


class Killed(Exception):
    """Not a judge error: it stops the build, like a kill."""


def test_a_build_killed_midway_keeps_every_chunk_the_judge_already_read(tmp_path: Path):
    from ragmeter.testing import ScriptedJudge

    respond = generation_responder()
    answered: list[str] = []

    def dies_on_the_fourth(messages, schema):
        if len(answered) == 3:
            return Killed()
        answered.append(1)
        return respond(messages, schema)

    checkpoint = tmp_path / "nodes.jsonl"
    with pytest.raises(Killed):
        build(ENGLISH, ScriptedJudge(dies_on_the_fourth), checkpoint=checkpoint)
    judge = scripted_testset_judge()
    graph = build(ENGLISH, judge, checkpoint=checkpoint)
    assert len(judge.calls) == len(ENGLISH) - 3
    assert all(node.embedding is not None for node in graph.nodes.values())
    assert graph.edges == build(ENGLISH).edges
