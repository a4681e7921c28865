"""Multi-turn runs: turns grouped back into conversations, per-conversation means, worst
turns and coverage, and conversation-level means that long conversations do not dominate."""

import pytest

from ragmeter import EvaluationResult, MetricResult, Sample, evaluate
from ragmeter.metrics import Direction
from ragmeter.results import (
    ConversationResult,
    MetricInfo,
    SampleResult,
    conversation_scales,
    worst_conversations,
)


def _turn(conversation: str, turn: int, mrr: float) -> dict:
    """A turn whose MRR is ``mrr``: the relevant id "a" first (1.0), second (0.5) or absent."""
    retrieved = {1.0: ["a"], 0.5: ["b", "a"], 0.0: ["b"]}[mrr]
    return {
        "id": f"{conversation}#{turn}",
        "user_input": f"question {turn} of {conversation}",
        "response": f"answer {turn}",
        "retrieved_context_ids": retrieved,
        "reference_context_ids": ["a"],
        "metadata": {"conversation_id": conversation, "turn": turn},
    }


# Conversation A: turns 1.0 and 0.5 (given out of order), B: one turn 0.0, and a
# single-turn sample that belongs to no conversation.
ROWS = [
    _turn("A", 2, 0.5),
    _turn("B", 1, 0.0),
    _turn("A", 1, 1.0),
    {"id": "single", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]},
]


def test_turns_are_grouped_in_turn_order_with_their_means_and_worst_turn():
    result = evaluate(ROWS, ["mrr"])
    found = result.conversations()
    assert [type(c) for c in found] == [ConversationResult, ConversationResult]
    # A first: its first row comes first in the run; "single" is in no conversation.
    assert [c.conversation_id for c in found] == ["A", "B"]
    a, b = found
    assert [t.sample_id for t in a.turns] == ["A#1", "A#2"]
    assert a.turn_numbers() == [1, 2]
    # A: (1.0 + 0.5) / 2 = 0.75, worst turn 2 (0.5); B: its one turn, 0.0.
    assert a.metrics["mrr"].mean == pytest.approx(0.75)
    assert (a.metrics["mrr"].worst_turn, a.metrics["mrr"].worst_score) == (2, 0.5)
    assert (a.metrics["mrr"].n_ok, a.metrics["mrr"].n_turns) == (2, 2)
    assert (b.n_turns, b.metrics["mrr"].mean, b.metrics["mrr"].worst_turn) == (1, 0.0, 1)


def test_conversation_level_mean_weighs_each_conversation_once():
    result = evaluate(ROWS[:3], ["mrr"])
    agg = result.conversation_aggregates(n_resamples=1000)["mrr"]
    # Conversations: (0.75 + 0.0) / 2 = 0.375; turns: (0.5 + 0.0 + 1.0) / 3 = 0.5.
    assert agg.mean == pytest.approx(0.375)
    assert result.aggregates["mrr"].mean == pytest.approx(0.5)
    assert (agg.n_conversations, agg.n_scored, agg.n_unscored, agg.coverage) == (2, 2, 0, 1.0)
    assert (agg.turn_mean, agg.n_turns_ok, agg.n_turns) == (pytest.approx(0.5), 3, 3)
    # A bootstrap over the two conversation means 0.0 and 0.75 stays within them.
    assert agg.ci is not None
    assert 0.0 <= agg.ci.low < agg.mean < agg.ci.high <= 0.75
    assert (agg.to_dict()["n_scored"], agg.to_dict()["coverage"]) == (2, 1.0)


def test_a_single_turn_run_has_no_conversations():
    result = evaluate(ROWS[3:], ["mrr"])
    assert result.conversations() == []
    assert result.conversation_aggregates() == {}


def _hand_made(outcomes: dict[tuple[str, int], MetricResult], direction: Direction):
    samples = [
        SampleResult(
            i,
            i + 1,
            f"{conversation}#{turn}",
            Sample(response="r", metadata={"conversation_id": conversation, "turn": turn}),
            {"m": outcome},
        )
        for i, ((conversation, turn), outcome) in enumerate(outcomes.items())
    ]
    return EvaluationResult(samples, [MetricInfo("m", direction)])


