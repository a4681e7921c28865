"""The dashboard's page shell, runs list, samples and sample pages, rendered on the server
with the report's markup and stylesheet: no script, no web font, nothing fetched from
elsewhere, so it works offline. Every UI string comes from :mod:`._i18n`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from ragmeter._version import __version__
from ragmeter.dashboard._charts import CHART_CSS
from ragmeter.dashboard._data import SampleQuery, ok_score, page_of
from ragmeter.dashboard._i18n import ENDONYMS, LANGUAGES, Translator
from ragmeter.report import (
    CSS,
    Markup,
    breakable,
    el,
    esc,
    head_row,
    join,
    num,
    sample_card,
    table,
)
from ragmeter.report import format_score as score
from ragmeter.results import (
    ConversationAggregate,
    ConversationResult,
    EvaluationResult,
    SampleResult,
)
from ragmeter.store import RunInfo, parameter_changes

EXTRA_CSS = """
.topbar { background: var(--soft); border-bottom: 1px solid var(--line); padding: 8px 28px;
  font-size: 13px; display: flex; flex-wrap: wrap; }
.topbar a { margin-right: 14px; }
.topbar .lang { margin-left: auto; }
.topbar .lang a, .topbar .lang strong { margin: 0 0 0 8px; }
.record { border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px; margin: 0 0 12px; }
form.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 8px 0 12px; }
form.filters input, form.filters select { padding: 2px 6px; }
.pager a { margin-right: 10px; }
table.runs th, table.runs td { padding: 5px 6px; }
table.runs td.params, table.runs td.tags { white-space: normal; overflow-wrap: anywhere;
  min-width: 80px; max-width: 200px; }
table.runs th.num { white-space: normal; min-width: 48px; }
td.status-failed { color: var(--bad); font-weight: 600; }
td.status-not_applicable { color: var(--muted); }
td.status-not_started { color: var(--muted); font-style: italic; }
.chart { overflow-x: auto; margin: 6px 0 18px; }
.chart svg { max-width: 100%; height: auto; }
th a.sort { color: inherit; }
"""


@dataclass(frozen=True)
class Ui:
    """What every page needs of its request: the translator and where it was asked for (for
    the language switch, which keeps the other query parameters)."""

    t: Translator
    path: str = "/"
    query: Sequence[tuple[str, str]] = field(default_factory=tuple)

    def switch(self) -> Markup:
        """Links to this page in every language, the current one in bold."""
        kept = [(k, v) for k, v in self.query if k not in ("lang", "token")]
        # This dashboard's own path only: never "//host", which a browser reads as a site.
        path = self.path if self.path.startswith("/") and not self.path.startswith("//") else "/"
        links = []
        for language in LANGUAGES:
            label = ENDONYMS[language]
            if language == self.t.language:
                links.append(el("strong", label))
            else:
                href = f"{path}?{urlencode([*kept, ('lang', language)])}"
                links.append(el("a", label, href=href, id=f"lang-{language}", hreflang=language))
        return el("span", f"{self.t('language')}:", links, class_="lang")


def topbar(ui: Ui, crumbs: Sequence[tuple[str, str]]) -> Markup:
    links = [el("a", ui.t("all_runs"), href="/"), el("a", ui.t("trends"), href="/trends")]
    links += [el("a", label, href=href) for label, href in crumbs]
    return el("div", links, ui.switch(), class_="topbar")


def page(ui: Ui, title: str, *body: object, crumbs: Sequence[tuple[str, str]] = ()) -> str:
    """A whole page: the top bar, then ``body``."""
    footer = el("footer", f"ragmeter {__version__} {ui.t('dashboard')}")
    main = el("main", *body, footer)
    html_lang = "zh-CN" if ui.t.language == "zh" else "en"
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{html_lang}">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}{EXTRA_CSS}{CHART_CSS}</style>\n</head>\n"
        f"<body>\n{topbar(ui, crumbs)}\n{main}\n</body>\n</html>\n"
    )


def with_topbar(
    ui: Ui,
    report_html: str,
    crumbs: Sequence[tuple[str, str]],
    record: Markup,
) -> str:
    """A report page (from :func:`ragmeter.report.render_html`) inside the dashboard: the
    top bar before its content, the run's record at the top of it."""
    html = report_html.replace("</style>", f"{EXTRA_CSS}</style>", 1)
    html = html.replace("<body>\n", f"<body>\n{topbar(ui, crumbs)}\n", 1)
    return html.replace("<main>", f"<main>{record}", 1)


