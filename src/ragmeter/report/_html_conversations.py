"""The conversations section of a multi-turn run: conversation-level means next to the
turn-level ones, the conversations worst first, and each one's turns in order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragmeter.metrics import Direction, Status
from ragmeter.report import _format as fmt
from ragmeter.report._analysis import CI_RESAMPLES
from ragmeter.report._html_samples import Links
from ragmeter.report._markup import (
    Markup,
    breakable,
    el,
    head_row,
    join,
    num,
    shorten,
    table,
    text,
)
from ragmeter.report._svg import goodness, shade
from ragmeter.results import (
    ConversationAggregate,
    ConversationResult,
    EvaluationResult,
    MetricInfo,
    SampleResult,
    conversation_scales,
    worst_conversations,
)

#: Conversations listed (worst first) before "and N more".
MAX_CONVERSATIONS = 20


@dataclass(frozen=True)
class Conversations:
    """A run's conversations, worst first, with the conversation-level aggregates; or the
    ``error`` that kept them from being grouped (a turn without a number)."""

    ranked: list[ConversationResult]
    aggregates: dict[str, ConversationAggregate]
    error: str | None = None


def conversations_of(result: EvaluationResult) -> Conversations | None:
    """The run's conversations for the reports, or None for a single-turn run."""
    try:
        found = result.conversations()
    except ValueError as error:
        return Conversations([], {}, str(error))
    if not found:
        return None
    aggregates = result.conversation_aggregates(n_resamples=CI_RESAMPLES)
    return Conversations(worst_conversations(found, result.metrics), aggregates)


def _level_row(metric: MetricInfo, agg: ConversationAggregate) -> Markup:
    return el(
        "tr",
        el("td", metric.name),
        el("td", fmt.arrow(metric.direction), class_="dir"),
        el("td", fmt.score(agg.mean), class_="num conversation-mean"),
        el(
            "td",
            fmt.mean_ci(agg.n_scored, agg.ci),
            class_="num ci" if agg.ci else "num ci muted",
        ),
        el(
            "td",
            f"{agg.n_scored}/{agg.n_conversations}",
            class_="num worse" if agg.n_unscored else "num",
            title=f"{agg.n_unscored} conversations have no scored turn" if agg.n_unscored else None,
        ),
        el("td", fmt.score(agg.turn_mean), class_="num turn-mean"),
        el("td", f"{agg.n_turns_ok}/{agg.n_turns}", class_="num"),
        data_metric=metric.name,
    )


def _levels(result: EvaluationResult, found: Conversations) -> Markup:
    head = head_row(
        "metric",
        "better",
        num("per conversation", "mean of the conversations' means"),
        num("95% CI", "bootstrap interval over conversations"),
        num("conversations scored"),
        num("per turn", "mean over every scored turn"),
        num("turns scored"),
    )
    rows = [_level_row(metric, found.aggregates[metric.name]) for metric in result.metrics]
    note = el(
        "p",
        "Per conversation: each conversation's mean over its scored turns, averaged over the "
        "conversations, so that a long conversation counts once; per turn: every scored turn "
        "of a conversation counts once (samples outside conversations left out). "
        f"95% CI: bootstrap (BCa, {CI_RESAMPLES:,} resamples) over conversations; none below 2 "
        "scored conversations. A conversation with no scored turn for a metric is counted in "
        "“conversations scored”, not averaged.",
        class_="muted",
    )
    return join(
        [
            table(head, rows, id="conversation-levels", class_="fit"),
            note,
        ]
    )


def anchor(position: int) -> str:
    return f"conversation-{position}"


def _mean_cell(
    conversation: ConversationResult, metric: MetricInfo, scale: tuple[float, float]
) -> Markup:
    m = conversation.metrics[metric.name]
    coverage = f"{m.n_ok}/{m.n_turns} turns scored"
    if m.mean is None:
        return el("td", fmt.NONE, class_="num", title=coverage)
    good = goodness(m.mean, *scale, metric.direction is Direction.HIGHER_IS_BETTER)
    return el(
        "td",
        fmt.score(m.mean),
        el("div", f"worst: turn {m.worst_turn}", class_="muted") if m.n_ok > 1 else None,
        class_="num shaded",
        title=coverage,
        style=f"background:{shade(good)}",
    )


