"""log_to_mlflow against a real local MLflow store (SQLite, no server), read back with
MlflowClient: every number against the hand-computed ones, the settings, tags and files."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from ragmeter.tracking import TrackingError, log_to_mlflow
from tests._integrations import require
from tests.tracking.conftest import closed_port, private_trackers
from tests.tracking.runs import EXPECTED, RECORDS, small_run

mlflow = require("mlflow", "mlflow")

# Importing MLflow and creating its SQLite store take seconds; the run is logged once.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    root = tmp_path_factory.mktemp("mlflow")
    with private_trackers(root):
        uri = f"sqlite:///{root / 'mlflow.db'}"
        result = small_run()
        tracked = log_to_mlflow(
            result,
            tracking_uri=uri,
            experiment="rag-evals",
            run_name="baseline",
            params={"top_k": 5, "retriever": "bm25"},
            tags=["nightly"],
        )
        client = mlflow.MlflowClient(tracking_uri=uri)
        yield tracked, client, client.get_run(tracked.run_id), result, root


def test_every_metric_is_logged_with_the_hand_computed_value(logged):
    _, _, run, _, _ = logged
    metrics = run.data.metrics
    for name, expected in EXPECTED.items():
        assert metrics[name.replace("@", "_at_")] == pytest.approx(expected), name
    # MLflow names allow no "@": recall@2 is recall_at_2, as MLflow's own metrics are named
    assert "recall_at_2/ci_low" in metrics and not any("@" in k for k in metrics)
    assert metrics["mrr/ci_low"] < metrics["mrr"] < metrics["mrr/ci_high"]


def test_the_run_is_finished_in_its_experiment_under_its_name(logged):
    tracked, client, run, _, _ = logged
    experiment = client.get_experiment_by_name("rag-evals")
    assert experiment is not None  # created, since it did not exist
    assert run.info.experiment_id == experiment.experiment_id
    assert tracked.experiment == "rag-evals"
    assert run.info.status == "FINISHED"
    assert run.info.run_name == "baseline"
    assert tracked.url is None  # a local store has no web page


def test_the_settings_are_parameters(logged):
    _, _, run, result, _ = logged
    params = run.data.params
    assert params["ragmeter.metrics"] == "mrr,recall@2,exploding"
    assert params["ragmeter.version"] == result.config["ragmeter_version"]
    assert params["dataset.fingerprint"] == result.config["dataset"]["fingerprint"]
    assert params["dataset.n_samples"] == str(len(RECORDS))
    assert params["metrics.recall_at_2.k"] == "2"
    assert (params["top_k"], params["retriever"]) == ("5", "bm25")


def test_tags_and_the_summary_as_the_runs_description(logged):
    _, _, run, _, _ = logged
    tags = run.data.tags
    assert tags["nightly"] == "true"
    assert tags["ragmeter.kind"] == "evaluation"
    note = tags["mlflow.note.content"]
    assert "| `mrr` |" in note and "0.4583" in note  # the report's metric table


def test_the_dataset_is_the_runs_input(logged):
    _, _, run, result, _ = logged
    (dataset_input,) = run.inputs.dataset_inputs
    assert dataset_input.dataset.digest == result.config["dataset"]["fingerprint"]


def test_the_report_and_the_results_are_artifacts(logged, tmp_path):
    tracked, client, _, _, _ = logged
    names = {a.path for a in client.list_artifacts(tracked.run_id)}
    assert names == {"report.html", "results.jsonl", "summary.json", "config.json"}
    folder = Path(client.download_artifacts(tracked.run_id, "", str(tmp_path)))
    lines = (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == [r["id"] for r in RECORDS]
    assert "<html" in (folder / "report.html").read_text(encoding="utf-8")


def test_logging_into_your_own_run_leaves_it_running(logged):
    _, client, _, result, _ = logged
    experiment = client.get_experiment_by_name("rag-evals")
    mine = client.create_run(experiment.experiment_id, run_name="my-pipeline")
    tracked = log_to_mlflow(
        result, tracking_uri=client.tracking_uri, run_id=mine.info.run_id, artifacts=False
    )
    assert tracked.run_id == mine.info.run_id
    run = client.get_run(mine.info.run_id)
    assert run.info.status == "RUNNING"
    assert run.data.metrics["mrr"] == pytest.approx(EXPECTED["mrr"])
    assert not client.list_artifacts(mine.info.run_id)


def test_a_server_that_is_down_fails_in_bounded_time_without_the_password(trackers):
    uri = f"http://ci:s3cretpw@127.0.0.1:{closed_port()}"
    started = time.monotonic()
    with pytest.raises(TrackingError, match=r"not logged to MLflow at http://127\.0\.0\.1") as err:
        log_to_mlflow(small_run(), tracking_uri=uri)
    assert time.monotonic() - started < 60  # MLflow's defaults: about 4 minutes per request
    assert "s3cretpw" not in str(err.value) and "Connection refused" in str(err.value)


def test_mlflows_http_bounds_apply_only_where_the_environment_sets_none(monkeypatch):
    """While log_to_mlflow talks to MLflow, its HTTP timeout is ragmeter's bound (20 s) where
    the environment sets none; the user's own retries stay; afterwards all is as it was."""
    monkeypatch.delenv("MLFLOW_HTTP_REQUEST_TIMEOUT", raising=False)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "9")
    seen: list[tuple[str | None, str | None]] = []

    def client(**arguments: object) -> None:
        names = ("MLFLOW_HTTP_REQUEST_TIMEOUT", "MLFLOW_HTTP_REQUEST_MAX_RETRIES")
        seen.append(tuple(os.environ.get(name) for name in names))  # type: ignore[arg-type]
        raise ValueError("stopped at the client")

    monkeypatch.setattr(mlflow, "MlflowClient", client)
    with pytest.raises(TrackingError, match="stopped at the client"):
        log_to_mlflow(small_run(), tracking_uri="sqlite:///unused.db")
    assert seen == [("20", "9")]  # the bound; the user's own
    assert "MLFLOW_HTTP_REQUEST_TIMEOUT" not in os.environ  # put back as it was
    assert os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] == "9"


def test_a_missing_mlflow_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'ragmeter\[mlflow\]'"):
        log_to_mlflow(small_run(), tracking_uri="sqlite:///unused.db")
