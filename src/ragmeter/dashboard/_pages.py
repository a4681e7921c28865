"""The dashboard's pages, rendered on the server with the report's markup and stylesheet:
no script, no web font, nothing fetched from elsewhere, so it works offline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from ragmeter._version import __version__
from ragmeter.report import CSS, Markup, el, esc, join, sample_card
from ragmeter.report import format_score as score
from ragmeter.results import EvaluationResult
from ragmeter.store import RunInfo, parameter_changes

EXTRA_CSS = """
.topbar { background: var(--soft); border-bottom: 1px solid var(--line); padding: 8px 28px;
  font-size: 13px; }
.topbar a { margin-right: 14px; }
.record { border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px; margin: 0 0 12px; }
form.filters { display: flex; gap: 8px; align-items: center; margin: 8px 0 12px; }
form.filters input { padding: 2px 6px; }
.pager a { margin-right: 10px; }
"""
PAGE_SIZE = 100


def page(title: str, *body: object, crumbs: Sequence[tuple[str, str]] = ()) -> str:
    """A whole page: the top bar, then ``body``."""
    links = [el("a", "All runs", href="/")] + [el("a", label, href=href) for label, href in crumbs]
    main = el("main", *body, el("footer", f"ragmeter {__version__} dashboard"))
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}{EXTRA_CSS}</style>\n</head>\n"
        f"<body>\n{el('div', links, class_='topbar')}\n{main}\n</body>\n</html>\n"
    )


def with_topbar(report_html: str, crumbs: Sequence[tuple[str, str]], record: Markup) -> str:
    """A report page (from :func:`ragmeter.report.render_html`) inside the dashboard: the
    top bar before its content and the run's record at the top of it."""
    links = [el("a", "All runs", href="/")] + [el("a", label, href=href) for label, href in crumbs]
    bar = el("div", links, class_="topbar")
    html = report_html.replace("</style>", f"{EXTRA_CSS}</style>", 1)
    html = html.replace("<body>\n", f"<body>\n{bar}\n", 1)
    return html.replace("<main>", f"<main>{record}", 1)


def _params(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items())) or "—"


def run_record(info: RunInfo) -> Markup:
    """The run's store record: name, id, when, params, tags, notes, git."""
    git = "—"
    if info.git_commit:
        git = info.git_commit[:12] + (" (uncommitted changes)" if info.git_dirty else "")
    rows = [
        ("run", f"{info.name} · {info.id}"),
        ("recorded", f"{info.created_at:%Y-%m-%d %H:%M} UTC · {info.status}"),
        ("params", _params(info.params)),
        ("tags", ", ".join(info.tags) or "—"),
        ("notes", info.notes or "—"),
        ("git", git),
    ]
    items = [join([el("dt", name), el("dd", value)]) for name, value in rows]
    return el("div", el("dl", items, class_="meta"), class_="record", id="record")


def compare_record(before: RunInfo, after: RunInfo) -> Markup:
    """Which runs are compared, and how their parameters differ."""
    changes = parameter_changes(before.params, after.params)
    rows = [
        ("baseline", f"{before.name} · {before.id[:8]} · {before.created_at:%Y-%m-%d %H:%M}"),
        ("run", f"{after.name} · {after.id[:8]} · {after.created_at:%Y-%m-%d %H:%M}"),
        ("params", "; ".join(changes) if changes else "the same"),
    ]
    items = [join([el("dt", name), el("dd", value)]) for name, value in rows]
    return el("div", el("dl", items, class_="meta"), class_="record", id="record")


