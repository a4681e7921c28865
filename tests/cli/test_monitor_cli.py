"""``ragmeter monitor --once`` with a scripted judge: windows, alerts, exit codes, stored runs."""

import json

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.judge import JudgeTransientError
from ragmeter.testing import ScriptedJudge
from tests.monitor.judge import judge, row
from tests.monitor.test_monitor import BAD, GOOD, write

runner = CliRunner()


@pytest.fixture
def scripted(monkeypatch):
    """``--judge-*`` build the scripted judge; returns the judges made."""
    made = []

    def build(self, cache=None):
        made.append(judge())
        return made[-1]

    monkeypatch.setattr("ragmeter.cli._judging.JudgeOptions.build", build)
    return made


def run(tmp_path, *extra):
    return runner.invoke(
        app,
        [
            "monitor",
            str(tmp_path / "traffic.jsonl"),
            "--metrics",
            "faithfulness",
            "--window",
            "8",
            "--state",
            str(tmp_path / "state"),
            "--once",
            *extra,
        ],
        env={"COLUMNS": "200"},
    )


def test_a_drop_alerts_on_stderr_in_the_log_and_exits_1(tmp_path, scripted):
    write(tmp_path / "traffic.jsonl", GOOD + BAD + ["[1, 2]"], mode="w")
    result = run(tmp_path, "--log", str(tmp_path / "alerts.jsonl"))
    assert result.exit_code == 1, result.output
    out = result.output
    assert "window 1 (baseline)" in out and "window 2:" in out
    assert "faithfulness 0.875 (95% CI" in out and "faithfulness 0.375 (95% CI" in out
    assert "-0.500" in out and "DROP" in out
    assert "ALERT window 2" in out and "0.875 → 0.375" in out
    assert "row 17" in out and "expected an object" in out  # the bad row, said and skipped
    assert "exit 1: 1 alert(s) fired" in out
    (alert,) = [json.loads(x) for x in (tmp_path / "alerts.jsonl").read_text().splitlines()]
    assert alert["window_mean"] == pytest.approx(0.375)
    assert len(scripted[0].calls) == 32

    listed = runner.invoke(app, ["runs", "list"], env={"COLUMNS": "250"})
    assert listed.exit_code == 0
    assert "monitor:traffic:window-1" in listed.output
    assert "monitor:traffic:window-9" in listed.output


def test_no_drop_exits_0_and_a_second_pass_reads_only_new_lines(tmp_path, scripted):
    write(tmp_path / "traffic.jsonl", GOOD, mode="w")
    first = run(tmp_path)
    assert first.exit_code == 0, first.output
    assert "read 8 new line(s)" in first.output and "exit 0: no alert (1 window(s)" in first.output
    write(tmp_path / "traffic.jsonl", [row(20, 4), row(21, 3)])
    second = run(tmp_path)
    assert second.exit_code == 0, second.output
    assert "read 2 new line(s)" in second.output
    assert len(scripted[1].calls) == 0  # the window of 8 is not full: nothing judged yet
    flushed = run(tmp_path, "--flush")
    assert flushed.exit_code == 0 and "window 2: " in flushed.output
    assert len(scripted[2].calls) == 4


def test_a_baseline_run_directory(tmp_path, scripted):
    write(tmp_path / "golden.jsonl", GOOD, mode="w")
    made = runner.invoke(
        app,
        ["eval", str(tmp_path / "golden.jsonl"), "-m", "faithfulness", "-o", str(tmp_path / "b")],
    )
    assert made.exit_code == 0, made.output
    write(tmp_path / "traffic.jsonl", BAD, mode="w")
    result = run(tmp_path, "--baseline", str(tmp_path / "b"), "--no-store")
    assert result.exit_code == 1, result.output
    assert "window 1: " in result.output and "(baseline)" not in result.output
    assert "not stored" in result.output and "ALERT window 1" in result.output


def test_a_metric_that_needs_a_reference_is_a_usage_error(tmp_path, scripted):
    write(tmp_path / "traffic.jsonl", GOOD, mode="w")
    result = runner.invoke(
        app,
        ["monitor", str(tmp_path / "traffic.jsonl"), "-m", "answer_correctness", "--once"],
    )
    assert result.exit_code == 2
    assert "reference" in result.output and "answer_correctness" in result.output


