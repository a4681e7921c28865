"""The regression gate on constructed baseline / candidate runs."""

import json
import sys
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from ragmeter import evaluate
from ragmeter.cli import app
from ragmeter.gate import (
    GateFileError,
    GateUsageError,
    JudgeChangedError,
    github_annotations,
    load_rules,
    parse_rules,
    run_gate,
    to_junit,
    to_markdown,
)
from ragmeter.testing import FakeOpenAIServer
from tests._prepared import Prepared
from tests.stats._build import DEEPSEEK, DEEPSEEK_LABEL, GPT, GPT_LABEL, judged_config, rejudge

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
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # the backport, as ragmeter reads TOML below 3.11
        import tomli as tomllib

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
    for bound in ("min = nan", "max = inf", "min = -inf"):  # every score >= nan passed
        with pytest.raises(GateFileError, match="finite number"):
            rules(f'[[thresholds]]\nmetric = "faithfulness"\n{bound}\n')
    yaml_file = tmp_path / "gate.yaml"
    yaml_file.write_text("thresholds:\n  - metric: faithfulness\n    min: 0.8\n", "utf-8")
    pytest.importorskip("yaml")
    assert load_rules(yaml_file).thresholds[0].min == 0.8


BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("bomb.yaml", BILLION_LAUGHS, "line 2: YAML aliases"),
        ("two.yaml", "thresholds: []\n---\nthresholds: []\n", "a second YAML document"),
        ("tab.yaml", "thresholds:\n\t- metric: faithfulness\n", "tab"),
        ("deep.json", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("bad.toml", "[[thresholds]\n", "not valid TOML"),
        ("latin1.toml", "# caf\xe9\n", "not UTF-8"),
    ],
)
def test_a_hostile_gate_file_is_one_error_naming_it(tmp_path, name, text, said):
    """Gate files are read as every settings file is (ragmeter._services.read_settings):
    an alias bomb is refused before it expands, never a traceback or gigabytes."""
    pytest.importorskip("yaml")
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1" if "latin1" in name else "utf-8"))
    with pytest.raises(GateFileError, match=said) as raised:
        load_rules(path)
    assert str(path) in str(raised.value)


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


# -- across judges ---------------------------------------------------------------------------
def judged_by(result, judge):
    """``result`` with its faithfulness judged by ``judge`` (None: no judge records at all)."""
    for key in ("judges", "embeddings", "prompt_versions"):
        result.config.pop(key, None)
    result.config.update(judged_config(judge))
    return result


def test_a_regression_gate_across_judges_is_refused_naming_both():
    baseline = judged_by(pair(BASE, NOISE_BASE), GPT)
    candidate = judged_by(pair(DROPPED, NOISE_BASE), DEEPSEEK)
    with pytest.raises(JudgeChangedError) as refused:
        run_gate(candidate, REGRESSIONS, baseline)
    assert isinstance(refused.value, GateUsageError)
    message = str(refused.value)
    assert f"faithfulness: judge differs: {GPT_LABEL} vs {DEEPSEEK_LABEL}" in message
    assert "--allow-judge-change" in message


def test_allow_judge_change_gates_anyway_and_reports_the_difference():
    baseline = judged_by(pair(BASE, NOISE_BASE), GPT)
    candidate = judged_by(pair(DROPPED, NOISE_BASE), DEEPSEEK)
    report = run_gate(candidate, REGRESSIONS, baseline, allow_judge_change=True)
    assert [o.passed for o in report.outcomes] == [False, True]
    assert report.differences == [f"faithfulness: judge differs: {GPT_LABEL} vs {DEEPSEEK_LABEL}"]
    summary = to_markdown(report)
    assert "not measured the same way" in summary and DEEPSEEK_LABEL in summary
    notes = github_annotations(report)
    assert notes[0].startswith("::warning title=ragmeter gate%3A runs measured differently::")
    assert GPT_LABEL in notes[0]


def test_only_the_metrics_of_regression_rules_are_checked():
    baseline = judged_by(pair(BASE, NOISE_BASE), GPT)
    candidate = judged_by(pair(BASE, NOISE_BASE), DEEPSEEK)
    # Floors do not read the baseline; a regression rule on an unjudged metric is unaffected.
    assert run_gate(candidate, FLOORS, baseline).passed
    noise_only = rules('[[regressions]]\nmetric = "noise_sensitivity_relevant"\n')
    report = run_gate(candidate, noise_only, baseline)
    assert report.passed and report.differences == []


