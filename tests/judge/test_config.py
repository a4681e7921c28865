import json

import pytest

from ragmeter.judge import JudgeConfig, Price, PriceTable, Usage, UsageLedger, estimate_tokens

KEY = "sk-test-very-secret-0123456789"


def test_from_env_prefers_ragmeter_names_and_falls_back_to_openai():
    env = {
        "RAGMETER_JUDGE_MODEL": "deepseek-chat",
        "OPENAI_BASE_URL": "https://api.deepseek.com/v1",
        "OPENAI_API_KEY": KEY,
    }
    config = JudgeConfig.from_env(env)
    assert config.model == "deepseek-chat"
    assert config.base_url == "https://api.deepseek.com/v1"
    assert config.api_key.get_secret_value() == KEY


def test_from_env_without_a_model_means_the_embedded_judge():
    assert JudgeConfig.from_env({}) is None
    with pytest.raises(ValueError, match="RAGMETER_JUDGE_MODEL"):
        JudgeConfig.from_env({"RAGMETER_JUDGE_BASE_URL": "http://127.0.0.1:8080/v1"})


def test_the_embedded_judge_model_can_be_chosen_by_environment(monkeypatch):
    from ragmeter.judge import LocalJudge, MemoryCache, default_judge

    for name in ("RAGMETER_JUDGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAGMETER_LOCAL_MODEL", "qwen2.5-coder-1.5b-instruct-q4_k_m")
    judge = default_judge(cache=MemoryCache())  # the model loads on first use, not here
    assert isinstance(judge, LocalJudge)
    assert judge.model.name == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    monkeypatch.delenv("RAGMETER_LOCAL_MODEL")
    assert default_judge(cache=MemoryCache()).model.name == "qwen2.5-coder-0.5b-instruct-q4_k_m"


def test_from_file_reads_the_key_from_the_named_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_KEY", KEY)
    path = tmp_path / "ragmeter.toml"
    path.write_text(
        '[judge]\nmodel = "qwen-plus"\n'
        'base_url = "https://dashscope.aliyuncs.com/compatible-mode/v1"\n'
        'api_key_env = "MY_KEY"\nrequests_per_minute = 60\n',
        encoding="utf-8",
    )
    config = JudgeConfig.from_file(path)
    assert (config.model, config.requests_per_minute) == ("qwen-plus", 60)
    assert config.api_key.get_secret_value() == KEY


def test_the_key_never_appears_in_repr_or_records():
    config = JudgeConfig(model="m", api_key=KEY)
    assert KEY not in repr(config)
    assert KEY not in str(config)
    assert KEY not in json.dumps(config.describe())
    assert config.describe()["api_key_set"] is True


def test_deterministic_by_default():
    config = JudgeConfig(model="m")
    assert config.temperature == 0.0 and config.seed is not None


def test_price_table_defaults_prefixes_and_overrides():
    table = PriceTable({"my-model": Price(input_per_million=1, output_per_million=2)})
    assert table.price_of("gpt-4o-mini-2024-07-18") == table.price_of("gpt-4o-mini")
    assert table.price_of("my-model").cost(1_000_000, 500_000) == pytest.approx(2.0)
    assert table.price_of("unknown-model") is None


def test_ledger_adds_up_by_scope_and_sample():
    ledger = UsageLedger()
    ledger.record(Usage(calls=1, prompt_tokens=10, cost=0.5), scope="faithfulness", sample_id="a")
    ledger.record(Usage(calls=1, prompt_tokens=5, cost=0.25), scope="faithfulness", sample_id="b")
    ledger.record(Usage(cached_calls=1), scope="answer_relevancy", sample_id="a")
    assert ledger.total.calls == 2 and ledger.total.cached_calls == 1
    assert ledger.total.cost == pytest.approx(0.75)
    assert ledger.by_scope["faithfulness"].prompt_tokens == 15
    assert ledger.by_sample["a"].calls == 1 and ledger.by_sample["a"].cached_calls == 1


