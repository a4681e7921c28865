"""The HTML report: one self-contained page (inline CSS and SVG, nothing loaded)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragmeter._version import __version__
from ragmeter.diagnosis import Finding
from ragmeter.metrics import Direction
from ragmeter.report import _format as fmt
from ragmeter.report._analysis import (
    CI_RESAMPLES,
    NOT_STARTED_NOTE,
    Labelled,
    Validations,
    compare_runs,
    default_title,
    embedding_models,
    failure_groups,
    judge_error_estimates,
    judge_error_text,
    judges,
    mean_estimates,
    measured,
    metric_tests,
    run_label,
    validation_lines,
)
from ragmeter.report._html_abstention import abstention_sections
from ragmeter.report._html_compare import compare_section
from ragmeter.report._html_conversations import conversations_of, conversations_section
from ragmeter.report._html_findings import findings_section
from ragmeter.report._html_samples import (
    Links,
    failures_section,
    samples_section,
    worst_section,
)
from ragmeter.report._markup import Markup, breakable, el, esc, head_row, join, num, table
from ragmeter.report._style import CSS
from ragmeter.report._svg import goodness, histogram, legend, shade
from ragmeter.results import Aggregate, EvaluationResult

if TYPE_CHECKING:
    from ragmeter.stats import MeanEstimate

#: Shown with the skipped rows before "and N more".
MAX_SKIPPED = 50


def _services(found: list[tuple[str, list[str]]]) -> Markup:
    return join(
        el("div", line, el("span", f" — {', '.join(metrics)}", class_="muted"))
        for line, metrics in found
    )


def _header(result: EvaluationResult, title: str, baseline: EvaluationResult | None) -> Markup:
    config = result.config
    dataset: dict[str, Any] = config.get("dataset") or {}
    rows: list[tuple[str, object]] = [
        ("dataset", dataset.get("source") or "in memory (no file)"),
        ("fingerprint", el("code", dataset["fingerprint"]) if dataset.get("fingerprint") else None),
        ("samples", f"{fmt.count(len(result))} evaluated, {len(result.skipped)} rows skipped"),
        ("created", config.get("created_at")),
        ("ragmeter", config.get("ragmeter_version") or __version__),
    ]
    if config.get("judges"):
        rows.append(("judge", _services(judges(config))))
    if config.get("embeddings"):
        rows.append(("embeddings", _services(embedding_models(config))))
    if config.get("prompt_versions"):
        rows.append(("prompts", el("code", ", ".join(config["prompt_versions"]))))
    if baseline is not None:
        rows.append(("baseline", run_label(baseline)))
    items = [join([el("dt", name), el("dd", value)]) for name, value in rows if value is not None]
    error = config.get("judge_error")
    return join(
        [
            el("h1", title),
            el("dl", items, class_="meta"),
            el(
                "p",
                f"Judge error: {error}. The results it left unjudged are not started (not "
                "failed): fix it, then resume the run.",
                class_="banner bad",
            )
            if error
            else None,
        ]
    )


def _ci_cell(estimate: MeanEstimate | None) -> Markup:
    if estimate is None:
        return el("td", fmt.NONE, class_="num ci")
    ci = estimate.ci
    if ci is None:
        return el(
            "td",
            fmt.mean_ci(estimate.n, None),
            class_="num ci muted",
            title="a bootstrap interval needs at least 2 scored samples",
            data_ci="none",
        )
    return el(
        "td",
        fmt.mean_ci(estimate.n, ci),
        class_="num ci",
        title=f"{fmt.percent(ci.level)} {ci.method} bootstrap interval over {estimate.n} scores",
    )


def _judge_error(result: EvaluationResult, labelled: Labelled | None) -> Markup | None:
    estimates = judge_error_estimates(result, labelled)
    if not estimates:
        return None
    return el(
        "div",
        el("p", "With judge error (measured on labelled items):"),
        el(
            "ul",
            [
                el("li", el("code", e.metric), ": ", judge_error_text(e), data_metric=e.metric)
                for e in estimates
            ],
        ),
        id="judge-error",
    )


def _validations(validations: Validations | None) -> Markup | None:
    lines = validation_lines(validations)
    if not lines:
        return None
    return el(
        "div",
        el("p", "On your labels (run store):"),
        el(
            "ul",
            [
                el("li", el("code", metric), ": ", text, data_metric=metric)
                for metric, text in lines
            ],
        ),
        id="validation",
    )


def _summary(
    result: EvaluationResult,
    labelled: Labelled | None = None,
    validations: Validations | None = None,
) -> Markup:
    estimates = mean_estimates(result)
    unstarted = any(a.n_not_started for a in result.aggregates.values())
    head = head_row(
        "metric",
        "better",
        num("mean"),
        num("95% CI", "bootstrap confidence interval of the mean"),
        num("median"),
        num("coverage"),
        num("n/a"),
        num("failed"),
        num("not started") if unstarted else None,
    )
    rows = []
    for metric in result.metrics:
        agg = result.aggregates[metric.name]
        rows.append(
            el(
                "tr",
                el("td", metric.name),
                el(
                    "td",
                    fmt.arrow(metric.direction),
                    class_="dir",
                    title="higher is better"
                    if fmt.arrow(metric.direction) == "↑"
                    else "lower is better",
                ),
                el("td", fmt.score(agg.mean), class_="num"),
                _ci_cell(estimates.get(metric.name)),
                el("td", fmt.score(agg.median), class_="num"),
                el(
                    "td",
                    f"{agg.n_ok}/{agg.n_total}",
                    class_="num",
                    title=f"{fmt.percent(agg.coverage)} of samples got a score",
                ),
                el("td", agg.n_not_applicable, class_="num"),
                el("td", agg.n_failed, class_="num worse" if agg.n_failed else "num"),
                el("td", agg.n_not_started, class_="num") if unstarted else None,
                data_metric=metric.name,
            )
        )
    note = el(
        "p",
        "Mean and median cover the scored samples only; coverage = scored / all. "
        f"95% CI: bootstrap (BCa, {CI_RESAMPLES:,} resamples) interval of the mean, as "
        "ragmeter show prints it; none below 2 scored samples. "
        "n/a: the metric does not apply; failed: it should have, but could not be computed."
        + (f" {NOT_STARTED_NOTE}" if unstarted else ""),
        class_="muted",
    )
    parts = [table(head, rows, id="summary-table", class_="fit"), note]
    extras = (_validations(validations), _judge_error(result, labelled))
    return join([*parts, *(extra for extra in extras if extra is not None)])


def _distributions(result: EvaluationResult) -> Markup:
    cards = []
    for metric in result.metrics:
        scores = result.scores(metric.name)
        n = sum(s is not None for s in scores)
        cards.append(
            el(
                "div",
                el("h4", metric.name, el("span", f"{fmt.arrow(metric.direction)} n={n}")),
                histogram(metric.name, scores),
                class_="hist-card",
            )
        )
    return el("div", cards, class_="hists")


def _scale(means: Sequence[float | None]) -> tuple[float, float]:
    """The range a metric column is shaded over: 0–1 for scores in it, else the column's own
    lowest to highest mean."""
    values = [m for m in means if m is not None]
    if all(0.0 <= v <= 1.0 for v in values):
        return 0.0, 1.0
    return min(values), max(values)


def _shaded(agg: Aggregate, scale: tuple[float, float], direction: Direction) -> Markup:
    """A group's mean with the samples it covers (``n=scored/total``), shaded."""
    title = f"mean over {agg.n_ok} scored of the group's {agg.n_total} samples"
    scored = el("span", agg.scored_of_total(), class_="n")
    if agg.mean is None:
        return el("td", fmt.score(None), scored, class_="num", title=title)
    good = goodness(agg.mean, *scale, direction is Direction.HIGHER_IS_BETTER)
    return el(
        "td",
        fmt.score(agg.mean),
        scored,
        class_="num shaded",
        title=title,
        style=f"background:{shade(good)}",
        data_goodness=f"{good:.4f}",
    )


