"""comparability(): were two runs measured the same way (judge, embeddings, prompts, params)?"""

import json

from ragmeter.stats import comparability
from tests.stats._build import (
    DEEPSEEK,
    DEEPSEEK_LABEL,
    GPT,
    GPT_LABEL,
    judged_config,
    openai_judge,
    run,
)

SCORES = {"faithfulness": [0.5, 0.6, 0.7], "mrr": [1.0, 0.5, 0.0]}


def judged(judge, **extra):
    config = judged_config(judge)
    for key, value in extra.items():
        config[key] = value
    return run(SCORES, config=config)


def test_a_judge_of_another_model_refuses_naming_both_judges():
    checked = comparability(judged(GPT), judged(DEEPSEEK))
    assert not checked.comparable
    faith = checked.metrics["faithfulness"]
    assert (faith.judge, faith.comparable) == ("different", False)
    assert faith.refusal.reason == f"judge changed ({GPT_LABEL} vs {DEEPSEEK_LABEL})"
    assert checked.lines() == [f"faithfulness: judge differs: {GPT_LABEL} vs {DEEPSEEK_LABEL}"]
    assert checked.lines(refusing=False) == []


def test_metrics_without_a_judge_stay_comparable():
    checked = comparability(judged(GPT), judged(DEEPSEEK))
    mrr = checked.metrics["mrr"]
    assert (mrr.judge, mrr.embeddings, mrr.params, mrr.comparable) == ("none", "none", "same", True)
    assert checked.refusal("mrr") is None


def test_the_same_judge_has_no_difference_whatever_its_operational_settings():
    same = openai_judge(
        "gpt-4o-mini",
        "https://user:secret@api.openai.com/v1/",  # credentials and a trailing slash
        timeout_s=5.0,
        max_retries=0,
        max_concurrency=2,
        requests_per_minute=60.0,
        price={"input_per_million": 1.0, "output_per_million": 2.0, "currency": "USD"},
        api_key_set=False,
        structured_output="json_object",
    )
    checked = comparability(judged(GPT), judged(same))
    assert checked.comparable and checked.differences == []
    assert checked.metrics["faithfulness"].judge == "same"
    assert checked.prompts == "same"


def test_a_generation_setting_is_part_of_the_judge():
    hotter = openai_judge("gpt-4o-mini", "https://api.openai.com/v1", temperature=0.7, seed=None)
    (line,) = comparability(judged(GPT), judged(hotter)).lines()
    assert line == (
        "faithfulness: judge differs: gpt-4o-mini @ api.openai.com (temperature 0, seed 42) "
        "vs gpt-4o-mini @ api.openai.com (temperature 0.7, seed unset)"
    )
    effort = openai_judge("o3-mini", "https://api.openai.com/v1", reasoning_effort="high")
    low = openai_judge("o3-mini", "https://api.openai.com/v1", reasoning_effort="low")
    assert "reasoning_effort high" in comparability(judged(effort), judged(low)).lines()[0]
    default = openai_judge("o3-mini", "https://api.openai.com/v1", reasoning_effort=None)
    (line,) = comparability(judged(default), judged(effort)).lines()
    assert "(reasoning_effort unset, temperature 0) vs " in line


def test_the_endpoint_is_compared_by_host_and_port():
    ollama = openai_judge("qwen2.5:7b", "http://127.0.0.1:11434/v1")
    vllm = openai_judge("qwen2.5:7b", "http://127.0.0.1:8000/v1")
    (line,) = comparability(judged(ollama), judged(vllm)).lines()
    assert "qwen2.5:7b @ 127.0.0.1:11434" in line and "qwen2.5:7b @ 127.0.0.1:8000" in line


def test_a_setting_only_a_newer_record_has_is_not_compared():
    newer = {**GPT, "provider": "openai", "reasoning_effort": None}
    assert comparability(judged(GPT), judged(newer)).comparable
    # A provider preset and the same base URL given directly: the same endpoint.
    assert comparability(judged({**GPT, "provider": None}), judged(newer)).comparable


def test_the_embedded_judge_is_compared_by_its_model_file():
    local = {"kind": "local", "model": "qwen2.5-1.5b", "sha256": "abc", "seed": 0,
             "temperature": 0.0, "verdict_method": "yes_no", "n_threads": 4}  # fmt: skip
    same = {**local, "n_threads": 8, "n_ctx": 4096}
    other_file = {**local, "sha256": "def"}
    assert comparability(judged(local), judged(same)).comparable
    (line,) = comparability(judged(local), judged(other_file)).lines()
    assert line == (
        "faithfulness: judge differs: qwen2.5-1.5b @ local (sha256 abc, temperature 0) vs "
        "qwen2.5-1.5b @ local (sha256 def, temperature 0)"
    )


def test_the_embedded_judge_on_another_llama_cpp_build_is_another_judge():
    local = {"kind": "local", "model": "qwen", "sha256": "abc", "temperature": 0.0,
             "runtime": "llama-cpp-cffi==0.4.18", "n_ctx": 2048}  # fmt: skip
    assert comparability(judged(local), judged({**local, "n_ctx": 4096})).comparable
    other_build = {**local, "runtime": "llama-cpp-python==0.3.36"}
    assert not comparability(judged(local), judged(other_build)).comparable


