"""Exit codes tell the truth: 0 all computed, 1 gate failed, 2 usage or judge configuration,
3 results failed above ``--max-failed-share``, 4 storage, 130 interrupted; and the last line
says which and why. Against the fake OpenAI-compatible server with injected faults."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter import EvaluationResult
from ragmeter.cli import ExitCode, app
from ragmeter.testing import FakeOpenAIServer, Fault
from ragmeter.testset import (
    GeneratedTestset,
    KnowledgeGraph,
    Node,
    SizeAccounting,
    SynthesizerAccount,
)

runner = CliRunner()
KEY = "sk-exit-codes-key"


def invoke(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def faithfulness_reply(body: dict[str, Any]) -> dict[str, Any]:
    """Two calls per sample: the claims of the answer, then their support (one of two)."""
    name = body["response_format"]["json_schema"]["name"]
    if name.startswith("ResponseAnalysis"):
        return {"claims": ["Paris is the capital of France.", "Paris has 40 million people."]}
    return {
        "support": [
            {"claim": 1, "passages": [1], "reason": "stated"},
            {"claim": 2, "passages": [], "reason": "not stated"},
        ]
    }


def write_samples(path: Path, n: int, **extra: Any) -> Path:
    rows = [
        {
            "id": f"q{i}",
            "user_input": f"What is the capital of France? ({i})",
            "response": f"Paris. It has 40 million people. ({i})",
            "reference": f"Paris. It has 40 million people. ({i})",
            "retrieved_contexts": [f"Paris is the capital of France. ({i})"],
            **extra,
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def judge_file(tmp_path: Path, base_url: str, *settings: str) -> Path:
    """A judge that gives up at the first failure (no retries), so faults fail at once;
    ``settings`` are more lines of its table."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "judge.toml"
    path.write_text(
        f'[judge]\nmodel = "m"\nbase_url = "{base_url}"\nmax_retries = 0\n'
        'api_key_env = "RAGMETER_JUDGE_API_KEY"\n' + "".join(f"{line}\n" for line in settings),
        encoding="utf-8",
    )
    return path


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", KEY)
    with FakeOpenAIServer(responder=faithfulness_reply, api_key=KEY) as fake:
        yield fake


def evaluate(
    tmp_path: Path,
    server: FakeOpenAIServer,
    *args: str,
    data: Path | None = None,
    settings: tuple[str, ...] = (),
):
    judge = judge_file(tmp_path, server.base_url, *settings)
    data = data or write_samples(tmp_path / "data.jsonl", 4)
    return invoke(
        "eval", str(data), "-m", "faithfulness,rouge_l", "-o", str(tmp_path / "run"),
        "--judge-config", str(judge), "--no-cache", "-q", *args,
    )  # fmt: skip


def last_line(output: str) -> str:
    return output.strip().splitlines()[-1]


# -- the policy and the line ---------------------------------------------------------------


def test_the_table_of_codes():
    assert [(c.name, int(c)) for c in ExitCode] == [
        ("OK", 0),
        ("GATE_FAILED", 1),
        ("USAGE", 2),
        ("RESULTS_FAILED", 3),
        ("IO_ERROR", 4),
        ("INTERRUPTED", 130),
    ]


