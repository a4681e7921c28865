"""bench/demo_cases.py on two tiny synthetic results files: one that meets every target of
issue 35, one that misses several. Expected values are worked out by hand in the comments."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
_spec = importlib.util.spec_from_file_location("demo_cases", ROOT / "bench" / "demo_cases.py")
assert _spec is not None and _spec.loader is not None
demo_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo_cases)


def ok(score: float, **details: object) -> dict:
    return {"score": score, "status": "ok", "reason": "", "details": details}


def unscored(status: str) -> dict:
    return {"score": None, "status": status, "reason": ""}


def claim(supported: bool, p: float) -> dict:
    return {"claim": "c", "supported": supported, "p_supported": p}


def record(sample_id: str, case: str, question: str, **metrics: dict) -> dict:
    sample = {"user_input": question, "response": "r", "metadata": {"case": case}}
    return {"id": sample_id, "sample": sample, "metrics": metrics}


#: Meets every target: means per target are 1.0, 0.9, 0.2, 0.4, 0.0 (one scored of two).
GOOD = [
    record(
        "g1",
        "grounded",
        "How long is the return window?",
        faithfulness=ok(1.0, claims=[claim(True, 0.9)]),
        answer_relevancy=ok(0.9, questions=["What is the return window?", "When can I return?"]),
        context_precision=ok(1.0, contexts=[{"rank": 1, "useful": True, "p_useful": 0.8}]),
        context_recall=ok(1.0),
    ),
    record(
        "h1",
        "hallucinated",
        "How long does the battery last?",
        faithfulness=ok(0.2, claims=[claim(False, 0.2)]),
        answer_relevancy=ok(0.7, questions=["How long does the watch last?"]),
        context_recall=ok(1.0),
    ),
    record(
        "o1",
        "off_topic",
        "Does the warranty cover a cracked screen?",
        faithfulness=unscored("not_applicable"),
        answer_relevancy=ok(0.4, questions=["When are the stores open?"]),
        context_recall=ok(0.8),
    ),
    record("m1", "missed_retrieval", "Can I swim with it?", context_recall=ok(0.0)),
    record(
        "m2", "missed_retrieval", "When is it shipped?", context_recall=unscored("not_applicable")
    ),
]

#: Misses: off_topic answer_relevancy 0.9 (> 0.6), missed_retrieval context_recall with no
#: scored sample (one failed, one not_started), hallucinated faithfulness 0.8 (> 0.5), one
#: copied question of two (50% > 5%), two verdicts contradicting their probability (a claim
#: supported at p 0.3, a context not useful at p 0.7) and one faithfulness score contradicting
#: its claims (0.8 with no claim supported).
BAD = [
    record(
        "g1",
        "grounded",
        "保修期多久？",
        # NFKC folds the full-width question mark; whitespace and punctuation are dropped.
        faithfulness=ok(0.95, claims=[claim(True, 0.3)]),
        answer_relevancy=ok(0.9, questions=["保修期 多久?", "电池保修多久？"]),
        context_precision=ok(
            0.5,
            contexts=[
                {"rank": 1, "useful": False, "p_useful": 0.7},
                {"rank": 2, "useful": True},  # no probability: not checked
            ],
        ),
        context_recall=ok(1.0),
    ),
    record(
        "h1",
        "hallucinated",
        "How long does the battery last?",
        faithfulness=ok(0.8, claims=[claim(False, 0.1)]),
        answer_relevancy=ok(0.8, questions=["How long does the watch last?"]),
    ),
    record("o1", "off_topic", "Is the screen covered?", answer_relevancy=ok(0.9, questions=[])),
    record("m1", "missed_retrieval", "Can I swim with it?", context_recall=unscored("failed")),
    record("m2", "missed_retrieval", "When is it shipped?", context_recall=unscored("not_started")),
]


def write(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


def outcomes(records: list[dict]) -> dict[str, tuple[str, bool]]:
    return {c.name: (c.measured, c.met) for c in demo_cases.checks(records)}


def test_every_target_met() -> None:
    assert outcomes(GOOD) == {
        "answer_relevancy mean, off_topic": ("0.400 (1/1)", True),
        "answer_relevancy mean, grounded": ("0.900 (1/1)", True),
        "context_recall mean, missed_retrieval": ("0.000 (1/2; 1 n/a)", True),
        "context_recall mean, grounded": ("1.000 (1/1)", True),
        "faithfulness mean, hallucinated": ("0.200 (1/1)", True),
        "faithfulness mean, grounded": ("1.000 (1/1)", True),
        "generated questions equal to the question": ("0/4 (0.0%)", True),
        "verdicts contradicting their probability": ("0/3", True),  # 2 claims, 1 context
        "faithfulness scores contradicting their claims": ("0/2", True),  # g1, h1
    }


def test_targets_missed() -> None:
    assert outcomes(BAD) == {
        "answer_relevancy mean, off_topic": ("0.900 (1/1)", False),
        "answer_relevancy mean, grounded": ("0.900 (1/1)", True),
        "context_recall mean, missed_retrieval": (
            "no scored sample (0/2; 1 failed; 1 not_started)",
            False,
        ),
        "context_recall mean, grounded": ("1.000 (1/1)", True),
        "faithfulness mean, hallucinated": ("0.800 (1/1)", False),
        "faithfulness mean, grounded": ("0.950 (1/1)", True),
        "generated questions equal to the question": ("1/3 (33.3%)", False),
        "verdicts contradicting their probability": ("2/3", False),
        "faithfulness scores contradicting their claims": ("1/2", False),
    }
    assert demo_cases.copied_questions(BAD) == (1, 3)
    assert demo_cases.verdict_contradictions(BAD) == (2, 3)
    assert demo_cases.faithfulness_contradictions(BAD) == (1, 2)


def test_no_generated_questions_counts_zero_of_zero() -> None:
    records = [
        record("g1", "grounded", "q?", answer_relevancy=ok(0.9, verdict="relevant")),
        record("o1", "off_topic", "q?", answer_relevancy=ok(0.1)),
    ]
    (row,) = [c for c in demo_cases.checks(records) if c.name.startswith("generated")]
    assert (row.measured, row.met) == ("0/0 (no generated questions)", True)


def test_a_faithfulness_score_below_half_with_every_claim_supported_contradicts() -> None:
    records = [record("h1", "hallucinated", "q?", faithfulness=ok(0.4, claims=[claim(True, 0.6)]))]
    assert demo_cases.faithfulness_contradictions(records) == (1, 1)


def test_per_case_table_names_the_unscored() -> None:
    table = demo_cases.render_cases(BAD).splitlines()
    assert table[0] == "| metric | grounded | hallucinated | off_topic | missed_retrieval |"
    (recall,) = [line for line in table if line.startswith("| context_recall ")]
    # context_recall was not computed for h1 and o1: their cells say 0 of 0.
    assert recall == (
        "| context_recall | 1.000 (1/1) | — (0/0) | — (0/0) | — (0/2; 1 failed; 1 not_started) |"
    )


@pytest.mark.parametrize(
    ("records", "check", "code"), [(GOOD, True, 0), (BAD, True, 1), (BAD, False, 0)]
)
def test_exit_code(tmp_path: Path, records: list[dict], check: bool, code: int, capsys) -> None:
    argv = ["--results", str(write(tmp_path, records)), *(["--check"] if check else [])]
    assert demo_cases.main(argv) == code
    assert "| check | measured | target | |" in capsys.readouterr().out


def test_missing_results_file(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nothing.jsonl"
    assert demo_cases.main(["--results", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(missing) in err and "make demo" in err


def test_copies_the_metric_left_out_are_counted_too() -> None:
    left_out = [
        {"text": "How long is the return window?", "why": "the user's question word for word"},
        {"text": "What is Apollo 11?", "why": "a question of the prompt's examples"},
    ]
    records = [
        record(
            "g1",
            "grounded",
            "How long is the return window?",
            answer_relevancy=ok(0.9, questions=["When can I return?"], left_out=left_out),
        )
    ]
    assert demo_cases.copied_questions(records) == (1, 3)