def test_the_embedded_judges_threads_come_from_the_environment_else_the_usable_cpus(monkeypatch):
    import os

    from ragmeter.judge import JudgeConfigError, LocalJudge, MemoryCache

    monkeypatch.setenv("RAGMETER_LOCAL_THREADS", "3")
    assert LocalJudge(cache=MemoryCache()).n_threads == 3
    assert LocalJudge(n_threads=2, cache=MemoryCache()).n_threads == 2  # the argument wins
    monkeypatch.delenv("RAGMETER_LOCAL_THREADS")
    usable = min(8, len(os.sched_getaffinity(0)))
    assert LocalJudge(cache=MemoryCache()).n_threads == usable
    assert LocalJudge(cache=MemoryCache()).describe()["n_threads"] == usable
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("RAGMETER_LOCAL_THREADS", bad)
        with pytest.raises(JudgeConfigError, match="RAGMETER_LOCAL_THREADS"):
            LocalJudge(cache=MemoryCache())


def test_token_estimate_counts_chinese_characters():
    assert estimate_tokens("检索增强生成") == 6
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("检索 RAG 系统，評價") == 6 + (len(" RAG ，") + 3) // 4


def test_providers_fill_in_the_endpoint_and_the_structured_output_mode():
    config = JudgeConfig.for_provider("deepseek", "deepseek-chat")
    assert config.base_url == "https://api.deepseek.com/v1"
    assert config.structured_output == "json_object"
    env = {"RAGMETER_JUDGE_PROVIDER": "qwen", "RAGMETER_JUDGE_MODEL": "qwen-plus"}
    assert "dashscope" in JudgeConfig.from_env(env).base_url
    local = JudgeConfig.from_env(env, base_url="http://127.0.0.1:9999/v1")
    assert local.base_url == "http://127.0.0.1:9999/v1"
    with pytest.raises(ValueError, match="unknown provider"):
        JudgeConfig.for_provider("nope", "m")


def test_an_openai_key_alone_leaves_the_embedded_judge_in_charge():
    assert JudgeConfig.from_env({"OPENAI_API_KEY": KEY}) is None


def test_an_endpoint_configured_without_a_model_fails_fast_naming_the_variable():
    env = {"OPENAI_BASE_URL": "https://proxy.example/v1", "OPENAI_API_KEY": KEY}
    with pytest.raises(ValueError, match="RAGMETER_JUDGE_MODEL") as caught:
        JudgeConfig.from_env(env)
    assert KEY not in str(caught.value)


def test_a_provider_preset_beats_a_generic_openai_base_url():
    env = {"OPENAI_BASE_URL": "https://proxy.example/v1", "RAGMETER_JUDGE_MODEL": "deepseek-chat"}
    config = JudgeConfig.from_env(env, provider="deepseek")
    assert config.base_url == "https://api.deepseek.com/v1"
    explicit = {**env, "RAGMETER_JUDGE_BASE_URL": "http://127.0.0.1:9/v1"}
    assert JudgeConfig.from_env(explicit, provider="deepseek").base_url == "http://127.0.0.1:9/v1"