def test_a_bad_window_and_a_missing_source_are_usage_errors(tmp_path, scripted):
    write(tmp_path / "traffic.jsonl", GOOD, mode="w")
    assert run(tmp_path, "--window", "1x").exit_code == 2
    missing = runner.invoke(app, ["monitor", str(tmp_path / "nope.jsonl"), "--once"])
    assert missing.exit_code == 2 and "no file or folder" in missing.output


def test_following_stops_cleanly_on_sigterm(tmp_path, scripted):
    import os
    import signal
    import threading

    write(tmp_path / "traffic.jsonl", GOOD, mode="w")
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGTERM))
    timer.start()
    try:
        result = runner.invoke(
            app,
            [
                "monitor",
                str(tmp_path / "traffic.jsonl"),
                "-m",
                "faithfulness",
                "--window",
                "8",
                "--state",
                str(tmp_path / "state"),
                "--interval",
                "0.2",
            ],
        )
    finally:
        timer.cancel()
    assert result.exit_code == 0, result.output
    assert "window 1 (baseline)" in result.output and "stopped:" in result.output
    assert signal.getsignal(signal.SIGTERM) is not None  # the previous handler is back


POLITE = """
name = "polite"
kind = "discrete"
labels = ["polite", "rude"]

[instruction]
en = "Is the answer polite?"
"""


def test_a_prompt_metric_file_through_an_openai_compatible_judge(tmp_path, monkeypatch):
    from ragmeter.testing import FakeOpenAIServer

    metric = tmp_path / "polite.toml"
    metric.write_text(POLITE, encoding="utf-8")
    rows = [
        {"id": f"q{i}", "user_input": "Refund?", "response": f"{'Sure' if i < 4 else 'No'} {i}."}
        for i in range(8)
    ]
    write(tmp_path / "traffic.jsonl", rows, mode="w")

    def respond(body):
        text = body["messages"][-1]["content"]
        return json.dumps({"reason": "r", "label": "rude" if "No " in text else "polite"})

    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", "sk-x")
    with FakeOpenAIServer(responder=respond, api_key="sk-x") as server:
        result = runner.invoke(
            app,
            ["monitor", str(tmp_path / "traffic.jsonl"), "-m", str(metric), "--window", "4",
             "--state", str(tmp_path / "state"), "--once", "--no-cache",
             "--judge-model", "m", "--judge-base-url", server.base_url],
            env={"COLUMNS": "200"},
        )  # fmt: skip
    assert result.exit_code == 1, result.output
    # 1.0 in the baseline window, 0.0 in the next: 4 + 4 scores split in C(8, 4) = 70 ways,
    # 2 as far apart: p = 2 / 70 = 0.029.
    assert "polite 1.000" in result.output and "polite 0.000" in result.output
    assert "-1.000" in result.output and "p = 0.029" in result.output
    assert "ALERT window 2" in result.output


@pytest.mark.parametrize(
    "url", ["http://[::1", "http://tok3n@[::1/hook", "ftp://example.com/hook", "http://", "hook"]
)
def test_a_webhook_that_is_no_url_is_refused_at_start_with_exit_2(tmp_path, scripted, url):
    write(tmp_path / "traffic.jsonl", GOOD, mode="w")
    result = run(tmp_path, "--webhook", url)
    assert result.exit_code == 2, result.output
    assert "--webhook" in result.output and "Traceback" not in result.output
    assert "tok3n" not in result.output
    assert not (tmp_path / "state").exists()  # refused before anything was read


def test_a_window_the_judge_could_not_score_exits_3_and_is_scored_on_the_next_run(
    tmp_path, monkeypatch
):
    def down(messages, schema):
        raise JudgeTransientError("HTTP 503 from the judge")

    judges = [ScriptedJudge(down), judge()]
    monkeypatch.setattr(
        "ragmeter.cli._judging.JudgeOptions.build", lambda self, cache=None: judges.pop(0)
    )
    write(tmp_path / "traffic.jsonl", GOOD, mode="w")
    failed = run(tmp_path, "--no-store")
    assert failed.exit_code == 3, failed.output
    assert "0 of 8 sample(s) scored" in failed.output and "Traceback" not in failed.output
    scored = run(tmp_path, "--no-store")
    assert scored.exit_code == 0, scored.output
    assert "1 window(s) closed so far" in scored.output
