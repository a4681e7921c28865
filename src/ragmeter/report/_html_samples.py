"""The sample-level HTML sections: worst samples, failed results and sample cards."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ragmeter.metrics import Direction
from ragmeter.report import _format as fmt
from ragmeter.report._analysis import FailureGroup, WorstSamples, worst_below
from ragmeter.report._details import context_marks, details_html, marks_html
from ragmeter.report._markup import Markup, el, head_row, join, num, shorten, table, text
from ragmeter.results import MetricInfo, SampleResult

#: How many samples a list of links shows before "and N more".
MAX_LINKS = 20


class Links:
    """Links to sample cards; remembers which samples were linked so that their cards are
    written (and only theirs)."""

    def __init__(self, samples: Sequence[SampleResult]) -> None:
        self.by_id: dict[str, SampleResult] = {}
        for sample in samples:
            self.by_id.setdefault(sample.sample_id, sample)
        self.linked: set[int] = set()

    @staticmethod
    def anchor(sample: SampleResult) -> str:
        return f"sample-{sample.index}"

    def link(self, sample: SampleResult) -> Markup:
        self.linked.add(sample.index)
        return el("a", sample.sample_id, href=f"#{self.anchor(sample)}", class_="sample-link")

    def link_id(self, sample_id: str) -> Markup:
        """A link to the sample with this id, or the id as text when the run lacks it."""
        sample = self.by_id.get(sample_id)
        return self.link(sample) if sample is not None else el("span", sample_id, class_="muted")

    def link_list(self, samples: Sequence[SampleResult | str]) -> Markup:
        shown = [
            self.link(s) if isinstance(s, SampleResult) else self.link_id(s)
            for s in samples[:MAX_LINKS]
        ]
        more = len(samples) - len(shown)
        tail = [el("span", f" and {more} more", class_="muted")] if more > 0 else []
        return join([join(shown, ", "), *tail])


def _cols(*names: str) -> Markup:
    return el("colgroup", [el("col", class_=f"c-{name}") for name in names])


def _worst_table(metric: MetricInfo, worst: Sequence[SampleResult], links: Links) -> Markup:
    rows = []
    level = relevance_level([metric])
    for rank, sample in enumerate(worst, start=1):
        result = sample.scores[metric.name]
        ranked = retrieval_view(sample, level) if is_retrieval(metric) else None
        rows.append(
            el(
                "tr",
                el("td", rank, class_="num"),
                el("td", links.link(sample)),
                el("td", fmt.score(result.score), class_="num"),
                el("td", _qa(sample), class_="text"),
                el(
                    "td",
                    el("div", result.reason or ""),
                    ranked,
                    details_html(result, metric.name),
                ),
            )
        )
    head = head_row(num("#"), "sample", num("score"), "question / response", "reason and details")
    return el(
        "table",
        _cols("rank", "sample", "score", "qa", "details"),
        el("thead", head),
        el("tbody", rows),
        class_="fixed worst-table",
    )


def worst_rule(metric: MetricInfo, worst: WorstSamples) -> str:
    """The cut a sample had to pass to be listed, in words: "below the median (0.7500)"."""
    side = "above" if metric.direction is Direction.LOWER_IS_BETTER else "below"
    what = "the threshold" if worst.rule == "threshold" else "the median"
    return f"{side} {what} ({fmt.score(worst.cut)})"


def _every(n: int) -> str:
    return "the one scored sample is" if n == 1 else f"all {n} scored samples are"


def worst_section(
    samples: Sequence[SampleResult],
    metrics: Sequence[MetricInfo],
    n: int,
    links: Links,
    thresholds: Mapping[str, float] | None = None,
) -> Markup:
    """Per metric, up to ``n`` ok samples that score worse than the metric's threshold (from
    ``thresholds``) or else its median, worst first, with their reason and details; a sample
    at or past the cut, such as a perfect score, is never listed."""
    if n <= 0:
        return el("p", "Not shown (worst=0).", class_="muted")
    thresholds = thresholds or {}
    caption = el(
        "p",
        "Per metric, the samples that score worse than the metric's threshold when one is "
        "given, else worse than this run's median for it (below it; above it for a ↓ metric), "
        f"worst first, at most {n}. A sample at or past that cut, a perfect score included, "
        "is never listed.",
        class_="muted caption",
    )
    blocks = []
    for metric in metrics:
        worst = worst_below(samples, metric, n, thresholds.get(metric.name))
        if not worst.n_scored:
            continue
        rule, lower = worst_rule(metric, worst), metric.direction is Direction.LOWER_IS_BETTER
        title = f"{metric.name} {fmt.arrow(metric.direction)}"
        if not worst.samples:
            heading = el("h3", title)
            body = el(
                "p",
                f"No sample {rule}: {_every(worst.n_scored)} at or {'below' if lower else 'above'}"
                " it.",
                class_="muted none-below",
            )
        else:
            shown = (
                fmt.plural(worst.n_below, "sample")
                if len(worst.samples) == worst.n_below
                else f"the {len(worst.samples)} {'highest' if lower else 'lowest'} of "
                f"{worst.n_below} samples"
            )
            note = f" — {shown} {rule}, of {worst.n_scored} scored"
            heading = el("h3", title, el("span", note, class_="muted"))
            body = _worst_table(metric, worst.samples, links)
        blocks.append(el("div", heading, body, class_="worst", data_metric=metric.name))
    if not blocks:
        return el("p", "No sample got a score.", class_="muted")
    return join([caption, *blocks])


def _qa(sample: SampleResult) -> Markup:
    s = sample.sample
    return join(
        el("div", el("span", f"{label} ", class_="muted"), text(shorten(value, limit), "span"))
        for label, value, limit in (("Q", s.user_input, 200), ("A", s.response, 300))
        if value
    )


def failures_section(groups: Sequence[FailureGroup], links: Links) -> Markup:
    """Failed results grouped by metric and error."""
    if not groups:
        return el("p", "No result failed.", class_="muted")
    rows = [
        el(
            "tr",
            el("td", g.metric),
            el("td", len(g.samples), class_="num"),
            el("td", el("code", g.error)),
            el("td", links.link_list(g.samples)),
        )
        for g in groups
    ]
    head = head_row("metric", num("samples"), "error", "which")
    return table(head, rows)


_RANKING = re.compile(r"^(mrr|map|ndcg|precision|recall|hit|f1|r_precision)(@\d+)?$")


def is_retrieval(metric: MetricInfo) -> bool:
    """Whether ``metric`` ranks retrieved ids against relevant ids (MRR, nDCG@k, ...)."""
    return metric.kind.startswith("ragmeter.metrics.retrieval.") or bool(
        _RANKING.match(metric.name)
    )


def relevance_level(metrics: Sequence[MetricInfo]) -> float:
    """The lowest grade the run's retrieval metrics count as relevant (1 by default)."""
    levels = [
        float(m.params.get("relevance_level", 1.0))
        for m in metrics
        if is_retrieval(m) and isinstance(m.params.get("relevance_level", 1.0), int | float)
    ]
    return min(levels, default=1.0)


