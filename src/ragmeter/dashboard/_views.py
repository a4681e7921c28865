"""The trends page and the paired-comparison section of the compare page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from ragmeter.dashboard._charts import compare_chart, trend_chart
from ragmeter.dashboard._pages import (
    Ui,
    compare_record,
    field_select,
    link_cell,
    page,
    runs_filter,
)
from ragmeter.report import Markup, breakable, el, head_row, join, num, table
from ragmeter.report import format_score as score
from ragmeter.store import RunInfo


def _signed(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:+.{digits}f}"


def _p(value: float | None) -> str:
    if value is None:
        return "—"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def trends_page(
    ui: Ui,
    data: dict[str, Any],
    filters: dict[str, str | None],
    metrics: Sequence[str],
    gate_source: str | None,
) -> str:
    """A chart per metric across the chosen runs, with intervals and thresholds."""
    t = ui.t
    choices = [("", t("all_metrics"))] + [(m, m) for m in metrics]
    metric = field_select(t("metric"), "metric", filters.get("metric"), choices)
    form = runs_filter(ui, filters, "/trends", "show", metric)
    gate = (
        el("p", f"{t('gate_from')} {gate_source}", class_="muted", id="gate-source")
        if gate_source
        else el("p", t("no_gate"), class_="muted", id="gate-source")
    )
    body: list[object] = [el("h1", t("trends_title")), el("p", t("trends_intro")), form, gate]
    shown = [m for m in data["metrics"] if m["points"]]
    if not shown:
        body.append(el("p", t("no_trend"), class_="muted", id="no-trend"))
    drawn, left = _within_budget(shown)
    datasets = data.get("datasets") or []
    body.extend(_trend_section(trend, datasets) for trend in drawn)
    if left:
        kept = {k: v for k, v in filters.items() if v and k != "metric"}
        links = [
            el("a", m, href=f"/trends?{urlencode({**kept, 'metric': m})}", class_="more-metric")
            for m in left
        ]
        body.append(el("p", t("more_metrics"), " ", join(links, sep=" · "), id="more-metrics"))
    if drawn:
        body.append(_trend_table(ui, drawn, datasets))
    return page(ui, t("trends_title"), *body)


#: The most points one trends page draws (50 runs of 9 metrics): it keeps the page light;
#: the metrics past it are listed as links to their own chart.
POINT_BUDGET = 450


def _within_budget(
    shown: Sequence[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[str]]:
    drawn: list[dict[str, Any]] = []
    used = 0
    for trend in shown:
        used += len(trend["points"])
        if drawn and used > POINT_BUDGET:
            break
        drawn.append(trend)
    return drawn, [trend["metric"] for trend in shown[len(drawn) :]]


def _trend_section(trend: dict[str, Any], datasets: Sequence[dict[str, Any]]) -> Markup:
    thresholds = [el("li", th["rule"], class_="threshold-rule") for th in trend["thresholds"]]
    return el(
        "section",
        el("h2", trend["metric"]),
        el("div", trend_chart(trend, trend["metric"], datasets), class_="chart"),
        el("ul", thresholds) if thresholds else None,
        id=f"metric-{trend['metric']}",
        class_="trend",
    )


def _trend_table(
    ui: Ui, shown: Sequence[dict[str, Any]], datasets: Sequence[dict[str, Any]] = ()
) -> Markup:
    """The charted figures, a row per run (oldest first) and a column per metric:
    the mean and its interval; with runs of several datasets, a column names each one's."""
    t = ui.t
    labels = {d["dataset"]: d["label"] for d in datasets} if len(datasets) > 1 else {}
    runs: dict[str, dict[str, Any]] = {}
    for trend in shown:
        for p in trend["points"]:
            runs.setdefault(p["run"], {"point": p, "cells": {}})["cells"][trend["metric"]] = p
    order = sorted(runs.values(), key=lambda r: (r["point"]["created_at"], r["point"]["run"]))

    def cell(p: dict[str, Any] | None) -> Markup:
        if p is None:
            return el("td", "—", class_="num")
        ci = "" if p["ci_low"] is None else f" ({p['ci_low']:.2f}–{p['ci_high']:.2f})"
        return el("td", score(p["mean"], 3), el("span", ci, class_="muted"), class_="num")

    rows = [
        el(
            "tr",
            link_cell(r["point"]["name"], f"/runs/{r['point']['run']}"),
            el("td", r["point"]["created_at"][:16].replace("T", " ")),
            el("td", labels.get(r["point"].get("dataset"), "—")) if labels else None,
            [cell(r["cells"].get(trend["metric"])) for trend in shown],
        )
        for r in order
    ]
    head = head_row(
        t("run"),
        t("recorded"),
        t("dataset") if labels else None,
        [el("th", breakable(trend["metric"]), class_="num") for trend in shown],
    )
    return el(
        "details",
        el("summary", f"{t('mean')} · {t('ci')} · {len(order)} {t('runs').lower()}"),
        table(head, rows, scroll=True),
        id="trend-table",
    )


