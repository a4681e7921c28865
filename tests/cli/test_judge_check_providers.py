"""``ragmeter judge check`` passes against every emulated provider dialect: OpenAI, an OpenAI
reasoning model, Azure OpenAI (v1 and dated deployments API) and any model through LiteLLM
(Anthropic's is in tests/judge/test_anthropic_judge.py)."""

import json
import os

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.judge import _endpoint as endpoint_module
from ragmeter.testing import FakeOpenAIServer
from tests.cli.test_judge_check import KEY, right

runner = CliRunner()


@pytest.fixture(autouse=True)
def _fresh_endpoint_knowledge(monkeypatch):
    monkeypatch.setattr(endpoint_module, "_CAPABILITIES", {})
    for name in list(os.environ):
        if name.startswith(("RAGMETER_JUDGE_", "OPENAI_", "AZURE_OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CHECK_KEY", KEY)


def check_with_file(tmp_path, settings):
    config = tmp_path / "judge.json"
    config.write_text(json.dumps({**settings, "api_key_env": "CHECK_KEY"}), "utf-8")
    return runner.invoke(
        app, ["judge", "check", "--judge-config", str(config)], env={"COLUMNS": "200"}
    )


def passed(result):
    last = result.output.strip().splitlines()[-1]
    return result.exit_code == 0 and last.startswith("PASS: the judge answered 5 of 5")


@pytest.mark.parametrize(
    ("server_settings", "judge_settings", "path"),
    [
        ({}, lambda s: {"model": "gpt-4o-mini", "base_url": s.base_url}, "/v1/chat/completions"),
        (
            {"dialect": "openai-reasoning", "reasoning_tokens": 8},
            lambda s: {"model": "o4-mini", "base_url": s.base_url},
            "/v1/chat/completions",
        ),
        (
            {"dialect": "azure", "azure_deployments": {"judge-dep"}},
            lambda s: {"azure_endpoint": s.root_url, "azure_deployment": "judge-dep"},
            "/openai/v1/chat/completions",
        ),
        (
            {"dialect": "azure", "azure_deployments": {"judge-dep"}},
            lambda s: {
                "azure_endpoint": s.root_url,
                "azure_deployment": "judge-dep",
                "api_version": "2024-10-21",
            },
            "/openai/deployments/judge-dep/chat/completions",
        ),
    ],
    ids=["openai", "openai-reasoning", "azure-v1", "azure-deployments"],
)
def test_judge_check_passes_on_each_dialect(tmp_path, server_settings, judge_settings, path):
    with FakeOpenAIServer(responder=right, api_key=KEY, **server_settings) as server:
        result = check_with_file(tmp_path, judge_settings(server))
        sent = [r for r in server.requests if r.path.startswith(path)]
    assert passed(result), result.output
    assert sent and all(r.authorized for r in sent)  # the dialect's own path and auth
    assert KEY not in result.output


def test_a_judge_answering_wrong_fails_on_a_dialect_too(tmp_path):
    def always_no(body):
        answer = right(body)
        return answer if "claims" in answer else {"verdict": 0}

    with FakeOpenAIServer(
        responder=always_no, api_key=KEY, dialect="azure", azure_deployments={"judge-dep"}
    ) as server:
        result = check_with_file(
            tmp_path, {"azure_endpoint": server.root_url, "azure_deployment": "judge-dep"}
        )
    assert result.exit_code == 1 and "FAIL" in result.output


def test_judge_check_passes_through_litellm():
    from ragmeter.judge import LiteLLMJudge, MemoryCache

    try:  # the judge imports LiteLLM the project's way: no network of its own
        LiteLLMJudge("openai/tiny", cache=MemoryCache())
    except ImportError:
        if os.environ.get("RAGMETER_REQUIRE_LITELLM") == "1":
            raise
        pytest.skip("LiteLLM is not installed (pip install 'ragmeter[litellm]')")
    with FakeOpenAIServer(responder=right, api_key=KEY) as server:
        args = ["judge", "check", "--judge-provider", "litellm", "--judge-model", "openai/tiny"]
        result = runner.invoke(
            app,
            [*args, "--judge-base-url", server.base_url],
            env={"COLUMNS": "200", "RAGMETER_JUDGE_API_KEY": KEY},
        )
        sent = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert passed(result), result.output
    assert len(sent) >= 5 and all(r.authorized for r in sent)
    assert KEY not in result.output