def relevant_ids(sample: SampleResult, level: float = 1.0) -> list[str] | None:
    """The ids relevant to ``sample`` (graded ``relevance`` at least ``level``, else its
    ``reference_context_ids``), or ``None`` when it has no relevance judgment."""
    s = sample.sample
    if s.relevance is None and s.reference_context_ids is None:
        return None
    return [doc for doc, grade in s.qrels().items() if grade >= level]


def retrieval_view(sample: SampleResult, level: float = 1.0) -> Markup | None:
    """The retrieved ids in rank order with the relevant ones marked (✓, class
    ``relevant``), and the relevant ids that were not retrieved; ``None`` for a sample
    without retrieved ids or without a relevance judgment."""
    retrieved = sample.sample.retrieved_context_ids
    relevant = relevant_ids(sample, level)
    if retrieved is None or relevant is None:
        return None
    wanted = set(relevant)
    seen: set[str] = set()
    chips = []
    for rank, doc in enumerate(retrieved, start=1):
        repeat = doc in seen
        seen.add(doc)
        hit = doc in wanted and not repeat
        chips.append(
            el(
                "span",
                f"#{rank} ",
                el("code", doc),
                " ✓" if hit else None,
                class_="chip rid relevant good" if hit else "chip rid",
                title="relevant"
                if hit
                else "retrieved again (counts once)"
                if repeat
                else "not relevant",
                data_id=doc,
            )
        )
    missing = [doc for doc in relevant if doc not in seen]
    found = len(wanted) - len(set(missing))
    summary = el(
        "div",
        el("span", f"{found} of {len(wanted)} relevant retrieved", class_="muted"),
        "; missing: " if missing else None,
        [
            el("span", "✗ ", el("code", doc), class_="chip missing bad", data_id=doc)
            for doc in missing
        ]
        or None,
        class_="chips retrieval-summary",
    )
    return el(
        "div",
        el("div", chips or el("span", "nothing retrieved", class_="muted"), class_="chips"),
        summary,
        class_="retrieval",
    )