def link_cell(label: object, href: str, *after: object, class_: str | None = None) -> Markup:
    """A table cell holding a link (of class ``class_``) to ``href``, then ``after``."""
    return el("td", el("a", label, href=href, class_=class_), *after)


def _params(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items())) or "—"


def _meta(rows: Sequence[tuple[str, str]]) -> Markup:
    items = [join([el("dt", name), el("dd", value)]) for name, value in rows]
    return el("div", el("dl", items, class_="meta"), class_="record", id="record")


def run_record(ui: Ui, info: RunInfo) -> Markup:
    """The run's store record: name, id, when, params, tags, notes, git."""
    t = ui.t
    # partial: some results failed or were not started
    status = t("complete" if info.status == "complete" else "partial")
    git = "—"
    if info.git_commit:
        git = info.git_commit[:12] + (f" ({t('uncommitted')})" if info.git_dirty else "")
    return _meta(
        [
            (t("run"), f"{info.name} · {info.id}"),
            (t("recorded"), f"{info.created_at:%Y-%m-%d %H:%M} UTC · {status}"),
            (t("params"), _params(info.params)),
            (t("tags"), ", ".join(info.tags) or "—"),
            (t("notes"), info.notes or "—"),
            (t("git"), git),
        ]
    )


def compare_record(ui: Ui, before: RunInfo, after: RunInfo) -> Markup:
    """Which runs are compared, and how their parameters differ."""
    t = ui.t
    changes = parameter_changes(before.params, after.params)
    return _meta(
        [
            (
                t("baseline"),
                f"{before.name} · {before.id[:8]} · {before.created_at:%Y-%m-%d %H:%M}",
            ),
            (t("run"), f"{after.name} · {after.id[:8]} · {after.created_at:%Y-%m-%d %H:%M}"),
            (t("params"), "; ".join(changes) if changes else t("the_same")),
        ]
    )


def field_input(label: str, name: str, value: str | None, **extra: object) -> Markup:
    return el(
        "label",
        f"{label} ",
        el("input", name=name, value=value or "", id=f"filter-{name}", **extra),
    )


def runs_filter(
    ui: Ui, filters: dict[str, str | None], action: str, button: str, *first: object
) -> Markup:
    """The form that filters runs by name, tag and date (after the fields ``first``),
    submitted to ``action`` by the button labelled ``button``."""
    t = ui.t
    return el(
        "form",
        *first,
        field_input(t("name"), "name", filters.get("name")),
        field_input(t("tag"), "tag", filters.get("tag")),
        field_input(t("since"), "since", filters.get("since"), type="date"),
        field_input(t("until"), "until", filters.get("until"), type="date"),
        el("button", t(button), type="submit", id="filter"),
        method="get",
        action=action,
        class_="filters",
    )


