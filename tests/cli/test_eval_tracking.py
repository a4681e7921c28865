"""``ragmeter eval --mlflow / --wandb``: the run logged to a local MLflow store and an offline
W&B run; a tracker that is down costs the exit code, never the run; one not installed stops
the command before the run; no credential reaches either tracker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter import EvaluationResult
from ragmeter.cli import app
from ragmeter.testing import FakeOpenAIServer
from tests._integrations import require
from tests.test_secrets import assert_no_secret_in, assert_no_secret_in_files, judge_url, responder
from tests.tracking.conftest import closed_port, private_trackers
from tests.tracking.wandb_files import read_run

mlflow = require("mlflow", "mlflow")
wandb = require("wandb", "wandb")

EXAMPLES = Path(__file__).parents[2] / "examples"
runner = CliRunner()


@pytest.fixture
def trackers(tmp_path):
    with private_trackers(tmp_path) as patch:
        yield patch


def eval_args(run_dir: Path, *extra: str) -> list[str]:
    data = str(EXAMPLES / "retrieval.jsonl")
    return ["eval", data, "-m", "mrr,recall@5", "-o", str(run_dir), "-q", *extra]


@pytest.mark.slow
def test_eval_logs_the_run_to_mlflow_and_wandb(trackers, tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    trackers.setenv("MLFLOW_TRACKING_URI", uri)  # what --mlflow alone logs to
    trackers.setenv("WANDB_MODE", "offline")
    trackers.setenv("WANDB_PROJECT", "rag-evals")
    run_dir = tmp_path / "run"
    args = ["--mlflow", "--mlflow-experiment", "nightly", "--wandb", "--name", "bm25-k5"]
    args += ["--tag", "nightly", "--param", "top_k=5"]
    result = runner.invoke(app, eval_args(run_dir, *args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "logged to MLflow: run " in result.output
    assert "logged to W&B: run " in result.output and "wandb sync" in result.output

    mean = EvaluationResult.load(run_dir).aggregates["mrr"].mean
    client = mlflow.MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("nightly")
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.info.run_name == "bm25-k5" and run.info.status == "FINISHED"
    assert run.data.metrics["mrr"] == pytest.approx(mean)
    assert "recall_at_5/ci_high" in run.data.metrics
    assert run.data.params["top_k"] == "5" and run.data.tags["nightly"] == "true"

    logged = read_run(tmp_path / "wandb_dir")
    assert (logged.project, logged.name, logged.tags) == ("rag-evals", "bm25-k5", ["nightly"])
    assert logged.summary["mrr"] == pytest.approx(mean)
    assert logged.config["top_k"] == 5


@pytest.mark.slow
def test_a_tracker_that_is_down_keeps_the_run_and_exits_4(trackers, tmp_path):
    run_dir = tmp_path / "run"
    uri = f"http://127.0.0.1:{closed_port()}"
    result = runner.invoke(app, eval_args(run_dir, "--mlflow-uri", uri), env={"COLUMNS": "200"})
    assert result.exit_code == 4, result.output
    assert f"error: the run was not logged to MLflow at {uri}" in result.output
    assert "recorded as run" in result.output  # the run store has it
    last = result.output.strip().splitlines()[-1]
    assert last == (
        "exit 4: the run was not logged to MLflow (its results are in the run directory)"
    )
    assert len(EvaluationResult.load(run_dir)) == 12  # every sample kept


def test_a_tracker_not_installed_stops_the_command_before_the_run(trackers, tmp_path):
    trackers.setitem(sys.modules, "wandb", None)  # as if not installed
    run_dir = tmp_path / "run"
    result = runner.invoke(app, eval_args(run_dir, "--wandb-project", "p"))
    assert result.exit_code == 2, result.output
    assert "pip install 'ragmeter[wandb]'" in result.output
    assert not run_dir.exists()


@pytest.mark.slow
def test_no_credential_reaches_mlflow_or_wandb(tmp_path):
    """A judge URL with a password and key, and a key in the environment, on the command line
    of a real process (W&B records a process's command line unless told not to)."""
    data = tmp_path / "one.jsonl"
    row = {
        "id": "q1",
        "user_input": "What is the capital of France?",
        "response": "Paris. It has 40 million people.",
        "retrieved_contexts": ["Paris is the capital of France."],
    }
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WANDB_", "MLFLOW_"))}
    env |= {name: str(tmp_path / name.lower()) for name in ("WANDB_DIR", "WANDB_CACHE_DIR")}
    env |= {name: str(tmp_path / name.lower()) for name in ("WANDB_CONFIG_DIR", "WANDB_DATA_DIR")}
    env |= {"WANDB_MODE": "offline", "RAGMETER_JUDGE_API_KEY": "sk-s3cretenv", "COLUMNS": "80"}
    env |= {"RAGMETER_STORE_URL": f"sqlite:///{tmp_path / 'runs.db'}"}
    with FakeOpenAIServer(responder=responder) as server:
        command = [sys.executable, "-m", "ragmeter", "eval", str(data), "-m", "faithfulness"]
        command += ["-o", str(tmp_path / "run"), "--judge-model", "m", "--no-cache"]
        command += ["--judge-base-url", judge_url(server), "--wandb", "--mlflow-uri"]
        command += [f"sqlite:///{tmp_path / 'mlflow.db'}"]
        done = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
        )
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "logged to MLflow" in said and "logged to W&B" in said
    assert_no_secret_in(said, "the output")
    files = {p.name for p in assert_no_secret_in_files(tmp_path) if p.name != "one.jsonl"}
    assert {"mlflow.db", "report.html", "results.jsonl"} <= files  # MLflow's store, artifacts
    logged = read_run(tmp_path / "wandb_dir", wait_s=0)  # complete when the process ended
    judge = logged.config["judge"]
    assert judge["base_url"].startswith("http://127.0.0.1:") and "***" in judge["base_url"]
    assert logged.summary["judge/calls"] == 2
