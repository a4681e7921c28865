"""A run its budget stopped, in the dashboard: its unstarted results are "not started", never
"failed", they can be filtered on, and the run is partial (not "failed" in either language)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ragmeter import EvaluationResult, MetricResult, Sample, Status
from ragmeter.dashboard import create_app
from ragmeter.metrics import Direction
from ragmeter.results import MetricInfo, SampleResult
from ragmeter.store import Store

LOCAL = "http://127.0.0.1:8321"


@pytest.fixture
def stopped(tmp_path: Path) -> tuple[TestClient, str]:
    not_started = MetricResult(None, Status.NOT_STARTED, reason="not started: max_cost")
    results = [MetricResult.ok(0.5), MetricResult.failed("judge down"), not_started]
    samples = [
        SampleResult(i, i + 1, f"s{i}", Sample(id=f"s{i}", user_input="q"), {"quality": r})
        for i, r in enumerate(results)
    ]
    run = EvaluationResult(samples, [MetricInfo("quality", Direction.HIGHER_IS_BETTER)], {})
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    info = store.record(run, name="stopped")
    assert info.status == "partial"
    return TestClient(create_app(store, port=8321), base_url=LOCAL), info.id


def test_the_api_counts_not_started_apart_and_filters_on_it(stopped):
    api, run_id = stopped
    listed = api.get("/api/runs").json()
    runs = listed["runs"] if isinstance(listed, dict) else listed
    quality = next(r for r in runs if r["id"] == run_id)["metrics"]["quality"]
    assert (quality["n_ok"], quality["n_failed"], quality["n_not_started"]) == (1, 1, 1)
    url = f"/api/runs/{run_id}/samples"
    found = api.get(url, params={"status": "not_started"}).json()["samples"]
    assert [s["id"] for s in found] == ["s2"]
    assert found[0]["scores"]["quality"]["status"] == "not_started"
    assert [s["id"] for s in api.get(url, params={"status": "failed"}).json()["samples"]] == ["s1"]


def test_the_samples_page_shows_not_started_in_both_languages(stopped):
    client, run_id = stopped
    page = client.get(f"/runs/{run_id}/samples").text
    assert 'class="status-not_started"' in page and "not started" in page
    zh = client.get(f"/runs/{run_id}/samples", headers={"Accept-Language": "zh-CN"}).text
    assert "未开始" in zh
