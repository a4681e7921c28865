"""The dashboard's pages through FastAPI's test client."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from ragmeter.dashboard import create_app

#: Where the test client says it sends its requests: the address the dashboard listens on.
LOCAL = "http://127.0.0.1:8321"


@pytest.fixture
def client(populated):
    store, _ = populated
    return TestClient(create_app(store, port=8321), base_url=LOCAL)


def test_the_runs_list_shows_every_run_with_means_params_and_filters(client, populated):
    _, (first, second) = populated
    page = client.get("/")
    assert page.status_code == 200
    text = page.text
    assert text.index("reranked") < text.index("baseline")  # newest first
    assert f'href="/runs/{first}"' in text and "top_k=5" in text
    assert "faithfulness" in text and "context_precision" in text
    filtered = client.get("/", params={"tag": "new"}).text
    assert f'href="/runs/{second}"' in filtered and f'href="/runs/{first}"' not in filtered
    assert "<script" not in text and "http://" not in text and "https://" not in text


def test_a_run_page_is_its_report_with_the_record(client, populated):
    _, (first, _) = populated
    page = client.get(f"/runs/{first[:8]}")
    assert page.status_code == 200
    assert 'id="record"' in page.text and "top_k=5" in page.text
    assert "Summary" in page.text and "By tag" in page.text
    assert client.get("/runs/nothing").status_code == 404


def test_every_sample_has_a_page_with_its_claims_and_contexts(client, populated):
    _, (first, _) = populated
    listing = client.get(f"/runs/{first}/samples").text
    assert listing.count("sample-page-link") == 6
    page = client.get(f"/runs/{first}/samples/0")
    assert page.status_code == 200
    assert "AirPods Pro 2" in page.text  # the question
    assert "claims" in page.text.lower() and "contexts" in page.text
    assert "next →" in page.text and "← previous" not in page.text
    assert client.get(f"/runs/{first}/samples/6").status_code == 404


def test_comparing_two_ticked_runs_shows_the_change(client, populated):
    _, (first, second) = populated
    ticked = client.get(
        "/compare", params=[("run", first), ("run", second)], follow_redirects=False
    )
    assert ticked.status_code == 303
    assert ticked.headers["location"] == f"/compare?base={first}&candidate={second}"
    page = client.get(ticked.headers["location"])
    assert page.status_code == 200
    assert 'id="paired"' in page.text and 'id="paired-context_precision"' in page.text
    assert "top_k: 5 → 8" in page.text
    report = client.get(f"/compare/report?base={first}&candidate={second}")
    assert report.status_code == 200 and "Run vs baseline" in report.text
    assert "top_k: 5 → 8" in report.text and "context_precision" in report.text
    one = client.get("/compare", params=[("run", first)])
    assert one.status_code == 400 and "exactly two" in one.text


def test_a_token_protects_every_page(populated):
    store, _ = populated
    client = TestClient(create_app(store, token="s3cret-token"), base_url=LOCAL)
    assert client.get("/").status_code == 401
    assert client.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/", headers={"Authorization": "Bearer s3cret-token"}).status_code == 200
    first = client.get("/?token=s3cret-token")
    assert first.status_code == 200
    assert client.get("/health").status_code == 200  # the cookie carries it now


def test_remote_addresses_need_the_explicit_flag(monkeypatch, tmp_path):
    import uvicorn
    from typer.testing import CliRunner

    from ragmeter.cli import app

    served: list[str] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.append(options["host"]))
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    # Served without the flag, written any way the dashboard's own host check reads them.
    loopbacks = ["127.0.0.1", "::1", "LOCALHOST", "localhost."]
    for loopback in loopbacks:
        local = CliRunner().invoke(app, ["serve", "--host", loopback, "--store", store])
        assert local.exit_code == 0, local.output
    assert served == loopbacks
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "--allow-remote" in result.output


def test_runs_judged_by_different_models_compare_with_a_banner(tmp_path, client, populated):
    from ragmeter import evaluate
    from ragmeter.metrics.llm import Faithfulness
    from ragmeter.store import Store
    from ragmeter.testing import ScriptedJudge
    from tests.metrics.llm import scripts
    from tests.runner._fakes import samples

    _, (first, second) = populated
    same = client.get(f"/compare?base={first}&candidate={second}").text
    assert 'id="comparability"' not in same and "not comparable" not in same
    store = Store(f"sqlite:///{tmp_path / 'judges.db'}")
    runs = []
    for model in ("gpt-4o-mini", "deepseek-chat"):
        judge = ScriptedJudge(scripts.answer, name=model)
        result = evaluate(samples(4), [Faithfulness(judge=judge)], progress=False)
        runs.append(store.record(result, name=model).id)
    judges = TestClient(create_app(store, port=8321), base_url=LOCAL)
    page = judges.get(f"/compare?base={runs[0]}&candidate={runs[1]}")
    assert page.status_code == 200
    assert 'id="comparability"' in page.text
    change = "gpt-4o-mini @ scripted vs deepseek-chat @ scripted"
    assert f"faithfulness: judge differs: {change}" in page.text
    assert f"faithfulness: not comparable: judge changed ({change})" in page.text
