"""A compact GitHub-flavoured markdown summary, for CI logs and GitHub step summaries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragmeter.diagnosis import Finding
from ragmeter.report import _format as fmt
from ragmeter.report._analysis import (
    CI_RESAMPLES,
    NOT_STARTED_NOTE,
    Labelled,
    Measured,
    Validations,
    compare_runs,
    default_title,
    judge_error_estimates,
    judge_error_text,
    mean_estimates,
    measured,
    metric_tests,
    run_label,
    validation_lines,
)
from ragmeter.report._html_abstention import WRONG as ABSTENTION_WRONG
from ragmeter.report._html_abstention import abstention_counts, claim_diagnostics
from ragmeter.report._html_conversations import conversations_of
from ragmeter.results import ConversationAggregate, EvaluationResult, MetricInfo

if TYPE_CHECKING:
    from ragmeter.stats import MeanEstimate

_SPECIAL = str.maketrans({c: "\\" + c for c in "\\|<>*[]`"})


def md(value: object) -> str:
    """Text safe in a markdown table cell: one line, markdown punctuation escaped."""
    return " ".join(str(value).split()).translate(_SPECIAL)


def code(value: object) -> str:
    """``value`` as inline code (backticks inside replaced, since they cannot be escaped)."""
    return "`" + " ".join(str(value).split()).replace("`", "'") + "`"


def md_code(value: object) -> str:
    """Inline code in a table cell (a pipe would end the cell)."""
    return code(value).replace("|", "\\|")


def _table(head: Sequence[str], align: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _ci(estimate: MeanEstimate | None) -> str:
    return fmt.NONE if estimate is None else fmt.mean_ci(estimate.n, estimate.ci)


def _metric_table(result: EvaluationResult) -> str:
    estimates = mean_estimates(result)
    unstarted = any(a.n_not_started for a in result.aggregates.values())
    rows = []
    for metric in result.metrics:
        agg = result.aggregates[metric.name]
        rows.append(
            [
                md_code(metric.name),
                fmt.arrow(metric.direction),
                fmt.score(agg.mean),
                _ci(estimates.get(metric.name)),
                fmt.score(agg.median),
                f"{agg.n_ok}/{agg.n_total}",
                str(agg.n_not_applicable),
                str(agg.n_failed),
                *([str(agg.n_not_started)] if unstarted else []),
            ]
        )
    table = _table(
        ["metric", "better", "mean", "95% CI", "median", "coverage", "n/a", "failed"]
        + (["not started"] if unstarted else []),
        ["---", ":-:", "--:", "--:", "--:", "--:", "--:", "--:"] + (["--:"] if unstarted else []),
        rows,
    )
    return (
        table + f"\n\n95% CI: bootstrap (BCa, {CI_RESAMPLES:,} resamples) interval of the mean, "
        "as `ragmeter show` prints it; none below 2 scored samples. Coverage = scored / all."
        + (f" {NOT_STARTED_NOTE}" if unstarted else "")
    )


def _judge_error(result: EvaluationResult, labelled: Labelled | None) -> str | None:
    estimates = judge_error_estimates(result, labelled)
    if not estimates:
        return None
    lines = [f"- {md_code(e.metric)}: {md(judge_error_text(e))}" for e in estimates]
    return "With judge error (measured on labelled items):\n\n" + "\n".join(lines)


def _validations(validations: Validations | None) -> str | None:
    lines = [f"- {md_code(metric)}: {md(text)}" for metric, text in validation_lines(validations)]
    if not lines:
        return None
    return "On your labels (run store):\n\n" + "\n".join(lines)


def _measured(found: Measured) -> str:
    """The banner of how the runs were measured differently, as a quote block."""
    lines = []
    for heading, listed in (
        (
            "> **Not comparable: the judge changed.** The judge must stay fixed across a "
            "comparison: these metrics get no significance verdict (re-run one side with the "
            "other's judge, or pass --allow-judge-change).",
            found.refused,
        ),
        (
            "> **Compared across a changed judge** (--allow-judge-change): part of each "
            "change may be the judge's.",
            found.allowed,
        ),
        ("> **The runs were not measured quite the same way:**", found.warnings),
    ):
        if listed:
            lines += [heading, *(f"> - {md(line)}" for line in listed)]
    return "\n".join(lines) + "\n\n" if lines else ""


def _compare_table(
    result: EvaluationResult, baseline: EvaluationResult, allow_judge_change: bool = False
) -> str:
    comparison = compare_runs(result, baseline, top=0)
    tests = metric_tests(baseline, result, allow_judge_change)
    found = {c.metric: c for c in tests}
    rows = []
    for d in comparison.metrics:
        word = fmt.metric_change(found.get(d.metric))[1]
        rows.append(
            [
                md_code(d.metric),
                fmt.arrow(d.direction),
                fmt.score(d.baseline.mean if d.baseline else None),
                fmt.score(d.current.mean if d.current else None),
                fmt.signed(d.delta) + ("" if not word or d.delta is None else f" {word}"),
                f"{d.n_better} / {d.n_worse}",
            ]
        )
    table = _table(
        ["metric", "better", "baseline", "this run", "Δ mean", "samples improved / worsened"],
        ["---", ":-:", "--:", "--:", "--:", "--:"],
        rows,
    )
    verdicts = "".join(f"- {md(c.verdict())}\n" for c in tests)
    return (
        _measured(measured(baseline, result, allow_judge_change))
        + f"Baseline: {md(run_label(baseline))}. {comparison.sample_note()}\n\n"
        + table
        + "\nReal change or noise (bootstrap CI of the difference, permutation test, "
        "Holm-corrected across metrics; better or worse only when significant):\n\n" + verdicts
    )


#: Conversations the markdown summary lists, worst first.
MD_CONVERSATIONS = 5


def _level_cells(metric: MetricInfo, agg: ConversationAggregate) -> list[str]:
    return [
        md_code(metric.name),
        fmt.arrow(metric.direction),
        fmt.score(agg.mean),
        fmt.mean_ci(agg.n_scored, agg.ci),
        f"{agg.n_scored}/{agg.n_conversations}",
        fmt.score(agg.turn_mean),
    ]


def _conversations(result: EvaluationResult) -> str | None:
    """The conversation-level means next to the turn-level ones and the worst
    conversations; None for a single-turn run."""
    found = conversations_of(result)
    if found is None:
        return None
    if found.error is not None:
        return f"> Conversations could not be grouped: {md(found.error)}"
    rows = [_level_cells(metric, found.aggregates[metric.name]) for metric in result.metrics]
    levels = _table(
        ["metric", "better", "per conversation", "95% CI", "conversations scored", "per turn"],
        ["---", ":-:", "--:", "--:", "--:", "--:"],
        rows,
    )
    shown = found.ranked[:MD_CONVERSATIONS]
    worst = _table(
        ["conversation", "turns", *(md_code(m.name) for m in result.metrics)],
        ["---", "--:", *("--:" for _ in result.metrics)],
        [
            [
                md_code(c.conversation_id),
                str(c.n_turns),
                *(
                    fmt.score(c.metrics[m.name].mean)
                    + (
                        f" (worst: turn {c.metrics[m.name].worst_turn})"
                        if c.metrics[m.name].n_ok > 1
                        else ""
                    )
                    for m in result.metrics
                ),
            ]
            for c in shown
        ],
    )
    more = len(found.ranked) - len(shown)
    return (
        f"{fmt.plural(len(found.ranked), 'conversation')}. Per conversation: the mean of each "
        "conversation's mean (a long conversation counts once; 95% CI over conversations); "
        "per turn: every scored turn counts once.\n\n"
        + levels
        + "\n\nWorst conversations first (mean over their scored turns):\n\n"
        + worst
        + (f"\n\nand {more} more." if more > 0 else "")
    )


#: Samples of a wrong abstention outcome the markdown summary names.
MD_ABSTENTION_SAMPLES = 5


def _abstention(result: EvaluationResult) -> str | None:
    """The abstention outcomes with counts and shares, and the samples of the wrong ones;
    None for a run without the abstention metric."""
    counts = abstention_counts(result)
    if counts is None:
        return None
    table = _table(
        ["outcome", "meaning", "samples", "share"],
        ["---", "---", "--:", "--:"],
        [
            [md(name), md(meaning), str(len(samples)), counts.share(samples)]
            for name, meaning, samples in counts.rows()
        ],
    )
    lines = []
    for name in ABSTENTION_WRONG:
        wrong = counts.outcomes[name]
        if wrong:
            shown = ", ".join(code(s.sample_id) for s in wrong[:MD_ABSTENTION_SAMPLES])
            more = len(wrong) - MD_ABSTENTION_SAMPLES
            tail = f" and {more} more" if more > 0 else ""
            lines.append(f"- {md(name.replace('_', ' '))}: {shown}{tail}")
    return "\n\n".join(
        [
            "Shares are of all samples with an abstention result, failed and not applicable "
            "included.",
            table,
            *(["\n".join(lines)] if lines else []),
        ]
    )


def _claim_diagnostics(result: EvaluationResult) -> str | None:
    """The claim-level metrics' means, retriever then generator, with a reading each."""
    rows = claim_diagnostics(result)
    if not rows:
        return None
    body = []
    for side, name, reading in rows:
        agg = result.aggregates[name]
        body.append(
            [
                side,
                md_code(name),
                fmt.arrow(agg.direction),
                fmt.score(agg.mean),
                f"{agg.n_ok}/{agg.n_total}",
                str(agg.n_failed),
                md(reading),
            ]
        )
    return _table(
        ["side", "metric", "better", "mean", "coverage", "failed", "reading"],
        ["---", "---", ":-:", "--:", "--:", "--:", "---"],
        body,
    )


