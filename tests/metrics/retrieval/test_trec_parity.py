"""Property-based parity with trec_eval (pytrec_eval) on random runs and qrels, to 1e-9."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.metrics.retrieval import (
    MAP,
    MRR,
    PrecisionAtK,
    RecallAtK,
    RPrecision,
    evaluate_run,
    rank_by_score,
)

pytrec_eval = pytest.importorskip("pytrec_eval")

DOCS = [f"d{i}" for i in range(12)]
K_VALUES = (1, 3, 5, 20)  # 20 is larger than any list here

# ragmeter name -> trec_eval measure
MEASURES = {
    "map": "map",
    "mrr": "recip_rank",
    "ndcg": "ndcg",
    "r_precision": "Rprec",
    **{f"precision@{k}": f"P_{k}" for k in K_VALUES},
    **{f"recall@{k}": f"recall_{k}" for k in K_VALUES},
    **{f"ndcg@{k}": f"ndcg_cut_{k}" for k in K_VALUES},
    **{f"map@{k}": f"map_cut_{k}" for k in K_VALUES},
    **{f"hit@{k}": f"success_{k}" for k in K_VALUES},
}
TREC_REQUEST = {
    "map",
    "recip_rank",
    "ndcg",
    "Rprec",
    *(
        f"{m}.{','.join(map(str, K_VALUES))}"
        for m in ("P", "recall", "ndcg_cut", "map_cut", "success")
    ),
}


@st.composite
def run_and_qrels(draw):
    n_queries = draw(st.integers(1, 6))
    run, qrels = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        qrels[qid] = {d: draw(st.integers(0, 3)) for d in judged}
        retrieved = draw(st.lists(st.sampled_from(DOCS), min_size=0, max_size=10, unique=True))
        # few distinct scores, so ties are common; some nudged by less than float32 can see
        # (a tie for trec_eval, which keeps scores as float32) or by just more (not a tie)
        run[qid] = {d: float(draw(st.integers(1, 3))) + draw(NUDGES) for d in retrieved}
    return run, qrels


NUDGES = st.sampled_from([0.0, 0.0, 0.0, 1e-9, -1e-9, 2e-8, -2e-8, 1e-6, -1e-6])


def trec_scores(run, qrels):
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, TREC_REQUEST)
    return evaluator.evaluate(run)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_and_qrels())
def test_every_measure_matches_trec_eval(data):
    run, qrels = data
    expected = trec_scores(run, qrels)
    ours = evaluate_run(run, qrels, list(MEASURES))
    assert sorted(ours.query_ids) == sorted(expected)
    for name, trec_name in MEASURES.items():
        for qid, value in zip(ours.query_ids, ours.scores[name]):
            assert value == pytest.approx(expected[qid][trec_name], abs=1e-9), (name, qid)


@settings(max_examples=200, deadline=None)
@given(run_and_qrels(), st.sampled_from([1, 2, 3, 5, 20]))
def test_mrr_at_k_is_trec_recip_rank_of_the_truncated_run(data, k):
    run, qrels = data
    truncated = {q: {d: run[q][d] for d in rank_by_score(run[q])[:k]} for q in run}
    expected = trec_scores(truncated, qrels)
    ours = evaluate_run(run, qrels, [f"mrr@{k}"])
    for qid, value in zip(ours.query_ids, ours.scores[f"mrr@{k}"]):
        assert value == pytest.approx(expected[qid]["recip_rank"], abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(run_and_qrels(), st.sampled_from([1, 3, 5, 20]))
def test_f1_is_harmonic_mean_of_trec_precision_and_recall(data, k):
    run, qrels = data
    expected = trec_scores(run, qrels)
    ours = evaluate_run(run, qrels, [f"f1@{k}"])
    for qid, value in zip(ours.query_ids, ours.scores[f"f1@{k}"]):
        p, r = expected[qid][f"P_{k}"], expected[qid][f"recall_{k}"]
        assert value == pytest.approx(2 * p * r / (p + r) if p + r else 0.0, abs=1e-9)


def seed_ndcg(grades_in_rank_order, all_grades, k):
    """The seed document's own formula (004), with the ideal taken from every judged doc."""

    def dcg(rels):
        return sum((2**rel - 1) / math.log2(i + 2) for i, rel in enumerate(rels[:k]))

    ideal = dcg(sorted(all_grades, reverse=True))
    return dcg(grades_in_rank_order) / ideal if ideal > 0 else 0.0


@settings(max_examples=200, deadline=None)
@given(run_and_qrels(), st.sampled_from([1, 3, 5, 20]))
def test_exponential_ndcg_matches_the_seed_formula(data, k):
    run, qrels = data
    ours = evaluate_run(run, qrels, [f"ndcg_exp@{k}"])
    for qid, value in zip(ours.query_ids, ours.scores[f"ndcg_exp@{k}"]):
        ranked = [qrels[qid].get(d, 0) for d in rank_by_score(run[qid])]
        expected = seed_ndcg(ranked, list(qrels[qid].values()), k)
        assert value == pytest.approx(expected, abs=1e-9)


