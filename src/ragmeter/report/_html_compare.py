"""The run-vs-run section: means of both runs, their change, and the samples that moved."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragmeter.report import _format as fmt
from ragmeter.report._analysis import Comparison, Measured, MetricDelta
from ragmeter.report._html_samples import Links
from ragmeter.report._markup import Markup, el, head_row, join, num, shorten, table, text
from ragmeter.report._svg import Bar, Point, delta_bars, paired_scatter
from ragmeter.results import Aggregate

if TYPE_CHECKING:
    from ragmeter.stats import Comparison as StatsComparison


def delta_cell(delta: MetricDelta, found: StatsComparison | None = None) -> Markup:
    """The change of the mean with the statistics' word for it (``found``: the metric's
    comparison), green or red only when it is significant, neutral otherwise."""
    kind, word = fmt.metric_change(found)
    label = "" if not word or delta.delta is None else f" {word}"
    return el("td", fmt.signed(delta.delta), label, class_=f"num {kind}", data_change=kind)


def _coverage(agg: Aggregate | None) -> str:
    return fmt.NONE if agg is None else f"{agg.n_ok}/{agg.n_total}"


def _mean(agg: Aggregate | None) -> str:
    return fmt.score(agg.mean if agg is not None else None)


def _means_table(comparison: Comparison, tests: Sequence[StatsComparison]) -> Markup:
    found = {c.metric: c for c in tests}
    head = head_row(
        "metric",
        "better",
        num("baseline"),
        num("this run"),
        num("Δ mean"),
        num("coverage before → now"),
        num("paired", "shared samples scored in both runs"),
        num("improved"),
        num("worsened"),
        num("status changed"),
    )
    rows = [
        el(
            "tr",
            el("td", d.metric),
            el("td", fmt.arrow(d.direction), class_="dir"),
            el("td", _mean(d.baseline), class_="num"),
            el("td", _mean(d.current), class_="num"),
            delta_cell(d, found.get(d.metric)),
            el("td", f"{_coverage(d.baseline)} → {_coverage(d.current)}", class_="num"),
            el("td", d.n_paired, class_="num"),
            el("td", d.n_better, class_="num better" if d.n_better else "num"),
            el("td", d.n_worse, class_="num worse" if d.n_worse else "num"),
            el("td", d.n_status_changed, class_="num"),
            data_metric=d.metric,
        )
        for d in comparison.metrics
    ]
    return table(head, rows, scroll=True, id="compare-table", class_="fit")


def _changes_table(comparison: Comparison, links: Links) -> Markup | None:
    """One table: per metric, the shared samples whose score moved most."""
    rows = []
    for delta in comparison.metrics:
        for position, c in enumerate(delta.changes):
            kind = fmt.change(c.delta, delta.direction)
            metric_cell = (
                el(
                    "td",
                    delta.metric,
                    " ",
                    el("span", fmt.arrow(delta.direction), class_="muted"),
                    rowspan=len(delta.changes),
                    class_="group",
                )
                if position == 0
                else None
            )
            rows.append(
                el(
                    "tr",
                    metric_cell,
                    el("td", links.link(c.sample)),
                    el("td", fmt.score(c.baseline), class_="num"),
                    el("td", fmt.score(c.current), class_="num"),
                    el("td", fmt.signed(c.delta), class_=f"num {kind}", data_change=kind),
                    el(
                        "td",
                        text(shorten(c.sample.sample.user_input or "", 120), "span"),
                        class_="text",
                    ),
                    data_metric=delta.metric,
                )
            )
    if not rows:
        return None
    head = head_row("metric", "sample", num("baseline"), num("this run"), num("Δ"), "question")
    return table(head, rows, id="changes-table")


def scatters(comparison: Comparison) -> Markup:
    """Per metric, a paired scatter of the shared samples scored in both runs."""
    cards = []
    for delta in comparison.metrics:
        if not delta.pairs:
            continue
        points = [
            Point(c.sample.sample_id, c.baseline, c.current, fmt.change(c.delta, delta.direction))
            for c in delta.pairs
        ]
        cards.append(
            el(
                "div",
                el(
                    "h4",
                    delta.metric,
                    el("span", f"{fmt.arrow(delta.direction)} n={len(points)}"),
                ),
                paired_scatter(delta.metric, points),
                class_="hist-card",
            )
        )
    if not cards:
        return el("p", "No shared sample was scored in both runs.", class_="muted")
    return el("div", cards, class_="hists scatters", id="compare-scatters")


def _bar(found: StatsComparison) -> Bar:
    if found.not_comparable is not None:
        # "judge changed (A vs B)": the banner above names the models
        why = found.not_comparable.split(" (")[0]
        return Bar(found.metric, None, None, None, "same", note=f"not comparable: {why}")
    if found.difference is None:
        return Bar(found.metric, None, None, None, "same", note="not compared (too few samples)")
    ci = found.ci
    return Bar(
        found.metric,
        found.difference,
        ci.low if ci else None,
        ci.high if ci else None,
        fmt.metric_change(found)[0],
        found.significant,
    )


def measured_banner(found: Measured) -> Markup | None:
    """How the runs were measured differently: a changed judge (no verdict, or compared
    anyway), then prompt versions, settings and what a run did not record."""
    if not found:
        return None
    parts: list[object] = []
    for heading, listed in (
        (
            el(
                "p",
                el("b", "Not comparable: the judge changed. "),
                "The judge must stay fixed across a comparison: these metrics get no "
                "significance verdict (re-run one side with the other's judge, or pass "
                "--allow-judge-change).",
            ),
            found.refused,
        ),
        (
            el(
                "p",
                el("b", "Compared across a changed judge "),
                "(--allow-judge-change): part of each change may be the judge's.",
            ),
            found.allowed,
        ),
        (el("p", el("b", "The runs were not measured quite the same way:")), found.warnings),
    ):
        if listed:
            parts += [heading, el("ul", *(el("li", line) for line in listed))]
    bad = bool(found.refused or found.allowed)
    return el("div", *parts, class_=f"banner {'bad' if bad else 'warn'}", id="comparability")


def compare_section(
    comparison: Comparison,
    baseline_label: str,
    links: Links,
    top: int,
    verdicts: Sequence[str] = (),
    differences: Measured | None = None,
    *,
    tests: Sequence[StatsComparison] = (),
) -> Markup:
    """Baseline against this run; deltas are this run minus the baseline. ``verdicts`` are
    the statistics' plain-language verdicts (real change or noise), one per metric;
    ``differences`` how the runs were measured differently (a banner first); ``tests`` the
    comparisons behind the verdicts, drawn as bars of the change with its interval. Per
    metric, a scatter pairs each shared sample's two scores."""
    notes = [
        measured_banner(differences or Measured()),
        el(
            "p",
            "Baseline: ",
            el("b", baseline_label),
            ". Δ = this run − baseline. Real change or noise: the bootstrap interval of the "
            "difference and a permutation test, Holm-corrected across metrics (below the "
            "table); a change is called better or worse only when that test finds it "
            "significant, else no significant change.",
            class_="muted",
        ),
        el(
            "p", comparison.sample_note(), class_=None if comparison.same_samples else "banner warn"
        ),
    ]
    if comparison.same_dataset is False:
        notes.append(
            el(
                "p",
                "The dataset fingerprints differ: the runs did not read the same data.",
                class_="banner warn",
            )
        )
    changes = _changes_table(comparison, links) or el(
        "p", "No shared sample changed score.", class_="muted"
    )
    heading = el(
        "h3", "Samples that changed most", el("span", f" — up to {top} per metric", class_="muted")
    )
    significance = el("ul", *(el("li", verdict) for verdict in verdicts), class_="verdicts")
    charts = (
        [
            el("h3", "Change of the mean"),
            el(
                "p",
                "Bar: this run − baseline, over the samples scored in both runs when they "
                "share samples (else each run's mean), as in the verdicts above; whisker: its "
                "bootstrap confidence interval. Green: significantly better, red: "
                "significantly worse (after Holm correction), in each metric's direction; "
                "grey: no significant change.",
                class_="muted",
            ),
            el("div", delta_bars([_bar(c) for c in tests]), class_="scroll", id="compare-deltas"),
        ]
        if tests
        else []
    )
    scatter = [
        el("h3", "Per sample: baseline vs this run"),
        el(
            "p",
            "One dot per sample scored in both runs (matched by id): x = baseline score, "
            "y = this run's score. On the diagonal: unchanged; green: better, red: worse, in "
            "the metric's direction.",
            class_="muted",
        ),
        scatters(comparison),
    ]
    return join(
        [*notes, _means_table(comparison, tests), significance, *charts, *scatter, heading, changes]
    )
