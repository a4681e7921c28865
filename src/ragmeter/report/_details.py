"""A metric result's ``details`` as HTML: claims with verdicts, statements, contexts."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.metrics import MetricResult
from ragmeter.report._markup import Markup, el, join, text

#: Keys whose value is drawn by a dedicated renderer below.
_STRUCTURED = ("claims", "statements", "entities", "questions", "contexts", "verdicts")


def _verdict(label: str, tone: str) -> Markup:
    return el("span", label, class_=f"verdict {tone}")


def claim_verdict(claim: Mapping[str, Any]) -> tuple[str, str]:
    """A claim's verdict as (label, tone), tone being "good", "bad" or "warn"."""
    if "supported" in claim:
        return ("supported", "good") if claim["supported"] else ("unsupported", "bad")
    if "in_reference" in claim:
        return ("in reference", "good") if claim["in_reference"] else ("not in reference", "bad")
    if "in_response" in claim:
        return ("in response", "good") if claim["in_response"] else ("missing in response", "warn")
    if "correct" in claim:
        if claim.get("counted"):
            return "incorrect · counted as noise", "bad"
        return ("correct", "good") if claim["correct"] else ("incorrect", "warn")
    return "", "neutral"


def _claims(claims: Sequence[Any]) -> Markup:
    items = []
    for claim in claims:
        if not isinstance(claim, Mapping):
            items.append(el("li", text(str(claim), "span")))
            continue
        label, tone = claim_verdict(claim)
        side = claim.get("side")
        items.append(
            el(
                "li",
                _verdict(label, tone) if label else None,
                el("span", f"{side}: ", class_="muted") if side else None,
                text(str(claim.get("claim", "")), "span"),
                el("span", claim["reason"], class_="why") if claim.get("reason") else None,
                class_=tone,
            )
        )
    return el("div", el("h5", "claims"), el("ul", items, class_="claims"))


def _statements(statements: Sequence[Any]) -> Markup:
    items = []
    for item in statements:
        if not isinstance(item, Mapping):
            continue
        cited = item.get("contexts") or []
        found = bool(item.get("found", bool(cited)))
        where = "in context " + ", ".join(f"#{c}" for c in cited) if cited else "found"
        items.append(
            el(
                "li",
                _verdict(where if found else "not in contexts", "good" if found else "bad"),
                text(str(item.get("statement", "")), "span"),
                class_="good" if found else "bad",
            )
        )
    return el("div", el("h5", "reference statements"), el("ul", items, class_="claims"))


def _entities(entities: Sequence[Any]) -> Markup:
    chips = [
        el(
            "span",
            "✓ " if e.get("in_contexts") else "✗ ",
            text(str(e.get("entity", "")), "span"),
            class_="chip " + ("good" if e.get("in_contexts") else "bad"),
        )
        for e in entities
        if isinstance(e, Mapping)
    ]
    return el("div", el("h5", "entities (in contexts?)"), el("div", chips, class_="chips"))


def _questions(questions: Sequence[Any], similarities: Sequence[Any] | None) -> Markup:
    sims = list(similarities or [])
    items = [
        el(
            "li",
            el("span", f"{sims[i]:.3f}", class_="num") if i < len(sims) else None,
            text(str(q), "span"),
        )
        for i, q in enumerate(questions)
    ]
    return el(
        "div",
        el("h5", "questions generated from the response (similarity)"),
        el("ul", items, class_="plain"),
    )


def _context_verdicts(contexts: Sequence[Any]) -> Markup:
    items = []
    for c in contexts:
        if not isinstance(c, Mapping):
            continue
        good = bool(c.get("useful", c.get("relevant")))
        word = "relevant" if "relevant" in c else "useful"
        p = c.get("p_useful", c.get("p_relevant"))
        items.append(
            el(
                "li",
                _verdict(
                    f"#{c.get('rank', '?')} {word if good else 'not ' + word}",
                    "good" if good else "bad",
                ),
                el("span", f"p={p:.2f}", class_="num") if isinstance(p, int | float) else None,
                el("span", c["reason"], class_="why") if c.get("reason") else None,
            )
        )
    return el("div", el("h5", "per-context verdicts"), el("ul", items, class_="plain"))


def by_retrieved_rank(metric: str) -> bool:
    """Whether ``metric``'s ``verdicts`` follow the retrieved ranks (precision-style metrics)
    rather than the reference contexts (recall-style ones)."""
    return "precision" in metric


def _verdict_strip(
    verdicts: Sequence[Any], similarities: Sequence[Any] | None, metric: str
) -> Markup:
    sims = list(similarities or [])
    retrieved = by_retrieved_rank(metric)
    chips = [
        el(
            "span",
            f"{'#' if retrieved else 'ref '}{i + 1} {'✓' if v else '✗'}",
            class_="chip " + ("good" if v else "bad"),
            title=f"similarity {sims[i]}" if i < len(sims) else None,
        )
        for i, v in enumerate(verdicts)
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
    """Everything in ``result.details`` of ``metric``: known structures drawn, other keys as
    name/value."""
    details = result.details
    if not details:
        return Markup("")
    parts: list[Markup] = []
    if isinstance(details.get("claims"), list):
        parts.append(_claims(details["claims"]))
    if isinstance(details.get("statements"), list):
        parts.append(_statements(details["statements"]))
    if isinstance(details.get("entities"), list):
        parts.append(_entities(details["entities"]))
    if isinstance(details.get("questions"), list):
        parts.append(_questions(details["questions"], details.get("similarities")))
    if isinstance(details.get("contexts"), list):
        parts.append(_context_verdicts(details["contexts"]))
    if isinstance(details.get("verdicts"), list):
        parts.append(_verdict_strip(details["verdicts"], details.get("similarities"), metric))
    drawn = set(_STRUCTURED)
    if "questions" in details or "verdicts" in details:
        drawn.add("similarities")
    rest = [
        el("span", el("b", key), " ", _plain(value), class_="chip")
        for key, value in details.items()
        if key not in drawn
    ]
    if rest:
        parts.append(el("div", rest, class_="chips"))
    return el("div", parts, class_="details")


def context_marks(
    scores: Mapping[str, MetricResult], n_contexts: int
) -> list[list[tuple[str, str, str]]]:
    """Per retrieved context (by rank), the verdicts metrics gave it: (label, tone, reason)."""
    marks: list[list[tuple[str, str, str]]] = [[] for _ in range(n_contexts)]

    def add(rank: Any, label: str, tone: str, reason: str = "") -> None:
        if isinstance(rank, int) and 1 <= rank <= n_contexts:
            marks[rank - 1].append((label, tone, reason))

    for name, result in scores.items():
        details = result.details
        for c in details.get("contexts") or []:
            if isinstance(c, Mapping):
                good = bool(c.get("useful", c.get("relevant")))
                add(
                    c.get("rank"),
                    f"{name} {'✓' if good else '✗'}",
                    "good" if good else "bad",
                    str(c.get("reason") or ""),
                )
        if by_retrieved_rank(name) and isinstance(details.get("verdicts"), list):
            for i, v in enumerate(details["verdicts"]):
                add(i + 1, f"{name} {'✓' if v else '✗'}", "good" if v else "bad")
        cited: dict[int, int] = {}
        for statement in details.get("statements") or []:
            if isinstance(statement, Mapping):
                for rank in statement.get("contexts") or []:
                    if isinstance(rank, int):
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
