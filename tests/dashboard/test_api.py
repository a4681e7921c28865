"""The JSON API behind every page: its shapes, filters, sorting, trends and comparisons."""

from __future__ import annotations

import math

import pytest
from fastapi.testclient import TestClient

from ragmeter.dashboard import create_app
from ragmeter.gate import load_rules
from tests.dashboard.conftest import GATE

LOCAL = "http://127.0.0.1:8321"


@pytest.fixture
def api(several, tmp_path) -> TestClient:
    store, _ = several
    (tmp_path / "gate.toml").write_text(GATE, encoding="utf-8")
    rules = load_rules(tmp_path / "gate.toml")
    return TestClient(
        create_app(store, port=8321, gate=rules, gate_source="gate.toml"), base_url=LOCAL
    )


def test_runs_lists_every_run_newest_first_with_means_and_counts(api, several):
    _, ids = several
    body = api.get("/api/runs").json()
    assert body["total"] == 4
    assert [r["id"] for r in body["runs"]] == list(reversed(ids))
    run = body["runs"][-1]
    assert set(run) >= {"id", "name", "created_at", "status", "n_samples", "params", "tags"}
    assert run["name"] == "nightly" and run["params"] == {"shift": 0} and run["n_samples"] == 8
    flaky = run["metrics"]["flaky"]
    assert flaky["n_failed"] == 1 and flaky["n_not_applicable"] == 1 and flaky["n_ok"] == 6
    assert len(run["metrics"]) == 9


def test_runs_filter_by_name_tag_and_time_range(api, several):
    _, ids = several

    def found(**params: str) -> list[str]:
        return [r["id"] for r in api.get("/api/runs", params=params).json()["runs"]]

    assert found(name="experiment") == [ids[3]]
    assert found(tag="release") == [ids[2]]
    assert found(since="2026-11-02", until="2026-11-03") == [ids[2], ids[1]]
    assert found(since="2026-11-04T00:00:00+00:00") == [ids[3]]
    bad = api.get("/api/runs", params={"since": "last tuesday"})
    assert bad.status_code == 400 and "since" in bad.json()["error"]


def test_a_run_has_each_metric_with_its_confidence_interval(api, several):
    _, ids = several
    run = api.get(f"/api/runs/{ids[0][:8]}").json()
    assert run["id"] == ids[0]
    mrr = run["metrics"]["mrr"]
    assert mrr["ci_low"] <= mrr["mean"] <= mrr["ci_high"] and mrr["level"] == 0.95
    assert mrr["n"] == 8 and mrr["n_total"] == 8
    assert run["metrics"]["flaky"]["n"] == 6  # failed and n/a are not averaged in
    missing = api.get("/api/runs/nothing")
    assert missing.status_code == 404 and "error" in missing.json()


def test_samples_have_every_metric_with_status_and_failed_ones_have_no_score(api, several):
    _, ids = several
    body = api.get(f"/api/runs/{ids[0]}/samples").json()
    assert (body["total"], body["matched"], body["page"]) == (8, 8, 1)
    first = body["samples"][0]
    assert set(first) == {"index", "id", "question", "response", "reference", "tags", "scores"}
    assert first["tags"] == {"language": ["en"], "difficulty": ["easy"]}
    failed = body["samples"][1]["scores"]["flaky"]
    assert failed == {
        "status": "failed",
        "score": None,
        "reason": None,
        "error": "the judge timed out",
    }
    assert body["samples"][7]["scores"]["flaky"]["status"] == "not_applicable"
    assert body["samples"][7]["scores"]["flaky"]["score"] is None


def test_samples_filter_by_status_tag_and_text(api, several):
    _, ids = several
    url = f"/api/runs/{ids[1]}/samples"

    def found(**params: str) -> list[str]:
        response = api.get(url, params=params)
        assert response.status_code == 200, response.text
        return [s["id"] for s in response.json()["samples"]]

    assert found(status="failed", metric="flaky") == ["q1", "q3"]
    assert found(status="failed") == ["q1", "q3"]  # any metric
    assert found(status="n/a", metric="flaky") == ["q7"]
    assert found(status="ok", metric="flaky") == ["q0", "q2", "q4", "q5", "q6"]
    assert found(tag="language=zh") == ["q1", "q3", "q5", "q7"]
    assert found(tag="difficulty:hard", status="failed") == ["q1", "q3"]
    assert found(tag="easy") == ["q0", "q2", "q4", "q6"]
    assert found(q="hamlet") == ["q2"]
    assert found(q="首都") == ["q1"]
    assert found(q="nothing like this") == []