def failing_first(n_failing: int):
    """A faithfulness judge whose every request for the samples numbered below
    ``n_failing`` fails (HTTP 500: the fake server's answer when its responder raises)."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        number = int(re.findall(r"\((\d+)\)", json.dumps(body["messages"]))[-1])
        if number < n_failing:
            raise RuntimeError("this sample's judge fails")
        return faithfulness_reply(body)

    return reply


def test_failure_policy_and_the_line_that_says_why(tmp_path, server, monkeypatch):
    """12 of 40 results fail: 20 samples, faithfulness failing for 12, rouge_l never (12
    failures in a row would stop the run as an endpoint that cannot answer: not here)."""
    server.responder = failing_first(12)
    data = write_samples(tmp_path / "data.jsonl", 20)
    failed = evaluate(tmp_path / "a", server, data=data, settings=("breaker_failures = 100",))
    assert failed.exit_code == ExitCode.RESULTS_FAILED, failed.output
    assert last_line(failed.output).startswith(
        "exit 3: 12 of 40 results failed (30%) > --max-failed-share 0"
    )
    within = evaluate(
        tmp_path / "b",
        server,
        "--max-failed-share",
        "0.3",
        data=data,
        settings=("breaker_failures = 100",),
    )
    assert within.exit_code == ExitCode.OK, within.output
    assert "12 of 40 results failed (30%), within --max-failed-share 0.3" in within.output
    server.responder = faithfulness_reply
    clean = evaluate(tmp_path / "c", server, data=data)  # no failure, no line about one
    assert clean.exit_code == ExitCode.OK and "results failed" not in clean.output, clean.output
    assert last_line(clean.output) == "exit 0: all 40 results computed"
    # every result failed, and accepted
    server.responder = failing_first(20)
    judge = judge_file(tmp_path / "d", server.base_url, "breaker_failures = 100")
    accepted = invoke(
        "eval", str(data), "-m", "faithfulness", "-o", str(tmp_path / "d" / "run"),
        "--judge-config", str(judge), "--no-cache", "-q", "--allow-failures",
    )  # fmt: skip
    assert accepted.exit_code == ExitCode.OK, accepted.output
    assert "20 of 20 results failed (100%)" in accepted.output
    # a share is never rounded to 0% or 100% when it is not: 1 and 399 of 400 judge steps
    for failed_steps, share in ((1, "(0.2%)"), (399, "(99.8%)")):
        result = generation(attempted=400, judge_errors=failed_steps)
        generated = generate_returning(tmp_path / str(failed_steps), server, result, monkeypatch)
        assert generated.exit_code == ExitCode.RESULTS_FAILED, generated.output
        assert f"{failed_steps} of 400 judge steps" in generated.output
        assert share in generated.output
    # several problems: the first of 2, 4, 3, 1 decides, the others are named after it
    gate = tmp_path / "gate.toml"
    gate.write_text('[[thresholds]]\nmetric = "rouge_l"\nmin = 1.1\n', encoding="utf-8")
    server.responder = failing_first(3)
    both = evaluate(tmp_path / "e", server, "--gate", str(gate))  # 4 samples, 3 failing
    assert both.exit_code == ExitCode.RESULTS_FAILED, both.output
    line = last_line(both.output)
    assert line.startswith("exit 3: 3 of 8 results failed (38%) > --max-failed-share 0")
    assert line.endswith(" (also: the gate failed)")


# -- eval ----------------------------------------------------------------------------------


def test_eval_where_every_judged_result_failed_exits_3_and_says_why(tmp_path, server):
    server.fault_rate(Fault.server_error(), 1.0)
    result = evaluate(tmp_path, server)
    assert result.exit_code == 3, result.output
    line = last_line(result.output)
    assert line.startswith("exit 3: 4 of 8 results failed (50%) > --max-failed-share 0")
    assert "HTTP 500" in line and f"ragmeter eval --resume {tmp_path / 'run'}" in line
    assert "Traceback" not in result.output
    saved = EvaluationResult.load(tmp_path / "run")  # what did compute is kept
    assert saved.scores("rouge_l") == [1.0] * 4


def test_allow_failures_and_max_failed_share_accept_failed_results(tmp_path, server):
    server.fault_rate(Fault.server_error(), 1.0)
    allowed = evaluate(tmp_path / "a", server, "--allow-failures")
    assert allowed.exit_code == 0, allowed.output
    assert last_line(allowed.output) == (
        "exit 0: 4 of 8 results computed; 4 of 8 results failed (50%), accepted with "
        "--allow-failures"
    )
    within = evaluate(tmp_path / "b", server, "--max-failed-share", "0.5")
    assert within.exit_code == 0, within.output
    above = evaluate(tmp_path / "c", server, "--max-failed-share", "0.49")
    assert above.exit_code == 3, above.output
    assert "> --max-failed-share 0.49" in last_line(above.output)
    bad = evaluate(tmp_path / "d", server, "--max-failed-share", "1.5")
    assert bad.exit_code == 2


def test_a_metric_that_does_not_apply_is_not_a_failure(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(
        '{"id": "a", "retrieved_context_ids": ["x"], "reference_context_ids": ["x"]}\n'
        '{"id": "b", "retrieved_context_ids": ["x"], "reference_context_ids": []}\n',
        encoding="utf-8",
    )
    result = invoke("eval", str(data), "-m", "mrr", "-o", str(tmp_path / "run"), "-q")
    assert result.exit_code == 0, result.output
    assert last_line(result.output) == "exit 0: all 2 results computed (1 n/a)"


def test_an_endpoint_that_does_not_answer_fails_the_results_not_the_usage(tmp_path, monkeypatch):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", KEY)
    data = write_samples(tmp_path / "data.jsonl", 2)
    result = invoke(
        "eval", str(data), "-m", "faithfulness", "-o", str(tmp_path / "run"), "-q",
        "--judge-config", str(judge_file(tmp_path, f"http://127.0.0.1:{port}/v1")),
        "--no-cache",
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert f"127.0.0.1:{port}" in last_line(result.output)


def test_a_key_rejected_mid_run_stops_it_with_exit_2_and_keeps_what_was_computed(tmp_path, server):
    calls = []

    def reply_then_revoke(body: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 4:  # two samples judged (two calls each), then the key is revoked
            server.api_key = "sk-revoked"
        return faithfulness_reply(body)

    server.responder = reply_then_revoke
    data = write_samples(tmp_path / "data.jsonl", 6)
    run = tmp_path / "run"
    result = evaluate(tmp_path, server, "--concurrency", "1", data=data)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert f"HTTP 401 from {server.base_url} (model 'm')" in errors[0]
    assert "RAGMETER_JUDGE_API_KEY" in errors[0] and KEY not in result.output
    assert last_line(result.output) == (
        f"exit 2: the judge refused its configuration, so the run stopped: 8 of 12 results "
        f"were computed and are kept in {run}; fix the judge settings, then run ragmeter eval "
        f"--resume {run}"
    )
    assert len(server.requests) == 5  # it stopped at the first refusal
    saved = EvaluationResult.load(run)
    assert saved.scores("faithfulness") == [0.5, 0.5, None, None, None, None]
    assert saved.scores("rouge_l") == [1.0] * 6

    server.api_key = KEY
    resumed = invoke("eval", "--resume", str(run), "-q", "--no-cache")
    assert resumed.exit_code == 0, resumed.output
    assert EvaluationResult.load(run).scores("faithfulness") == [0.5] * 6


def test_a_rejected_key_names_the_endpoint_without_its_credentials(tmp_path, server):
    where = server.base_url.replace("http://", "http://tester:pw-in-url@")
    data = write_samples(tmp_path / "data.jsonl", 3)
    result = invoke(
        "eval", str(data), "-m", "faithfulness", "-o", str(tmp_path / "run"), "-q",
        "--judge-model", "m", "--judge-base-url", where, "--no-cache", "--concurrency", "1",
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert f"HTTP 401 from {server.base_url}" in result.output
    assert "pw-in-url" not in result.output and "tester" not in result.output
    assert last_line(result.output).startswith("exit 2: the judge refused its configuration")


def test_the_gate_decides_when_every_result_was_computed(tmp_path, server):
    gate = tmp_path / "gate.toml"
    gate.write_text('[[thresholds]]\nmetric = "faithfulness"\nmin = 0.9\n', encoding="utf-8")
    failed = evaluate(tmp_path / "a", server, "--gate", str(gate))
    assert failed.exit_code == 1, failed.output
    assert last_line(failed.output) == "exit 1: the gate failed"
    gate.write_text('[[thresholds]]\nmetric = "faithfulness"\nmin = 0.4\n', encoding="utf-8")
    passed = evaluate(tmp_path / "b", server, "--gate", str(gate))
    assert passed.exit_code == 0, passed.output
    assert last_line(passed.output) == "exit 0: all 8 results computed; the gate passed"


def test_failed_results_outrank_the_gate(tmp_path, server):
    gate = tmp_path / "gate.toml"
    gate.write_text('[[thresholds]]\nmetric = "rouge_l"\nmin = 1.1\n', encoding="utf-8")
    server.fault_rate(Fault.server_error(), 1.0)
    result = evaluate(tmp_path, server, "--gate", str(gate))
    assert result.exit_code == 3, result.output
    assert last_line(result.output).endswith("(also: the gate failed)")


def test_accepted_failures_still_fail_the_gates_coverage_floor(tmp_path, server):
    """--allow-failures accepts the run; the gate still needs every gated result scored."""
    gate = tmp_path / "gate.toml"
    gate.write_text('[[thresholds]]\nmetric = "faithfulness"\nmin = 0.4\n', encoding="utf-8")
    server.fault_rate(Fault.server_error(), 1.0)
    short = evaluate(tmp_path / "a", server, "--gate", str(gate), "--allow-failures")
    assert short.exit_code == 3, short.output
    assert last_line(short.output).startswith(
        "exit 3: the gate failed: faithfulness: coverage 0/4 (0%) < 100% (4 results failed "
        "or missing): compute them again with ragmeter eval --resume RUN_DIR"
    )
    lowered = evaluate(
        tmp_path / "b", server, "--gate", str(gate), "--allow-failures", "--min-coverage", "0"
    )
    assert lowered.exit_code == 1, lowered.output  # no sample has a score: the rule fails
    assert last_line(lowered.output).startswith("exit 1: the gate failed")


# -- generate --------------------------------------------------------------------------------


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text(
        "# Orion\n\nOrion X2 was released by Vega Labs in March 2021.\n\n## Price\n\n"
        "Orion X2 costs 399 dollars at launch.\n",
        encoding="utf-8",
    )
    return folder


def generate(tmp_path: Path, server: FakeOpenAIServer, docs: Path, *args: str):
    return invoke(
        "generate", str(docs), "-n", "3", "-o", str(tmp_path / "t.jsonl"), "-q", "--no-cache",
        "--judge-config", str(judge_file(tmp_path, server.base_url)), *args,
    )  # fmt: skip


def test_generate_that_keeps_no_question_exits_3(tmp_path, server, docs, monkeypatch):
    monkeypatch.setenv("RAGMETER_EMBEDDINGS_MODEL", "e")
    monkeypatch.setenv("RAGMETER_EMBEDDINGS_BASE_URL", server.base_url)
    monkeypatch.setenv("RAGMETER_EMBEDDINGS_API_KEY", KEY)
    server.fault_rate(Fault.server_error(), 1.0)
    result = generate(tmp_path / "a", server, docs)
    assert result.exit_code == 3, result.output
    assert last_line(result.output).startswith("exit 3: kept no question of the 3 asked for")
    assert "HTTP 500" in result.output and "Traceback" not in result.output
    allowed = generate(tmp_path / "b", server, docs, "--allow-failures")
    assert allowed.exit_code == 1, allowed.output  # accepted failures; still fewer than asked


def generation(
    *, attempted: int, judge_errors: int, chunk_errors: tuple[str | None, ...] = ()
) -> GeneratedTestset:
    """A generation that kept no question, made ``attempted`` question attempts (
    ``judge_errors`` of them rejected for a judge error) and read one chunk per entry of
    ``chunk_errors`` (its error, or None)."""
    accounting = SizeAccounting(requested=4)
    accounting.synthesizers["single"] = SynthesizerAccount(attempted=attempted)
    accounting.synthesizers["single"].rejected.update({"judge error": judge_errors})
    nodes = {
        f"c{i}": Node(f"c{i}", "d", f"text {i}", "en", error=error)
        for i, error in enumerate(chunk_errors)
    }
    return GeneratedTestset([], accounting, KnowledgeGraph(nodes), [], {}, [], {})


def generate_returning(
    tmp_path: Path,
    server: FakeOpenAIServer,
    result: GeneratedTestset,
    monkeypatch: pytest.MonkeyPatch,
):
    """`ragmeter generate`, its generate_testset giving ``result``."""
    folder = tmp_path / "docs"
    folder.mkdir(parents=True)
    (folder / "a.md").write_text("# Orion\n\nOrion X2 costs 399 dollars.\n", encoding="utf-8")
    monkeypatch.setattr("ragmeter.testset.generate_testset", lambda *a, **k: result)
    return generate(tmp_path, server, folder)


def test_generate_counts_failed_judge_steps(tmp_path, server, monkeypatch):
    """Two chunks read (one failed) and 6 question attempts (2 rejected for a judge error,
    3 found wanting by it): 3 of its 8 judge steps failed."""
    result = generation(attempted=6, judge_errors=2, chunk_errors=(None, "JudgeError: x"))
    result.accounting.synthesizers["single"].rejected["not answerable"] = 3
    generated = generate_returning(tmp_path, server, result, monkeypatch)
    assert generated.exit_code == 3, generated.output
    assert "3 of 8 judge steps (chunk readings, question attempts) failed" in generated.output


# -- align ----------------------------------------------------------------------------------


def align(tmp_path: Path, server: FakeOpenAIServer, *args: str):
    judge = judge_file(tmp_path, server.base_url)
    data = write_samples(tmp_path / "labels.jsonl", 4, label=0.5)
    return invoke(
        "align", "faithfulness", str(data), "--kind", "numeric", "-q", "--no-cache",
        "--judge-config", str(judge), *args,
    )  # fmt: skip


def test_align_where_judgments_failed_exits_3(tmp_path, server):
    ok = align(tmp_path, server)
    assert ok.exit_code == 0, ok.output
    assert last_line(ok.output) == "exit 0: the report was made"
    # The first request of two of the four samples fails: their judgment fails.
    server.inject(Fault.server_error(), Fault.server_error())
    failed = align(tmp_path, server)
    assert failed.exit_code == 3, failed.output
    line = last_line(failed.output)
    assert line.startswith("exit 3: 2 of 4 judgments failed (50%) > --max-failed-share 0")
    assert "HTTP 500" in line
    server.inject(Fault.server_error(), Fault.server_error())
    assert align(tmp_path, server, "--allow-failures").exit_code == 0
    server.inject(Fault.server_error(), Fault.server_error())
    assert align(tmp_path, server, "--max-failed-share", "0.5").exit_code == 0


def test_align_where_every_judgment_failed_exits_3_and_a_rejected_key_2(tmp_path, server):
    server.fault_rate(Fault.server_error(), 1.0)
    failed = align(tmp_path, server)
    assert failed.exit_code == 3, failed.output
    assert last_line(failed.output).startswith("exit 3: every judgment failed")
    assert "HTTP 500" in failed.output and "Traceback" not in failed.output
    server.clear_faults()
    server.api_key = "sk-another"
    refused = align(tmp_path, server)
    assert refused.exit_code == 2, refused.output
    assert "HTTP 401" in refused.output and "RAGMETER_JUDGE_API_KEY" in refused.output