def runs_page(found: Sequence[RunInfo], name: str | None, tag: str | None) -> str:
    """Every run (newest first) with its means; tick two and compare them."""
    metrics = list(dict.fromkeys(m["name"] for info in found for m in info.metrics))
    filters = el(
        "form",
        el("label", "name ", el("input", name="name", value=name or "", id="filter-name")),
        el("label", "tag ", el("input", name="tag", value=tag or "", id="filter-tag")),
        el("button", "Filter", type="submit", id="filter"),
        method="get",
        action="/",
        class_="filters",
    )
    head = el(
        "tr",
        el("th", "compare"),
        [el("th", h) for h in ("run", "recorded", "samples")],
        [el("th", m, class_="num") for m in metrics],
        [el("th", h) for h in ("params", "tags", "git")],
    )
    rows = []
    for info in found:
        git = (
            "—"
            if info.git_commit is None
            else info.git_commit[:8] + ("*" if info.git_dirty else "")
        )
        rows.append(
            el(
                "tr",
                el("td", el("input", type="checkbox", name="run", value=info.id)),
                el(
                    "td",
                    el("a", info.name, href=f"/runs/{info.id}", class_="run-link"),
                    " ",
                    el("code", info.id[:8]),
                ),
                el("td", f"{info.created_at:%Y-%m-%d %H:%M}"),
                el("td", str(info.n_samples) + ("" if info.status == "complete" else " partial")),
                [el("td", score(info.mean(m), 3), class_="num") for m in metrics],
                el("td", _params(info.params)),
                el("td", ", ".join(info.tags) or "—"),
                el("td", git),
                id=f"run-{info.id}",
            )
        )
    table = el(
        "form",
        el("table", el("thead", head), el("tbody", rows), class_="runs"),
        el(
            "p",
            el(
                "button",
                "Compare the two ticked runs (the older one is the baseline)",
                type="submit",
                id="compare",
            ),
        ),
        method="get",
        action="/compare",
    )
    body = [el("h1", "Runs"), filters]
    body.append(table if found else el("p", "No run recorded yet.", class_="muted"))
    return page("ragmeter runs", *body)


def samples_page(info: RunInfo, result: EvaluationResult, page_number: int) -> str:
    """Every sample of a run, a page at a time, each linking to its own page."""
    samples = result.samples
    pages = max(1, -(-len(samples) // PAGE_SIZE))
    page_number = min(max(page_number, 1), pages)
    shown = samples[(page_number - 1) * PAGE_SIZE : page_number * PAGE_SIZE]
    metrics = [m.name for m in result.metrics]
    head = el("tr", el("th", "sample"), el("th", "question"), [el("th", m) for m in metrics])
    rows = [
        el(
            "tr",
            el(
                "td",
                el(
                    "a",
                    s.sample_id,
                    href=f"/runs/{info.id}/samples/{s.index}",
                    class_="sample-page-link",
                ),
            ),
            el("td", (s.sample.user_input or "")[:120], class_="text"),
            [_score_cell(s.scores.get(m)) for m in metrics],
        )
        for s in shown
    ]
    pager = (
        el(
            "p",
            [
                el("a", str(n), href=f"/runs/{info.id}/samples?{urlencode({'page': n})}")
                if n != page_number
                else el("strong", str(n))
                for n in range(1, pages + 1)
            ],
            class_="pager",
        )
        if pages > 1
        else None
    )
    return page(
        f"{info.name}: samples",
        el("h1", f"{info.name}: {len(samples)} samples"),
        run_record(info),
        pager,
        el("table", el("thead", head), el("tbody", rows), class_="samples"),
        crumbs=[(info.name, f"/runs/{info.id}")],
    )


def _score_cell(result: Any) -> Markup:
    if result is None:
        return el("td", "—")
    if result.score is None:
        return el("td", result.status.value, class_=f"status-{result.status.value}")
    return el("td", score(result.score, 3), class_="num")


def sample_page(info: RunInfo, result: EvaluationResult, index: int) -> str:
    """One sample: its texts, contexts with their verdicts, claims, every metric's result."""
    samples = result.samples
    sample = samples[index]
    around = []
    if index > 0:
        around.append(el("a", "← previous", href=f"/runs/{info.id}/samples/{index - 1}"))
    if index + 1 < len(samples):
        around.append(el("a", "next →", href=f"/runs/{info.id}/samples/{index + 1}"))
    return page(
        f"{info.name}: {sample.sample_id}",
        el("h1", f"{info.name}: sample {sample.sample_id}"),
        el("p", around, class_="pager"),
        sample_card(sample, result.metrics),
        crumbs=[(info.name, f"/runs/{info.id}"), ("samples", f"/runs/{info.id}/samples")],
    )


def message_page(title: str, text: str) -> str:
    return page(title, el("h1", title), el("p", text))
