"""A prompt metric defined in a file, used by name of file in ``ragmeter eval``."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.results import EvaluationResult
from ragmeter.testing import FakeOpenAIServer

POLITE = """
name = "polite"
kind = "discrete"
labels = ["polite", "rude"]

[instruction]
en = "Is the answer polite?"
"""


def test_eval_takes_a_metric_file(tmp_path, monkeypatch):
    metric = tmp_path / "polite.toml"
    metric.write_text(POLITE, encoding="utf-8")
    data = tmp_path / "d.jsonl"
    rows = [
        {"id": f"q{i}", "user_input": "Refund?", "response": f"Yes {i}.",
         "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]}
        for i in range(3)
    ]  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    def respond(body):
        text = body["messages"][-1]["content"]
        return json.dumps({"reason": "r", "label": "rude" if "Yes 1" in text else "polite"})

    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", "sk-x")
    with FakeOpenAIServer(responder=respond, api_key="sk-x") as server:
        result = CliRunner().invoke(
            app,
            ["eval", str(data), "-m", f"{metric},mrr", "-o", str(tmp_path / "run"), "-q",
             "--judge-model", "m", "--judge-base-url", server.base_url, "--no-cache"],
            env={"COLUMNS": "200"},
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    run = EvaluationResult.load(tmp_path / "run")
    assert run.scores("polite") == [1.0, 0.0, 1.0]
    missing = CliRunner().invoke(app, ["eval", str(data), "-m", str(tmp_path / "nope.toml")])
    assert missing.exit_code == 2 and "no metric file" in missing.output