def _breakdowns(result: EvaluationResult) -> Markup:
    groups = result.breakdowns()
    if not groups:
        return el(
            "p",
            "No tag to break results down by: name metadata fields with --tags "
            "(evaluate(tags=...)); otherwise text fields with 2 to 30 values and at least 2 "
            "samples per value are used (not scores, numbers, free text or ids).",
            class_="muted",
        )
    parts = [
        el(
            "p",
            "Each cell is a tag group's mean over its scored samples, n=scored/total under it "
            "(samples: all of the group's), shaded from red (worse) through yellow to green "
            "(better) in the metric's direction, on 0–1 (a metric whose means leave 0–1: from "
            "its lowest to its highest group mean). ",
            legend(),
            class_="muted caption",
        )
    ]
    for tag, values in groups.items():
        scales = {
            m.name: _scale([g.aggregates[m.name].mean for g in values]) for m in result.metrics
        }
        head = head_row(
            el("th", breakable(tag)),
            num("samples"),
            [
                el("th", breakable(m.name), " ", fmt.arrow(m.direction), class_="num")
                for m in result.metrics
            ],
        )
        rows = [
            el(
                "tr",
                el("td", g.value),
                el("td", g.n_samples, class_="num"),
                [
                    _shaded(g.aggregates[m.name], scales[m.name], m.direction)
                    for m in result.metrics
                ],
            )
            for g in values
        ]
        parts.append(el("h3", tag))
        parts.append(table(head, rows, scroll=True, data_tag=tag, class_="fit wrap"))
    return join(parts)