def test_samples_sort_by_a_metric_with_unscored_samples_last(api, several):
    _, ids = several
    url = f"/api/runs/{ids[1]}/samples"
    up = api.get(url, params={"sort": "flaky"}).json()["samples"]
    scores = [s["scores"]["flaky"]["score"] for s in up]
    assert scores[-3:] == [None, None, None]  # q1, q3 failed, q7 n/a
    assert scores[:5] == sorted(scores[:5])
    down = api.get(url, params={"sort": "flaky", "order": "desc"}).json()["samples"]
    scores = [s["scores"]["flaky"]["score"] for s in down]
    assert scores[:5] == sorted(scores[:5], reverse=True) and scores[0] > scores[4]
    assert {s["id"] for s in down[-3:]} == {"q1", "q3", "q7"}
    paged = api.get(url, params={"sort": "flaky", "per_page": 2, "page": 2}).json()
    assert [s["id"] for s in paged["samples"]] == [s["id"] for s in up[2:4]]


@pytest.mark.parametrize(
    "params",
    [{"sort": "nope"}, {"metric": "nope"}, {"status": "broken"}, {"order": "up"}, {"page": 0}],
)
def test_samples_refuse_a_query_they_cannot_answer(api, several, params):
    _, ids = several
    refused = api.get(f"/api/runs/{ids[0]}/samples", params=params)
    assert refused.status_code == 400
    assert next(iter(params)) in refused.json()["error"]


def test_one_sample_has_its_contexts_and_metric_details(api, several):
    _, ids = several
    sample = api.get(f"/api/runs/{ids[0]}/samples/1").json()
    assert sample["run"] == ids[0] and sample["id"] == "q1"
    assert sample["scores"]["flaky"]["status"] == "failed"
    assert sample["scores"]["flaky"]["score"] is None
    assert "retrieved_context_ids" in sample["sample"]
    assert api.get(f"/api/runs/{ids[0]}/samples/8").status_code == 404


def test_trends_give_each_run_a_mean_with_its_interval_and_the_thresholds(api, several):
    _, ids = several
    body = api.get("/api/trends", params={"name": "nightly"}).json()
    assert body["gate"] == "gate.toml" and body["runs"] == 3
    by_metric = {m["metric"]: m for m in body["metrics"]}
    assert len(by_metric) == 9
    flaky = by_metric["flaky"]
    assert [p["run"] for p in flaky["points"]] == ids[:3]  # oldest first
    for point in flaky["points"]:
        assert point["ci_low"] <= point["mean"] <= point["ci_high"]
        assert point["n"] < point["n_total"] == 8
    assert [(t["min"], t["max"], t["statistic"]) for t in flaky["thresholds"]] == [
        (0.4, None, "ci_low"),
        (None, 0.95, "mean"),
    ]
    assert by_metric["mrr"]["thresholds"][0]["min"] == 0.5
    assert by_metric["bleu"]["thresholds"] == []
    one = api.get("/api/trends", params={"metric": "mrr", "tag": "exp"}).json()
    assert [m["metric"] for m in one["metrics"]] == ["mrr"]
    assert [p["run"] for p in one["metrics"][0]["points"]] == [ids[3]]
    ranged = api.get("/api/trends", params={"metric": "mrr", "until": "2026-11-02"}).json()
    assert [p["run"] for p in ranged["metrics"][0]["points"]] == ids[:2]
    assert api.get("/api/trends", params={"metric": "nope"}).status_code == 400


def test_compare_gives_paired_deltas_with_intervals_and_p_values(api, several):
    _, ids = several
    body = api.get("/api/compare", params={"a": ids[0], "b": ids[2]}).json()
    assert body["baseline"]["id"] == ids[0] and body["candidate"]["id"] == ids[2]
    metrics = {m["metric"]: m for m in body["metrics"]}
    assert len(metrics) == 9
    mrr = metrics["mrr"]
    assert mrr["paired"] is True and mrr["n_pairs"] == 8
    assert math.isclose(mrr["difference"], mrr["candidate_mean"] - mrr["baseline_mean"])
    assert mrr["ci"]["low"] <= mrr["difference"] <= mrr["ci"]["high"]
    assert 0 <= mrr["p_value"] <= 1 and mrr["p_adjusted"] >= mrr["p_value"]
    assert mrr["change"] in {"better", "worse", "no significant change"} and mrr["verdict"]
    assert metrics["flaky"]["n_pairs"] == 6  # q1 failed in the baseline, q7 n/a in both