def test_ties_are_broken_by_descending_doc_id_as_trec_eval():
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    qrels = {"q": {"a": 1, "b": 1}}
    ours = evaluate_run(run, qrels, ["mrr", "map"])
    expected = trec_scores(run, qrels)["q"]
    assert ours.scores["mrr"][0] == pytest.approx(expected["recip_rank"]) == 0.5
    assert ours.scores["map"][0] == pytest.approx(expected["map"])


def test_scores_equal_in_float32_tie_as_in_trec_eval():
    # 0.7 + 1e-9 > 0.7 in double precision, but both round to the same float32: trec_eval
    # (``float sim``) sees a tie and puts "b" (the greater id) first.
    run = {"q": {"a": 0.7 + 1e-9, "b": 0.7, "c": 0.1}}
    qrels = {"q": {"a": 1}}
    assert rank_by_score(run["q"]) == ["b", "a", "c"]
    expected = trec_scores(run, qrels)["q"]
    ours = evaluate_run(run, qrels, ["mrr", "map", "ndcg", "precision@1"])
    assert expected["recip_rank"] == 0.5
    assert ours.scores["mrr"][0] == 0.5
    for name in ours.scores:
        assert ours.scores[name][0] == pytest.approx(expected[MEASURES[name]], abs=1e-9), name
    # As a ranked list (no scores to compare), the order given is the order scored.
    as_list = evaluate_run({"q": ["a", "b", "c"]}, qrels, ["mrr"])
    assert as_list.scores["mrr"][0] == 1.0


def test_scores_distinct_in_float32_are_not_a_tie():
    run = {"q": {"a": 0.7 + 1e-6, "b": 0.7}}
    qrels = {"q": {"a": 1}}
    assert rank_by_score(run["q"]) == ["a", "b"]
    ours = evaluate_run(run, qrels, ["mrr"])
    assert ours.scores["mrr"][0] == trec_scores(run, qrels)["q"]["recip_rank"] == 1.0


@settings(max_examples=100, deadline=None)
@given(run_and_qrels(), st.sampled_from([2, 3]))
def test_relevance_levels_match_trec_eval(data, level):
    # Metrics at two relevance levels in one call share the ranked matrix, not the counts.
    run, qrels = data
    request = {"map", "recip_rank", "Rprec", "P.3"}
    at_level = pytrec_eval.RelevanceEvaluator(qrels, request, relevance_level=level).evaluate(run)
    at_one = trec_scores(run, qrels)
    metrics = [
        MAP(relevance_level=level),
        MRR(relevance_level=level),
        RPrecision(relevance_level=level),
        PrecisionAtK(3, relevance_level=level),
        RecallAtK(5),
    ]
    ours = evaluate_run(run, qrels, metrics)
    for i, qid in enumerate(ours.query_ids):
        for name, trec_name in [("map", "map"), ("mrr", "recip_rank"), ("r_precision", "Rprec")]:
            assert ours.scores[name][i] == pytest.approx(at_level[qid][trec_name], abs=1e-9)
        assert ours.scores["precision@3"][i] == pytest.approx(at_level[qid]["P_3"], abs=1e-9)
        assert ours.scores["recall@5"][i] == pytest.approx(at_one[qid]["recall_5"], abs=1e-9)


def test_empty_run_and_no_relevant_documents_score_zero_as_trec_eval():
    run = {"empty": {}, "none-relevant": {"x": 1.0}}
    qrels = {"empty": {"a": 1}, "none-relevant": {"x": 0}}
    ours = evaluate_run(run, qrels, ["map", "ndcg@5", "precision@5", "recall@5", "mrr"])
    expected = trec_scores(run, qrels)
    for name, values in ours.scores.items():
        for qid, value in zip(ours.query_ids, values):
            assert value == expected[qid][MEASURES[name]] == 0.0


def test_ranked_lists_and_scored_dicts_give_the_same_scores():
    rng = np.random.default_rng(0)
    run = {f"q{i}": {d: float(rng.integers(0, 4)) for d in DOCS[: 3 + i]} for i in range(5)}
    qrels = {q: {d: int(rng.integers(0, 3)) for d in DOCS[::2]} for q in run}
    as_lists = {q: rank_by_score(scores) for q, scores in run.items()}
    a = evaluate_run(run, qrels, ["map", "ndcg@3"])
    b = evaluate_run(as_lists, qrels, ["map", "ndcg@3"])
    for name in a.scores:
        np.testing.assert_array_equal(a.scores[name], b.scores[name])