def compare_page(ui: Ui, before: RunInfo, after: RunInfo, data: dict[str, Any]) -> str:
    """Two runs: how they differ in settings and measurement, the paired change per metric,
    the samples that changed most, and a link to the report's full comparison."""
    t = ui.t
    title = t("compare_title", candidate=after.name, baseline=before.name)
    differences = list(dict.fromkeys(d for m in data["metrics"] for d in m["differences"]))
    banner = (
        el(
            "div",
            t("measured_differently"),
            el("ul", [el("li", d) for d in differences]),
            class_="banner warn",
            id="comparability",
        )
        if differences
        else None
    )
    full = f"/compare/report?base={before.id}&candidate={after.id}"
    return page(
        ui,
        title,
        el("h1", title),
        compare_record(ui, before, after),
        banner,
        paired_section(ui, data),
        el("p", el("a", t("full_report"), href=full, id="full-report")),
        crumbs=[(before.name, f"/runs/{before.id}"), (after.name, f"/runs/{after.id}")],
    )


def paired_section(ui: Ui, data: dict[str, Any]) -> Markup:
    """Per metric: the paired change with its interval and p-values, a chart of them, and
    the samples that changed most, each linking to both runs' sample pages."""
    t = ui.t
    candidate, baseline = data["candidate"]["id"], data["baseline"]["id"]
    numbers = ("baseline", "run", "delta", "ci", "p_value", "p_adjusted", "pairs")
    head = head_row(t("metric"), [num(t(key)) for key in numbers], t("verdict"))
    rows = []
    for m in data["metrics"]:
        ci = m["ci"]
        rows.append(
            el(
                "tr",
                el("td", m["metric"]),
                el("td", score(m["baseline_mean"], 3), class_="num"),
                el("td", score(m["candidate_mean"], 3), class_="num"),
                el("td", _signed(m["difference"]), class_="num delta"),
                el(
                    "td",
                    "—" if ci is None else f"{ci['low']:+.3f} … {ci['high']:+.3f}",
                    class_="num",
                ),
                el("td", _p(m["p_value"]), class_="num p-value"),
                el("td", _p(m["p_adjusted"]), class_="num"),
                el("td", str(m["n_pairs"]), class_="num"),
                el(
                    "td",
                    t(f"change_{m['change']}"),
                    class_=f"change-{m['change'].replace(' ', '-')}",
                ),
                title=m["verdict"],
                id=f"paired-{m['metric']}",
            )
        )
    changed_rows = []
    for c in data["changed"]:
        before, after = c["baseline"], c["candidate"]
        changed_rows.append(
            el(
                "tr",
                link_cell(
                    c["id"],
                    f"/runs/{candidate}/samples/{c['candidate_index']}",
                    " ",
                    el(
                        "a",
                        f"({t('baseline')})",
                        href=f"/runs/{baseline}/samples/{c['baseline_index']}",
                        class_="muted",
                    ),
                    class_="changed-sample",
                ),
                el("td", (c["question"] or "")[:100]),
                el("td", c["metric"]),
                _result_cell(ui, before),
                _result_cell(ui, after),
                el(
                    "td",
                    t("status_change") if c["delta"] is None else _signed(c["delta"]),
                    class_="num",
                ),
            )
        )
    changed_head = head_row(
        t("sample"), t("question"), t("metric"), [num(t(k)) for k in ("baseline", "run", "delta")]
    )
    changed = (
        table(changed_head, changed_rows, class_="changed")
        if changed_rows
        else el("p", t("no_changed"), class_="muted")
    )
    return el(
        "section",
        el("h2", t("paired_title")),
        el("p", t("paired_intro"), class_="muted"),
        el("div", compare_chart(data["metrics"], t("paired_title")), class_="chart"),
        table(head, rows, scroll=True, class_="paired"),
        el("ul", [el("li", m["verdict"]) for m in data["metrics"]], class_="verdicts"),
        el("h3", t("changed_title")),
        changed,
        id="paired",
    )


def _result_cell(ui: Ui, result: dict[str, Any]) -> Markup:
    if result["score"] is None:
        status = result["status"] or "not_applicable"
        return el("td", ui.t(f"status_{status}"), class_=f"status-{status}")
    return el("td", score(result["score"], 3), class_="num")
