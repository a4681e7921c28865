"""Typed details: every stored shape loads into records and writes back unchanged."""

from __future__ import annotations

import json

import pytest

from ragmeter.metrics import (
    ClaimCheck,
    ClaimVerdict,
    ContextCriterion,
    ContextJudgment,
    Details,
    EntityFinding,
    GeneratedQuestion,
    HopUse,
    MetricResult,
    NoiseClaimVerdict,
    PassageMatch,
    StatementFinding,
    Status,
)

#: Details as the shipped metrics stored them before they were typed (one per metric kind).
OLD_SHAPES: dict[str, dict] = {
    "faithfulness": {
        "claims": [
            {"claim": "a", "supported": True, "reason": "r1", "p_supported": 0.9},
            {"claim": "b", "supported": False, "reason": "r2", "p_supported": 0.2},
        ],
        "soft_score": 0.55,
        "repeats": [0.5, 0.5],
    },
    "answer_correctness": {
        "f_score": 0.5,
        "similarity": 0.9,
        "claims": [
            {"claim": "a", "side": "response", "in_reference": True},
            {"claim": "c", "side": "reference", "in_response": False},
        ],
        "tp": 1,
        "fp": 0,
        "fn": 1,
    },
    "noise_sensitivity_relevant": {
        "claims": [
            {
                "claim": "x",
                "correct": False,
                "from_relevant_context": True,
                "from_irrelevant_context": False,
                "counted": True,
            }
        ],
        "relevant_contexts": [1, 3],
    },
    "context_precision": {
        "contexts": [
            {"rank": 1, "useful": True, "reason": "r", "p_useful": None},
            {"rank": 2, "useful": False, "reason": "", "p_useful": 0.25},
        ]
    },
    "context_relevance": {
        "contexts": [{"rank": 1, "relevant": False, "reason": "off", "p_relevant": None}]
    },
    "context_recall": {
        "statements": [
            {"statement": "s1", "found": True, "contexts": [1, 2]},
            {"statement": "s2", "found": False, "contexts": []},
        ]
    },
    "context_entity_recall": {"entities": [{"entity": "发票", "in_contexts": False}]},
    "answer_relevancy": {
        "questions": ["q1", "q2"],
        "similarities": [0.5, 0.25],
        "noncommittal": False,
    },
    "answer_relevancy_noncommittal": {"questions": ["q"], "noncommittal": True},
    "string_context_recall": {"verdicts": [0, 1], "similarities": [0.2, 0.9]},
    "id_context_precision": {"verdicts": [1, 0]},
    "id_context_recall": {"missing": ["b", "c"]},
    "rouge_l": {"precision": 0.5, "recall": 0.25},
    "tone": {"level": 2, "label": "2", "distribution": {"1": 0.5, "2": 0.5}, "level_score": 0.25},
    "sql_equivalence": {
        "ordered": True,
        "columns": 2,
        "first_difference": {"row": 1, "generated": "('b', 2)"},
        "fallback": "same_text",
    },
}


@pytest.mark.parametrize("metric", list(OLD_SHAPES))
def test_old_shapes_load_and_write_back_unchanged(metric):
    stored = OLD_SHAPES[metric]
    result = MetricResult.from_dict({"score": 0.5, "status": "ok", "details": stored})
    assert isinstance(result.details, Details)
    assert result.to_dict()["details"] == stored
    # through JSON too, as results.jsonl, resume files and stores hold it
    text = json.dumps(result.to_dict())
    assert MetricResult.from_dict(json.loads(text)).details == stored
    assert dict(result.details) == stored  # read as a mapping, it is the stored form


def test_old_shapes_load_as_typed_records():
    def load(metric: str) -> Details:
        return Details.from_dict(OLD_SHAPES[metric])

    faithfulness = load("faithfulness")
    assert faithfulness.claims[1] == ClaimVerdict("b", ClaimCheck.SUPPORTED, False, "r2", 0.2)
    assert faithfulness.extra == {"soft_score": 0.55, "repeats": [0.5, 0.5]}
    sides = [(c.side, c.check, c.verdict) for c in load("answer_correctness").claims]
    assert sides == [
        ("response", ClaimCheck.IN_REFERENCE, True),
        ("reference", ClaimCheck.IN_RESPONSE, False),
    ]
    (noisy,) = load("noise_sensitivity_relevant").claims
    assert isinstance(noisy, NoiseClaimVerdict) and noisy.counted and noisy.verdict is False
    assert load("context_precision").contexts == (
        ContextJudgment(1, ContextCriterion.USEFUL, True, "r"),
        ContextJudgment(2, ContextCriterion.USEFUL, False, "", 0.25),
    )
    assert load("context_relevance").contexts[0].criterion is ContextCriterion.RELEVANT
    assert load("context_recall").statements == (
        StatementFinding("s1", True, (1, 2)),
        StatementFinding("s2", False),
    )
    assert load("context_entity_recall").entities == (EntityFinding("发票", False),)
    relevancy = load("answer_relevancy")
    assert relevancy.questions == (GeneratedQuestion("q1", 0.5), GeneratedQuestion("q2", 0.25))
    assert relevancy.noncommittal is False and not relevancy.extra
    recall = load("string_context_recall")
    assert recall.matches == (PassageMatch(False, 0.2), PassageMatch(True, 0.9))
    assert load("id_context_recall").extra == {"missing": ["b", "c"]}
    assert load("tone").extra == OLD_SHAPES["tone"]


