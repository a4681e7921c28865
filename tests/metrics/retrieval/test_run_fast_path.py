"""judgments_from_scores: the matrix of rank_by_score + build_judgments, byte for byte."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ragmeter.metrics.retrieval._run as run_module  # private: the fast path and its block size
from ragmeter.metrics.retrieval import build_judgments, evaluate_run, rank_by_score

DOCS = [f"d{i}" for i in range(15)]
NAN = float("nan")


def by_sorting(run_scores, qrels, relevance_level=1.0):
    rankings = [rank_by_score(scores) for scores in run_scores]
    return build_judgments(rankings, qrels, relevance_level=relevance_level)


def assert_same(run_scores, qrels, relevance_level=1.0):
    fast = run_module.judgments_from_scores(run_scores, qrels, relevance_level=relevance_level)
    slow = by_sorting(run_scores, qrels, relevance_level)
    assert fast.relevance.dtype == slow.relevance.dtype
    assert fast.relevance.shape == slow.relevance.shape
    assert fast.relevance.tobytes() == slow.relevance.tobytes()
    np.testing.assert_array_equal(fast.n_relevant, slow.n_relevant)
    assert fast.n_relevant.dtype == slow.n_relevant.dtype
    np.testing.assert_array_equal(fast.ideal, slow.ideal)
    return fast


# Scores: a few base values, nudged below float32 precision (ties for trec_eval) or just
# above it; ints, huge values (inf in float32), infinities and signed zeros.
BASES = st.sampled_from([0.0, -0.0, 0.25, 1.0, 3.0, -2.0, 1e-30, 1e39, -1e39, math.inf, -math.inf])
NUDGES = st.sampled_from([0.0, 0.0, 0.0, 1e-9, -1e-9, 2e-8, 1e-6])
SCORES = st.one_of(
    st.builds(lambda base, nudge: base + nudge, BASES, NUDGES),
    st.integers(-3, 3),
    st.floats(allow_nan=False, width=64),
)
GRADES = st.sampled_from([0, 0, 1, 2, 3, -1, 0.0, -0.0, 1.5])


@st.composite
def scored_run(draw, scores=SCORES):
    n_queries = draw(st.integers(0, 6))
    run_scores, qrels = [], []
    for _ in range(n_queries):
        retrieved = draw(st.lists(st.sampled_from(DOCS), max_size=12, unique=True))
        run_scores.append({d: draw(scores) for d in retrieved})
        judged = draw(st.lists(st.sampled_from(DOCS), max_size=8, unique=True))
        qrels.append({d: draw(GRADES) for d in judged})
    return run_scores, qrels


@settings(max_examples=500, deadline=None)
@given(scored_run(), st.sampled_from([1.0, 2.0, 0.5]))
def test_same_matrix_as_sorting(data, relevance_level):
    run_scores, qrels = data
    assert_same(run_scores, qrels, relevance_level)


@settings(max_examples=100, deadline=None)
@given(scored_run(scores=st.one_of(SCORES, st.just(NAN))))
def test_same_matrix_as_sorting_with_nan_scores(data):
    # NaN has no order: such a query is ranked by sorting, exactly as rank_by_score does.
    run_scores, qrels = data
    assert_same(run_scores, qrels)


@pytest.mark.parametrize("seed", range(3))
def test_same_matrix_on_a_larger_random_run(seed, monkeypatch):
    monkeypatch.setattr(run_module, "_BLOCK", 97)  # several blocks, the last one partial
    rng = np.random.default_rng(seed)
    pool = [f"doc{i:05d}" for i in range(5000)]
    run_scores, qrels = [], []
    for _ in range(400):
        depth = int(rng.integers(0, 60))
        docs = rng.choice(len(pool), size=depth, replace=False)
        scores = np.round(rng.random(depth), int(rng.integers(1, 4)))  # exact ties
        near = rng.random(depth) < 0.1
        scores[near] += rng.choice([1e-9, -1e-9, 3e-8], size=int(near.sum()))  # float32 ties
        run_scores.append(dict(zip((pool[d] for d in docs), scores.tolist(), strict=True)))
        judged = list(docs[: int(rng.integers(0, 6))]) + list(rng.integers(0, 5000, size=3))
        qrels.append({pool[d]: int(rng.integers(0, 4)) for d in judged})
    qrels[0] = {}
    j = assert_same(run_scores, qrels)
    assert (j.relevance > 0).sum() > 100


def test_edge_cases():
    assert run_module.judgments_from_scores([], []).relevance.shape == (0, 0)
    assert run_module.judgments_from_scores([{}, {}], [{"a": 1}, {}]).relevance.shape == (2, 0)
    assert_same([{}, {"a": 1.0}], [{"a": 1}, {}])
    assert_same([{"a": 1.0, "b": 1.0, "c": 1.0}], [{"a": 1, "b": 2, "c": 3}])
    assert_same([{"a": 1e300, "b": math.inf}], [{"a": 1, "b": 2}])  # both inf in float32
    j = assert_same([{"a": 0.5, "b": 0.5 + 1e-9, "c": 2}], [{"a": 1, "b": 2, "x": 3}])
    np.testing.assert_array_equal(j.relevance, [[0, 2, 1]])  # c, then b before a (a tie)
    with pytest.raises(ValueError, match="2 runs but 1 qrels"):
        run_module.judgments_from_scores([{}, {}], [{}])


def test_rank_by_score_compares_in_float32():
    assert rank_by_score({"a": 0.5 + 1e-9, "b": 0.5}) == ["b", "a"]
    assert rank_by_score({"a": 0.5 + 1e-6, "b": 0.5}) == ["a", "b"]
    assert rank_by_score({"a": 1e39, "b": 1e300, "c": 3}) == ["b", "a", "c"]
    assert rank_by_score({"b": 1, "a": True, "c": 0.99999999999}) == ["c", "b", "a"]
    assert rank_by_score({}) == []


def test_a_repeated_document_in_a_ranked_list_counts_once():
    qrels = [{"a": 2, "b": 1, "z": 0}]
    j = build_judgments([["a", "z", "a", "b", "z", "b", "x"]], qrels)
    np.testing.assert_array_equal(j.relevance, [[2, 0, 0, 1, 0, 0, 0]])
    j = build_judgments([["z", "z", "a", "x", "x"]], qrels)  # repeats of unjudged / grade 0
    np.testing.assert_array_equal(j.relevance, [[0, 0, 2, 0, 0]])


def test_evaluate_run_mixes_scored_and_ranked_queries():
    run = {"q1": {"a": 1.0, "b": 2.0}, "q2": ["a", "b"], "q3": {"b": 0.5 + 1e-9, "c": 0.5}}
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"b": 1}, "q4": {"a": 1}}
    scores = evaluate_run(run, qrels, ["mrr"])
    assert scores.query_ids == ["q1", "q2", "q3"]
    np.testing.assert_array_equal(scores.scores["mrr"], [0.5, 1.0, 0.5])
    scored_only = evaluate_run({q: run[q] for q in ("q1", "q3")}, qrels, ["mrr"])
    np.testing.assert_array_equal(scored_only.scores["mrr"], [0.5, 0.5])