def test_coverage_counts_failed_and_not_applicable_turns_and_unscored_conversations():
    result = _hand_made(
        {
            ("A", 1): MetricResult.ok(0.2),
            ("A", 2): MetricResult.failed("judge error"),
            ("A", 3): MetricResult.not_applicable("no reference"),
            ("B", 1): MetricResult.failed("judge error"),
            ("C", 1): MetricResult.ok(0.6),
            ("C", 2): MetricResult.ok(0.6),
        },
        Direction.LOWER_IS_BETTER,
    )
    a, b, c = result.conversations()
    assert (a.metrics["m"].n_ok, a.metrics["m"].n_failed, a.metrics["m"].n_not_applicable) == (
        1,
        1,
        1,
    )
    assert (a.metrics["m"].mean, a.metrics["m"].worst_turn) == (0.2, 1)
    # B has no ok turn: no mean, no worst turn, counted as unscored below.
    assert (b.metrics["m"].mean, b.metrics["m"].worst_turn, b.metrics["m"].n_failed) == (
        None,
        None,
        1,
    )
    # Lower is better: a tie between C's turns is broken by the earliest turn.
    assert (c.metrics["m"].worst_turn, c.metrics["m"].worst_score) == (1, 0.6)
    agg = result.conversation_aggregates(n_resamples=1000)["m"]
    # Scored conversations A (0.2) and C (0.6): (0.2 + 0.6) / 2 = 0.4; B counted, not averaged.
    assert agg.mean == pytest.approx(0.4)
    assert (agg.n_conversations, agg.n_scored, agg.n_unscored) == (3, 2, 1)
    assert agg.coverage == pytest.approx(2 / 3)
    # Turn level: ok turns 0.2, 0.6, 0.6 of 6 -> 1.4 / 3.
    assert (agg.turn_mean, agg.n_turns_ok, agg.n_turns) == (pytest.approx(1.4 / 3), 3, 6)


def test_worst_turn_is_the_highest_score_when_lower_is_better():
    result = _hand_made(
        {("A", 1): MetricResult.ok(0.1), ("A", 2): MetricResult.ok(0.9)},
        Direction.LOWER_IS_BETTER,
    )
    (a,) = result.conversations()
    assert (a.metrics["m"].worst_turn, a.metrics["m"].worst_score) == (2, 0.9)
    # One scored conversation: a mean, but no interval.
    agg = result.conversation_aggregates()["m"]
    assert (agg.mean, agg.ci) == (pytest.approx(0.5), None)


def test_a_turn_without_a_number_or_a_repeated_turn_is_a_clear_error():
    samples = [
        SampleResult(0, 3, "A#x", Sample(metadata={"conversation_id": "A", "turn": "x"}), {}),
    ]
    with pytest.raises(ValueError, match=r"row 3 .*metadata\.turn is 'x'.*integer from 1"):
        EvaluationResult(samples, []).conversations()
    twice = [
        SampleResult(i, i + 1, f"A{i}", Sample(metadata={"conversation_id": "A", "turn": 1}), {})
        for i in range(2)
    ]
    with pytest.raises(ValueError, match=r"'A' has turn 1 twice \(rows 1 and 2\)"):
        EvaluationResult(twice, []).conversations()


def test_turn_as_text_from_a_csv_is_read_as_its_number():
    samples = [
        SampleResult(i, i + 1, f"A{t}", Sample(metadata={"conversation_id": "A", "turn": t}), {})
        for i, t in enumerate(["10", "2"])
    ]
    (a,) = EvaluationResult(samples, []).conversations()
    assert a.turn_numbers() == [2, 10]