def test_multihop_claims_of_the_old_shape_load_with_their_text():
    stored = {
        "hops": [
            {"hop": 1, "used": True, "claims": [1]},
            {"hop": 2, "used": False, "claims": []},
        ],
        "claims": [{"claim": 1, "text": "The X200 comes with Buds S."}, {"claim": 2, "text": "B"}],
    }
    details = MetricResult.from_dict({"score": 0.5, "status": "ok", "details": stored}).details
    assert [c.text for c in details.claims] == ["The X200 comes with Buds S.", "B"]
    assert all(c.check is None and c.verdict is None for c in details.claims)
    assert details.hops == (HopUse(1, (1,)), HopUse(2))
    # written back in the new shape: the claim is its text
    assert details.to_dict()["claims"] == [{"claim": "The X200 comes with Buds S."}, {"claim": "B"}]
    assert details.to_dict()["hops"] == stored["hops"]


def test_new_shapes_round_trip():
    details = Details(
        claims=(ClaimVerdict("a", ClaimCheck.SUPPORTED, True, "why", 0.75), ClaimVerdict("b")),
        matches=(PassageMatch(True, 0.5), PassageMatch(False, 0.25)),
        extra={"soft_score": 0.75},
    )
    stored = details.to_dict()
    assert stored["verdicts"] == [1, 0] and stored["similarities"] == [0.5, 0.25]
    again = Details.from_dict(json.loads(json.dumps(stored)))
    assert again.claims == details.claims and again.matches == details.matches
    assert again == details


def test_ok_keeps_a_function_metrics_keys_as_extra():
    result = MetricResult.ok(1, "why", tokens=3, claims=["not", "records"], details={"mine": 1})
    assert result.details.extra == {
        "details": {"mine": 1},
        "tokens": 3,
        "claims": ["not", "records"],
    }
    assert result.details.claims == ()
    assert result.to_dict()["details"] == {
        "details": {"mine": 1},
        "tokens": 3,
        "claims": ["not", "records"],
    }


def test_ok_reads_known_keys_and_typed_details():
    typed = Details(entities=(EntityFinding("e", True),))
    result = MetricResult.ok(0.5, details=typed, extra_key=1)
    assert result.details.entities == typed.entities and result.details.extra == {"extra_key": 1}
    parsed = MetricResult.ok(0.5, entities=[{"entity": "e", "in_contexts": True}])
    assert parsed.details.entities == typed.entities


def test_a_plain_mapping_given_to_the_constructor_is_read_as_the_stored_form():
    result = MetricResult(None, Status.FAILED, error="x", details={"repeats": [None, None]})
    assert isinstance(result.details, Details) and result.details["repeats"] == [None, None]
    merged = result.details.merged({"fallback": "f"})
    assert merged.extra == {"repeats": [None, None], "fallback": "f"}
    assert result.details.with_extra(n=1).extra == {"repeats": [None, None], "n": 1}


def test_empty_details_are_not_written():
    assert "details" not in MetricResult.ok(1.0).to_dict()
    assert not Details() and Details() == {}


def test_entries_the_records_cannot_write_back_unchanged_stay_as_given():
    own = {
        "claims": [{"claim": "x", "supported": True, "source": "doc 2"}],
        "contexts": ["not a judgment"],
        "statements": [{"statement": "s", "found": True, "contexts": [1], "weight": 2}],
        "hops": [{"hop": 1, "used": True, "claims": []}],
    }
    details = MetricResult.ok(1.0, **own).details
    assert not (details.claims or details.contexts or details.statements or details.hops)
    assert details.extra == own and details.to_dict() == own


def test_results_with_and_without_details_pickle_and_copy():
    # Results travel between processes (Ray workers, multiprocessing): the shared empty
    # details of plain results included.
    import copy
    import pickle

    from ragmeter.metrics import MetricResult

    results = [
        MetricResult.ok(0.5),
        MetricResult.ok_finite(0.25),
        MetricResult.failed("boom"),
        MetricResult.not_applicable("no reference"),
        MetricResult.ok(1.0, "why", tokens=3),
    ]
    for result in results:
        assert pickle.loads(pickle.dumps(result)) == result
        assert copy.deepcopy(result) == result
        assert pickle.loads(pickle.dumps(result)).to_dict() == result.to_dict()
