"""The CI regression gate: floors, ceilings and significant regressions, per metric and per
tag group, and agreement with the team's labels (``min_agreement``), with JUnit XML, markdown
and GitHub annotations."""

from ragmeter.gate._check import (
    GateReport,
    GateUsageError,
    JudgeChangedError,
    RuleOutcome,
    run_gate,
)
from ragmeter.gate._output import github_annotations, to_junit, to_markdown
from ragmeter.gate._rules import (
    Agreement,
    GateFileError,
    GateRules,
    Regression,
    Threshold,
    load_rules,
    parse_rules,
)

__all__ = [
    "Agreement",
    "GateFileError",
    "GateReport",
    "GateRules",
    "GateUsageError",
    "JudgeChangedError",
    "Regression",
    "RuleOutcome",
    "Threshold",
    "github_annotations",
    "load_rules",
    "parse_rules",
    "run_gate",
    "to_junit",
    "to_markdown",
]