def test_config_file_takes_overrides_and_only_the_key_its_api_key_env_names(tmp_path, monkeypatch):
    path = tmp_path / "judge.toml"
    path.write_text('[judge]\nmodel = "a"\nbase_url = "http://127.0.0.1:9/v1"\n', encoding="utf-8")
    for name in ("RAGMETER_JUDGE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.setenv(name, KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # even the key's own URL
    config = JudgeConfig.from_file(path, model="b", base_url=None)
    assert config.model == "b" and config.api_key is None
    path.write_text('[judge]\nmodel = "a"\napi_key_env = "OPENAI_API_KEY"\n', encoding="utf-8")
    assert JudgeConfig.from_file(path).api_key.get_secret_value() == KEY
    path.write_text('[judge]\nmodel = "a"\napi_key_env = "NOT_SET_ANYWHERE"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="NOT_SET_ANYWHERE"):
        JudgeConfig.from_file(path)


def test_a_literal_key_in_a_config_file_is_used_with_a_warning_and_never_recorded(tmp_path):
    path = tmp_path / "judge.json"
    path.write_text(json.dumps({"judge": {"model": "m", "api_key": KEY}}), encoding="utf-8")
    with pytest.warns(UserWarning, match="literal api_key") as warned:
        config = JudgeConfig.from_file(path)
    assert config.api_key.get_secret_value() == KEY
    assert KEY not in str(warned[0].message) and "api_key_env" in str(warned[0].message)
    assert KEY not in json.dumps(config.describe()) and KEY not in repr(config)


def test_openai_api_key_is_sent_only_to_the_endpoint_it_belongs_to():
    model = {"RAGMETER_JUDGE_MODEL": "m", "OPENAI_API_KEY": KEY}
    to_openai = JudgeConfig.from_env(model)
    assert to_openai.base_url == "https://api.openai.com/v1"
    assert to_openai.api_key.get_secret_value() == KEY
    elsewhere = [
        JudgeConfig.from_env(model, provider="deepseek"),
        JudgeConfig.from_env({**model, "RAGMETER_JUDGE_BASE_URL": "http://other/v1"}),
        JudgeConfig.from_env(model, base_url="http://other/v1"),
        JudgeConfig.from_env(
            {**model, "OPENAI_BASE_URL": "http://gw/v1"}, base_url="http://other/v1"
        ),
    ]
    assert [config.api_key for config in elsewhere] == [None] * 4
    gateway = JudgeConfig.from_env({**model, "OPENAI_BASE_URL": "http://gw/v1/"})
    assert gateway.api_key.get_secret_value() == KEY  # OPENAI_BASE_URL is that key's own
    own = {**model, "RAGMETER_JUDGE_API_KEY": "sk-own-key-0123"}
    for config in (
        JudgeConfig.from_env(own, provider="deepseek"),
        JudgeConfig.from_env(own, base_url="http://other/v1"),
    ):
        assert config.api_key.get_secret_value() == "sk-own-key-0123"


def test_credentials_in_the_base_url_are_used_but_shown_nowhere():
    url = "https://judge:s3cretpw@gw.example/v1?api-key=s3cretkey&api-version=2024-06-01"
    config = JudgeConfig(model="m", base_url=url)
    assert config.base_url == url  # the requests need them
    shown = "https://gw.example/v1?api-key=***&api-version=2024-06-01"
    assert config.describe()["base_url"] == shown
    assert config.identity == f"{shown}|m"
    for text in (repr(config), str(config), json.dumps(config.describe()), config.identity):
        assert "s3cret" not in text
    plain = JudgeConfig(model="m", base_url="http://127.0.0.1:8000/v1/")
    assert plain.identity == "http://127.0.0.1:8000/v1|m"  # cache keys of plain URLs unchanged


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("judge.json", "[1, 2]", "expected a table of judge settings"),
        ("judge.json", '{"judge": "gpt-4o-mini"}', r"\[judge\] is not a table"),
        ("judge.toml", 'judge = "gpt-4o-mini"', r"\[judge\] is not a table"),
    ],
)
def test_a_file_that_is_not_a_table_is_refused_naming_the_file(tmp_path, name, text, said):
    # one reader for every endpoint config file (OpenAI-compatible, Anthropic, LiteLLM)
    from ragmeter.judge import AnthropicConfig, LiteLLMConfig

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    for config in (JudgeConfig, AnthropicConfig, LiteLLMConfig):
        with pytest.raises(ValueError, match=said) as caught:
            config.from_file(path)
        assert str(path) in str(caught.value)


def write_judge_file(tmp_path, text: str):
    path = tmp_path / "judge.toml"
    path.write_text(f'[judge]\nmodel = "gpt-4o-mini"\n{text}\n', encoding="utf-8")
    return path