def runs_page(ui: Ui, found: Sequence[RunInfo], filters: dict[str, str | None]) -> str:
    """Every run (newest first) with its means; tick two and compare them."""
    t = ui.t
    metrics = list(dict.fromkeys(m["name"] for info in found for m in info.metrics))
    form = runs_filter(ui, filters, "/", "filter")
    head = head_row(
        t("compare"),
        t("run"),
        t("recorded"),
        t("samples"),
        [el("th", breakable(m), class_="num", title=m) for m in metrics],
        t("params"),
        t("tags"),
        t("git"),
    )
    rows = [_run_row(ui, info, metrics) for info in found]
    runs = el(
        "form",
        table(head, rows, scroll=True, class_="runs"),
        el("p", el("button", t("compare_ticked"), type="submit", id="compare")),
        method="get",
        action="/compare",
    )
    body = [el("h1", t("runs")), form]
    body.append(runs if found else el("p", t("no_runs"), class_="muted"))
    return page(ui, t("runs_title"), *body)


def _run_row(ui: Ui, info: RunInfo, metrics: Sequence[str]) -> Markup:
    git = "—" if info.git_commit is None else info.git_commit[:8] + ("*" if info.git_dirty else "")
    partial = "" if info.status == "complete" else f" {ui.t('partial')}"
    return el(
        "tr",
        el("td", el("input", type="checkbox", name="run", value=info.id)),
        el(
            "td",
            el("a", info.name, href=f"/runs/{info.id}", class_="run-link"),
            " ",
            el("code", info.id[:8]),
        ),
        el("td", f"{info.created_at:%Y-%m-%d %H:%M}"),
        el("td", f"{info.n_samples}{partial}"),
        [el("td", score(info.mean(m), 3), class_="num") for m in metrics],
        el("td", _params(info.params), class_="params"),
        el("td", ", ".join(info.tags) or "—", class_="tags"),
        el("td", git),
        id=f"run-{info.id}",
    )


def field_select(
    label: str, name: str, chosen: str | None, options: Sequence[tuple[str, str]]
) -> Markup:
    return el(
        "label",
        f"{label} ",
        el(
            "select",
            [
                el("option", text, value=value, selected=(value == (chosen or "")))
                for value, text in options
            ],
            name=name,
            id=f"filter-{name}",
        ),
    )


