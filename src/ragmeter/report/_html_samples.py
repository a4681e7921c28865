"""The sample-level HTML sections: worst samples, failed results and sample cards."""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.metrics import Direction
from ragmeter.report import _format as fmt
from ragmeter.report._analysis import FailureGroup, ok_result, worst_samples
from ragmeter.report._details import context_marks, details_html, marks_html
from ragmeter.report._markup import Markup, el, join, shorten, text
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
    for rank, sample in enumerate(worst, start=1):
        result = sample.scores[metric.name]
        rows.append(
            el(
                "tr",
                el("td", rank, class_="num"),
                el("td", links.link(sample)),
                el("td", fmt.score(result.score), class_="num"),
                el("td", _qa(sample), class_="text"),
                el("td", el("div", result.reason or ""), details_html(result, metric.name)),
            )
        )
    head = el(
        "tr",
        el("th", "#", class_="num"),
        el("th", "sample"),
        el("th", "score", class_="num"),
        el("th", "question / response"),
        el("th", "reason and details"),
    )
    return el(
        "table",
        _cols("rank", "sample", "score", "qa", "details"),
        el("thead", head),
        el("tbody", rows),
        class_="fixed worst-table",
    )


def worst_section(
    samples: Sequence[SampleResult], metrics: Sequence[MetricInfo], n: int, links: Links
) -> Markup:
    """Per metric, the ``n`` worst-scoring ok samples with their reason and details."""
    if n <= 0:
        return el("p", "Not shown (worst=0).", class_="muted")
    blocks = []
    for metric in metrics:
        worst = worst_samples(samples, metric, n)
        if not worst:
            continue
        which = "highest" if metric.direction is Direction.LOWER_IS_BETTER else "lowest"
        n_ok = sum(ok_result(s, metric.name) is not None for s in samples)
        heading = el(
            "h3",
            f"{metric.name} {fmt.arrow(metric.direction)}",
            el("span", f" — the {len(worst)} {which} of {n_ok} scored samples", class_="muted"),
        )
        blocks.append(el("div", heading, _worst_table(metric, worst, links), class_="worst"))
    if not blocks:
        return el("p", "No sample got a score.", class_="muted")
    return join(blocks)


def _qa(sample: SampleResult) -> Markup:
    s = sample.sample
    lines = []
    if s.user_input:
        lines.append(
            el("div", el("span", "Q ", class_="muted"), text(shorten(s.user_input, 200), "span"))
        )
    if s.response:
        lines.append(
            el("div", el("span", "A ", class_="muted"), text(shorten(s.response, 300), "span"))
        )
    return join(lines)


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
    head = el(
        "tr",
        el("th", "metric"),
        el("th", "samples", class_="num"),
        el("th", "error"),
        el("th", "which"),
    )
    return el("table", el("thead", head), el("tbody", rows))


def _field(label: str, body: Markup) -> Markup:
    return el("div", el("div", label, class_="label"), el("div", body), class_="field")


def _contexts(sample: SampleResult) -> Markup | None:
    s = sample.sample
    texts = list(s.retrieved_contexts or [])
    ids = list(s.retrieved_context_ids or [])
    n = max(len(texts), len(ids))
    if not n:
        return None
    relevant = set(s.reference_context_ids or []) | {
        k for k, grade in (s.relevance or {}).items() if grade > 0
    }
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
    head = el(
        "tr",
        el("th", "metric"),
        el("th", "status"),
        el("th", "score", class_="num"),
        el("th", "reason or error, details"),
    )
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
        _contexts(sample),
    ]
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
        "★ marks a retrieved id that is relevant.",
        class_="muted",
    )
    return join([note, *(sample_card(s, metrics) for s in chosen)])