def _usage(result: EvaluationResult, baseline: EvaluationResult | None) -> Markup:
    rows = []
    for label, run in (("this run", result), ("baseline", baseline)):
        if run is None:
            continue
        for service, key in (("judge", "usage"), ("embeddings", "embedding_usage")):
            usage = run.config.get(key)
            if not usage:
                continue
            rows.append(
                el(
                    "tr",
                    el("td", label),
                    el("td", service),
                    [
                        el("td", fmt.count(usage.get(k, 0)), class_="num")
                        for k in ("calls", "cached_calls", "prompt_tokens", "completion_tokens")
                    ],
                    el(
                        "td",
                        fmt.cost(usage)
                        if service == "judge" or usage.get("currency")
                        else fmt.NONE,
                        class_="num",
                    ),
                )
            )
    if not rows:
        return el(
            "p", "No judge or embedding call (no LLM-judged metric in this run).", class_="muted"
        )
    numbers = ("calls", "cached", "prompt tokens", "completion tokens", "cost")
    head = head_row("run", "service", [num(h) for h in numbers])
    estimated = result.usage.get("estimated_calls")
    note = (
        el(
            "p",
            f"Token counts of {estimated} judge calls are estimates (the endpoint reported none).",
            class_="muted",
        )
        if estimated
        else None
    )
    return join([table(head, rows, class_="fit", id="usage-table"), note])


def _skipped(result: EvaluationResult) -> Markup | None:
    if not result.skipped:
        return None
    rows = [
        el(
            "tr",
            el("td", r.row, class_="num"),
            el("td", r.sample_id or ""),
            el("td", "; ".join(str(p) for p in r.problems)),
        )
        for r in result.skipped[:MAX_SKIPPED]
    ]
    more = len(result.skipped) - len(rows)
    return el(
        "details",
        el("summary", f"{len(result.skipped)} rows skipped as invalid"),
        el("table", el("tbody", rows)),
        el("p", f"and {more} more", class_="muted") if more > 0 else None,
    )


def render_html(
    result: EvaluationResult,
    *,
    compare: EvaluationResult | None = None,
    findings: Sequence[Finding] = (),
    compare_findings: Sequence[Finding] = (),
    title: str | None = None,
    worst: int = 10,
    allow_judge_change: bool = False,
    thresholds: Mapping[str, float] | None = None,
    labelled: Labelled | None = None,
    validations: Validations | None = None,
) -> str:
    """One self-contained HTML page on ``result``: summary (with ``validations``, per judged
    metric its validation on the team's labels, and ``labelled``, per metric (judge score,
    human label) pairs, each such metric's interval with the judge's error),
    score distributions, diagnosis
    ``findings``, tag breakdowns, in a multi-turn run its conversations (conversation-level
    next to turn-level means, the conversations worst first with their turns), up to
    ``worst`` samples per metric that score worse than
    its threshold in ``thresholds`` (per metric, e.g. a gate's minimum) or else its median,
    failures, usage, and with ``compare`` (the baseline run) the change from it, samples
    matched by id. A banner lists how the runs were measured differently; a metric whose
    judge or embedding model changed gets no significance verdict unless
    ``allow_judge_change``."""
    title = title or default_title(result)
    samples = result.samples
    links = Links(samples)
    summary = _summary(result, labelled, validations)
    sections: list[tuple[str, str, Markup]] = [("summary", "Summary", summary)]
    if compare is not None:
        found = metric_tests(compare, result, allow_judge_change)
        section = compare_section(
            compare_runs(result, compare, worst, samples),
            run_label(compare),
            links,
            worst,
            [c.verdict() for c in found],
            measured(compare, result, allow_judge_change),
            tests=found,
        )
        sections.append(("compare", "Run vs baseline", section))
    sections += [
        ("distributions", "Score distributions", _distributions(result)),
        ("diagnosis", "Diagnosis", findings_section(findings, compare_findings, links)),
        *abstention_sections(result, links),
        ("breakdowns", "By tag", _breakdowns(result)),
    ]
    conversations = conversations_of(result)
    if conversations is not None:
        section = conversations_section(result, conversations, links)
        sections.append(("conversations", "Conversations", section))
    sections += [
        (
            "worst",
            "Worst samples",
            worst_section(samples, result.metrics, worst, links, thresholds),
        ),
        (
            "failures",
            "Failed results",
            failures_section(failure_groups(samples, result.metrics), links),
        ),
        ("usage", "Usage and cost", _usage(result, compare)),
    ]
    # Cards last: every section above has registered the samples it links to.
    sections.append(("samples", "Samples", samples_section(samples, result.metrics, links)))
    nav = el("nav", [el("a", heading, href=f"#{anchor}") for anchor, heading, _ in sections])
    body = el(
        "main",
        _header(result, title, compare),
        _skipped(result),
        nav,
        [el("section", el("h2", heading), part, id=anchor) for anchor, heading, part in sections],
        el("footer", f"ragmeter {__version__}. A self-contained file: it loads nothing."),
    )
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )
