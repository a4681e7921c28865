"""Prompt metrics with the scripted judge: kinds, schemas, G-Eval expectation, files."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from ragmeter import Sample, evaluate
from ragmeter.gate import parse_rules, run_gate
from ragmeter.metrics import Direction
from ragmeter.metrics.custom import PromptMetric, load_metric
from ragmeter.testing import ScriptedJudge

SAMPLE = Sample(id="s1", user_input="How long is the warranty?", response="Two years, sir.")
ZH = Sample(id="z1", user_input="保修多久？", response="亲，保修两年哦。")


def polite(judge, **options) -> PromptMetric:
    return PromptMetric(
        "polite",
        kind="discrete",
        instruction={"en": "Is the answer polite?", "zh": "回答是否礼貌？"},
        labels=["polite", "neutral", "rude"],
        judge=judge,
        **options,
    )


def replying(**fields):
    return ScriptedJudge(lambda messages, schema: {"reason": "because", **fields})


def test_a_discrete_metric_scores_its_label_and_renders_its_definition():
    judge = replying(label="neutral")
    result = polite(judge).score(SAMPLE)
    assert (result.score, result.details["label"], result.reason) == (0.5, "neutral", "because")
    (call,) = judge.calls
    system = call.messages[0].content
    assert "Is the answer polite?" in system and '"polite", "neutral", "rude"' in system
    assert "<response>\nTwo years, sir.\n</response>" in call.messages[-1].content
    assert call.schema.model_json_schema()["properties"]["label"]["enum"] == [
        "polite", "neutral", "rude",
    ]  # fmt: skip
    assert list(call.schema.model_fields) == ["reason", "label"]  # reason before the verdict


def test_chinese_samples_get_the_chinese_instruction_and_preamble():
    judge = replying(label="polite")
    polite(judge).score(ZH)
    system = judge.calls[0].messages[0].content
    assert "回答是否礼貌？" in system and "只输出一个 JSON 对象" in system


def test_label_scores_can_be_given():
    judge = replying(label="rude")
    metric = polite(judge, label_scores={"polite": 1.0, "neutral": 0.8, "rude": 0.0})
    assert metric.score(SAMPLE).score == 0.0
    with pytest.raises(ValueError, match="every label"):
        polite(judge, label_scores={"polite": 1.0})


def answering(text: str) -> ScriptedJudge:
    """A judge whose text answer is parsed and validated like a real judge's."""
    return ScriptedJudge(lambda messages, schema: text)


def test_a_label_outside_the_labels_is_refused_by_the_schema():
    result = polite(answering('{"reason": "r", "label": "grumpy"}')).score(SAMPLE)
    assert result.status.value == "failed" and "label" in result.error


def test_numeric_scores_are_rescaled_and_bounded():
    metric = PromptMetric(
        "helpfulness", kind="numeric", instruction="Rate helpfulness.", low=0, high=10,
        judge=replying(score=7.5),
    )  # fmt: skip
    result = metric.score(SAMPLE)
    assert result.score == pytest.approx(0.75) and result.details["value"] == 7.5
    out_of_range = PromptMetric(
        "helpfulness", kind="numeric", instruction="Rate.", low=0, high=10,
        judge=answering('{"reason": "r", "score": 11}'),
    )  # fmt: skip
    assert out_of_range.score(SAMPLE).status.value == "failed"


LEVELS = [(1, "rude"), (2, "curt"), (3, "neutral"), (4, "friendly"), (5, "warm and helpful")]


def rubric(judge) -> PromptMetric:
    return PromptMetric("tone", kind="rubric", instruction="Rate the tone.", levels=LEVELS,
                        judge=judge)  # fmt: skip


def test_a_rubric_scores_its_level_and_takes_the_expectation_when_probabilities_come():
    assert rubric(replying(score=4)).score(SAMPLE).score == pytest.approx(0.75)
    weighted = ScriptedJudge(
        lambda m, s: {"reason": "r", "score": 4},
        distribution=lambda output: {"3": 0.2, "4": 0.5, "5": 0.3, "1": 0.0, "2": 0.0},
    )
    result = rubric(weighted).score(SAMPLE)
    # G-Eval: 0.2 * 0.5 + 0.5 * 0.75 + 0.3 * 1.0
    assert result.score == pytest.approx(0.775)
    assert result.details["level"] == 4 and result.details["level_score"] == 0.75
    assert "5: warm and helpful" in weighted.calls[0].messages[0].content