def _table(
    shown: Sequence[ConversationResult],
    metrics: Sequence[MetricInfo],
    scales: dict[str, tuple[float, float]],
) -> Markup:
    head = head_row(
        "conversation",
        num("turns"),
        [el("th", breakable(m.name), " ", fmt.arrow(m.direction), class_="num") for m in metrics],
    )
    rows = [
        el(
            "tr",
            el("td", el("a", c.conversation_id, href=f"#{anchor(i)}")),
            el("td", c.n_turns, class_="num"),
            [_mean_cell(c, m, scales[m.name]) for m in metrics],
            data_conversation=c.conversation_id,
        )
        for i, c in enumerate(shown, start=1)
    ]
    return table(head, rows, scroll=True, id="conversations-table", class_="fit")


def _score(sample: SampleResult, metric: MetricInfo) -> Markup:
    result = sample.scores.get(metric.name)
    if result is None:
        return el("td", fmt.NONE, class_="num")
    if result.status is Status.OK:
        return el("td", fmt.score(result.score), class_="num", title=result.reason)
    status = result.status.value
    return el("td", status.replace("_", " "), class_=f"num status-{status}", title=result.error)


def _turns(conversation: ConversationResult, metrics: Sequence[MetricInfo], links: Links) -> Markup:
    head = head_row(
        num("turn"),
        "sample",
        "user / response",
        [el("th", breakable(m.name), class_="num") for m in metrics],
    )
    rows = []
    for number, sample in zip(conversation.turn_numbers(), conversation.turns, strict=True):
        s = sample.sample
        rows.append(
            el(
                "tr",
                el("td", number, class_="num"),
                el("td", links.link(sample)),
                el(
                    "td",
                    el("div", el("span", "User ", class_="muted"), text(s.user_input, "span"))
                    if s.user_input
                    else None,
                    el(
                        "div",
                        el("span", "Response ", class_="muted"),
                        text(shorten(s.response, 400), "span"),
                    )
                    if s.response
                    else None,
                    class_="text",
                ),
                [_score(sample, m) for m in metrics],
                data_turn=number,
            )
        )
    return table(head, rows, class_="fit wrap turns")


def _summary_line(conversation: ConversationResult, metrics: Sequence[MetricInfo]) -> str:
    means = ", ".join(f"{m.name} {fmt.score(conversation.metrics[m.name].mean)}" for m in metrics)
    return f"{conversation.conversation_id} — {fmt.plural(conversation.n_turns, 'turn')}: {means}"


def conversations_section(result: EvaluationResult, found: Conversations, links: Links) -> Markup:
    """The conversation-level means next to the turn-level ones, then the conversations worst
    first (at most :data:`MAX_CONVERSATIONS`), each expandable into its turns in order with
    their scores and links to their sample cards."""
    if found.error is not None:
        return el("p", f"Conversations could not be grouped: {found.error}", class_="banner bad")
    metrics = result.metrics
    shown = found.ranked[:MAX_CONVERSATIONS]
    more = len(found.ranked) - len(shown)
    scales = conversation_scales(found.ranked, metrics)
    caption = el(
        "p",
        f"{fmt.plural(len(found.ranked), 'conversation')}, worst first: ranked by the average, "
        "over the metrics, of how good the conversation's mean is (on 0–1, flipped for a ↓ "
        "metric; a metric whose means leave 0–1 from its lowest to its highest), those with "
        "no score first. Each cell is the mean over the conversation's scored turns"
        + (f"; showing {len(shown)}, and {more} more not shown." if more > 0 else "."),
        class_="muted caption",
    )
    blocks = [
        el(
            "details",
            el("summary", _summary_line(c, metrics)),
            _turns(c, metrics, links),
            id=anchor(i),
            class_="conversation",
            data_conversation=c.conversation_id,
        )
        for i, c in enumerate(shown, start=1)
    ]
    return join(
        [
            _levels(result, found),
            el("h3", "Conversations, worst first"),
            caption,
            _table(shown, metrics, scales),
            join(blocks),
        ]
    )
