"""Multi-turn runs: the samples of one conversation (one per assistant turn, tagged with
``metadata["conversation_id"]`` and ``metadata["turn"]``) grouped back together, each metric
over every conversation, and conversation-level means that long conversations do not
dominate."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ragmeter.metrics import Direction, Status

if TYPE_CHECKING:
    from ragmeter._bootstrap import Interval
    from ragmeter.results._result import MetricInfo, SampleResult

#: The metadata fields that place a sample in a conversation.
CONVERSATION_FIELD = "conversation_id"
TURN_FIELD = "turn"


@dataclass(frozen=True)
class ConversationMetric:
    """One metric over one conversation's turns. ``mean`` covers the ok turns only (None
    when none is ok); ``worst_turn`` is the turn number of the worst ok score in the metric's
    direction (the earliest on a tie) and ``worst_score`` that score. ``n_not_started``
    turns the run stopped before scoring (its budget, a refused judge, a kill)."""

    metric: str
    mean: float | None
    worst_turn: int | None
    worst_score: float | None
    n_ok: int
    n_failed: int
    n_not_applicable: int
    n_not_started: int = 0

    @property
    def n_turns(self) -> int:
        return self.n_ok + self.n_failed + self.n_not_applicable + self.n_not_started

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ConversationResult:
    """One conversation of a run: its turns' results in turn order and every metric over
    them (:class:`ConversationMetric`, by metric name).

    A conversation whose turns scored faithfulness 1.0 and 0.5 has a faithfulness ``mean``
    of (1.0 + 0.5) / 2 = 0.75 and its ``worst_turn`` is 2.
    """

    conversation_id: str
    turns: tuple[SampleResult, ...]
    metrics: dict[str, ConversationMetric]

    @property
    def n_turns(self) -> int:
        return len(self.turns)

    def turn_numbers(self) -> list[int]:
        return [turn_of(s) for s in self.turns]

    def to_dict(self) -> dict[str, Any]:
        return {
            "conversation_id": self.conversation_id,
            "n_turns": self.n_turns,
            "turns": [
                {"turn": turn_of(s), "id": s.sample_id, "index": s.index} for s in self.turns
            ],
            "metrics": {name: m.to_dict() for name, m in self.metrics.items()},
        }


@dataclass(frozen=True)
class ConversationAggregate:
    """A metric over a run's conversations: ``mean`` is the mean over conversations of each
    conversation's mean (every conversation weighs the same, however many turns it has),
    with its bootstrap interval ``ci`` over conversations (None below 2 scored ones).
    ``n_scored`` conversations have at least one ok turn for the metric, of
    ``n_conversations``; the others are counted, not averaged away. ``turn_mean`` is the
    mean over the conversations' ok turns (``n_turns_ok`` of ``n_turns``), each turn
    counting once (samples outside any conversation left out).

    Conversation A scoring 1.0 and 0.5 and conversation B scoring 0.0 give a mean of
    (0.75 + 0.0) / 2 = 0.375, where the turn-level mean is (1.0 + 0.5 + 0.0) / 3 = 0.5.
    """

    metric: str
    direction: Direction
    n_conversations: int
    n_scored: int
    mean: float | None
    ci: Interval | None
    n_turns: int = 0
    n_turns_ok: int = 0
    turn_mean: float | None = None

    @property
    def n_unscored(self) -> int:
        """Conversations with no ok turn for the metric."""
        return self.n_conversations - self.n_scored

    @property
    def coverage(self) -> float:
        """Share of conversations with at least one ok turn."""
        return self.n_scored / self.n_conversations if self.n_conversations else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "direction": self.direction.value,
            "n_conversations": self.n_conversations,
            "n_scored": self.n_scored,
            "mean": self.mean,
            "ci": self.ci.to_dict() if self.ci else None,
            "coverage": self.coverage,
            "n_turns": self.n_turns,
            "n_turns_ok": self.n_turns_ok,
            "turn_mean": self.turn_mean,
        }


def conversation_of(sample: SampleResult) -> str | None:
    """The conversation ``sample`` is a turn of, or None for a single-turn sample."""
    value = (sample.sample_value("metadata") or {}).get(CONVERSATION_FIELD)
    if value is None or isinstance(value, bool):
        return None
    return str(value) if isinstance(value, str | int) else None


def turn_of(sample: SampleResult) -> int:
    """The 1-based turn number of a conversation's sample (an int, or digits as text, as a
    CSV gives it); a clear error naming the row, the field and the fix otherwise."""
    value = (sample.sample_value("metadata") or {}).get(TURN_FIELD)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    if isinstance(value, str) and value.strip().isdigit() and int(value) >= 1:
        return int(value)
    raise ValueError(
        f"row {sample.row} (id {sample.sample_id!r}): metadata.{TURN_FIELD} is {value!r}, but "
        f"a sample with metadata.{CONVERSATION_FIELD} needs its turn number: give "
        f"metadata.{TURN_FIELD} as an integer from 1 (the assistant turn's place in the "
        "conversation)"
    )


def _metric_over(metric: MetricInfo, turns: Sequence[SampleResult]) -> ConversationMetric:
    ok: list[tuple[int, float]] = []
    counts: Counter[Status] = Counter()
    for sample in turns:
        result = sample.scores.get(metric.name)
        counts[Status.FAILED if result is None else result.status] += 1
        if result is not None and result.status is Status.OK and result.score is not None:
            ok.append((turn_of(sample), result.score))
    pick = max if metric.direction is Direction.LOWER_IS_BETTER else min
    worst = pick(ok, key=lambda turn_score: turn_score[1], default=None)  # the earliest on a tie
    return ConversationMetric(
        metric.name,
        statistics.fmean(s for _, s in ok) if ok else None,
        worst[0] if worst else None,
        worst[1] if worst else None,
        len(ok),
        counts[Status.FAILED],
        counts[Status.NOT_APPLICABLE],
        counts[Status.NOT_STARTED],
    )


def group_conversations(
    samples: Iterable[SampleResult], metrics: Sequence[MetricInfo]
) -> list[ConversationResult]:
    """The conversations among ``samples``, in the order of their first turn in the run,
    each with its turns in turn order; samples without a conversation id are left out. Two
    samples of one conversation with the same turn number are an error naming both rows."""
    grouped: dict[str, list[SampleResult]] = {}
    for sample in samples:
        conversation = conversation_of(sample)
        if conversation is not None:
            grouped.setdefault(conversation, []).append(sample)
    out = []
    for conversation, turns in grouped.items():
        seen: dict[int, SampleResult] = {}
        for sample in turns:
            turn = turn_of(sample)
            if turn in seen:
                raise ValueError(
                    f"conversation {conversation!r} has turn {turn} twice (rows "
                    f"{seen[turn].row} and {sample.row}): give each assistant turn its own "
                    f"metadata.{TURN_FIELD}, or each conversation its own "
                    f"metadata.{CONVERSATION_FIELD}"
                )
            seen[turn] = sample
        ordered = tuple(seen[t] for t in sorted(seen))
        out.append(
            ConversationResult(
                conversation, ordered, {m.name: _metric_over(m, ordered) for m in metrics}
            )
        )
    return out


def conversation_aggregate(
    metric: MetricInfo,
    conversations: Sequence[ConversationResult],
    *,
    level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> ConversationAggregate:
    """``metric`` over ``conversations``: the mean of their means, with a BCa bootstrap
    interval over conversations (:func:`ragmeter.stats.bootstrap_ci`)."""
    over = [m for c in conversations if (m := c.metrics.get(metric.name)) is not None]
    means = [m.mean for m in over if m.mean is not None]
    n_turns_ok = sum(m.n_ok for m in over)
    # Each conversation's mean times its ok turns is the sum of its ok scores.
    turn_total = sum(m.mean * m.n_ok for m in over if m.mean is not None)
    ci = None
    if len(means) >= 2:
        from ragmeter._bootstrap import bootstrap_ci  # numpy: only when asked for

        ci = bootstrap_ci(means, level=level, n_resamples=n_resamples, seed=seed)
    return ConversationAggregate(
        metric.name,
        metric.direction,
        len(conversations),
        len(means),
        statistics.fmean(means) if means else None,
        ci,
        sum(m.n_turns for m in over),
        n_turns_ok,
        turn_total / n_turns_ok if n_turns_ok else None,
    )


def _goodness(value: float, scale: tuple[float, float], direction: Direction) -> float:
    low, high = scale
    share = 0.5 if high <= low else (value - low) / (high - low)
    return share if direction is Direction.HIGHER_IS_BETTER else 1.0 - share


def conversation_scales(
    conversations: Sequence[ConversationResult], metrics: Sequence[MetricInfo]
) -> dict[str, tuple[float, float]]:
    """Per metric, the range its conversation means are rated on: 0–1 when they all lie in
    it, else their own lowest to highest."""
    scales = {}
    for metric in metrics:
        means = [m.mean for c in conversations if (m := c.metrics[metric.name]).mean is not None]
        inside = all(0.0 <= v <= 1.0 for v in means)
        scales[metric.name] = (0.0, 1.0) if inside or not means else (min(means), max(means))
    return scales


def rating(
    conversation: ConversationResult,
    metrics: Sequence[MetricInfo],
    scales: dict[str, tuple[float, float]],
) -> float | None:
    """How good a conversation is, from 0 (worst) to 1: the average over the metrics it got
    a mean for of where that mean lies on the metric's scale, flipped for a ↓ metric.
    Means 0.75 on faithfulness (↑) and 0.25 on a ↓ metric rate (0.75 + 0.75) / 2 = 0.75."""
    values = [
        _goodness(m.mean, scales[metric.name], metric.direction)
        for metric in metrics
        if (m := conversation.metrics[metric.name]).mean is not None
    ]
    return statistics.fmean(values) if values else None


def worst_conversations(
    conversations: Sequence[ConversationResult], metrics: Sequence[MetricInfo]
) -> list[ConversationResult]:
    """``conversations`` by :func:`rating`, worst first (ties keep run order); those with no
    score at all come first, since nothing in them could be scored."""
    scales = conversation_scales(conversations, metrics)
    rated = [(rating(c, metrics, scales), i, c) for i, c in enumerate(conversations)]
    rated.sort(key=lambda r: (-1.0 if r[0] is None else r[0], r[1]))
    return [c for _, _, c in rated]
