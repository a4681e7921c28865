"""The dashboard refuses requests for another host (DNS rebinding) and state-changing requests
from another origin (cross-site posts)."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from ragmeter.dashboard import create_app

LOCAL = "http://127.0.0.1:8321"


def with_post_endpoint(app: FastAPI) -> FastAPI:
    """The dashboard has no state-changing endpoint yet: one for the tests, behind the same
    middleware."""

    @app.post("/_test/change")
    @app.put("/_test/change")
    @app.patch("/_test/change")
    @app.delete("/_test/change")
    def change() -> dict[str, bool]:
        return {"changed": True}

    return app


@pytest.fixture
def local(populated) -> TestClient:
    store, _ = populated
    return TestClient(with_post_endpoint(create_app(store, port=8321)), base_url=LOCAL)


@pytest.mark.parametrize(
    "host",
    [
        "attacker.example",
        "attacker.example:8321",
        "ATTACKER.example:8321",
        "127.0.0.1.attacker.example:8321",
        "localhost.attacker.example",
        "127.0.0.1:8321@attacker.example",
        "127.0.0.1:9999",  # another port: not this dashboard
        "192.168.1.5:8321",
        "",
    ],
)
def test_a_request_for_another_host_is_refused(local, populated, host):
    _, (first, _) = populated
    for path in ("/", f"/runs/{first}", f"/runs/{first}/samples/0", "/health"):
        refused = local.get(path, headers={"host": host})
        assert refused.status_code == 421, (path, host)
        assert refused.headers["content-type"].startswith("text/plain")
        assert "baseline" not in refused.text and "AirPods" not in refused.text
    assert local.get("/health").status_code == 200


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1:8321", "localhost:8321", "LocalHost:8321", "[::1]:8321", "localhost", "127.0.0.1"],
)
def test_the_loopback_names_with_the_port_or_none_are_served(local, host):
    assert local.get("/", headers={"host": host}).status_code == 200
    assert local.get("/", headers={"host": "attacker.example"}).status_code == 421


def test_a_token_does_not_open_a_loopback_dashboard_to_other_hosts(populated):
    store, _ = populated
    client = TestClient(create_app(store, token="s3cret", port=8321), base_url=LOCAL)
    auth = {"Authorization": "Bearer s3cret"}
    assert client.get("/", headers=auth).status_code == 200
    assert client.get("/", headers={**auth, "host": "attacker.example:8321"}).status_code == 421
    assert client.get("/", headers={"host": "attacker.example:8321"}).status_code == 421


def test_a_wildcard_address_behind_a_token_answers_to_any_host(populated):
    store, _ = populated
    app = create_app(store, token="s3cret", host="0.0.0.0", port=8321)
    client = TestClient(app, base_url="http://dashboard.lan:8321")
    auth = {"Authorization": "Bearer s3cret"}
    assert client.get("/", headers=auth).status_code == 200
    assert client.get("/", headers={**auth, "host": "10.0.0.7:8321"}).status_code == 200
    assert client.get("/").status_code == 401  # the token is the protection
    # Without a token, a wildcard address answers to the loopback names only.
    open_app = TestClient(create_app(store, host="0.0.0.0", port=8321), base_url=LOCAL)
    assert open_app.get("/").status_code == 200
    assert open_app.get("/", headers={"host": "attacker.example:8321"}).status_code == 421


def test_allowed_hosts_are_the_only_other_names(populated):
    store, _ = populated
    app = create_app(
        store, token="s3cret", host="0.0.0.0", port=8321, allowed_hosts=["dash.example.com"]
    )
    client = TestClient(app, base_url="https://dash.example.com")
    auth = {"Authorization": "Bearer s3cret"}
    assert client.get("/", headers=auth).status_code == 200
    assert client.get("/", headers={**auth, "host": "dash.example.com:8321"}).status_code == 200
    assert client.get("/", headers={**auth, "host": "attacker.example"}).status_code == 421
    with pytest.raises(ValueError, match="not a host name"):
        create_app(store, allowed_hosts=["http://dash.example.com/"])


def test_a_specific_address_answers_to_itself(populated):
    store, _ = populated
    app = create_app(store, token="s3cret", host="192.168.1.5", port=8321)
    client = TestClient(app, base_url="http://192.168.1.5:8321")
    auth = {"Authorization": "Bearer s3cret"}
    assert client.get("/", headers=auth).status_code == 200
    assert client.get("/", headers={**auth, "host": "localhost:8321"}).status_code == 421
    assert client.get("/", headers={**auth, "host": "attacker.example"}).status_code == 421


STATE_CHANGING = ["POST", "PUT", "PATCH", "DELETE"]


@pytest.mark.parametrize("method", STATE_CHANGING)
@pytest.mark.parametrize(
    "origin",
    [
        "http://attacker.example",
        "http://attacker.example:8321",
        "https://127.0.0.1.attacker.example:8321",
        "http://127.0.0.1:9999",  # another local app
        "http://localhost",  # port 80, not 8321
        "null",  # a sandboxed page or a file
        "file://",
        "http://127.0.0.1:8321@attacker.example",
    ],
)
def test_a_state_changing_request_from_another_origin_is_refused(local, method, origin):
    refused = local.request(method, "/_test/change", headers={"origin": origin})
    assert refused.status_code == 403, (method, origin)
    assert refused.headers["content-type"].startswith("text/plain")
    assert "changed" not in refused.text
    same = local.request(method, "/_test/change", headers={"origin": LOCAL})
    assert same.status_code == 200 and same.json() == {"changed": True}


@pytest.mark.parametrize(
    "origin", [LOCAL, "http://localhost:8321", "http://[::1]:8321", "HTTP://LOCALHOST:8321"]
)
def test_a_state_changing_request_from_the_dashboard_itself_is_served(local, origin):
    assert local.post("/_test/change", headers={"origin": origin}).status_code == 200
    evil = local.post("/_test/change", headers={"origin": "http://attacker.example"})
    assert evil.status_code == 403


def test_the_referer_is_checked_when_there_is_no_origin(local):
    evil = local.post("/_test/change", headers={"referer": "http://attacker.example/page"})
    assert evil.status_code == 403
    own = local.post("/_test/change", headers={"referer": f"{LOCAL}/runs/abc?x=1"})
    assert own.status_code == 200
    # The Origin wins over the Referer when both are sent.
    both = {"origin": "http://attacker.example", "referer": f"{LOCAL}/"}
    assert local.post("/_test/change", headers=both).status_code == 403
    # Neither (curl, scripts): nothing to check, the Host check still applies.
    assert local.post("/_test/change").status_code == 200
    assert local.post("/_test/change", headers={"host": "attacker.example"}).status_code == 421


def test_reading_needs_no_origin_check_but_the_host_check_still_applies(local):
    assert local.get("/", headers={"origin": "http://attacker.example"}).status_code == 200
    bad_host = {"origin": "http://attacker.example", "host": "attacker.example"}
    assert local.get("/", headers=bad_host).status_code == 421


def test_behind_a_token_a_cross_origin_post_is_refused_even_with_the_token(populated):
    store, _ = populated
    app = with_post_endpoint(create_app(store, token="s3cret", host="0.0.0.0", port=8321))
    client = TestClient(app, base_url="http://dashboard.lan:8321")
    auth = {"Authorization": "Bearer s3cret"}
    same = {**auth, "origin": "http://dashboard.lan:8321"}
    assert client.post("/_test/change", headers=same).status_code == 200
    cross = {**auth, "origin": "http://attacker.example"}
    assert client.post("/_test/change", headers=cross).status_code == 403


def test_serve_passes_its_address_and_allowed_hosts_to_the_app(populated, monkeypatch, tmp_path):
    import uvicorn
    from typer.testing import CliRunner

    from ragmeter.cli import app as cli

    served: dict[str, object] = {}

    def fake_run(app: FastAPI, **options: object) -> None:
        served.update(options, app=app)

    monkeypatch.setattr(uvicorn, "run", fake_run)
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    result = CliRunner().invoke(
        cli, ["serve", "--port", "9123", "--allowed-host", "dash.lan", "--store", store]
    )
    assert result.exit_code == 0, result.output
    assert served["host"] == "127.0.0.1" and served["port"] == 9123
    client = TestClient(served["app"], base_url="http://127.0.0.1:9123")  # type: ignore[arg-type]
    assert client.get("/health").status_code == 200
    assert client.get("/health", headers={"host": "dash.lan:9123"}).status_code == 200
    assert client.get("/health", headers={"host": "127.0.0.1:8321"}).status_code == 421
    assert client.get("/health", headers={"host": "attacker.example"}).status_code == 421
    bad = CliRunner().invoke(cli, ["serve", "--allowed-host", "a/b", "--store", store])
    assert bad.exit_code != 0 and "--allowed-host" in bad.output
