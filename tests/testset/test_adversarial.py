"""Adversarial synthesizers (unanswerable, false premise, calculation, temporal), each with
its own acceptance check and forced failures, the arithmetic checker, and difficulty tiers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragmeter import evaluate
from ragmeter._text import numbers_in  # private: the shared number extraction
from ragmeter.testing import (
    FakeOpenAIServer,
    ScriptedEmbeddings,
    ScriptedJudge,
    data_blocks,
    generation_responder,
    scripted_testset_judge,
)
from ragmeter.testset import generate_testset, parse_mix
from ragmeter.testset._arithmetic import (  # private: the checked calculations
    CalculationError,
    Value,
    check_calculation,
    evaluate_expression,
    states_result,
)
from ragmeter.testset._difficulty import (  # private: the difficulty levels
    Difficulty,
    paraphrase_distance,
)
from ragmeter.testset._temporal import (  # private: the temporal anchors
    temporal_anchors,
    temporal_phrases,
    temporal_problem,
)
from tests.testset._helpers import CHINESE, ENGLISH, chunk

ALWAYS = staticmethod(lambda _: True)


def run(chunks=ENGLISH, judge=None, embeddings=None, **options):
    options.setdefault("personas", 2)
    return generate_testset(
        chunks,
        judge=judge or scripted_testset_judge(),
        embeddings=embeddings or ScriptedEmbeddings(),
        **options,
    )


def rejected(result, name):
    return dict(result.accounting.synthesizers[name].rejected)


# -- the mix -----------------------------------------------------------------------------------
def test_the_new_synthesizers_and_their_aliases_are_in_the_mix():
    assert parse_mix("out_of_scope=1,negation=1,aggregation=1,conditional=1") == {
        "unanswerable": 0.25,
        "false_premise": 0.25,
        "calculation": 0.25,
        "temporal": 0.25,
    }
    assert parse_mix(None) == {"single": 0.5, "multi": 0.3, "compare": 0.2}  # unchanged
    with pytest.raises(ValueError, match="unanswerable"):
        parse_mix("trick=1")  # the error lists the synthesizers, new ones included


# -- unanswerable --------------------------------------------------------------------------------
@pytest.mark.parametrize("chunks", [ENGLISH, CHINESE], ids=["en", "zh"])
def test_unanswerable_questions_abstain_and_no_checked_chunk_answers_them(chunks):
    judge = scripted_testset_judge()
    result = run(chunks, judge=judge, n=2, mix="unanswerable=1")
    assert len(result) == 2
    ids = {c.id for c in chunks}
    for sample in result.samples:
        assert sample.synthesizer == "unanswerable" and sample.answerable is False
        assert sample.reference_contexts == () and sample.reference_context_ids == ()
        # its source chunk first, then the others most similar to the question: 5 in all
        assert len(sample.checked_context_ids) == 5 and set(sample.checked_context_ids) == ids
        assert sample.reference.startswith(("The documents do not say", "文档没有说明"))
        record = sample.to_record()
        assert record["answerable"] is False and record["checked_context_ids"]
    # the check asked the judge about the five checked chunks in one call per question
    asked = [
        data_blocks(call.messages)
        for call in judge.calls
        if set(call.schema.model_fields) == {"usefulness"}
        and any(word in call.messages[-1].content for word in ("colours", "颜色"))
    ]
    checked = [blocks for blocks in asked if len(blocks["contexts"]) == 5]
    assert len(checked) >= 2


def test_an_unanswerable_question_whose_answer_is_in_a_chunk_is_rejected():
    result = run(n=2, mix="unanswerable=1", judge=scripted_testset_judge(answer_in_corpus=ALWAYS))
    assert len(result) == 0
    assert rejected(result, "unanswerable").get("answer found in corpus", 0) >= 1
    assert any("answer found in corpus" in note for note in result.accounting.notes)


@pytest.mark.parametrize(
    ("chunks", "copied"),
    [
        (ENGLISH, {"question": "Do I get my shipping costs back when I return an item?"}),
        (CHINESE, {"question": "退货的时候运费能退吗？"}),
        (
            ENGLISH,
            {
                "question": "Do I get my evaluation results back when I return an item?",
                "answer": "The documents do not say whether shipping costs are refunded.",
            },
        ),
    ],
    ids=["en-question", "zh-question", "en-answer"],
)
def test_an_unanswerable_question_copied_from_the_prompts_example_is_rejected(chunks, copied):
    """The embedded 0.5B judge wrote the template's example (about refunds), or its answer
    under another question, for chunks about MLflow: no chunk answers it, so the unanswerable
    check alone kept it (bench/RESULTS_adversarial.md)."""
    respond = generation_responder()

    def copying(messages, schema):
        output = respond(messages, schema)
        task = messages[0].content
        if 'Task "unanswerable"' in task or '任务 "unanswerable"' in task:
            output.update(copied)
        return output

    result = run(chunks, judge=ScriptedJudge(copying), n=2, mix="unanswerable=1")
    assert len(result) == 0
    account = result.accounting.synthesizers["unanswerable"]
    assert account.attempted >= 1 and account.rejected == {"not a question": account.attempted}


# -- false premise -----------------------------------------------------------------------------
def test_false_premise_questions_keep_the_premise_the_passage_does_not_support():
    result = run(n=2, mix="false_premise=1")
    assert len(result) == 2
    for sample in result.samples:
        assert sample.synthesizer == "false_premise" and sample.premise.endswith("discontinued.")
        assert sample.premise not in sample.reference_contexts[0]
        assert sample.reference in sample.reference_contexts[0]  # the correction is grounded
        assert sample.to_record()["premise"] == sample.premise


def test_a_premise_the_passage_supports_is_rejected():
    judge = scripted_testset_judge(supported_premise=ALWAYS)
    result = run(n=2, mix="false_premise=1", judge=judge)
    assert len(result) == 0
    assert rejected(result, "false_premise").get("premise supported", 0) >= 1


# -- calculation -----------------------------------------------------------------------------------
CALC = [
    chunk("p#0", "The Team plan of Vega Labs costs 120 dollars a month."),
    chunk("q#0", "The Starter plan of Vega Labs costs 85 dollars a month."),
]


def test_calculation_questions_show_arithmetic_that_python_checked():
    result = run(CALC, n=1, mix="calculation=1")
    (sample,) = result.samples
    # the scripted judge adds the first number of each passage: 120 + 85 = 205
    assert sample.synthesizer == "calculation" and sample.expression == "120 + 85"
    assert sample.reference == "120 + 85 = 205."
    assert set(sample.reference_context_ids) == {"p#0", "q#0"}  # a pair: both cited


@pytest.mark.parametrize(
    ("switch", "reason"),
    [("misquoted_value", "values not in passages"), ("wrong_arithmetic", "arithmetic wrong")],
)
def test_a_calculation_with_a_misquoted_value_or_wrong_arithmetic_is_rejected(switch, reason):
    result = run(CALC, n=1, mix="calculation=1", judge=scripted_testset_judge(**{switch: ALWAYS}))
    assert len(result) == 0
    assert rejected(result, "calculation") == {reason: 1}  # one candidate: the linked pair


# -- temporal ------------------------------------------------------------------------------------
@pytest.mark.parametrize("chunks", [ENGLISH, CHINESE], ids=["en", "zh"])
def test_temporal_questions_name_a_date_of_their_chunk(chunks):
    result = run(chunks, n=2, mix="temporal=1")
    assert len(result) == 2
    for sample in result.samples:
        assert temporal_anchors(sample.user_input) & temporal_anchors(sample.reference_contexts[0])


def test_a_temporal_question_without_a_date_is_rejected():
    result = run(n=2, mix="temporal=1", judge=scripted_testset_judge(no_temporal=ALWAYS))
    assert len(result) == 0
    # the two chunks with a date (a#0: March 2021, a#2: 2023) are both tried and rejected
    assert rejected(result, "temporal") == {"no temporal expression": 2}
    assert any("no temporal expression" in note for note in result.accounting.notes)


def test_temporal_phrases_and_anchors_in_english_and_chinese():
    assert temporal_phrases("Since version 3, if unpaid, orders close.") == [
        "version 3",
        "if unpaid",
    ]
    assert temporal_anchors("版本 3 之后") == {"v3"}
    assert temporal_problem("What changed after 2022?", ["The 2022 change cut fees."]) is None
    assert "2021" in (temporal_problem("What changed in 2021?", ["Fees fell in 2022."]) or "")


# -- the arithmetic checker ------------------------------------------------------------------
def test_numbers_are_matched_normalised_in_english_and_chinese():
    # "1,200" is 1200, full-width "８５" is 85, 25% is 25 and 0.25; "X2" is a name, no number
    assert numbers_in("Orion X2 costs 1,200 dollars, ８５ more, 25% off.") == [1200, 85, 25, 0.25]
    assert numbers_in("售价４９９元，续航 30 小时") == [499, 30]


def test_expressions_are_evaluated_safely_over_the_values_only():
    assert evaluate_expression("(120 - 85) * 2", [120, 85, 2]) == 70  # 35 * 2
    assert evaluate_expression("１２０ ÷ 4", [120, 4]) == 30
    for bad in ("__import__('os')", "2 ** 10", "abs(-3)", "120 - 86"):
        with pytest.raises(CalculationError, match=r"expression|allowed"):
            evaluate_expression(bad, [120, 85, 2, 10, 3])
    with pytest.raises(CalculationError, match="division by zero"):
        evaluate_expression("120 / 0", [120, 0])


def test_the_answer_must_hold_the_result_at_its_precision():
    assert states_result("100 / 3 = 33.33", 100 / 3)  # 33.333... within 0.005 of 33.33
    assert not states_result("100 / 3 = 33.4", 100 / 3)  # 33.4 is 0.067 away, more than 0.05
    assert states_result("The share is 25%.", 0.25)  # 25% = 0.25
    assert states_result("一共 1,200 元", 1200)


def test_check_calculation_in_english_and_chinese():
    en = ["Plan A costs 1,200 dollars.", "Plan B costs 850 dollars."]
    assert check_calculation(
        [Value("1,200", 1), Value("850", 2)], "1200 - 850", "1200 - 850 = 350", en
    ) == pytest.approx(350)  # 1200 - 850 = 350
    zh = ["甲套餐每月１２０元。", "乙套餐每月 85 元。"]
    assert check_calculation(
        [Value("120", 1), Value("85", 2)], "120 + 85", "合计 205 元", zh
    ) == pytest.approx(205)  # 120 + 85 = 205
    with pytest.raises(CalculationError) as wrong_passage:
        check_calculation([Value("85", 1)], "85", "85", zh)  # 85 is in passage 2, not 1
    assert wrong_passage.value.reason == "values not in passages"
    with pytest.raises(CalculationError) as wrong_sum:
        check_calculation([Value("120", 1), Value("85", 2)], "120 + 85", "合计 215 元", zh)
    assert wrong_sum.value.reason == "arithmetic wrong"


# -- difficulty ------------------------------------------------------------------------------------
def test_difficulty_points_and_tiers_by_hand():
    # hops 1 -> 0, margin -0.05 -> 0, distance 0.2 -> 0: 0 points, easy
    assert Difficulty(1, -0.05, 0.2).tier == "easy"
    # hops 2 -> 1, margin -0.02 -> 1, distance 0.6 -> 1: 3 points, medium
    assert Difficulty(2, -0.02, 0.6).points == 3 and Difficulty(2, -0.02, 0.6).tier == "medium"
    # hops 3 -> 2, margin +0.02 -> 2, distance 0.4 -> 1: 5 points, hard
    assert Difficulty(3, 0.02, 0.4).tier == "hard"
    # "退货时限" has bigrams 退货 货时 时限; "退货须知" holds 退货 only: 1 - 1/3
    assert paraphrase_distance("退货时限", ["退货须知"], language="zh") == pytest.approx(2 / 3)


TINY = [
    chunk("a#0", "Vega Labs opened a store in Bergen in 2023."),
    chunk("b#0", "Orion X2 costs 399 dollars."),
]
QUESTION = "What happened in 2023?"  # the scripted judge's temporal question on a#0


@pytest.mark.parametrize(("distractor", "tier"), [(0.95, "medium"), (0.5, "easy")])
def test_difficulty_tiers_on_a_tiny_graph(distractor, tier):
    """One hop (0 points). Paraphrase distance: the question's letters "whathappenedin2023"
    have 16 trigrams, of which a#0 holds 7 (pen ene ned from "opened", in2 n20 202 023):
    1 - 7/16 = 0.5625, 1 point. The source a#0 has cosine 0.9 with the question; the
    distractor b#0 0.95 (margin 0.95 - 0.9 = +0.05, 2 points: 3, medium) or 0.5 (margin
    -0.4, 0 points: 1, easy)."""
    source = [0.9, 0.0, float(np.sqrt(1 - 0.9**2))]
    other = [distractor, float(np.sqrt(1 - distractor**2)), 0.0]

    def vectors(text: str) -> list[float]:
        return {QUESTION: [1.0, 0.0, 0.0], TINY[0].text: source}.get(text, other)

    result = run(TINY, n=1, mix="temporal=1", embeddings=ScriptedEmbeddings(vectors, dimension=3))
    (sample,) = result.samples
    assert sample.user_input == QUESTION
    assert paraphrase_distance(QUESTION, [TINY[0].text], language="en") == pytest.approx(9 / 16)
    assert sample.difficulty == tier


# -- a mixed set evaluates and breaks down ------------------------------------------------------
def test_a_set_of_every_synthesizer_breaks_down_by_synthesizer_and_difficulty():
    mix = "single=1,multi=1,unanswerable=1,false_premise=1,calculation=1,temporal=1"
    result = run(n=6, mix=mix)
    assert {s.synthesizer for s in result.samples} >= {
        "unanswerable",
        "false_premise",
        "calculation",
        "temporal",
    }
    assert all(s.difficulty in ("easy", "medium", "hard") for s in result.samples)
    assert {"synthesizer", "difficulty"} <= set(result.to_dataset()[0].metadata)
    records = [{**sample.to_record(), "response": sample.reference} for sample in result]
    scores = evaluate(records, ["exact_match"], progress=False)
    groups = scores.breakdowns(["synthesizer", "difficulty"])
    by_kind = {g.value: g.n_samples for g in groups["synthesizer"]}
    assert sum(by_kind.values()) == len(result) and by_kind["unanswerable"] >= 1
    assert sum(g.n_samples for g in groups["difficulty"]) == len(result)


def test_an_interrupted_adversarial_generation_resumes_to_the_same_set(tmp_path):
    mix = "unanswerable=1,false_premise=1,calculation=1,temporal=1"
    uninterrupted = run(n=4, mix=mix, seed=5)
    respond = generation_responder()
    calls = {"n": 0}

    def dies_after_twelve(messages, schema):
        calls["n"] += 1
        return Interrupt("killed") if calls["n"] > 12 else respond(messages, schema)

    work = tmp_path / "work"
    with pytest.raises(Interrupt):
        run(
            n=4,
            mix=mix,
            seed=5,
            work_dir=work,
            judge=ScriptedJudge(dies_after_twelve, name="scripted-testset"),
        )
    resumed = run(n=4, mix=mix, seed=5, work_dir=work, resume=True)
    assert resumed.to_records() == uninterrupted.to_records()
    assert all(record["difficulty"] for record in resumed.to_records())


class Interrupt(Exception):
    """Not a judge error: it stops the run, like a kill."""


# -- the command line ----------------------------------------------------------------------------
def test_ragmeter_generate_takes_the_adversarial_synthesizers_in_its_mix(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from ragmeter.cli import app
    from tests.cli.test_generate import KEY, server_responder

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "plans.md").write_text(
        "# Plans\n\nThe Team plan of Vega Labs costs 120 dollars since March 2021.\n\n"
        "## Starter\n\nThe Starter plan of Vega Labs costs 85 dollars.\n",
        encoding="utf-8",
    )
    out = tmp_path / "testset.jsonl"
    with FakeOpenAIServer(responder=server_responder, api_key=KEY) as fake:
        monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", KEY)
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_MODEL", "fake-embed")
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_BASE_URL", fake.base_url)
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_API_KEY", KEY)
        result = CliRunner().invoke(
            app,
            [
                "generate", str(docs), "-n", "3", "-o", str(out),
                "--mix", "out_of_scope=1,aggregation=1,temporal=1",
                "--chunk-size", "20", "--chunk-overlap", "0",
                "--judge-model", "m", "--judge-base-url", fake.base_url,
                "--cache", str(tmp_path / "cache.db"), "-q",
            ],
            env={"COLUMNS": "200"},
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["synthesizer"] for r in rows) == ["calculation", "temporal", "unanswerable"]
    assert all(r["difficulty"] in ("easy", "medium", "hard") for r in rows)
    assert "unanswerable" in result.output and "calculation" in result.output
