"""A metric result's ``details`` as HTML: claims with verdicts, statements, contexts."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragmeter.metrics import (
    ClaimCheck,
    ClaimVerdict,
    ContextJudgment,
    EntityFinding,
    GeneratedQuestion,
    HopUse,
    MetricResult,
    NoiseClaimVerdict,
    PassageMatch,
    StatementFinding,
)
from ragmeter.report._markup import Markup, el, join, text

#: Per check, the label and tone of a true and of a false verdict.
_CLAIM_LABELS: dict[ClaimCheck, tuple[tuple[str, str], tuple[str, str]]] = {
    ClaimCheck.SUPPORTED: (("supported", "good"), ("unsupported", "bad")),
    ClaimCheck.IN_REFERENCE: (("in reference", "good"), ("not in reference", "bad")),
    ClaimCheck.IN_RESPONSE: (("in response", "good"), ("missing in response", "warn")),
    ClaimCheck.CORRECT: (("correct", "good"), ("incorrect", "warn")),
}


def _verdict(label: str, tone: str) -> Markup:
    return el("span", label, class_=f"verdict {tone}")


def claim_verdict(claim: ClaimVerdict) -> tuple[str, str]:
    """A claim's verdict as (label, tone), tone being "good", "bad" or "warn"."""
    if claim.check is None or claim.verdict is None:
        return "", "neutral"
    if isinstance(claim, NoiseClaimVerdict) and claim.counted:
        return "incorrect · counted as noise", "bad"
    yes, no = _CLAIM_LABELS[claim.check]
    return yes if claim.verdict else no


def _claims(claims: Sequence[ClaimVerdict]) -> Markup:
    items = []
    for number, claim in enumerate(claims, start=1):
        label, tone = claim_verdict(claim)
        items.append(
            el(
                "li",
                _verdict(label, tone) if label else el("span", f"{number}. ", class_="muted"),
                el("span", f"{claim.side}: ", class_="muted") if claim.side else None,
                text(claim.text, "span"),
                el("span", claim.reason, class_="why") if claim.reason else None,
                class_=tone,
            )
        )
    return el("div", el("h5", "claims"), el("ul", items, class_="claims"))


def _statements(statements: Sequence[StatementFinding]) -> Markup:
    items = []
    for item in statements:
        cited = item.contexts
        where = "in context " + ", ".join(f"#{c}" for c in cited) if cited else "found"
        items.append(
            el(
                "li",
                _verdict(where if item.found else "not in contexts", tone := _tone(item.found)),
                text(item.text, "span"),
                class_=tone,
            )
        )
    return el("div", el("h5", "reference statements"), el("ul", items, class_="claims"))


def _tone(good: bool) -> str:
    return "good" if good else "bad"


def _entities(entities: Sequence[EntityFinding]) -> Markup:
    chips = [
        el(
            "span",
            "✓ " if e.in_contexts else "✗ ",
            text(e.text, "span"),
            class_="chip " + _tone(e.in_contexts),
        )
        for e in entities
    ]
    return el("div", el("h5", "entities (in contexts?)"), el("div", chips, class_="chips"))


def _questions(questions: Sequence[GeneratedQuestion]) -> Markup:
    items = [
        el(
            "li",
            el("span", f"{q.similarity:.3f}", class_="num") if q.similarity is not None else None,
            text(q.text, "span"),
        )
        for q in questions
    ]
    return el(
        "div",
        el("h5", "questions generated from the response (similarity)"),
        el("ul", items, class_="plain"),
    )


def _context_verdicts(contexts: Sequence[ContextJudgment]) -> Markup:
    items = []
    for c in contexts:
        word = c.criterion.value
        p = c.probability
        items.append(
            el(
                "li",
                _verdict(f"#{c.rank} {word if c.verdict else 'not ' + word}", _tone(c.verdict)),
                el("span", f"p={p:.2f}", class_="num") if p is not None else None,
                el("span", c.reason, class_="why") if c.reason else None,
            )
        )
    return el("div", el("h5", "per-context verdicts"), el("ul", items, class_="plain"))


