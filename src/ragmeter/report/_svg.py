"""Small inline SVG charts (histograms, paired scatters, delta bars) and the colour scale of
score tables: no script, no external resource."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ragmeter.report._markup import Markup, el

BINS = 10
WIDTH, HEIGHT, BASELINE, TOP = 200, 66, 54, 12


def bin_counts(scores: Iterable[float | None], bins: int = BINS) -> list[int]:
    """How many scores fall in each of ``bins`` equal bins over [0, 1]; a score outside the
    range counts in the nearest end bin, 1.0 in the last, and ``None`` nowhere."""
    counts = [0] * bins
    for value in scores:
        if value is None:
            continue
        counts[min(bins - 1, max(0, int(value * bins)))] += 1
    return counts


def bin_label(position: int, bins: int = BINS) -> str:
    """The range of bin ``position``, as in "0.1–0.2"."""
    return f"{position / bins:.1f}–{(position + 1) / bins:.1f}"


def histogram(metric: str, scores: Iterable[float | None]) -> Markup:
    """An SVG histogram of ``metric``'s scores; its title and aria-label list every bin's count
    (and ``data-counts`` holds them) so that it reads without the picture."""
    counts = bin_counts(scores)
    total = sum(counts)
    described = ", ".join(f"{bin_label(i)}: {c}" for i, c in enumerate(counts))
    label = f"{metric} score distribution over {total} scored samples: {described}"
    bar_width = WIDTH / BINS
    tallest = max(counts) or 1
    bars = []
    for i, c in enumerate(counts):
        height = round((BASELINE - TOP) * c / tallest, 1)
        bars.append(
            el(
                "rect",
                el("title", f"{bin_label(i)}: {c}"),
                x=round(i * bar_width + 1, 1),
                y=round(BASELINE - height, 1),
                width=round(bar_width - 2, 1),
                height=height,
                class_="bar" if c else "bar empty",
            )
        )
    axis = [
        el("line", x1=0, y1=BASELINE, x2=WIDTH, y2=BASELINE, class_="axis"),
        el("text", "0", x=0, y=HEIGHT - 1, class_="tick"),
        el("text", "0.5", x=WIDTH / 2, y=HEIGHT - 1, class_="tick mid"),
        el("text", "1", x=WIDTH, y=HEIGHT - 1, class_="tick end"),
        el("text", f"max {max(counts)}", x=WIDTH, y=9, class_="tick end"),
    ]
    return _figure(
        label, WIDTH, HEIGHT, bars, axis, data_counts=",".join(map(str, counts)), class_="hist"
    )


# --- run vs run: paired scatter and delta bars ------------------------------------------

PLOT, PAD_LEFT, PAD_TOP, PAD_BOTTOM, PAD_RIGHT = 180, 30, 8, 30, 8
#: Points drawn per scatter at most (the title says how many were left out).
MAX_POINTS = 2_000


def _figure(
    label: str, width: float, height: float, *parts: object, **attributes: object
) -> Markup:
    """An ``<svg>`` image of ``parts``, titled and labelled ``label``."""
    return el(
        "svg",
        el("title", label),
        *parts,
        viewBox=f"0 0 {width} {height}",
        width=width,
        height=height,
        role="img",
        aria_label=label,
        **attributes,
    )


def _domain(values: Sequence[float]) -> tuple[float, float]:
    """[0, 1], widened to hold every value (scores outside it, e.g. counts)."""
    lo, hi = min([0.0, *values]), max([1.0, *values])
    return lo, hi


def _tick(value: float) -> str:
    return f"{value:g}"


@dataclass(frozen=True)
class Point:
    """One sample in a paired scatter: its id, both scores, and whether it got better."""

    label: str
    baseline: float
    current: float
    change: str  # "better", "worse" or "same"


def paired_scatter(metric: str, points: Sequence[Point]) -> Markup:
    """An SVG scatter of ``metric``: one dot per sample scored in both runs, x = baseline
    score, y = this run's score, with the diagonal y = x (on it: unchanged; above it: the
    score rose). ``data-n`` holds the number of dots drawn."""
    shown = list(points[:MAX_POINTS])
    lo, hi = _domain([v for p in shown for v in (p.baseline, p.current)])
    span = hi - lo or 1.0

    def x(v: float) -> float:
        return round(PAD_LEFT + (v - lo) / span * PLOT, 1)

    def y(v: float) -> float:
        return round(PAD_TOP + PLOT - (v - lo) / span * PLOT, 1)

    counts = {kind: sum(p.change == kind for p in shown) for kind in ("better", "worse", "same")}
    label = (
        f"{metric}: {len(shown)} samples scored in both runs, baseline on x, this run on y; "
        f"{counts['better']} better, {counts['worse']} worse, {counts['same']} unchanged"
    )
    if len(points) > len(shown):
        label += f" (the first {len(shown)} of {len(points)} drawn)"
    width, height = PAD_LEFT + PLOT + PAD_RIGHT, PAD_TOP + PLOT + PAD_BOTTOM
    frame = [
        el("rect", x=PAD_LEFT, y=PAD_TOP, width=PLOT, height=PLOT, class_="frame"),
        el("line", x1=x(lo), y1=y(lo), x2=x(hi), y2=y(hi), class_="diag"),
        el("text", _tick(lo), x=PAD_LEFT, y=PAD_TOP + PLOT + 11, class_="tick"),
        el("text", _tick(hi), x=PAD_LEFT + PLOT, y=PAD_TOP + PLOT + 11, class_="tick end"),
        el("text", _tick(lo), x=PAD_LEFT - 3, y=PAD_TOP + PLOT, class_="tick end"),
        el("text", _tick(hi), x=PAD_LEFT - 3, y=PAD_TOP + 8, class_="tick end"),
        el("text", "baseline →", x=PAD_LEFT + PLOT / 2, y=height - 4, class_="tick mid"),
        el(
            "text",
            "this run →",
            x=10,
            y=PAD_TOP + PLOT / 2,
            transform=f"rotate(-90 10 {PAD_TOP + PLOT / 2})",
            class_="tick mid",
        ),
    ]
    dots = [
        el(
            "circle",
            el("title", f"{p.label}: {p.baseline:.4f} → {p.current:.4f}"),
            cx=x(p.baseline),
            cy=y(p.current),
            r=3.5,
            class_=f"pt {p.change}",
            data_sample=p.label,
        )
        for p in shown
    ]
    return _figure(
        label, width, height, frame, dots, data_n=len(shown), data_metric=metric, class_="scatter"
    )


@dataclass(frozen=True)
class Bar:
    """One metric's change of the mean (this run − baseline) with its confidence interval
    (``low``/``high``; ``None`` when there is none), and whether it is an improvement."""

    metric: str
    delta: float | None
    low: float | None
    high: float | None
    change: str  # "better", "worse" or "same"
    significant: bool = False
    note: str = ""


BAR_LABEL, BAR_PLOT, BAR_VALUE, BAR_ROW = 170, 300, 190, 24


def delta_bars(bars: Sequence[Bar]) -> Markup:
    """An SVG of each metric's mean change as a bar from zero, its confidence interval as a
    whisker; a metric without a change (not comparable, too few samples) gets its reason in
    place of a bar. Bars are on one scale, symmetric around zero."""
    values = [abs(v) for b in bars for v in (b.delta, b.low, b.high) if v is not None]
    reach = max([0.05, *values]) * 1.1
    width = BAR_LABEL + BAR_PLOT + BAR_VALUE
    height = BAR_ROW * len(bars) + 24
    zero = BAR_LABEL + BAR_PLOT / 2

    def x(v: float) -> float:
        return round(zero + v / reach * (BAR_PLOT / 2), 1)

    rows: list[Markup] = []
    for i, b in enumerate(bars):
        top = 4 + i * BAR_ROW
        mid = top + BAR_ROW / 2
        rows.append(el("text", b.metric, x=BAR_LABEL - 6, y=mid + 4, class_="tick label end"))
        if b.delta is None:
            rows.append(
                el("text", b.note or "no change measured", x=zero + 4, y=mid + 4, class_="tick")
            )
            continue
        left, right = sorted((zero, x(b.delta)))
        ci = "" if b.low is None or b.high is None else f", CI {b.low:+.4f} to {b.high:+.4f}"
        rows.append(
            el(
                "rect",
                el("title", f"{b.metric}: {b.delta:+.4f}{ci}"),
                x=left,
                y=top + 5,
                width=round(max(right - left, 1.0), 1),
                height=BAR_ROW - 10,
                class_=f"dbar {b.change}" + (" sig" if b.significant else ""),
                data_metric=b.metric,
            )
        )
        if b.low is not None and b.high is not None:
            x1, x2 = x(b.low), x(b.high)
            rows += [
                el("line", x1=x1, y1=mid, x2=x2, y2=mid, class_="whisker", data_metric=b.metric),
                el("line", x1=x1, y1=mid - 5, x2=x1, y2=mid + 5, class_="whisker"),
                el("line", x1=x2, y1=mid - 5, x2=x2, y2=mid + 5, class_="whisker"),
            ]
        text = f"{b.delta:+.4f}" + (f" [{b.low:+.4f}, {b.high:+.4f}]" if ci else "")
        rows.append(el("text", text, x=BAR_LABEL + BAR_PLOT + 6, y=mid + 4, class_="tick"))
    axis_y = BAR_ROW * len(bars) + 6
    axis = [
        el("line", x1=zero, y1=2, x2=zero, y2=axis_y, class_="axis"),
        el("text", f"{-reach:+.2f}", x=BAR_LABEL, y=axis_y + 12, class_="tick"),
        el("text", "0", x=zero, y=axis_y + 12, class_="tick mid"),
        el("text", f"{reach:+.2f}", x=BAR_LABEL + BAR_PLOT, y=axis_y + 12, class_="tick end"),
    ]
    label = "Change of each metric's mean, this run − baseline, with its confidence interval: " + (
        "; ".join(
            f"{b.metric} {b.delta:+.4f}" if b.delta is not None else f"{b.metric} {b.note}"
            for b in bars
        )
    )
    return _figure(label, width, height, axis, rows, class_="deltas")


# --- colour scale for score tables -------------------------------------------------------

#: Hue of the worst (red) and best (green) score; saturation and lightness keep dark text
#: readable on every shade (contrast above 10:1 with #1f2328).
HUE_WORST, HUE_BEST, SATURATION, LIGHTNESS = 0, 120, 70, 86


def shade(goodness: float) -> str:
    """The background for a cell whose score is ``goodness`` of the way from worst (0) to
    best (1), clamped: hsl from red through yellow to green."""
    g = min(1.0, max(0.0, goodness))
    hue = round(HUE_WORST + (HUE_BEST - HUE_WORST) * g)
    return f"hsl({hue}, {SATURATION}%, {LIGHTNESS}%)"


def goodness(value: float, lo: float, hi: float, higher_is_better: bool) -> float:
    """Where ``value`` lies from worst (0) to best (1) on the range ``lo``–``hi``."""
    share = 0.5 if hi <= lo else (value - lo) / (hi - lo)
    return share if higher_is_better else 1.0 - share


def legend(steps: int = 5) -> Markup:
    """A row of swatches from worst to best."""
    swatches = [
        el(
            "span",
            f"{i / (steps - 1):.2f}",
            class_="swatch",
            style=f"background:{shade(i / (steps - 1))}",
        )
        for i in range(steps)
    ]
    return el(
        "span",
        el("span", "worse ", class_="muted"),
        swatches,
        el("span", " better", class_="muted"),
        class_="legend",
    )