def test_compare_lists_the_samples_that_changed_most(api, several):
    _, ids = several
    changed = api.get("/api/compare", params={"a": ids[0], "b": ids[2]}).json()["changed"]
    assert changed
    first = changed[0]  # q1: failed in the baseline, scored in the candidate
    assert first["id"] == "q1" and first["metric"] == "flaky" and first["delta"] is None
    assert first["baseline"]["status"] == "failed" and first["baseline"]["score"] is None
    assert first["candidate"]["status"] == "ok"
    deltas = [abs(c["delta"]) for c in changed if c["delta"] is not None]
    assert deltas == sorted(deltas, reverse=True) and all(d > 0 for d in deltas)
    assert {"baseline_index", "candidate_index", "question"} <= set(first)
    assert api.get("/api/compare", params={"a": ids[0], "b": "nothing"}).status_code == 404
    assert api.get("/api/compare", params={"a": ids[0]}).status_code == 422


def test_the_api_needs_the_token_like_the_pages(several):
    store, ids = several
    client = TestClient(create_app(store, token="s3cret", port=8321), base_url=LOCAL)
    paths = [
        "/api/runs",
        f"/api/runs/{ids[0]}",
        f"/api/runs/{ids[0]}/samples",
        f"/api/runs/{ids[0]}/samples/0",
        "/api/trends",
        f"/api/compare?a={ids[0]}&b={ids[1]}",
    ]
    for path in paths:
        refused = client.get(path)
        assert refused.status_code == 401, path
        assert refused.json() == {"error": "token needed"}
        assert "nightly" not in refused.text
        allowed = client.get(path, headers={"Authorization": "Bearer s3cret"})
        assert allowed.status_code == 200, path
    assert client.get("/api/runs", headers={"host": "attacker.example"}).status_code == 421


def test_trends_read_no_sample_and_show_the_figures_the_samples_give(
    several, tmp_path, monkeypatch
):
    """The means and intervals a run keeps in the store are those computed from its samples
    (a run recorded without them, as before the store kept them): the trends are the same,
    and the first request reads one row per run, no sample (O(runs), not O(samples))."""
    import sqlalchemy as sa

    from ragmeter.store import Store

    store, _ = several
    (tmp_path / "gate.toml").write_text(GATE, encoding="utf-8")
    rules = load_rules(tmp_path / "gate.toml")

    def trends() -> dict:
        app = create_app(store, port=8321, gate=rules, gate_source="gate.toml")
        return TestClient(app, base_url=LOCAL).get("/api/trends").json()

    with store.engine.begin() as connection:
        kept = connection.execute(sa.text("SELECT id, estimates FROM runs")).all()
        assert kept and all(estimates is not None for _, estimates in kept)
        connection.execute(sa.text("UPDATE runs SET estimates = NULL"))
    from_samples = trends()
    with store.engine.begin() as connection:
        for run_id, estimates in kept:
            connection.execute(
                sa.text("UPDATE runs SET estimates = :e WHERE id = :id"),
                {"e": estimates, "id": run_id},
            )
    loaded: list[str] = []
    real_load = Store.load
    monkeypatch.setattr(Store, "load", lambda self, ref: loaded.append(ref) or real_load(self, ref))
    assert trends() == from_samples
    assert loaded == []
    assert sum(len(m["points"]) for m in from_samples["metrics"]) == 36  # 4 runs x 9 metrics


@pytest.mark.parametrize(
    ("path", "params", "named"),
    [
        ("/api/compare", {"a": "x"}, "b: required query parameter missing: add b=..."),
        ("/api/compare", {}, "a: required query parameter missing"),
        ("/api/runs", {"limit": "many"}, "limit: expected a whole number, got 'many'"),
        ("/api/runs/{run}/samples", {"page": "two"}, "page: expected a whole number, got 'two'"),
        ("/api/runs/{run}/samples/first", {}, "index: expected a whole number, got 'first'"),
    ],
)
def test_an_invalid_parameter_gets_the_documented_error_body(api, several, path, params, named):
    # The documented {"error": "..."} naming the parameter and the fix, never FastAPI's
    # {"detail": [...]}; a page gets the same message as a page.
    _, ids = several
    path = path.format(run=ids[0])
    answer = api.get(path, params=params)
    assert answer.status_code == 422
    assert answer.json() == {"error": answer.json()["error"]}
    assert named in answer.json()["error"]
    if "/samples" in path:  # the page twin (the compare page asks for two runs its own way)
        page = api.get(path.removeprefix("/api"), params=params)
        assert page.status_code == 422 and "text/html" in page.headers["content-type"]
        assert named.replace("'", "&#x27;") in page.text