def _finding_line(finding: Finding) -> str:
    figures = "; ".join(md(figure.text()) for figure in finding.figures)
    line = (
        f"- **{md(finding.title)}** ({md(finding.severity)}, {md(finding.area)}): "
        f"{finding.n_matching}/{finding.n_evaluated} samples ({fmt.percent(finding.share)})"
    )
    if figures:
        line += f"; {figures}"
    if finding.advice:
        line += "\n  - try:" + "".join(f"\n    - {md(a)}" for a in finding.advice)
    if finding.sample_ids:
        shown = ", ".join(code(i) for i in finding.sample_ids[:5])
        more = len(finding.sample_ids) - 5
        line += f"\n  - samples: {shown}" + (f" and {more} more" if more > 0 else "")
    return line


def render_markdown(
    result: EvaluationResult,
    *,
    compare: EvaluationResult | None = None,
    findings: Sequence[Finding] = (),
    title: str | None = None,
    allow_judge_change: bool = False,
    labelled: Labelled | None = None,
    validations: Validations | None = None,
) -> str:
    """A short markdown summary of ``result``: metric table, change from ``compare`` (the
    baseline) when given, ``findings`` as bullets, and the judge usage. How the runs were
    measured differently comes first in the change; a metric whose judge or embedding model
    changed gets no significance verdict unless ``allow_judge_change``. ``validations`` (per
    judged metric, its validation on the team's labels) and ``labelled`` (per metric, (judge
    score, human label) pairs: its interval with the judge's error) go under the table."""
    dataset = result.config.get("dataset") or {}
    facts = [
        fmt.plural(len(result), "sample"),
        f"{len(result.skipped)} skipped" if result.skipped else None,
        f"fingerprint {code(dataset['fingerprint'])}" if dataset.get("fingerprint") else None,
        f"ragmeter {md(result.config.get('ragmeter_version', ''))}"
        if result.config.get("ragmeter_version")
        else None,
        md(result.config["created_at"]) if result.config.get("created_at") else None,
    ]
    parts = [f"## {md(title or default_title(result))}", " · ".join(f for f in facts if f)]
    if result.config.get("judge_error"):
        parts.append(f"> **Judge error:** {md(result.config['judge_error'])}")
    parts.append(_metric_table(result))
    for extra in (_validations(validations), _judge_error(result, labelled)):
        if extra is not None:
            parts.append(extra)
    if compare is not None:
        parts += [
            "### Change from baseline",
            _compare_table(result, compare, allow_judge_change),
        ]
    conversations = _conversations(result)
    if conversations is not None:
        parts += ["### Conversations", conversations]
    if findings:
        parts += ["### Findings", "\n".join(_finding_line(f) for f in findings)]
    abstention = _abstention(result)
    if abstention is not None:
        parts += ["### Abstention", abstention]
    claims = _claim_diagnostics(result)
    if claims is not None:
        parts += ["### Claim-level diagnostics", claims]
    usage = result.config.get("usage")
    if usage:
        parts.append(f"Usage: {fmt.usage_line(usage)}.")
    embedding = result.config.get("embedding_usage")
    if embedding:
        parts.append(f"Embeddings: {fmt.usage_line(embedding, 'embedding')}.")
    return "\n\n".join(parts) + "\n"
