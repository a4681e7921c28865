"""Score histograms as small inline SVG images (no script, no external resource)."""

from __future__ import annotations

from collections.abc import Iterable

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
    return el(
        "svg",
        el("title", label),
        bars,
        axis,
        viewBox=f"0 0 {WIDTH} {HEIGHT}",
        width=WIDTH,
        height=HEIGHT,
        role="img",
        aria_label=label,
        data_counts=",".join(map(str, counts)),
        class_="hist",
    )
