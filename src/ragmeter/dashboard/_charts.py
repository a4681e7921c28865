"""Hand-made SVG charts (no script, no library): a metric's trend across runs with its
confidence band and the gate's thresholds, and the paired changes of a comparison."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmeter.report import Markup, el, esc, join

WIDTH, HEIGHT = 760, 230
LEFT, RIGHT, TOP, BOTTOM = 48, 120, 14, 34
BAND, LINE, MIN_COLOUR, MAX_COLOUR = "#c9dcf2", "#3b6ea8", "#cf222e", "#9a6700"
GOOD, BAD, FLAT = "#1a7f37", "#cf222e", "#8c959f"
#: The line of each dataset when a chart draws several (the first is the single line's).
SERIES = ("#3b6ea8", "#bc4c00", "#1a7f37", "#8250df", "#bf3989", "#0a7d8c", "#6e7781")
LEGEND_ROW = 18
#: Styles of the elements a chart repeats per run (kept out of each element: lighter pages).
CHART_CSS = f"""
.trend-chart .ci-whisker {{ stroke: {LINE}; stroke-width: 1.5; fill: none; }}
.trend-chart .point {{ fill: {LINE}; stroke: #fff; stroke-width: 1; }}
"""


def _f(value: float) -> str:
    return f"{value:.1f}"


def _y_range(points: Sequence[dict[str, Any]], lines: Sequence[float]) -> tuple[float, float]:
    values = [
        v for p in points for v in (p["mean"], p["ci_low"], p["ci_high"]) if v is not None
    ] + list(lines)
    if not values:
        return 0.0, 1.0
    low, high = min(values), max(values)
    if low >= 0.0 and high <= 1.0:
        return 0.0, 1.0
    pad = (high - low) * 0.1 or abs(high) * 0.1 or 1.0
    return low - pad, high + pad


def _series(
    points: Sequence[dict[str, Any]], datasets: Sequence[dict[str, Any]]
) -> list[tuple[str, str, list[int]]]:
    """Per dataset of ``points`` (in ``datasets``' order, then first seen): its label, its
    colour and the indexes of its points."""
    labels = {d["dataset"]: d["label"] for d in datasets}
    order = {d["dataset"]: n for n, d in enumerate(datasets)}
    indexes: dict[str, list[int]] = {}
    for i, p in enumerate(points):
        indexes.setdefault(p.get("dataset") or "", []).append(i)
    keys = sorted(indexes, key=lambda k: order.get(k, len(order)))
    return [
        (labels.get(key, key) or key, SERIES[n % len(SERIES)], indexes[key])
        for n, key in enumerate(keys)
    ]


def _legend(series: Sequence[tuple[str, str, list[int]]], top: float) -> Markup:
    """A row of the datasets' colours and labels under the chart (it wraps to more rows)."""
    parts, x, y = [], float(LEFT), top
    for label, colour, _ in series:
        shown = label if len(label) <= 40 else "…" + label[-39:]
        width = 22 + 6.5 * len(shown)
        if x > LEFT and x + width > WIDTH:
            x, y = float(LEFT), y + LEGEND_ROW
        parts.append(
            f'<g class="legend-item"><line x1="{_f(x)}" x2="{_f(x + 14)}" y1="{_f(y - 4)}" '
            f'y2="{_f(y - 4)}" stroke="{colour}" stroke-width="3"/>'
            f'<text x="{_f(x + 18)}" y="{_f(y)}" font-size="11" fill="#1f2328">'
            f"{esc(shown)}</text></g>"
        )
        x += width + 14
    return Markup("".join(parts))


def _legend_rows(series: Sequence[tuple[str, str, list[int]]]) -> int:
    rows, x = 1, float(LEFT)
    for label, _, _ in series:
        width = 22 + 6.5 * min(len(label), 40)
        if x > LEFT and x + width > WIDTH:
            rows, x = rows + 1, float(LEFT)
        x += width + 14
    return rows


def trend_chart(
    trend: dict[str, Any], title: str, datasets: Sequence[dict[str, Any]] = ()
) -> Markup:
    """One metric across runs (oldest left): mean points joined by a line, the 95% interval
    as a band and whiskers, and each threshold as a dashed line; each point links to its run.
    Runs of different datasets (``datasets``: their labels) get a line, a band and a colour
    each, named in a legend under the chart: a mean is never joined to another dataset's."""
    points = [p for p in trend["points"] if p["mean"] is not None]
    series = _series(points, datasets)
    several = len(series) > 1
    height = HEIGHT + (LEGEND_ROW * _legend_rows(series) + 4 if several else 0)
    bounds = [
        (t, kind, float(t[kind]))
        for t in trend["thresholds"]
        for kind in ("min", "max")
        if t[kind] is not None and t["tag"] is None
    ]
    low, high = _y_range(points, [value for _, _, value in bounds])
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i: int) -> float:
        return LEFT + (plot_w / 2 if len(points) == 1 else plot_w * i / (len(points) - 1))

    def y(value: float) -> float:
        return TOP + plot_h * (high - value) / (high - low)

    parts: list[object] = [el("title", title)]
    for step in range(5):
        value = low + (high - low) * step / 4
        parts.append(
            Markup(
                f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{_f(y(value))}" '
                f'y2="{_f(y(value))}" stroke="#d8dee4" stroke-width="1"/>'
                f'<text x="{LEFT - 6}" y="{_f(y(value) + 4)}" text-anchor="end" '
                f'font-size="11" fill="#656d76">{value:.2f}</text>'
            )
        )
    colour_of: dict[int, str] = {}
    for _, colour, indexes in series:
        colour_of.update(dict.fromkeys(indexes, colour))
        with_ci = [(i, points[i]) for i in indexes if points[i]["ci_low"] is not None]
        if len(with_ci) >= 2:
            upper = [f"{_f(x(i))},{_f(y(p['ci_high']))}" for i, p in with_ci]
            lower = [f"{_f(x(i))},{_f(y(p['ci_low']))}" for i, p in reversed(with_ci)]
            fill = (
                f'fill="{colour}" fill-opacity="0.18"'
                if several
                else f'fill="{BAND}" fill-opacity="0.7"'
            )
            parts.append(
                Markup(f'<polygon class="ci-band" points="{" ".join(upper + lower)}" {fill}/>')
            )
        for i, p in with_ci:
            style = f' style="stroke:{colour}"' if several else ""
            parts.append(
                Markup(
                    f'<path class="ci-whisker" d="M{_f(x(i))} {_f(y(p["ci_low"]))}'
                    f'V{_f(y(p["ci_high"]))}"{style}/>'
                )
            )
    for threshold, kind, value in bounds:
        colour = MIN_COLOUR if kind == "min" else MAX_COLOUR
        label = f"{'≥' if kind == 'min' else '≤'} {value:g}"
        if threshold["statistic"] != "mean":
            label = f"{threshold['statistic']} {label}"
        parts.append(
            Markup(
                f'<line class="threshold threshold-{kind}" x1="{LEFT}" x2="{LEFT + plot_w}" '
                f'y1="{_f(y(value))}" y2="{_f(y(value))}" stroke="{colour}" stroke-width="1.5" '
                f'stroke-dasharray="6 4"/>'
                f'<text x="{LEFT + plot_w + 6}" y="{_f(y(value) + 4)}" font-size="11" '
                f'fill="{colour}">{esc(label)}</text>'
            )
        )
    for label, colour, indexes in series:
        if len(indexes) >= 2:
            line = " ".join(f"{_f(x(i))},{_f(y(points[i]['mean']))}" for i in indexes)
            named = f' data-dataset="{esc(label)}"' if several else ""
            parts.append(
                Markup(
                    f'<polyline class="series" points="{line}" fill="none" stroke="{colour}" '
                    f'stroke-width="2"{named}/>'
                )
            )
    labels = {i: label for label, _, indexes in series for i in indexes}
    for i, p in enumerate(points):
        ci = "" if p["ci_low"] is None else f" ({p['ci_low']:.3f}–{p['ci_high']:.3f})"
        dataset = f" · {labels[i]}" if several else ""
        tip = (
            f"{p['name']}{dataset} · {p['created_at'][:16].replace('T', ' ')} · {p['mean']:.3f}{ci}"
        )
        style = f' style="fill:{colour_of[i]}"' if several else ""
        parts.append(
            el(
                "a",
                Markup(
                    f'<circle class="point" cx="{_f(x(i))}" cy="{_f(y(p["mean"]))}" r="4"'
                    f"{style}><title>{esc(tip)}</title></circle>"
                ),
                href=f"/runs/{p['run']}",
            )
        )
    if points:
        first, last = points[0]["created_at"][:10], points[-1]["created_at"][:10]
        parts.append(
            Markup(
                f'<text x="{LEFT}" y="{HEIGHT - 10}" font-size="11" fill="#656d76">'
                f"{esc(first)}</text>"
                f'<text x="{LEFT + plot_w}" y="{HEIGHT - 10}" font-size="11" fill="#656d76" '
                f'text-anchor="end">{esc(last)}</text>'
            )
        )
    if several:
        parts.append(_legend(series, HEIGHT + LEGEND_ROW - 2))
    return _svg(parts, height, id=f"trend-{trend['metric']}", class_="trend-chart")


def _svg(parts: Sequence[object], height: int, **attributes: object) -> Markup:
    return el(
        "svg",
        join(parts),
        viewBox=f"0 0 {WIDTH} {height}",
        width=str(WIDTH),
        height=str(height),
        role="img",
        **attributes,
    )


ROW = 28


def compare_chart(metrics: Sequence[dict[str, Any]], title: str) -> Markup:
    """Each metric's change (candidate - baseline) as a bar from zero with its interval as
    a whisker: green when significantly better, red when significantly worse, grey else."""
    shown = [m for m in metrics if m["difference"] is not None]
    height = TOP + BOTTOM + ROW * max(1, len(shown))
    reach: float = max(
        [abs(float(m["difference"])) for m in shown]
        + [abs(float(v)) for m in shown if m["ci"] for v in (m["ci"]["low"], m["ci"]["high"])]
        + [0.01]
    )
    left, right = 200.0, WIDTH - 110.0
    middle = (left + right) / 2

    def x(value: float) -> float:
        return middle + (right - left) / 2 * value / (reach * 1.1)

    parts: list[object] = [
        el("title", title),
        Markup(
            f'<line x1="{_f(middle)}" x2="{_f(middle)}" y1="{TOP - 4}" '
            f'y2="{height - BOTTOM + 4}" stroke="#656d76" stroke-width="1"/>'
            f'<text x="{_f(middle)}" y="{height - 10}" font-size="11" text-anchor="middle" '
            'fill="#656d76">0</text>'
            f'<text x="{_f(x(-reach))}" y="{height - 10}" font-size="11" text-anchor="middle" '
            f'fill="#656d76">{-reach:+.3f}</text>'
            f'<text x="{_f(x(reach))}" y="{height - 10}" font-size="11" text-anchor="middle" '
            f'fill="#656d76">{reach:+.3f}</text>'
        ),
    ]
    for row, m in enumerate(shown):
        top = TOP + ROW * row
        centre = top + ROW / 2
        colour = {"better": GOOD, "worse": BAD}.get(m["change"], FLAT)
        start, end = sorted((middle, x(m["difference"])))
        parts.append(
            Markup(
                f'<text x="{left - 8}" y="{_f(centre + 4)}" font-size="12" text-anchor="end" '
                f'fill="#1f2328">{esc(m["metric"])}</text>'
                f'<rect class="delta-bar" x="{_f(start)}" y="{_f(top + 6)}" '
                f'width="{_f(max(end - start, 1.0))}" height="{ROW - 12}" fill="{colour}"/>'
                f'<text x="{right + 8}" y="{_f(centre + 4)}" font-size="12" '
                f'fill="{colour}">{m["difference"]:+.3f}</text>'
            )
        )
        if m["ci"]:
            low, high = x(m["ci"]["low"]), x(m["ci"]["high"])
            parts.append(
                Markup(
                    f'<line class="ci-whisker" x1="{_f(low)}" x2="{_f(high)}" '
                    f'y1="{_f(centre)}" y2="{_f(centre)}" stroke="#1f2328" stroke-width="1.5"/>'
                    f'<line x1="{_f(low)}" x2="{_f(low)}" y1="{_f(centre - 5)}" '
                    f'y2="{_f(centre + 5)}" stroke="#1f2328" stroke-width="1.5"/>'
                    f'<line x1="{_f(high)}" x2="{_f(high)}" y1="{_f(centre - 5)}" '
                    f'y2="{_f(centre + 5)}" stroke="#1f2328" stroke-width="1.5"/>'
                )
            )
    return _svg(parts, height, id="compare-chart", class_="compare-chart")
