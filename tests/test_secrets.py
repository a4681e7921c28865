"""Secrets stay secret, end to end: the credentials inside a judge's or a store's URL, and the
keys in the environment, appear in no file a run leaves and in nothing the command prints; an
environment key is sent only to the endpoint it belongs to."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.testing import FakeOpenAIServer

runner = CliRunner()

#: Every credential the run is given; none may be written anywhere or printed.
SECRETS = ("s3cretpw", "s3cretkey", "s3cretdb", "s3cretq", "sk-s3cretenv", "s3cretfrag")
ROW = {
    "id": "q1",
    "user_input": "What is the capital of France?",
    "response": "Paris. It has 40 million people.",
    "retrieved_contexts": ["Paris is the capital of France."],
}


def responder(body: dict) -> dict:
    name = body["response_format"]["json_schema"]["name"]
    if name.startswith("ResponseAnalysis"):
        return {"claims": ["Paris is the capital of France.", "Paris has 40 million people."]}
    return {
        "support": [
            {"claim": 1, "passages": [1], "reason": "stated"},
            {"claim": 2, "passages": [], "reason": "not stated"},
        ]
    }


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def judge_url(server: FakeOpenAIServer) -> str:
    host = server.base_url.split("://", 1)[1]
    return (
        f"http://judgeuser:s3cretpw@{host}?api-key=s3cretkey&api-version=2024-06-01"
        "#sk-s3cretfrag"  # a key in the fragment, with no parameter name to be known by
    )


def assert_no_secret_in(text: str, where: str) -> None:
    for secret in SECRETS:
        for form in (text, text.replace("\n", "")):  # a wrapped line must not hide one
            assert secret not in form, f"{secret!r} in {where}"


def assert_no_secret_in_files(root: Path) -> list[Path]:
    files = [path for path in root.rglob("*") if path.is_file()]
    for path in files:
        assert_no_secret_in(path.read_bytes().decode("utf-8", "replace"), str(path))
    return files


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    return path


def evaluate(data: Path, tmp_path: Path, *extra: str, model: str = "m") -> object:
    return runner.invoke(
        app,
        [
            "eval",
            str(data),
            "-m",
            "faithfulness",
            "-o",
            str(tmp_path / "run"),
            "--judge-model",
            model,
            "--cache",
            str(tmp_path / "cache.db"),
            "--store",
            f"sqlite:///{tmp_path / 'runs.db'}",
            "--report",
            str(tmp_path / "report.html"),
            *extra,
        ],
        env={"COLUMNS": "80"},
    )


def test_no_file_of_a_run_and_nothing_printed_holds_a_credential(data, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", "sk-s3cretenv")
    with FakeOpenAIServer(responder=responder) as server:
        result = evaluate(data, tmp_path, "--judge-base-url", judge_url(server))
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 2  # the judge was reached through that URL
    assert_no_secret_in(result.output, "the output of ragmeter eval")
    files = assert_no_secret_in_files(tmp_path)
    names = {path.name for path in files}
    assert {"results.jsonl", "summary.json", "run.db", "report.html", "runs.db"} <= names
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    judge = summary["config"]["judges"]["faithfulness"]
    assert judge["base_url"].endswith("/v1?api-key=***&api-version=2024-06-01#***")
    assert judge["base_url"].startswith("http://127.0.0.1:")  # the user info is gone
    assert summary["config"]["invocation"]["judge"]["base_url_redacted"] is True
    assert "api-version=2024-06-01" in (tmp_path / "report.html").read_text(encoding="utf-8")

    # a store URL with a password, in the URL and in its query: errors never show them
    store = (
        f"postgresql://dbuser:s3cretdb@127.0.0.1:{closed_port()}/runs"
        "?sslmode=disable&password=s3cretq"
    )
    listed = runner.invoke(app, ["runs", "list", "--store", store], env={"COLUMNS": "80"})
    assert listed.exit_code != 0, listed.output
    assert "127.0.0.1" in listed.output
    assert_no_secret_in(listed.output, "the output of ragmeter runs list")


def test_a_store_that_cannot_be_reached_is_a_warning_without_its_password(capsys):
    from ragmeter import evaluate as evaluate_run
    from ragmeter.cli._app import record_run  # private: a store failing after the run

    rows = [{"retrieved_context_ids": ["a", "b"], "reference_context_ids": ["b"]}]
    result = evaluate_run(rows, ["mrr"], progress=False)
    store = f"postgresql://dbuser:s3cretdb@127.0.0.1:{closed_port()}/runs?password=s3cretq"
    assert record_run(result, store, name="x", tags=[], params={}) is None
    said = capsys.readouterr()
    assert "not recorded in the run store" in said.err
    assert_no_secret_in(said.out + said.err, "the warning")
    malformed = "postgres//dbuser:s3cretdb@127.0.0.1/runs"  # no "://": SQLAlchemy refuses it
    assert record_run(result, malformed, name="x", tags=[], params={}) is None
    said = capsys.readouterr()
    assert "cannot be read" in said.err
    assert_no_secret_in(said.out + said.err, "the warning")


def test_resuming_asks_again_for_the_base_url_whose_credentials_were_not_kept(
    data, tmp_path, monkeypatch
):
    with FakeOpenAIServer(responder=responder) as server:
        url = judge_url(server)
        assert evaluate(data, tmp_path, "--judge-base-url", url).exit_code == 0
        resumed = runner.invoke(
            app, ["eval", "--resume", str(tmp_path / "run"), "--no-store"], env={"COLUMNS": "80"}
        )
        assert resumed.exit_code == 2, resumed.output
        assert "--judge-base-url" in resumed.output
        assert_no_secret_in(resumed.output, "the output of the resume")
        again = runner.invoke(
            app,
            ["eval", "--resume", str(tmp_path / "run"), "--no-store", "--judge-base-url", url],
            env={"COLUMNS": "80"},
        )
        assert again.exit_code == 0, again.output
    assert_no_secret_in_files(tmp_path)


def judge_file(tmp_path: Path, server: FakeOpenAIServer, *lines: str) -> Path:
    path = tmp_path / "judge.toml"
    body = ['model = "m"', f'base_url = "{server.base_url}"', *lines]
    path.write_text("[judge]\n" + "\n".join(body) + "\n", encoding="utf-8")
    return path


def test_a_judge_config_file_gets_no_key_from_the_environment_unless_it_names_one(
    tmp_path, monkeypatch
):
    key = "sk-s3cretenv"
    for name in ("OPENAI_API_KEY", "RAGMETER_JUDGE_API_KEY", "MY_JUDGE_KEY"):
        monkeypatch.setenv(name, key)
    from tests.cli.test_judge_check import right  # answers judge check's questions right

    with FakeOpenAIServer(responder=right, api_key=key) as server:
        path = judge_file(tmp_path, server)
        refused = runner.invoke(app, ["judge", "check", "--judge-config", str(path)])
        assert refused.exit_code == 2, refused.output
        assert "no API key was sent" in refused.output
        assert server.requests and not any(r.authorized for r in server.requests)
        assert_no_secret_in(refused.output, "the output of judge check")

        server.reset_stats()
        path = judge_file(tmp_path, server, 'api_key_env = "MY_JUDGE_KEY"')
        checked = runner.invoke(app, ["judge", "check", "--judge-config", str(path)])
        assert checked.exit_code == 0, checked.output
        assert server.requests and all(r.authorized for r in server.requests)
        assert_no_secret_in(checked.output, "the output of judge check")


def test_the_openai_sdks_azure_variables_reach_the_deployment_and_the_key_stays_secret(
    data, tmp_path, monkeypatch, caplog
):
    # what LangChain's AzureChatOpenAI reads: AZURE_OPENAI_ENDPOINT / _API_KEY, OPENAI_API_VERSION
    key = "sk-s3cretenv"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name in ("MODEL", "BASE_URL", "API_KEY", "PROVIDER", "AZURE_ENDPOINT", "API_VERSION"):
        monkeypatch.delenv(f"RAGMETER_JUDGE_{name}", raising=False)
    with FakeOpenAIServer(
        responder=responder, api_key=key, dialect="azure", azure_deployments={"judge-dep"}
    ) as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.root_url)
        monkeypatch.setenv("AZURE_OPENAI_API_KEY", key)
        monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
        result = evaluate(data, tmp_path, "--judge-provider", "azure", model="judge-dep")
        assert result.exit_code == 0, result.output
        sent = server.requests
        assert sent and {r.path for r in sent} == {"/openai/deployments/judge-dep/chat/completions"}
        # the azure dialect answers 404 without ?api-version= and takes the key only in an
        # api-key header (a bearer token is refused): every request passed
        assert all(r.authorized for r in sent)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    judge = summary["config"]["judges"]["faithfulness"]
    assert judge["base_url"].endswith("/openai/deployments/judge-dep?api-version=2024-10-21")
    assert_no_secret_in(result.output, "the output of ragmeter eval")
    assert_no_secret_in(caplog.text, "the log")
    assert_no_secret_in_files(tmp_path)
    # the key goes only to the resource AZURE_OPENAI_ENDPOINT names, and errors never show it
    monkeypatch.setenv("RAGMETER_JUDGE_AZURE_ENDPOINT", "https://other.openai.azure.com")
    from ragmeter.judge import judge_config

    other = judge_config(provider="azure", model="judge-dep")
    assert other is not None and other.api_key is None
    monkeypatch.delenv("RAGMETER_JUDGE_AZURE_ENDPOINT")
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT")
    with pytest.raises(ValueError, match="AZURE_OPENAI_ENDPOINT") as refused:
        judge_config(provider="azure", model="judge-dep")
    assert_no_secret_in(str(refused.value), "the error")