def test_turn_is_a_breakdown_tag_and_conversation_id_is_not(tmp_path):
    rows = [_turn(c, t, s) for c, t, s in [("A", 1, 1.0), ("A", 2, 0.5), ("B", 1, 1.0)]]
    rows += [_turn(c, t, s) for c, t, s in [("B", 2, 0.0), ("C", 1, 0.5), ("C", 2, 0.0)]]
    result = evaluate(rows, ["mrr"], run_dir=tmp_path / "run")
    for run in (result, EvaluationResult.load(tmp_path / "run")):
        groups = run.breakdowns()
        assert list(groups) == ["turn"]
        # Turn 1: (1.0 + 1.0 + 0.5) / 3 = 0.8333; turn 2: (0.5 + 0.0 + 0.0) / 3 = 0.1667.
        means = [(g.value, g.n_samples, g.aggregates["mrr"].mean) for g in groups["turn"]]
        assert means == [
            ("1", 3, pytest.approx(2.5 / 3)),
            ("2", 3, pytest.approx(0.5 / 3)),
        ]
        # From the store too: (0.75 + 0.5 + 0.25) / 3 = 0.5 per conversation.
        assert run.conversation_aggregates(n_resamples=500)["mrr"].mean == pytest.approx(0.5)


def test_turn_groups_sort_by_number():
    rows = [_turn(c, t, 1.0) for c in "ABC" for t in range(1, 12)]
    values = [g.value for g in evaluate(rows, ["mrr"]).breakdowns()["turn"]]
    assert values == [str(t) for t in range(1, 12)]


def test_conversations_rank_worst_first_over_every_metric():
    metrics = [
        MetricInfo("up", Direction.HIGHER_IS_BETTER),
        MetricInfo("down", Direction.LOWER_IS_BETTER),
    ]
    outcomes = {
        # A: up 0.75, down 0.25 -> (0.75 + (1 - 0.25)) / 2 = 0.75
        "A": (MetricResult.ok(0.75), MetricResult.ok(0.25)),
        # B: up 0.5, down 0.5 -> (0.5 + 0.5) / 2 = 0.5
        "B": (MetricResult.ok(0.5), MetricResult.ok(0.5)),
        # C: nothing scored -> first, since nothing in it could be
        "C": (MetricResult.failed("x"), MetricResult.not_applicable("y")),
        # D: up 1.0 only -> 1.0
        "D": (MetricResult.ok(1.0), MetricResult.failed("x")),
    }
    samples = [
        SampleResult(
            i,
            i + 1,
            f"{c}#1",
            Sample(metadata={"conversation_id": c, "turn": 1}),
            {"up": up, "down": down},
        )
        for i, (c, (up, down)) in enumerate(outcomes.items())
    ]
    found = EvaluationResult(samples, metrics).conversations()
    ranked = worst_conversations(found, metrics)
    assert [c.conversation_id for c in ranked] == ["C", "B", "A", "D"]
    assert conversation_scales(found, metrics) == {"up": (0.0, 1.0), "down": (0.0, 1.0)}


def test_a_metric_outside_0_1_is_rated_on_its_own_range():
    metrics = [MetricInfo("latency", Direction.LOWER_IS_BETTER)]
    samples = [
        SampleResult(
            i,
            i + 1,
            f"{c}#1",
            Sample(metadata={"conversation_id": c, "turn": 1}),
            {"latency": MetricResult.ok(v)},
        )
        for i, (c, v) in enumerate([("A", 2.0), ("B", 8.0), ("C", 5.0)])
    ]
    found = EvaluationResult(samples, metrics).conversations()
    assert conversation_scales(found, metrics) == {"latency": (2.0, 8.0)}
    # Lower is better: B (8.0) rates 0, C (5.0) 0.5, A (2.0) 1.
    assert [c.conversation_id for c in worst_conversations(found, metrics)] == ["B", "C", "A"]


def test_a_turn_never_started_is_counted_as_such_not_lost():
    from ragmeter import Status

    not_started = MetricResult(None, Status.NOT_STARTED, reason="not started: max_cost")
    turns = [
        SampleResult(
            i,
            i + 1,
            f"A#{i + 1}",
            Sample(id=f"A#{i + 1}", metadata={"conversation_id": "A", "turn": i + 1}),
            {"mrr": result},
        )
        for i, result in enumerate([MetricResult.ok(1.0), not_started])
    ]
    run = EvaluationResult(turns, [MetricInfo("mrr", Direction.HIGHER_IS_BETTER)])
    (conversation,) = run.conversations()
    mrr = conversation.metrics["mrr"]
    assert (mrr.n_ok, mrr.n_failed, mrr.n_not_started, mrr.n_turns) == (1, 0, 1, 2)
    assert mrr.to_dict()["n_not_started"] == 1
