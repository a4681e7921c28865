"""Provider presets, Azure OpenAI and reasoning-model settings in the judge and embeddings
configs; a judge endpoint without a model fails at once; secrets stay out of every record."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from pydantic import SecretStr, ValidationError

from ragmeter.embed import EmbeddingsConfig
from ragmeter.judge import PROVIDERS, JudgeConfig, PriceTable
from ragmeter.judge import _config as config_module

SECRET = "sk-provider-secret-0123456789"


@pytest.mark.parametrize(
    ("provider", "base_url", "mode"),
    [
        ("openai", "https://api.openai.com/v1", "json_schema"),
        ("gemini", "https://generativelanguage.googleapis.com/v1beta/openai", "json_schema"),
        ("openrouter", "https://openrouter.ai/api/v1", "json_object"),
        ("deepseek", "https://api.deepseek.com/v1", "json_object"),
        ("qwen", "https://dashscope.aliyuncs.com/compatible-mode/v1", "json_object"),
        ("moonshot", "https://api.moonshot.cn/v1", "json_object"),
        ("zhipu", "https://open.bigmodel.cn/api/paas/v4", "json_object"),
        ("siliconflow", "https://api.siliconflow.cn/v1", "json_object"),
        ("volcengine", "https://ark.cn-beijing.volces.com/api/v3", "json_object"),
        ("qianfan", "https://qianfan.baidubce.com/v2", "json_object"),
    ],
)
def test_each_preset_resolves_to_its_api_root_and_structured_output_mode(
    provider: str, base_url: str, mode: str
) -> None:
    assert PROVIDERS[provider] == (base_url, mode)
    config = JudgeConfig.for_provider(provider, "some-model", api_key=SECRET)
    assert (config.base_url, config.structured_output, config.provider) == (
        base_url,
        mode,
        provider,
    )
    assert config.describe()["provider"] == provider
    direct = JudgeConfig(provider=provider, model="some-model")  # the same, made directly
    assert (direct.base_url, direct.structured_output) == (base_url, mode)


def test_a_preset_from_the_environment_and_an_unknown_one() -> None:
    env = {"RAGMETER_JUDGE_PROVIDER": "gemini", "RAGMETER_JUDGE_MODEL": "gemini-2.5-flash"}
    config = JudgeConfig.from_env(env)
    assert config is not None and "generativelanguage.googleapis.com" in config.base_url
    with pytest.raises(ValueError, match=r"unknown provider 'nope'.*qianfan.*azure"):
        JudgeConfig.for_provider("nope", "m")


# -- Azure OpenAI ------------------------------------------------------------------------------
def test_azure_deployments_api_url_and_v1_api_url() -> None:
    dated = JudgeConfig(
        azure_endpoint="https://res.openai.azure.com/",
        azure_deployment="gpt4o-judge",
        api_version="2024-10-21",
        model="gpt-4o",
    )
    assert dated.base_url == (
        "https://res.openai.azure.com/openai/deployments/gpt4o-judge?api-version=2024-10-21"
    )
    assert dated.request_model == "gpt-4o"  # the dated API routes by the URL
    v1 = JudgeConfig(azure_endpoint="https://res.openai.azure.com", azure_deployment="gpt4o-judge")  # type: ignore[call-arg]  # model: the Azure deployment
    assert v1.base_url == "https://res.openai.azure.com/openai/v1"
    assert v1.model == v1.request_model == "gpt4o-judge"  # v1 routes by the deployment
    copied = JudgeConfig(azure_endpoint="https://res.openai.azure.com/openai/v1/", model="d")
    assert copied.base_url == "https://res.openai.azure.com/openai/v1"


def test_azure_identity_holds_the_deployment() -> None:
    def config(deployment: str) -> JudgeConfig:
        return JudgeConfig(
            azure_endpoint="https://res.openai.azure.com",
            azure_deployment=deployment,
            model="gpt-4o",
        )

    assert config("judge-a").identity != config("judge-b").identity
    assert "judge-a" in config("judge-a").identity


def test_azure_needs_a_deployment_and_not_also_a_base_url() -> None:
    with pytest.raises(ValidationError, match="azure_deployment"):
        JudgeConfig(azure_endpoint="https://res.openai.azure.com")  # type: ignore[call-arg]  # model: the Azure deployment
    with pytest.raises(ValidationError, match="not both"):
        JudgeConfig(  # type: ignore[call-arg]  # model: the Azure deployment
            azure_endpoint="https://res.openai.azure.com",
            azure_deployment="d",
            base_url="https://api.openai.com/v1",
        )


def test_azure_from_the_environment_and_which_key_it_gets() -> None:
    env = {
        "RAGMETER_JUDGE_AZURE_ENDPOINT": "https://res.openai.azure.com",
        "RAGMETER_JUDGE_AZURE_DEPLOYMENT": "judge",
        "RAGMETER_JUDGE_API_VERSION": "2024-10-21",
        "OPENAI_BASE_URL": "https://proxy.example/v1",  # another tool's: not the judge's
        "OPENAI_API_KEY": "sk-openai-key-000",
        "AZURE_OPENAI_API_KEY": SECRET,
        "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com/",
    }
    config = JudgeConfig.from_env(env)
    assert config is not None
    assert config.base_url.startswith("https://res.openai.azure.com/openai/deployments/judge")
    assert config.api_key is not None and config.api_key.get_secret_value() == SECRET
    elsewhere = {**env, "AZURE_OPENAI_ENDPOINT": "https://other.openai.azure.com"}
    assert JudgeConfig.from_env(elsewhere).api_key is None  # type: ignore[union-attr]
    own = {**env, "RAGMETER_JUDGE_API_KEY": "own-key-0123"}
    assert JudgeConfig.from_env(own).api_key.get_secret_value() == "own-key-0123"  # type: ignore[union-attr]


def test_azure_embeddings_from_the_environment() -> None:
    env = {
        "RAGMETER_EMBEDDINGS_AZURE_ENDPOINT": "https://res.openai.azure.com",
        "RAGMETER_EMBEDDINGS_AZURE_DEPLOYMENT": "embed-3-small",
        "RAGMETER_EMBEDDINGS_API_VERSION": "2024-10-21",
        "RAGMETER_EMBEDDINGS_API_KEY": SECRET,
    }
    config = EmbeddingsConfig.from_env(env)
    assert config is not None and config.model == "embed-3-small"
    assert config.base_url == (
        "https://res.openai.azure.com/openai/deployments/embed-3-small?api-version=2024-10-21"
    )


# -- reasoning models --------------------------------------------------------------------------
def test_reasoning_models_by_name_get_their_parameters() -> None:
    config = JudgeConfig(model="o3-mini", reasoning_effort="high")
    assert config.request_params() == {
        "max_completion_tokens": 4096,
        "seed": 42,
        "reasoning_effort": "high",
    }
    assert config.generation_params() == {
        "temperature": None,
        "seed": 42,
        "max_completion_tokens": 4096,
        "logprobs": False,
        "extra_body": {},
        "reasoning_effort": "high",
    }
    assert JudgeConfig(model="openai/gpt-5", max_tokens=800).token_budget == 800  # set: kept


def test_other_models_keep_the_parameters_and_cache_keys_they_always_had() -> None:
    config = JudgeConfig(model="gpt-4o-mini")
    assert config.generation_params() == {
        "temperature": 0.0,
        "seed": 42,
        "max_tokens": 1024,
        "logprobs": False,
        "extra_body": {},
    }
    assert "reasoning_effort" not in config.request_params()


def test_reasoning_effort_from_the_environment() -> None:
    env = {"RAGMETER_JUDGE_MODEL": "o4-mini", "RAGMETER_JUDGE_REASONING_EFFORT": "low"}
    config = JudgeConfig.from_env(env)
    assert config is not None and config.reasoning_effort == "low"


def test_reasoning_model_prices() -> None:
    table = PriceTable()
    assert table.price_of("o3-pro-2025-06-10") != table.price_of("o3")  # the longest prefix
    assert table.price_of("openai/o4-mini") == table.price_of("o4-mini") is not None
    assert table.price_of("google/gemini-2.5-flash") == table.price_of("gemini-2.5-flash")


# -- a judge endpoint without a model fails at once ------------------------------------------------
@pytest.mark.parametrize(
    "env",
    [
        {"OPENAI_BASE_URL": "https://gateway.example/v1"},
        {"OPENAI_BASE_URL": "https://gateway.example/v1", "OPENAI_API_KEY": SECRET},
        {"RAGMETER_JUDGE_AZURE_ENDPOINT": "https://res.openai.azure.com"},
    ],
)
def test_an_endpoint_without_a_model_is_an_error_naming_the_variable(env: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="RAGMETER_JUDGE_MODEL") as raised:
        JudgeConfig.from_env(env)
    assert SECRET not in str(raised.value) and "gateway.example" not in str(raised.value)


def test_openai_api_key_alone_keeps_the_embedded_judge_with_a_notice(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(config_module, "_NOTICED", set())
    with caplog.at_level(logging.WARNING, logger="ragmeter.judge"):
        assert JudgeConfig.from_env({"OPENAI_API_KEY": SECRET}) is None
        assert JudgeConfig.from_env({"OPENAI_API_KEY": SECRET}) is None
    notices = [r.getMessage() for r in caplog.records if "RAGMETER_JUDGE_MODEL" in r.getMessage()]
    assert len(notices) == 1 and SECRET not in notices[0]
    caplog.clear()
    assert JudgeConfig.from_env({}) is None
    assert not caplog.records


# -- network settings and secrets ------------------------------------------------------------------
NETWORK: dict[str, Any] = {
    "proxy": "http://proxyuser:pr0xy-pass@proxy.example:3128",
    "extra_headers": {"X-Gateway-Token": "hdr-s3cret-value", "X-Tenant": "tenant-s3cret"},
    "extra_query": {"subscription": "qry-s3cret-value"},
}


@pytest.mark.parametrize("config_type", [JudgeConfig, EmbeddingsConfig])
def test_header_and_query_values_and_proxy_credentials_are_never_shown(config_type: type) -> None:
    config = config_type(model="m", api_key=SECRET, **NETWORK)
    described = config.describe()
    assert described["extra_headers"] == ["X-Gateway-Token", "X-Tenant"]
    assert described["extra_query"] == ["subscription"]
    assert described["proxy"] == "http://proxy.example:3128"
    for text in (json.dumps(described), repr(config), str(config), config.identity):
        for secret in (SECRET, "s3cret", "pr0xy-pass", "proxyuser"):
            assert secret not in text
    assert config.extra_headers["X-Tenant"].get_secret_value() == "tenant-s3cret"  # still sent


def test_network_settings_from_the_environment() -> None:
    env = {
        "RAGMETER_JUDGE_MODEL": "m",
        "RAGMETER_JUDGE_PROXY": "http://proxy.example:3128",
        "RAGMETER_JUDGE_TRUST_ENV": "true",
        "RAGMETER_JUDGE_EXTRA_HEADERS": json.dumps({"X-Tenant": "t-0123"}),
        "RAGMETER_JUDGE_EXTRA_QUERY": json.dumps({"ak": "q-0123"}),
    }
    config = JudgeConfig.from_env(env)
    assert config is not None and config.trust_env and config.proxy == "http://proxy.example:3128"
    assert config.extra_headers["X-Tenant"].get_secret_value() == "t-0123"
    assert config.extra_query["ak"].get_secret_value() == "q-0123"
    broken = {**env, "RAGMETER_JUDGE_EXTRA_HEADERS": "X-Tenant: hdr-s3cret"}
    with pytest.raises(ValueError, match="must be a JSON object") as raised:
        JudgeConfig.from_env(broken)
    assert "s3cret" not in str(raised.value)


def test_network_settings_that_cannot_work_are_refused_when_the_config_is_made(tmp_path) -> None:
    with pytest.raises(ValidationError, match="proxy must be a URL") as raised:
        JudgeConfig(model="m", proxy="ftp://user:pw-s3cret@proxy")
    assert "pw-s3cret" not in str(raised.value)
    with pytest.raises(ValidationError, match="not a file"):
        JudgeConfig(model="m", ca_bundle=str(tmp_path / "missing.pem"))
    with pytest.raises(ValidationError, match="not a valid header name"):
        JudgeConfig(model="m", extra_headers={"Bad Header": SecretStr("v")})
    with pytest.raises(ValidationError, match="line break"):
        EmbeddingsConfig(model="m", extra_headers={"X-A": SecretStr("v\r\nInjected: 1")})


def test_a_config_file_with_azure_and_network_settings(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AZ_KEY", SECRET)
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n", encoding="utf-8")
    path = tmp_path / "judge.toml"
    path.write_text(
        "[judge]\n"
        'azure_endpoint = "https://res.openai.azure.com"\n'
        'azure_deployment = "o4-mini"\n'
        'reasoning_effort = "medium"\n'
        'api_key_env = "AZ_KEY"\n'
        'proxy = "http://proxy.example:3128"\n'
        f'ca_bundle = "{bundle.as_posix()}"\n'
        "[judge.extra_headers]\n"
        'X-Tenant = "tenant-s3cret"\n',
        encoding="utf-8",
    )
    config = JudgeConfig.from_file(path)
    assert config.base_url == "https://res.openai.azure.com/openai/v1"
    assert config.reasoning_model and config.api_key.get_secret_value() == SECRET  # type: ignore[union-attr]
    assert config.ca_bundle == str(bundle)
    assert "tenant-s3cret" not in json.dumps(config.describe())


# -- embeddings presets ------------------------------------------------------------------------
def test_embeddings_presets() -> None:
    qwen = EmbeddingsConfig.for_provider("qwen", "text-embedding-v3", api_key=SECRET)
    assert qwen.base_url == "https://dashscope.aliyuncs.com/compatible-mode/v1"
    assert qwen.batch_size == 10  # DashScope takes at most 10 texts a request
    gemini = EmbeddingsConfig.from_env(
        {
            "RAGMETER_EMBEDDINGS_PROVIDER": "gemini",
            "RAGMETER_EMBEDDINGS_MODEL": "gemini-embedding-001",
        }
    )
    assert gemini is not None
    assert gemini.base_url == "https://generativelanguage.googleapis.com/v1beta/openai"
    assert EmbeddingsConfig.for_provider("qwen", "v3", batch_size=4).batch_size == 4
    with pytest.raises(ValueError, match="unknown embeddings provider"):
        EmbeddingsConfig.for_provider("nope", "m")
    with pytest.raises(ValueError, match="RAGMETER_EMBEDDINGS_MODEL"):
        EmbeddingsConfig.from_env({"RAGMETER_EMBEDDINGS_PROVIDER": "qwen"})


def test_azure_from_the_openai_sdks_variables_with_provider_azure() -> None:
    from ragmeter.judge import judge_config

    sdk = {
        "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com/",
        "AZURE_OPENAI_API_KEY": SECRET,
        "OPENAI_API_VERSION": "2024-10-21",
    }
    config = judge_config(provider="azure", model="gpt4o-judge", env=sdk)
    assert isinstance(config, JudgeConfig)
    assert config.base_url == (
        "https://res.openai.azure.com/openai/deployments/gpt4o-judge?api-version=2024-10-21"
    )
    assert config.azure_deployment == "gpt4o-judge"  # the model names the deployment
    assert config.api_key is not None and config.api_key.get_secret_value() == SECRET
    # RAGMETER_JUDGE_PROVIDER works as the option does; without OPENAI_API_VERSION, the v1 API
    v1 = {k: v for k, v in sdk.items() if k != "OPENAI_API_VERSION"}
    config = judge_config(model="gpt4o-judge", env={**v1, "RAGMETER_JUDGE_PROVIDER": "azure"})
    assert isinstance(config, JudgeConfig) and config.base_url.endswith("/openai/v1")
    assert config.request_model == "gpt4o-judge"
    # ragmeter's own variables win
    own = {
        **sdk,
        "RAGMETER_JUDGE_AZURE_DEPLOYMENT": "other-dep",
        "RAGMETER_JUDGE_API_VERSION": "2025-01-01-preview",
        "RAGMETER_JUDGE_API_KEY": "own-key-0123",
    }
    config = judge_config(provider="azure", model="gpt-4o", env=own)
    assert isinstance(config, JudgeConfig) and config.model == "gpt-4o"
    assert config.base_url.endswith("/deployments/other-dep?api-version=2025-01-01-preview")
    assert config.api_key is not None and config.api_key.get_secret_value() == "own-key-0123"
    elsewhere = {**sdk, "RAGMETER_JUDGE_AZURE_ENDPOINT": "https://other.openai.azure.com"}
    config = judge_config(provider="azure", model="d", env=elsewhere)
    assert isinstance(config, JudgeConfig) and config.api_key is None  # not that resource's key
    assert config.base_url.startswith("https://other.openai.azure.com/openai/deployments/d?")
    # without provider azure, the SDK's variables do not send the judge to Azure
    assert judge_config(env=sdk) is None
    config = judge_config(model="gpt-4o-mini", env=sdk)
    assert isinstance(config, JudgeConfig) and config.azure_endpoint is None
    with pytest.raises(ValueError, match="AZURE_OPENAI_ENDPOINT") as raised:
        judge_config(provider="azure", model="d", env={"AZURE_OPENAI_API_KEY": SECRET})
    assert SECRET not in str(raised.value)


def test_azure_embeddings_from_the_openai_sdks_variables() -> None:
    env = {
        "RAGMETER_EMBEDDINGS_PROVIDER": "azure",
        "RAGMETER_EMBEDDINGS_MODEL": "embed-3-small",
        "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com",
        "AZURE_OPENAI_API_KEY": SECRET,
        "OPENAI_API_VERSION": "2024-10-21",
    }
    config = EmbeddingsConfig.from_env(env)
    assert config is not None and config.api_key is not None
    assert config.base_url == (
        "https://res.openai.azure.com/openai/deployments/embed-3-small?api-version=2024-10-21"
    )
