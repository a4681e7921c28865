"""The gate's coverage floor: by default every result of a gated metric must be scored (n/a
aside), so a run whose judge was down fails instead of passing on the few samples it scored."""

import sys
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from ragmeter import Metric, MetricResult, evaluate
from ragmeter.cli import app
from ragmeter.gate import (
    GateFileError,
    GateUsageError,
    parse_rules,
    run_gate,
    to_junit,
    to_markdown,
)
from ragmeter.metrics import Requirements

runner = CliRunner()
N = 30
FAILED = "failed"
FIX = (
    "compute them again with ragmeter eval --resume RUN_DIR, or lower the floor with "
    "--min-coverage (min_coverage=) or a rule's min_coverage"
)


class Judged(Metric):
    """faithfulness as given per sample: a score, None (n/a: no claims) or FAILED."""

    requires: Requirements = ()

    def __init__(self, scores):
        self.name, self.scores = "faithfulness", scores

    def score(self, sample):
        value = self.scores[sample.id]
        if value == FAILED:
            return MetricResult.failed("JudgeTransientError: HTTP 500")
        if value is None:
            return MetricResult.not_applicable("the response makes no claim")
        return MetricResult.ok(value)


def run_of(values, *, run_dir=None, groups=None):
    ids = [f"s{i}" for i in range(len(values))]
    rows = [
        {"id": i, "user_input": f"q {i}", "metadata": {"kind": (groups or {}).get(i, "single")}}
        for i in ids
    ]
    return evaluate(rows, [Judged(dict(zip(ids, values)))], run_dir=run_dir)


def judge_was_down():
    """2 of 30 scored: the judge failed on the other 28."""
    return run_of([0.9, 0.9] + [FAILED] * (N - 2))


def rules(text):
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # the backport, as ragmeter reads TOML below 3.11
        import tomli as tomllib

    return parse_rules(tomllib.loads(text))


FLOOR = rules('[[thresholds]]\nmetric = "faithfulness"\nmin = 0.8\n')


def test_two_of_thirty_scored_fails_by_default_naming_the_counts_the_floor_and_the_fix():
    report = run_gate(judge_was_down(), FLOOR)
    assert not report.passed
    (outcome,) = report.coverage_failures
    assert outcome.coverage is not None
    assert (outcome.coverage.scored, outcome.coverage.applicable) == (2, 30)
    assert (outcome.coverage.missing, outcome.coverage.floor) == (28, 1.0)
    assert outcome.message.startswith(
        "coverage 2/30 (7%) < 100% (28 results failed or missing): mean 0.9000"
    )
    assert report.coverage_reason() == (
        f"faithfulness: coverage 2/30 (7%) < 100% (28 results failed or missing): {FIX}"
    )
    assert outcome.figures["coverage"]["min_coverage"] == 1.0


def test_every_result_scored_passes():
    report = run_gate(run_of([0.9] * N), FLOOR)
    assert report.passed and report.coverage_failures == []
    assert report.coverage_reason() is None
    assert report.outcomes[0].coverage.share == 1.0


def test_results_that_are_not_applicable_are_not_missing():
    """n/a is a legitimate outcome (a response with no claims): left out of the share."""
    report = run_gate(run_of([0.9] * (N - 2) + [None, None]), FLOOR)
    assert report.passed, report.outcomes[0].message
    coverage = report.outcomes[0].coverage
    assert (coverage.scored, coverage.applicable, coverage.not_applicable) == (28, 28, 2)
    # A failed result next to the n/a ones still counts, and the n/a ones are named.
    one_failed = run_gate(run_of([0.9] * (N - 3) + [None, None, FAILED]), FLOOR)
    assert one_failed.coverage_reason().startswith(
        "faithfulness: coverage 27/28 (96%) < 100% (1 result failed or missing; 2 n/a not counted)"
    )


def test_a_lower_floor_for_every_rule_passes():
    report = run_gate(judge_was_down(), FLOOR, min_coverage=0.05)
    assert report.passed and report.min_coverage == 0.05
    assert report.outcomes[0].coverage.floor == 0.05


def test_a_rules_own_min_coverage_overrides_the_gates_floor():
    strict = rules('[[thresholds]]\nmetric = "faithfulness"\nmin = 0.8\nmin_coverage = 0.5\n')
    report = run_gate(judge_was_down(), strict, min_coverage=0.05)
    assert not report.passed
    assert report.coverage_reason().startswith("faithfulness: coverage 2/30 (7%) < 50% (28 ")
    lenient = rules('[[thresholds]]\nmetric = "faithfulness"\nmin = 0.8\nmin_coverage = 0.05\n')
    assert run_gate(judge_was_down(), lenient).passed  # the default 1.0 is overridden


