"""The diagnosis section: each finding with its share, figures, advice and samples."""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.diagnosis import Finding
from ragmeter.report import _format as fmt
from ragmeter.report._html_samples import Links
from ragmeter.report._markup import Markup, el, join, text

_SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}


def share_text(finding: Finding) -> str:
    """ "4/12 samples (33%)"."""
    return f"{finding.n_matching}/{finding.n_evaluated} samples ({fmt.percent(finding.share)})"


def _figures(finding: Finding) -> Markup | None:
    """Each figure in words, naming the samples it covers (flagged, and the whole run)."""
    if not finding.figures:
        return None
    items = [el("li", figure.text(), data_metric=figure.name) for figure in finding.figures]
    return el("ul", items, class_="figures plain")


def _baseline_note(finding: Finding, before: dict[str, Finding] | None) -> Markup | None:
    if before is None:
        return None
    old = before.get(finding.rule_id)
    if old is None:
        return el("span", "new since baseline", class_="badge high")
    return el("span", f"baseline: {share_text(old)}", class_="badge")


def finding_card(finding: Finding, links: Links, before: dict[str, Finding] | None) -> Markup:
    """One finding."""
    severity = finding.severity if finding.severity in _SEVERITY_ORDER else "low"
    return el(
        "div",
        el(
            "h3",
            el("span", finding.severity, class_=f"badge {severity}"),
            el("span", finding.area, class_="badge"),
            text(finding.title, "span"),
        ),
        el(
            "p",
            el("b", share_text(finding)),
            " ",
            _baseline_note(finding, before),
            el("span", f" rule {finding.rule_id}", class_="muted"),
        ),
        text(finding.explanation, "p") if finding.explanation else None,
        _figures(finding),
        el("h5", "advice") if finding.advice else None,
        el("ul", [text(a, "li") for a in finding.advice], class_="advice")
        if finding.advice
        else None,
        el(
            "p",
            el("span", "samples, worst first: ", class_="muted"),
            links.link_list(finding.sample_ids),
        )
        if finding.sample_ids
        else None,
        class_=f"finding {severity}",
    )


def findings_section(
    findings: Sequence[Finding], compare_findings: Sequence[Finding], links: Links
) -> Markup:
    """Every finding (most severe first); with baseline findings, which are new and which
    were resolved."""
    if not findings and not compare_findings:
        return el("p", "No diagnosis was given for this run.", class_="muted")
    before = {f.rule_id: f for f in compare_findings} if compare_findings else None
    ordered = sorted(findings, key=lambda f: _SEVERITY_ORDER.get(f.severity, 3))
    parts = [finding_card(f, links, before) for f in ordered]
    if not findings:
        parts.append(el("p", "No finding in this run.", class_="muted"))
    current = {f.rule_id for f in findings}
    resolved = [f for f in compare_findings if f.rule_id not in current]
    if resolved:
        parts.append(el("h3", "Resolved since the baseline"))
        parts.append(
            el(
                "ul",
                [
                    el(
                        "li",
                        el("span", f.severity, class_="badge"),
                        f.title,
                        " ",
                        el("span", f"(baseline: {share_text(f)})", class_="muted"),
                    )
                    for f in resolved
                ],
            )
        )
    return join(parts)
