"""log_to_wandb as an offline run (no network, no login), read back from the files W&B
wrote: the run log's summary, config, tags and artifacts, the table and the report."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from ragmeter.tracking import TrackingError, log_to_wandb
from tests._integrations import require
from tests.tracking.conftest import closed_port, private_trackers
from tests.tracking.runs import EXPECTED, MRR, RECORDS, small_run
from tests.tracking.wandb_files import read_run

wandb = require("wandb", "wandb")


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    root = tmp_path_factory.mktemp("wandb")
    with private_trackers(root):
        result = small_run()
        tracked = log_to_wandb(
            result,
            project="rag-evals",
            mode="offline",
            dir=root,
            run_name="baseline",
            params={"top_k": 5},
            tags=["nightly"],
        )
        yield tracked, read_run(root), result, root


def test_the_summary_holds_every_hand_computed_number(logged):
    _, run, _, _ = logged
    for name, expected in EXPECTED.items():  # W&B keeps the names as they are: recall@2
        assert run.summary[name] == pytest.approx(expected), name
    assert run.summary["mrr/ci_low"] < run.summary["mrr"] < run.summary["mrr/ci_high"]


def test_the_run_is_named_tagged_and_finished(logged):
    tracked, run, _, _ = logged
    assert (run.run_id, run.project, run.name) == (tracked.run_id, "rag-evals", "baseline")
    assert run.job_type == "evaluation" and run.tags == ["nightly"]
    assert run.exit_code == 0
    assert tracked.url is None  # offline: no page until `wandb sync`


def test_the_config_is_the_runs_settings_with_the_systems_params(logged):
    _, run, result, _ = logged
    config = run.config
    assert config["ragmeter"]["metrics"] == "mrr,recall@2,exploding"
    assert config["dataset"]["fingerprint"] == result.config["dataset"]["fingerprint"]
    assert config["metrics"]["recall@2"]["k"] == 2
    assert config["top_k"] == 5


def test_the_samples_table_has_each_samples_scores(logged):
    _, run, _, _ = logged
    table = run.table("samples")
    rows = [dict(zip(table["columns"], row)) for row in table["data"]]
    assert [r["id"] for r in rows] == [r["id"] for r in RECORDS]
    assert [r["mrr"] for r in rows] == pytest.approx(MRR)
    assert rows[0]["question"] == "question 0?"
    assert (rows[2]["exploding"], rows[2]["exploding/status"]) == (None, "failed")


def test_the_report_is_shown_and_the_files_are_an_artifact(logged):
    tracked, run, _, _ = logged
    (html,) = run.media("html")
    assert "ragmeter report" in html.read_text(encoding="utf-8")
    artifact = run.artifacts[f"ragmeter-{tracked.run_id}"]
    assert artifact["type"] == "ragmeter-evaluation"
    assert artifact["files"] == [
        "config.json",
        "report.html",
        "results.jsonl",
        "samples.table.json",
        "summary.json",
    ]


def test_a_run_that_cannot_start_is_a_tracking_error(trackers):
    trackers.setenv("WANDB_BASE_URL", f"http://127.0.0.1:{closed_port()}")
    with pytest.raises(TrackingError, match=r"W&B run did not start.*API key"):
        log_to_wandb(small_run(), project="rag-evals", mode="online")


def test_a_missing_wandb_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)
    with pytest.raises(ImportError, match=r"pip install 'ragmeter\[wandb\]'"):
        log_to_wandb(small_run(), mode="offline")


def test_a_run_you_have_open_stays_yours(trackers, tmp_path):
    mine = wandb.init(project="training", mode="offline", dir=tmp_path / "mine")
    try:
        tracked = log_to_wandb(small_run(), project="rag-evals", mode="offline", dir=tmp_path)
        assert tracked.run_id != mine.id
        assert wandb.run is mine  # still the open run, not finished by ours
        mine.log({"loss": 0.5})
    finally:
        mine.finish()
    assert read_run(tmp_path).run_id == tracked.run_id


def test_the_settings_bound_the_waits_unless_the_environment_or_you_say_otherwise(trackers):
    def run_settings(overrides: dict[str, object] | None = None) -> Any:
        """The settings log_to_wandb starts its run with (wandb.init stopped there)."""
        given: list[object] = []

        def init(**arguments: object) -> None:
            given.append(arguments["settings"])
            raise RuntimeError("stopped at init")

        trackers.setattr(wandb, "init", init)
        with pytest.raises(TrackingError, match="stopped at init"):
            log_to_wandb(small_run(), mode="offline", settings=overrides)
        return given[0]

    settings = run_settings()
    assert (settings.init_timeout, settings.finish_timeout) == (60.0, 120.0)
    assert settings.finish_timeout_raises and settings.x_disable_meta
    trackers.setenv("WANDB_INIT_TIMEOUT", "5")  # left unset, for W&B to read at init
    assert "init_timeout" not in run_settings().model_fields_set
    assert run_settings({"x_disable_meta": False}).x_disable_meta is False


SECOND_RUN = """
import os, sys
from ragmeter.tracking import log_to_wandb
from tests.tracking.runs import small_run
result = small_run()
log_to_wandb(result, project="rag-evals", mode="offline", artifacts=False)
os.environ["WANDB_MODE"] = "offline"  # set after W&B read its variables, as a test would
print(log_to_wandb(result, project="rag-evals", artifacts=False).run_id)
"""


def test_wandb_mode_set_after_an_earlier_run_of_the_process_is_honoured(tmp_path):
    """W&B reads its variables once per process: $WANDB_MODE set after a first run was
    ignored (the second run went online and stopped: "No API key configured"). A fresh
    interpreter, since W&B's state is the process's."""
    import os
    import subprocess
    from pathlib import Path

    root = Path(__file__).parents[2]
    with private_trackers(tmp_path) as patch:
        patch.delenv("WANDB_MODE", raising=False)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
        done = subprocess.run(
            [sys.executable, "-c", SECOND_RUN],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip(), done.stdout