def test_a_mistaken_key_in_a_judge_file_names_the_file_the_closest_key_and_the_others(tmp_path):
    from ragmeter.judge import judge_config

    path = write_judge_file(tmp_path, "timout_s = 30")
    with pytest.raises(ValueError) as raised:
        judge_config(path)
    said = str(raised.value)
    assert said.startswith(f"{path} (judge settings, --judge-config): 'timout_s' is not a")
    assert "did you mean 'timeout_s'?" in said
    assert "The settings are api_key, api_key_env, api_version," in said and "temperature" in said
    assert "pydantic" not in said and "validation error" not in said


def test_a_wrong_type_and_a_bad_value_in_a_judge_file_are_said_with_the_key(tmp_path):
    from ragmeter.judge import judge_config

    with pytest.raises(ValueError) as raised:
        judge_config(write_judge_file(tmp_path, 'timeout_s = "abc"'))
    assert str(raised.value).endswith(
        "'timeout_s': Input should be a valid number, unable to parse string as a number "
        "(the default is 60.0)"
    )
    path = write_judge_file(tmp_path, f'temperature = 5\nstructured_output = "xml"\nx = "{KEY}"')
    with pytest.raises(ValueError) as raised:
        judge_config(path)
    lines = str(raised.value).splitlines()
    assert lines[0].endswith("3 settings are wrong:")
    said = "'temperature': Input should be less than or equal to 2 (the default is 0.0)"
    assert lines[1] == f"  - {said}"
    assert "'structured_output': Input should be 'auto', 'json_schema', " in lines[2]
    assert "'x' is not a setting. The settings are" in lines[3]
    assert KEY not in str(raised.value) and "errors.pydantic.dev" not in str(raised.value)
    both = 'azure_endpoint = "https://r.openai.azure.com"\nbase_url = "http://127.0.0.1:1/v1"'
    with pytest.raises(ValueError) as raised:  # a mistake of the settings together
        judge_config(write_judge_file(tmp_path, both))
    assert str(raised.value).endswith(
        "judge-config): give either azure_endpoint (with "
        "azure_deployment and, for the dated API, api_version) or base_url, not both"
    )


def test_judge_variables_that_are_wrong_or_unknown_are_said_with_their_names():
    from ragmeter.judge import judge_config

    with pytest.raises(ValueError, match=r"^the judge settings of the environment: ") as raised:
        judge_config(env={"RAGMETER_JUDGE_MODEL": "m", "RAGMETER_JUDGE_BASE_URL": "no-url"})
    assert "RAGMETER_JUDGE_BASE_URL (or --judge-base-url): base_url must be" in str(raised.value)
    assert "errors.pydantic.dev" not in str(raised.value)
    with pytest.raises(ValueError) as raised:
        judge_config(env={"RAGMETER_JUDGE_MODEL": "m", "RAGMETER_JUDGE_TIMEOUT_S": "abc"})
    assert str(raised.value) == (
        "RAGMETER_JUDGE_TIMEOUT_S is not a variable ragmeter reads (unset it): timeout_s is set "
        "in a judge settings file: a TOML file with [judge] timeout_s = ..., given with "
        "--judge-config"
    )
    with pytest.raises(ValueError, match=r"did you mean RAGMETER_JUDGE_MODEL\?"):
        judge_config(env={"RAGMETER_JUDGE_MODLE": "m"})


def test_ragmeter_eval_says_a_judge_file_mistake_without_pydantic(tmp_path):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    data = tmp_path / "data.jsonl"
    data.write_text('{"user_input": "q", "response": "a", "retrieved_contexts": ["c"]}\n')
    judge = write_judge_file(tmp_path, "max_concurency = 4")
    result = CliRunner().invoke(
        app, ["eval", str(data), "-m", "faithfulness", "--judge-config", str(judge), "-q"]
    )
    assert result.exit_code == 2, result.output
    assert "'max_concurency' is not a setting: did you mean 'max_concurrency'?" in result.output
    assert "pydantic" not in result.output