def _hops(hops: Sequence[HopUse]) -> Markup:
    chips = [
        el(
            "span",
            f"hop {h.hop} ✓ claims {', '.join(map(str, h.claims))}" if h.used else f"hop {h.hop} ✗",
            class_="chip " + _tone(h.used),
        )
        for h in hops
    ]
    return el("div", el("h5", "hops (used by claims)"), el("div", chips, class_="chips"))


def by_retrieved_rank(metric: str) -> bool:
    """Whether ``metric``'s passage matches follow the retrieved ranks (precision-style
    metrics) rather than the reference contexts (recall-style ones)."""
    return "precision" in metric


def _verdict_strip(matches: Sequence[PassageMatch], metric: str) -> Markup:
    retrieved = by_retrieved_rank(metric)
    chips = [
        el(
            "span",
            f"{'#' if retrieved else 'ref '}{i + 1} {'✓' if m.matched else '✗'}",
            class_="chip " + _tone(m.matched),
            title=f"similarity {m.similarity}" if m.similarity is not None else None,
        )
        for i, m in enumerate(matches)
    ]
    heading = "relevant, by retrieved rank" if retrieved else "found, per reference context"
    return el("div", el("h5", heading), el("div", chips, class_="chips"))


def _plain(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
        return ", ".join(_plain(v) for v in value) or "none"
    if isinstance(value, dict | list):
        dumped = json.dumps(value, ensure_ascii=False)
        return dumped if len(dumped) <= 300 else dumped[:299] + "…"
    return str(value)


def details_html(result: MetricResult, metric: str = "") -> Markup:
    """Everything in ``result.details`` of ``metric``: the typed records drawn, ``extra`` as
    name/value."""
    details = result.details
    if not details:
        return Markup("")
    drawn: list[tuple[Sequence[Any], Callable[[Any], Markup]]] = [
        (details.claims, _claims),
        (details.statements, _statements),
        (details.entities, _entities),
        (details.questions, _questions),
        (details.contexts, _context_verdicts),
        (details.matches, lambda matches: _verdict_strip(matches, metric)),
        (details.hops, _hops),
    ]
    parts = [draw(records) for records, draw in drawn if records]
    scalars: dict[str, Any] = {}
    if details.noncommittal is not None:
        scalars["noncommittal"] = details.noncommittal
    scalars.update(details.extra)
    rest = [
        el("span", el("b", key), " ", _plain(value), class_="chip")
        for key, value in scalars.items()
    ]
    if rest:
        parts.append(el("div", rest, class_="chips"))
    return el("div", parts, class_="details")


def context_marks(
    scores: Mapping[str, MetricResult], n_contexts: int
) -> list[list[tuple[str, str, str]]]:
    """Per retrieved context (by rank), the verdicts metrics gave it: (label, tone, reason)."""
    marks: list[list[tuple[str, str, str]]] = [[] for _ in range(n_contexts)]

    def add(rank: int, label: str, tone: str, reason: str = "") -> None:
        if 1 <= rank <= n_contexts:
            marks[rank - 1].append((label, tone, reason))

    for name, result in scores.items():
        details = result.details
        for c in details.contexts:
            add(c.rank, f"{name} {'✓' if c.verdict else '✗'}", _tone(c.verdict), c.reason)
        if by_retrieved_rank(name):
            for i, m in enumerate(details.matches):
                add(i + 1, f"{name} {'✓' if m.matched else '✗'}", _tone(m.matched))
        cited: dict[int, int] = {}
        for statement in details.statements:
            for rank in statement.contexts:
                cited[rank] = cited.get(rank, 0) + 1
        for rank, n in cited.items():
            add(rank, f"{name}: {n} statement{'s' if n > 1 else ''}", "good")
    return marks


def marks_html(marks: Sequence[tuple[str, str, str]]) -> Markup:
    """A context's verdict chips."""
    return join(
        el("span", label, class_=f"chip {tone}", title=reason or None)
        for label, tone, reason in marks
    )
