"""A gate report for people and CI: JUnit XML, a markdown summary, GitHub annotations."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ragmeter.gate._check import GateReport, RuleOutcome, floor_text


def _coverage_properties(case: ET.Element, outcome: RuleOutcome) -> None:
    coverage = outcome.coverage
    if coverage is None:
        return
    properties = ET.SubElement(case, "properties")
    for name, value in (
        ("coverage.scored", coverage.scored),
        ("coverage.applicable", coverage.applicable),
        ("coverage.not_applicable", coverage.not_applicable),
        ("coverage.share", f"{coverage.share:.6g}"),
        ("coverage.min_coverage", f"{coverage.floor:g}"),
    ):
        ET.SubElement(properties, "property", name=name, value=str(value))


def to_junit(report: GateReport) -> str:
    """JUnit XML: one test case per rule, failed rules as failures with their figures (of
    type ``coverage`` when the rule's coverage fell short), each rule's coverage and floor
    as properties."""
    suite = ET.Element(
        "testsuite",
        name="ragmeter gate",
        tests=str(len(report.outcomes)),
        failures=str(len(report.failures)),
        errors="0",
        skipped="0",
    )
    for outcome in report.outcomes:
        case = ET.SubElement(
            suite, "testcase", classname=f"ragmeter.gate.{outcome.kind}", name=outcome.rule
        )
        _coverage_properties(case, outcome)
        if outcome.passed:
            ET.SubElement(case, "system-out").text = outcome.message
        else:
            kind = "coverage" if outcome.coverage_failed else outcome.kind
            failure = ET.SubElement(case, "failure", message=outcome.message, type=kind)
            failure.text = f"{outcome.rule}\n{outcome.message}"
    suites = ET.Element("testsuites", name="ragmeter")
    suites.append(suite)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _coverage_cell(outcome: RuleOutcome) -> str:
    coverage = outcome.coverage
    if coverage is None:
        return "—"
    mark = "" if coverage.passed else " ❌"
    figures = coverage.figures().removeprefix("coverage ")
    return f"{figures}, floor {floor_text(coverage.floor)}{mark}"


def to_markdown(report: GateReport) -> str:
    """A summary for a GitHub step summary or a pull-request comment: each rule with its
    figures and its coverage against its floor."""
    verdict = "✅ passed" if report.passed else f"❌ failed ({len(report.failures)} rule(s))"
    against = f" against `{report.baseline}`" if report.baseline else ""
    lines = [
        f"## ragmeter gate: {verdict}",
        "",
        f"Candidate `{report.candidate}`{against}. Coverage floor: "
        f"{floor_text(report.min_coverage)} of each rule's results scored (n/a not counted), "
        "unless the rule sets its own `min_coverage`.",
        "",
    ]
    reason = report.coverage_reason()
    if reason is not None:
        lines += [f"> ❌ **Coverage below the floor:** {_cell(reason)}", ""]
    if report.differences:
        lines.append("> ⚠️ **The runs were not measured the same way:**")
        lines += [f"> - {_cell(d)}" for d in report.differences]
        lines.append("")
    lines += ["| | rule | figures | coverage |", "|:-:|---|---|---|"]
    for o in report.outcomes:
        lines.append(
            f"| {'✅' if o.passed else '❌'} | {_cell(o.rule)} | {_cell(o.message)} "
            f"| {_cell(_coverage_cell(o))} |"
        )
    return "\n".join(lines) + "\n"


def _escape_annotation(text: str) -> str:
    # GitHub workflow commands: %, CR and LF must be escaped in messages.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_annotations(report: GateReport) -> list[str]:
    """``::error`` for each failed rule, ``::notice`` for the others, ``::warning`` for
    each way the runs were measured differently."""
    lines = [
        f"::warning title=ragmeter gate%3A runs measured differently::{_escape_annotation(d)}"
        for d in report.differences
    ]
    for o in report.outcomes:
        level = "notice" if o.passed else "error"
        title = (
            _escape_annotation(f"ragmeter gate: {o.rule}").replace(",", "%2C").replace(":", "%3A")
        )
        lines.append(f"::{level} title={title}::{_escape_annotation(o.message)}")
    return lines