def test_a_ranking_is_scored_as_the_ndcg_of_the_system_order():
    sample = SAMPLE.model_copy(update={"retrieved_contexts": ["a", "b", "c"]})
    metric = PromptMetric("order", kind="ranking", instruction="Rank by usefulness.",
                          inputs=["user_input"], judge=replying(ranking=[1, 2, 3]))  # fmt: skip
    assert metric.score(sample).score == pytest.approx(1.0)
    backwards = replying(ranking=[3, 2, 1])
    reversed_order = PromptMetric("order", kind="ranking", instruction="Rank.",
                                  inputs=["user_input"], judge=backwards)  # fmt: skip
    assert reversed_order.score(sample).score < 1.0
    broken = PromptMetric("order", kind="ranking", instruction="Rank.", inputs=["user_input"],
                          judge=replying(ranking=[1, 1, 2]))  # fmt: skip
    assert "not an order" in broken.score(sample).error


def test_examples_are_shown_as_few_shot_turns_and_change_the_version():
    judge = replying(label="polite")
    metric = polite(judge).with_examples(
        [{"user_input": "Refund?", "response": "No.", "label": "rude", "reason": "curt"}]
    )
    assert metric.spec.version == "1+1ex"
    metric.score(SAMPLE)
    messages = judge.calls[0].messages
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert json.loads(messages[2].content) == {"reason": "curt", "label": "rude"}


@pytest.mark.parametrize("suffix", [".toml", ".json", ".yaml"])
def test_definitions_round_trip_through_files(tmp_path: Path, suffix: str):
    if suffix == ".yaml":
        pytest.importorskip("yaml")
    original = PromptMetric(
        "tone_zh", kind="rubric", instruction={"zh": "评估语气。\n要求：“礼貌”", "en": "Tone."},
        levels=LEVELS, examples=[{"user_input": "在吗", "response": "在的亲", "score": 5}],
        direction="higher", version="3", description="客服语气",
    )  # fmt: skip
    path = original.save(tmp_path / f"tone{suffix}")
    loaded = load_metric(path)
    assert loaded.spec == original.spec
    assert loaded.to_dict() == original.to_dict()


@pytest.mark.parametrize(
    ("suffix", "levels"),
    [
        (".yaml", 'levels:\n  1: "rude"\n  3: "neutral"\n  5: "warm"\n'),
        (".toml", '[levels]\n1 = "rude"\n3 = "neutral"\n5 = "warm"\n'),
        (".json", '"levels": {"1": "rude", "3": "neutral", "5": "warm"}'),
    ],
)
def test_rubric_levels_may_be_one_table_of_score_and_description(
    tmp_path: Path, suffix: str, levels: str
):
    if suffix == ".yaml":
        pytest.importorskip("yaml")
        text = f'name: tone\nkind: rubric\ninstruction: "Tone."\n{levels}'
    elif suffix == ".toml":
        text = f'name = "tone"\nkind = "rubric"\ninstruction = "Tone."\n{levels}'
    else:
        text = f'{{"name": "tone", "kind": "rubric", "instruction": "Tone.", {levels}}}'
    path = tmp_path / f"tone{suffix}"
    path.write_text(text, encoding="utf-8")
    metric = load_metric(path)
    assert [(lv.score, lv.description) for lv in metric.spec.levels] == [
        (1, "rude"), (3, "neutral"), (5, "warm"),
    ]  # fmt: skip
    pairs = [(1, "rude"), (3, "neutral"), (5, "warm")]
    expected = PromptMetric("tone", kind="rubric", instruction="Tone.", levels=pairs)
    assert metric.spec == expected.spec


def test_a_level_of_another_shape_is_named_with_the_shapes_that_work(tmp_path: Path):
    path = tmp_path / "tone.json"
    path.write_text(
        json.dumps({"name": "tone", "kind": "rubric", "instruction": "Tone.",
                    "levels": [[1, "rude"], 3, {"score": "high", "description": "warm"}]}),
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"tone\.json: levels: level 2 \(3\) .*score: descr"):
        load_metric(path)
    path.write_text(
        json.dumps({"name": "tone", "kind": "rubric", "instruction": "Tone.",
                    "levels": [[1, "rude"], {"score": "high", "description": "warm"}]}),
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"level 2 \(\{'score': 'high'"):
        load_metric(path)


def test_a_bad_definition_names_the_file_and_the_field(tmp_path: Path):
    path = tmp_path / "m.toml"
    path.write_text('name = "x"\nkind = "discrete"\ninstruction = "Judge."\nlabels = ["a"]\n')
    with pytest.raises(ValueError, match=r"m\.toml: .*at least two labels"):
        load_metric(path)
    path.write_text('name = "x"\nkind = "vibes"\ninstruction = "J."\ncolour = "red"\n')
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['colour'\]"):
        load_metric(path)