def _field(label: str, body: Markup) -> Markup:
    return el("div", el("div", label, class_="label"), el("div", body), class_="field")


def _contexts(sample: SampleResult, level: float = 1.0) -> Markup | None:
    s = sample.sample
    texts = list(s.retrieved_contexts or [])
    ids = list(s.retrieved_context_ids or [])
    n = max(len(texts), len(ids))
    if not n:
        return None
    relevant = set(relevant_ids(sample, level) or ())
    marks = context_marks(sample.scores, n)
    items = []
    for i in range(n):
        context_id = ids[i] if i < len(ids) else None
        items.append(
            el(
                "li",
                el(
                    "span",
                    context_id,
                    " ★" if context_id in relevant else None,
                    class_="ctx-id",
                    title="relevant (reference id)" if context_id in relevant else None,
                )
                if context_id is not None
                else None,
                marks_html(marks[i]),
                text(texts[i], class_="body") if i < len(texts) else None,
            )
        )
    return _field("contexts", el("ol", items, class_="contexts"))


def _metric_rows(sample: SampleResult, metrics: Sequence[MetricInfo]) -> Markup:
    rows = []
    for metric in metrics:
        result = sample.scores.get(metric.name)
        if result is None:
            continue
        status = result.status.value
        rows.append(
            el(
                "tr",
                el("td", metric.name, " ", el("span", fmt.arrow(metric.direction), class_="muted")),
                el("td", status.replace("_", " "), class_=f"status-{status}"),
                el("td", fmt.score(result.score), class_="num"),
                el("td", result.error or result.reason or "", details_html(result, metric.name)),
            )
        )
    head = head_row("metric", "status", num("score"), "reason or error, details")
    return el(
        "table",
        _cols("metric", "status", "score", "reason"),
        el("thead", head),
        el("tbody", rows),
        class_="fixed metric-table",
    )


def sample_card(sample: SampleResult, metrics: Sequence[MetricInfo]) -> Markup:
    """One sample: its texts, its contexts with the verdicts on them, every metric's result."""
    s = sample.sample
    tags = [
        el("span", f"{key}: {value}", class_="chip")
        for key, value in (s.metadata or {}).items()
        if isinstance(value, str | int | float | bool)
    ]
    fields = [
        _field("question", text(s.user_input, class_="body")) if s.user_input else None,
        _field("response", text(s.response, class_="body")) if s.response else None,
        _field("reference", text(s.reference, class_="body")) if s.reference else None,
        _contexts(sample, level := relevance_level(metrics)),
    ]
    if any(is_retrieval(m) for m in metrics):
        view = retrieval_view(sample, level)
        if view is not None:
            fields.append(_field("retrieved ids", view))
    if s.reference_contexts:
        fields.append(
            _field(
                "reference contexts",
                el(
                    "ol",
                    [el("li", text(c, class_="body")) for c in s.reference_contexts],
                    class_="contexts",
                ),
            )
        )
    return el(
        "div",
        el(
            "h3",
            el("a", "#", href=f"#{Links.anchor(sample)}", class_="muted"),
            " ",
            sample.sample_id,
            el("span", f"  row {sample.row}", class_="muted"),
        ),
        el("div", tags, class_="chips") if tags else None,
        fields,
        _metric_rows(sample, metrics),
        id=Links.anchor(sample),
        class_="sample",
    )


def samples_section(
    samples: Sequence[SampleResult], metrics: Sequence[MetricInfo], links: Links
) -> Markup:
    """A card for every sample linked from the sections above, in dataset order."""
    chosen = [s for s in samples if s.index in links.linked]
    if not chosen:
        return el("p", "No sample is referenced above.", class_="muted")
    note = el(
        "p",
        f"The {len(chosen)} samples referenced above, of {len(samples)}, in dataset order. "
        "★ marks a retrieved id that is relevant; under retrieved ids, ✓ marks the relevant "
        "ones in rank order and ✗ the relevant ids that were not retrieved.",
        class_="muted",
    )
    return join([note, *(sample_card(s, metrics) for s in chosen)])