def test_the_same_judge_passes_silently_and_an_old_baseline_is_unknown():
    same = run_gate(
        judged_by(pair(SAME, NOISE_BASE), GPT), REGRESSIONS, judged_by(pair(BASE, NOISE_BASE), GPT)
    )
    assert same.passed and same.differences == []
    assert "not measured" not in to_markdown(same)
    old = run_gate(
        judged_by(pair(SAME, NOISE_BASE), GPT), REGRESSIONS, judged_by(pair(BASE, NOISE_BASE), None)
    )
    assert old.passed
    assert old.differences[0].startswith("faithfulness: judge unknown: the baseline run did not")


def test_cli_gate_across_judges_exits_2_unless_allowed(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    cols = {"faithfulness": BASE, "noise_sensitivity_relevant": NOISE_BASE}
    run_of(cols, lower={"noise_sensitivity_relevant"}, run_dir=tmp_path / "base")
    run_of(cols, lower={"noise_sensitivity_relevant"}, run_dir=tmp_path / "cand")
    rejudge(tmp_path / "base", GPT)
    rejudge(tmp_path / "cand", DEEPSEEK)
    gate = tmp_path / "gate.toml"
    gate.write_text('[[regressions]]\nmetric = "faithfulness"\nmax_drop = 0.02\n', encoding="utf-8")
    args = ["gate", str(tmp_path / "cand"), "-g", str(gate), "--baseline", str(tmp_path / "base")]
    env = {"COLUMNS": "400"}
    refused = runner.invoke(app, args, env=env)
    assert refused.exit_code == 2, refused.output
    assert GPT_LABEL in refused.output and DEEPSEEK_LABEL in refused.output
    assert "gate passed" not in refused.output
    allowed = runner.invoke(app, [*args, "--allow-judge-change"], env=env)
    assert allowed.exit_code == 0, allowed.output
    assert "warning:" in allowed.output and DEEPSEEK_LABEL in allowed.output
    assert "gate passed" in allowed.output
    rejudge(tmp_path / "cand", GPT)
    same = runner.invoke(app, args, env=env)
    assert same.exit_code == 0 and "warning" not in same.output and "judge" not in same.output


def faithfulness_reply(body):
    if body["response_format"]["json_schema"]["name"].startswith("ResponseAnalysis"):
        return {"claims": ["Paris is the capital of France."]}
    return {"support": [{"claim": 1, "passages": [1], "reason": "stated"}]}


def test_eval_with_a_gate_and_a_baseline_judged_by_another_model(tmp_path, monkeypatch):
    """Two real runs against the fake OpenAI-compatible server, judged by different models."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", "sk-gate")
    rows = [
        {"id": f"q{i}", "user_input": f"Capital of France? ({i})", "response": f"Paris ({i})",
         "retrieved_contexts": [f"Paris is the capital of France. ({i})"]}
        for i in range(4)
    ]  # fmt: skip
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    gate = tmp_path / "gate.toml"
    gate.write_text('[[regressions]]\nmetric = "faithfulness"\n', encoding="utf-8")
    with FakeOpenAIServer(responder=faithfulness_reply, api_key="sk-gate") as server:

        def evaluate_with(model, out, *extra):
            args = [
                "eval", str(data), "-m", "faithfulness", "-o", str(tmp_path / out), "-q",
                "--judge-model", model, "--judge-base-url", server.base_url, "--no-cache",
                "--no-store", *extra,
            ]  # fmt: skip
            return runner.invoke(app, args, env={"COLUMNS": "400"})

        assert evaluate_with("gpt-4o-mini", "base").exit_code == 0
        host = server.base_url.split("//")[1].split("/")[0]
        baseline = ["--gate", str(gate), "--baseline", str(tmp_path / "base")]
        refused = evaluate_with("deepseek-chat", "cand", *baseline)
        allowed = evaluate_with("deepseek-chat", "again", *baseline, "--allow-judge-change")
        same = evaluate_with("gpt-4o-mini", "same", *baseline)
    assert refused.exit_code == 2, refused.output
    assert f"gpt-4o-mini @ {host} (temperature 0) vs deepseek-chat @ {host}" in refused.output
    assert refused.output.strip().splitlines()[-1].startswith("exit 2")
    assert allowed.exit_code == 0, allowed.output
    assert "warning:" in allowed.output and "deepseek-chat" in allowed.output
    assert same.exit_code == 0, same.output
    assert "deepseek" not in same.output and "warning" not in same.output