def samples_page(
    ui: Ui,
    info: RunInfo,
    result: EvaluationResult,
    query: SampleQuery,
    chosen: Sequence[SampleResult],
) -> str:
    """The samples of a run that match ``query``, a page at a time, sortable by any metric,
    each linking to its own page."""
    t = ui.t
    metrics = [m.name for m in result.metrics]
    base = f"/runs/{info.id}/samples"
    keys = {"ok": "ok", "failed": "failed", "n/a": "not_applicable", "not_started": "not_started"}
    statuses = [("", t("any_status"))] + [(v, t(f"status_{key}")) for v, key in keys.items()]
    form = el(
        "form",
        field_select(
            t("metric"),
            "metric",
            query.metric,
            [("", t("all_metrics"))] + [(m, m) for m in metrics],
        ),
        field_select(t("status"), "status", query.status, statuses),
        field_input(t("tag"), "tag", query.tag, placeholder="key=value"),
        field_input(t("search"), "q", query.q, type="search"),
        field_select(
            t("sort"), "sort", query.sort, [("", t("dataset_order"))] + [(m, m) for m in metrics]
        ),
        field_select(t("order"), "order", query.order, [("asc", t("asc")), ("desc", t("desc"))]),
        el("button", t("filter"), type="submit", id="filter"),
        method="get",
        action=base,
        class_="filters",
    )

    def sort_link(metric: str) -> Markup:
        order = "desc" if query.sort == metric and query.order == "asc" else "asc"
        arrow = {"asc": " ↑", "desc": " ↓"}[query.order] if query.sort == metric else ""
        href = f"{base}?{urlencode(query.params(sort=metric, order=order, page=None))}"
        return el("a", breakable(metric), arrow, href=href, class_="sort", id=f"sort-{metric}")

    head = head_row(
        t("sample"), t("question"), [el("th", sort_link(m), class_="num") for m in metrics]
    )
    rows = [
        el(
            "tr",
            link_cell(s.sample_id, f"{base}/{s.index}", class_="sample-page-link"),
            el("td", (s.sample.user_input or "")[:120], class_="text"),
            [score_cell(ui, s, m) for m in metrics],
            class_="sample-row",
        )
        for s in page_of(chosen, query)
    ]
    pages = max(1, -(-len(chosen) // query.per_page))
    pager = (
        el(
            "p",
            [
                el("a", str(n), href=f"{base}?{urlencode(query.params(page=n))}")
                if n != query.page
                else el("strong", str(n))
                for n in range(1, pages + 1)
            ],
            class_="pager",
        )
        if pages > 1
        else None
    )
    title = t("samples_of", name=info.name, n=len(chosen), total=len(result))
    listed = (
        table(head, rows, scroll=True, class_="samples")
        if rows
        else el("p", t("no_sample"), class_="muted", id="no-sample")
    )
    return page(
        ui,
        title,
        el("h1", title),
        run_record(ui, info),
        form,
        pager,
        listed,
        crumbs=[(info.name, f"/runs/{info.id}")],
    )


def score_cell(ui: Ui, sample: SampleResult, metric: str) -> Markup:
    """A sample's result on ``metric``: its score when ok, else its status (never a number)."""
    found = sample.scores.get(metric)
    if found is None:
        return el("td", "—")
    value = ok_score(sample, metric)
    if value is None:
        status = found.status.value
        return el(
            "td",
            ui.t(f"status_{status}"),
            class_=f"status-{status}",
            title=found.error or found.reason,
        )
    return el("td", score(value, 3), class_="num")


def sample_page(ui: Ui, info: RunInfo, result: EvaluationResult, index: int) -> str:
    """One sample: its texts, contexts with their verdicts, claims, every metric's result."""
    t = ui.t
    samples = result.samples
    sample = samples[index]
    base = f"/runs/{info.id}/samples"
    around = []
    if index > 0:
        around.append(el("a", t("previous"), href=f"{base}/{index - 1}"))
    if index + 1 < len(samples):
        around.append(el("a", t("next"), href=f"{base}/{index + 1}"))
    title = t("sample_of", name=info.name, id=sample.sample_id)
    return page(
        ui,
        title,
        el("h1", title),
        el("p", around, class_="pager"),
        sample_card(sample, result.metrics),
        crumbs=[(info.name, f"/runs/{info.id}"), (t("samples"), base)],
    )


def conversation_href(info: RunInfo, conversation_id: str) -> str:
    """The address of a conversation's page (its id quoted: ids hold "#", "/" or spaces)."""
    return f"/runs/{info.id}/conversations/{quote(conversation_id, safe='')}"


def _levels_table(
    ui: Ui, result: EvaluationResult, levels: dict[str, ConversationAggregate]
) -> Markup:
    t = ui.t
    head = head_row(
        t("metric"),
        num(t("per_conversation")),
        num(t("ci")),
        num(t("conversations_scored")),
        num(t("per_turn")),
        num(t("turns_scored")),
    )
    rows = []
    for metric in result.metrics:
        agg = levels[metric.name]
        ci = agg.ci
        rows.append(
            el(
                "tr",
                el("td", metric.name),
                el("td", score(agg.mean), class_="num conversation-mean"),
                el(
                    "td",
                    "—" if ci is None else f"{score(ci.low)}–{score(ci.high)}",
                    class_="num",
                ),
                el("td", f"{agg.n_scored}/{agg.n_conversations}", class_="num"),
                el("td", score(agg.turn_mean), class_="num turn-mean"),
                el("td", f"{agg.n_turns_ok}/{agg.n_turns}", class_="num"),
                data_metric=metric.name,
            )
        )
    return table(head, rows, class_="fit", id="levels")


def conversations_page(
    ui: Ui,
    info: RunInfo,
    result: EvaluationResult,
    ranked: Sequence[ConversationResult],
    levels: dict[str, ConversationAggregate],
) -> str:
    """A multi-turn run's conversations, worst first: each with its number of turns and per
    metric its mean over the scored turns and its worst turn, linking to its own page; the
    conversation-level means next to the turn-level ones above."""
    t = ui.t
    metrics = [m.name for m in result.metrics]
    title = t("conversations_of", name=info.name, n=len(ranked))
    crumbs = [(info.name, f"/runs/{info.id}"), (t("samples"), f"/runs/{info.id}/samples")]
    if not ranked:
        return page(ui, title, el("h1", title), el("p", t("no_conversation")), crumbs=crumbs)
    head = head_row(
        t("conversation"),
        num(t("turns")),
        [el("th", breakable(m), class_="num", title=m) for m in metrics],
    )
    rows = []
    for conversation in ranked:
        cells = []
        for m in metrics:
            found = conversation.metrics[m]
            worst = (
                el("div", t("worst_turn", turn=found.worst_turn), class_="muted")
                if found.n_ok > 1
                else None
            )
            cells.append(
                el(
                    "td",
                    score(found.mean, 3),
                    worst,
                    class_="num",
                    title=t("turns_scored_of", n=found.n_ok, total=found.n_turns),
                )
            )
        rows.append(
            el(
                "tr",
                link_cell(
                    conversation.conversation_id,
                    conversation_href(info, conversation.conversation_id),
                    class_="conversation-link",
                ),
                el("td", conversation.n_turns, class_="num"),
                cells,
                class_="conversation-row",
            )
        )
    return page(
        ui,
        title,
        el("h1", title),
        run_record(ui, info),
        el("h2", t("conversation_levels")),
        _levels_table(ui, result, levels),
        el("p", t("levels_note"), class_="muted"),
        el("h2", t("worst_conversations")),
        table(head, rows, scroll=True, class_="samples"),
        crumbs=crumbs,
    )


def conversation_page(
    ui: Ui, info: RunInfo, result: EvaluationResult, conversation: ConversationResult
) -> str:
    """One conversation's turns in order: the user message, the response and every
    metric's result, each turn linking to its sample's page."""
    t = ui.t
    metrics = [m.name for m in result.metrics]
    base = f"/runs/{info.id}/samples"
    head = head_row(
        num(t("turn")),
        t("sample"),
        t("question"),
        t("response"),
        [el("th", breakable(m), class_="num", title=m) for m in metrics],
    )
    rows = [
        el(
            "tr",
            el("td", number, class_="num"),
            link_cell(s.sample_id, f"{base}/{s.index}", class_="sample-page-link"),
            el("td", s.sample.user_input or "", class_="text"),
            el("td", s.sample.response or "", class_="text"),
            [score_cell(ui, s, m) for m in metrics],
            class_="turn-row",
            data_turn=number,
        )
        for number, s in zip(conversation.turn_numbers(), conversation.turns, strict=True)
    ]
    means = table(
        head_row(t("metric"), num(t("mean")), num(t("worst")), num(t("turns_scored"))),
        [
            el(
                "tr",
                el("td", name),
                el("td", score(m.mean), class_="num"),
                el(
                    "td",
                    "—" if m.worst_turn is None else t("worst_turn", turn=m.worst_turn),
                    class_="num",
                ),
                el("td", f"{m.n_ok}/{m.n_turns}", class_="num"),
                data_metric=name,
            )
            for name, m in conversation.metrics.items()
        ],
        class_="fit",
        id="conversation-means",
    )
    title = t("conversation_of", name=info.name, id=conversation.conversation_id)
    return page(
        ui,
        title,
        el("h1", title),
        means,
        table(head, rows, scroll=True, class_="samples", id="turns"),
        crumbs=[
            (info.name, f"/runs/{info.id}"),
            (t("conversations"), f"/runs/{info.id}/conversations"),
        ],
    )


def message_page(ui: Ui, title: str, text: str) -> str:
    return page(ui, title, el("h1", title), el("p", text))