def test_an_embedding_model_change_refuses_too():
    def with_vectors(model):
        config = judged_config(GPT, ["semantic_similarity"])
        config["embeddings"] = {
            "semantic_similarity": {"kind": "openai-compatible", "model": model,
                                    "base_url": "https://api.openai.com/v1", "batch_size": 64}
        }  # fmt: skip
        return run({"semantic_similarity": [0.5, 0.6]}, config=config)

    checked = comparability(with_vectors("text-embedding-3-small"), with_vectors("bge-m3"))
    assert checked.metrics["semantic_similarity"].embeddings == "different"
    assert checked.metrics["semantic_similarity"].judge == "same"
    assert checked.lines(refusing=True) == [
        "semantic_similarity: embedding model differs: text-embedding-3-small @ "
        "api.openai.com vs bge-m3 @ api.openai.com"
    ]


def test_metric_settings_and_prompt_versions_are_warnings():
    before = judged(GPT)
    after = judged(GPT, prompt_versions=["response_analysis@1/en", "verify@2/en", "question@1"])
    after.metrics[1] = type(after.metrics[1])("mrr", after.metrics[1].direction, {"k": 10})
    checked = comparability(before, after)
    assert checked.comparable and checked.refusals == []
    assert checked.metrics["mrr"].params == "different"
    assert checked.prompts == "different"
    assert checked.lines() == [
        "mrr: settings differ: k unset vs k 10",
        # question@1 is used by the candidate only: a metric only it has, not a difference
        "prompt versions differ (recorded per run, not per metric): verify@1/en vs verify@2/en",
    ]


def test_a_run_without_judge_records_is_unknown_never_refused():
    old = judged(None)
    checked = comparability(old, judged(DEEPSEEK))
    faith = checked.metrics["faithfulness"]
    assert (faith.judge, faith.comparable) == ("unknown", True)
    assert checked.comparable
    assert checked.lines() == [
        "faithfulness: judge unknown: the baseline run did not record it (the other run: "
        "deepseek-chat @ api.deepseek.com)",
        "prompt versions unknown: the baseline run did not record it (the other run: "
        "response_analysis@1/en, verify@1/en)",
    ]
    # No record on either side: nothing to say, and nothing guessed.
    neither = comparability(old, judged(None))
    assert neither.differences == [] and neither.metrics["faithfulness"].judge == "unknown"


def test_a_judge_recorded_on_one_side_only_is_a_warning():
    none_recorded = run(SCORES, config={"judges": {}, "embeddings": {}})
    checked = comparability(none_recorded, judged(GPT))
    assert checked.comparable
    assert checked.lines()[0] == (
        "faithfulness: judge differs: no judge vs gpt-4o-mini @ api.openai.com"
    )


def test_the_same_change_on_several_metrics_is_one_line_and_to_dict_is_json_ready():
    metrics = ["faithfulness", "answer_relevancy"]
    scores = {m: [0.5, 0.6] for m in metrics}
    before = run(scores, config=judged_config(GPT, metrics))
    after = run(scores, config=judged_config(DEEPSEEK, metrics))
    checked = comparability(before, after)
    assert checked.lines() == [
        f"faithfulness, answer_relevancy: judge differs: {GPT_LABEL} vs {DEEPSEEK_LABEL}"
    ]
    assert len(checked.refusals) == 2
    data = json.loads(json.dumps(checked.to_dict()))
    assert data["comparable"] is False
    assert data["metrics"]["faithfulness"]["differences"][0]["refuses"] is True
    assert comparability(before, after, metrics=["answer_relevancy"]).lines() == [
        f"answer_relevancy: judge differs: {GPT_LABEL} vs {DEEPSEEK_LABEL}"
    ]


def test_a_verdict_calibration_is_part_of_the_judge():
    calibrated = {**GPT, "verdict_calibration": "team@v2 (sha256 0123456789abcdef)"}
    plain = GPT  # a judge record without one: judged without
    checked = comparability(judged(plain), judged(calibrated))
    assert not checked.comparable
    faith = checked.metrics["faithfulness"]
    assert faith.refusal.reason.startswith("judge changed (")
    (line,) = checked.lines()
    assert line == (
        "faithfulness: judge differs: gpt-4o-mini @ api.openai.com (verdict_calibration unset, "
        "temperature 0) vs gpt-4o-mini @ api.openai.com (verdict_calibration team@v2 "
        "(sha256 0123456789abcdef), temperature 0)"
    )
    other = {**GPT, "verdict_calibration": "team@v3 (sha256 fedcba9876543210)"}
    assert not comparability(judged(calibrated), judged(other)).comparable
    assert comparability(judged(calibrated), judged(dict(calibrated))).comparable
    assert comparability(judged(plain), judged({**GPT, "verdict_calibration": None})).comparable