def test_through_evaluate_one_call_per_sample_cached_by_version_and_gated():
    judge = replying(label="polite")
    rows = [{"id": f"q{i}", "user_input": f"q{i}?", "response": f"a{i}"} for i in range(4)]
    result = evaluate(rows, [polite(judge)], progress=False)
    assert result.scores("polite") == [1.0] * 4 and len(judge.calls) == 4
    evaluate(rows, [polite(judge)], progress=False)
    assert len(judge.calls) == 4  # cached
    evaluate(rows, [polite(judge, version="2")], progress=False)
    assert len(judge.calls) == 8  # a new version is a new prompt
    info = {m.name: m for m in result.metrics}["polite"]
    assert info.params["version"] == "1" and info.direction is Direction.HIGHER_IS_BETTER
    assert any(v.startswith("custom:polite@1/") for v in result.config["prompt_versions"])
    rules = parse_rules({"thresholds": [{"metric": "polite", "min": 0.9}]})
    assert run_gate(result, rules).passed


def _alias_bomb(levels: int) -> str:
    """A YAML "billion laughs": each level lists the one before ten times, so a file of
    about 1.4 KB at nine levels expands to 10**9 strings."""
    lols = ", ".join(['"lol"'] * 10)
    lines = [
        "name: bomb",
        "kind: discrete",
        'instruction: "J."',
        "labels: [a, b]",
        f"l0: &l0 [{lols}]",
    ]
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]")
    lines.append(f"examples: *l{levels}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("bomb.yaml", _alias_bomb(9), r"line 6: YAML aliases .* not allowed"),
        ("two.yaml", 'name: x\nkind: discrete\ninstruction: J\nlabels: [a, b]\n---\nname: y\n',
         r"line 5: a second YAML document"),
        ("tabs.yaml", "name: x\nkind: discrete\ninstruction:\n\ten: J\nlabels: [a, b]\n",
         r"line 4: not valid YAML \(a tab; YAML is indented with spaces"),
        ("broken.yaml", "name: x\nkind: [discrete\n", r"line 3: not valid YAML"),
        ("deep.json", "[" * 100_000, r"nested too deeply"),
        ("deep.toml", "a = " + "[" * 100_000 + "]" * 100_000, r"nested too deeply"),
        ("deep.yaml", "a: " + "[" * 50_000, r"nested too deeply"),
        ("latin1.toml", "name = \"caf\xe9\"", r"not UTF-8 text \(byte 11\)"),
    ],
)  # fmt: skip
def test_a_hostile_metric_file_is_refused_at_load_in_one_line(
    tmp_path: Path, name: str, text: str, message: str
):
    pytest.importorskip("yaml")
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1" if "latin1" in name else "utf-8"))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: {message}") as caught:
        load_metric(path)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("instruction", 42, r"instruction: expected a string, or a table .*got int 42"),
        ("instruction", ["J."], r"instruction: expected a string, .*got list \['J\.'\]"),
        ("instruction", {"en": 1}, r"instruction\['en'\]: expected a string, got int 1"),
        ("labels", "ab", r"labels: expected a list of strings, got str 'ab'"),
        ("labels", ["a", 2], r"labels\[1\]: expected a string, got int 2"),
        ("label_scores", {"a": float("nan"), "b": 0}, r"label_scores\['a'\]: .*finite number"),
        ("label_scores", {"a": "1", "b": 0}, r"label_scores\['a'\]: expected a number"),
        ("label_scores", {"a": True, "b": 0}, r"label_scores\['a'\]: expected a number"),
        ("low", float("inf"), r"low: expected a finite number"),
        ("inputs", "response", r"inputs: expected a list of field names"),
        ("examples", [["a"]], r"examples\[0\]: expected a table"),
        ("examples", [{"response": float("nan")}], r"examples\[0\]: .*finite numbers"),
        ("description", {"x": 1}, r"description: expected a string"),
    ],
)
def test_a_field_of_the_wrong_type_is_refused_at_load(
    tmp_path: Path, field: str, value: object, message: str
):
    data = {"name": "x", "kind": "discrete", "instruction": "J.", "labels": ["a", "b"]}
    path = tmp_path / "m.json"  # Python's JSON reads NaN and Infinity, as TOML and YAML do
    path.write_text(json.dumps({**data, field: value}), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: {message}"):
        load_metric(path)


def test_a_metric_path_that_is_not_a_regular_file_is_refused_before_it_is_opened(
    tmp_path: Path,
):
    fifo = tmp_path / "m.toml"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"named pipe \(FIFO\), not a metric file"):
        load_metric(fifo)