def test_regression_rules_need_the_candidates_coverage_too():
    baseline = run_of([0.9] * N)
    gate = rules('[[regressions]]\nmetric = "faithfulness"\nmax_drop = 0.02\n')
    assert run_gate(run_of([0.9] * N), gate, baseline).passed
    report = run_gate(judge_was_down(), gate, baseline)
    assert [o.coverage_failed for o in report.outcomes] == [True]
    assert report.outcomes[0].message.startswith("coverage 2/30 (7%) < 100%")
    assert report.outcomes[0].figures["coverage"]["scored"] == 2
    lenient = rules(
        '[[regressions]]\nmetric = "faithfulness"\nmax_drop = 0.02\nmin_coverage = 0.05\n'
    )
    assert lenient.regressions[0].name.endswith(", coverage >= 0.05")
    assert run_gate(judge_was_down(), lenient, baseline).passed


def test_a_groups_rule_counts_the_groups_results():
    groups = {f"s{i}": "multi" for i in range(0, N, 3)}  # s0, s3, ...: 10 samples
    values = [FAILED if i == 3 else 0.9 for i in range(N)]
    gate = rules(
        '[[thresholds]]\nmetric = "faithfulness"\nmin = 0.8\ntag = "kind"\nvalue = "single"\n'
        '[[thresholds]]\nmetric = "faithfulness"\nmin = 0.8\ntag = "kind"\nvalue = "multi"\n'
    )
    report = run_gate(run_of(values, groups=groups), gate)
    assert [o.coverage_failed for o in report.outcomes] == [False, True]
    assert report.coverage_reason().startswith(
        "faithfulness [kind=multi]: coverage 9/10 (90%) < 100% (1 result failed or missing)"
    )


def test_junit_and_markdown_carry_the_coverage_and_the_floor():
    report = run_gate(judge_was_down(), FLOOR)
    case = ET.fromstring(to_junit(report)).find("testsuite/testcase")
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties["coverage.scored"] == "2" and properties["coverage.applicable"] == "30"
    assert properties["coverage.min_coverage"] == "1"
    assert case.find("failure").get("type") == "coverage"
    summary = to_markdown(report)
    assert "Coverage floor: 100% of each rule's results scored" in summary
    assert "**Coverage below the floor:** faithfulness: coverage 2/30 (7%)" in summary
    assert "| 2/30 (7%), floor 100% ❌ |" in summary
    passing = to_markdown(run_gate(run_of([0.9] * N), FLOOR))
    assert "| 30/30 (100%), floor 100% |" in passing and "below the floor" not in passing


def test_a_floor_outside_0_to_1_is_refused():
    with pytest.raises(GateFileError, match="min_coverage: a share of the results from 0 to 1"):
        rules('[[thresholds]]\nmetric = "faithfulness"\nmin_coverage = 95\n')
    with pytest.raises(GateUsageError, match="min_coverage"):
        run_gate(judge_was_down(), FLOOR, min_coverage=1.5)


def test_cli_exits_3_with_the_reason_unless_the_floor_is_lowered(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    run_of([0.9, 0.9] + [FAILED] * (N - 2), run_dir=tmp_path / "down")
    run_of([0.5] * N, run_dir=tmp_path / "low")
    gate = tmp_path / "gate.toml"
    gate.write_text('[[thresholds]]\nmetric = "faithfulness"\nmin = 0.8\n', encoding="utf-8")
    env = {"COLUMNS": "400"}

    def gate_run(name, *extra):
        return runner.invoke(app, ["gate", str(tmp_path / name), "-g", str(gate), *extra], env=env)

    down = gate_run("down", "--junit", str(tmp_path / "gate.xml"))
    assert down.exit_code == 3, down.output
    assert down.output.strip().splitlines()[-1] == (
        "exit 3: the gate failed: faithfulness: coverage 2/30 (7%) < 100% (28 results failed "
        f"or missing): {FIX}"
    )
    failure = ET.parse(tmp_path / "gate.xml").getroot().find("testsuite/testcase/failure")
    assert failure.get("type") == "coverage"
    lowered = gate_run("down", "--min-coverage", "0.05")
    assert lowered.exit_code == 0, lowered.output
    assert lowered.output.strip().splitlines()[-1] == "exit 0: the gate passed"
    low = gate_run("low")  # every result scored, the mean below the floor: a rule failed
    assert low.exit_code == 1, low.output
    assert low.output.strip().splitlines()[-1] == "exit 1: the gate failed"
    assert gate_run("down", "--min-coverage", "2").exit_code == 2
