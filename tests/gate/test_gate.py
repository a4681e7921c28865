"""The regression gate on constructed baseline / candidate runs."""

import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from ragmeter import evaluate
from ragmeter.cli import app
from ragmeter.gate import (
    GateFileError,
    GateUsageError,
    github_annotations,
    load_rules,
    parse_rules,
    run_gate,
    to_junit,
    to_markdown,
)
from tests._prepared import Prepared

runner = CliRunner()
N = 40


def run_of(columns, *, lower=(), tags=None, run_dir=None):
    ids = [f"s{i}" for i in range(N)]
    metrics = [
        Prepared(name, dict(zip(ids, values)), lower_is_better=name in lower)
        for name, values in columns.items()
    ]
    records = [
        {"id": i, "user_input": "q", "metadata": {"question_type": (tags or {}).get(i, "single")}}
        for i in ids
    ]
    return evaluate(records, metrics, run_dir=run_dir)


BASE = [0.9 if i % 2 else 0.8 for i in range(N)]
SAME = list(BASE)
DROPPED = [v - 0.1 for v in BASE]  # every sample 0.1 worse: a real regression
NOISE_BASE = [0.1] * N
NOISE_WORSE = [0.3] * N  # lower is better: a rise is a regression


def rules(text):
    import tomllib

    return parse_rules(tomllib.loads(text))


FLOORS = rules(
    """
[[thresholds]]
metric = "faithfulness"
min = 0.8
[[thresholds]]
metric = "noise_sensitivity_relevant"
max = 0.2
"""
)
REGRESSIONS = rules(
    """
[[regressions]]
metric = "faithfulness"
max_drop = 0.02
[[regressions]]
metric = "noise_sensitivity_relevant"
max_drop = 0.02
"""
)


def pair(faith, noise):
    return run_of(
        {"faithfulness": faith, "noise_sensitivity_relevant": noise},
        lower={"noise_sensitivity_relevant"},
    )


def test_floors_and_ceilings_pass_and_fail_in_each_direction():
    good = run_gate(pair(BASE, NOISE_BASE), FLOORS)
    assert good.passed and len(good.outcomes) == 2
    bad = run_gate(pair(DROPPED, NOISE_WORSE), FLOORS)
    assert [o.passed for o in bad.outcomes] == [False, False]
    assert "mean 0.7500 < 0.8" in bad.outcomes[0].message
    assert "mean 0.3000 > 0.2" in bad.outcomes[1].message


def test_a_significant_regression_beyond_the_allowed_drop_fails():
    baseline = pair(BASE, NOISE_BASE)
    assert run_gate(pair(SAME, NOISE_BASE), REGRESSIONS, baseline).passed
    report = run_gate(pair(DROPPED, NOISE_WORSE), REGRESSIONS, baseline)
    assert [o.passed for o in report.outcomes] == [False, False]
    assert "-0.10" in report.outcomes[0].message
    # A drop within the allowance passes even when significant.
    lenient = rules('[[regressions]]\nmetric = "faithfulness"\nmax_drop = 0.2\n')
    assert run_gate(pair(DROPPED, NOISE_BASE), lenient, baseline).passed


def test_a_drop_that_is_not_significant_passes_unless_significance_is_waived():
    noisy = [v - (0.3 if i == 0 else 0.0) for i, v in enumerate(BASE)]  # one sample dropped
    baseline = pair(BASE, NOISE_BASE)
    candidate = pair(noisy, NOISE_BASE)
    assert run_gate(candidate, REGRESSIONS, baseline).passed
    strict = rules(
        '[[regressions]]\nmetric = "faithfulness"\nmax_drop = 0.005\nsignificant = false\n'
    )
    assert not run_gate(candidate, strict, baseline).passed


def test_rules_per_tag_group():
    tags = {f"s{i}": "multi" for i in range(0, N, 4)}
    faith = [0.2 if f"s{i}" in tags else v for i, v in enumerate(BASE)]
    result = run_of({"faithfulness": faith}, tags=tags)
    gate = rules(
        '[[thresholds]]\nmetric = "faithfulness"\nmin = 0.5\n'
        '[[thresholds]]\nmetric = "faithfulness"\nmin = 0.5\ntag = "question_type"\n'
        'value = "multi"\n'
    )
    report = run_gate(result, gate)
    assert [o.passed for o in report.outcomes] == [True, False]
    assert "[question_type=multi]" in report.outcomes[1].rule


def test_junit_markdown_and_annotations():
    report = run_gate(pair(DROPPED, NOISE_BASE), FLOORS)
    suite = ET.fromstring(to_junit(report)).find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["faithfulness: mean >= 0.8"]
    assert "❌ failed (1 rule(s))" in to_markdown(report)
    notes = github_annotations(report)
    assert notes[0].startswith("::error title=ragmeter gate%3A faithfulness")
    assert notes[1].startswith("::notice ")


def test_usage_errors_name_the_fix(tmp_path):
    with pytest.raises(GateUsageError, match="baseline"):
        run_gate(pair(BASE, NOISE_BASE), REGRESSIONS)
    with pytest.raises(GateUsageError, match="does not have"):
        run_gate(run_of({"faithfulness": BASE}), FLOORS)
    with pytest.raises(GateFileError, match="unknown setting"):
        rules('[[thresholds]]\nmetric = "faithfulness"\nminimum = 0.8\n')
    with pytest.raises(GateFileError, match="no rule"):
        rules("[gate]\nalpha = 0.1\n")
    yaml_file = tmp_path / "gate.yaml"
    yaml_file.write_text("thresholds:\n  - metric: faithfulness\n    min: 0.8\n", "utf-8")
    pytest.importorskip("yaml")
    assert load_rules(yaml_file).thresholds[0].min == 0.8


def test_cli_exit_codes_and_files(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    summary = tmp_path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    cols = {"faithfulness": BASE, "noise_sensitivity_relevant": NOISE_BASE}
    lower = {"noise_sensitivity_relevant"}
    run_of(cols, lower=lower, run_dir=tmp_path / "base")
    worse = {"faithfulness": DROPPED, "noise_sensitivity_relevant": NOISE_BASE}
    run_of(worse, lower=lower, run_dir=tmp_path / "cand")
    gate = tmp_path / "gate.toml"
    gate.write_text('[[regressions]]\nmetric = "faithfulness"\nmax_drop = 0.02\n', encoding="utf-8")
    args = ["gate", str(tmp_path / "cand"), "--gate", str(gate)]
    failed = runner.invoke(
        app, [*args, "--baseline", str(tmp_path / "base"), "--junit", str(tmp_path / "j.xml")]
    )
    assert failed.exit_code == 1, failed.output
    assert "gate failed" in failed.output
    assert ET.parse(tmp_path / "j.xml").getroot().find("testsuite").get("failures") == "1"
    assert "❌" in summary.read_text("utf-8")
    passed = runner.invoke(
        app,
        ["gate", str(tmp_path / "base"), "--gate", str(gate), "--baseline", str(tmp_path / "base")],
    )
    assert passed.exit_code == 0, passed.output
    usage = runner.invoke(app, args)  # regression rules without a baseline
    assert usage.exit_code == 2 and "baseline" in usage.output
