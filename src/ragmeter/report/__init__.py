"""Reports on an evaluation run: a self-contained HTML page and a markdown summary.

>>> from ragmeter import evaluate
>>> result = evaluate(
...     [{"id": "a", "retrieved_context_ids": ["x", "y"], "reference_context_ids": ["y"]}],
...     ["mrr"],
... )
>>> for line in render_markdown(result).splitlines()[4:7]:
...     print(line)
| metric | better | mean | 95% CI | median | coverage | n/a | failed |
|---|:-:|--:|--:|--:|--:|--:|--:|
| `mrr` | ↑ | 0.5000 | n/a: 1 scored, needs 2 | 0.5000 | 1/1 | 0 | 0 |
>>> html = render_html(result)  # write_report(result, "report.html") writes it to a file
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ragmeter.diagnosis import Finding
from ragmeter.report._format import score as format_score
from ragmeter.report._html import render_html
from ragmeter.report._html_samples import sample_card
from ragmeter.report._markdown import render_markdown
from ragmeter.report._markup import Markup, breakable, el, esc, head_row, join, num, table
from ragmeter.report._style import CSS
from ragmeter.results import EvaluationResult

if TYPE_CHECKING:
    from ragmeter.stats import LabelledPairs, Validation

# Besides the reports: the HTML building blocks the dashboard shares with them (CSS, Markup,
# breakable, el, esc, head_row, join, num, table, format_score, sample_card).
__all__ = [
    "CSS",
    "Markup",
    "breakable",
    "el",
    "esc",
    "format_score",
    "head_row",
    "join",
    "num",
    "render_html",
    "render_markdown",
    "sample_card",
    "table",
    "write_report",
]


def write_report(
    result: EvaluationResult,
    path: str | Path,
    *,
    compare: EvaluationResult | None = None,
    findings: Sequence[Finding] = (),
    format: Literal["html", "markdown"] = "html",
    compare_findings: Sequence[Finding] = (),
    title: str | None = None,
    worst: int = 10,
    allow_judge_change: bool = False,
    thresholds: Mapping[str, float] | None = None,
    labelled: Mapping[str, Sequence[Sequence[float]] | LabelledPairs] | None = None,
    validations: Mapping[str, Validation] | None = None,
) -> Path:
    """Write the HTML (or markdown) report on ``result`` to ``path``; returns the path.
    With ``compare``, metrics whose judge or embedding model changed get no significance
    verdict unless ``allow_judge_change`` (a banner lists every difference either way).
    ``thresholds`` (per metric, e.g. a gate's minimum) sets which samples the HTML report
    lists as worst: those scoring worse than it, else worse than the run's median.
    ``labelled`` (per metric, (judge score, human label) pairs of labelled items) adds each
    such metric's interval with the judge's measured error
    (:func:`ragmeter.stats.with_judge_error`) under the summary; ``validations`` (per judged
    metric, its :class:`~ragmeter.stats.Validation` on the team's labels) says whether each
    was validated on them."""
    render: Callable[..., str]
    if format == "html":
        render = partial(
            render_html, compare_findings=compare_findings, worst=worst, thresholds=thresholds
        )
    elif format == "markdown":
        render = render_markdown
    else:
        raise ValueError(f"format must be 'html' or 'markdown', got {format!r}")
    content = render(
        result,
        compare=compare,
        findings=findings,
        title=title,
        allow_judge_change=allow_judge_change,
        labelled=labelled,
        validations=validations,
    )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path
