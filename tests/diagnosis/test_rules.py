import pytest

from ragmeter import evaluate
from ragmeter.diagnosis import Condition, Figure, diagnose, load_rules
from tests._prepared import Prepared


def run(columns: dict[str, list[float | None]], question="What is the warranty?"):
    n = len(next(iter(columns.values())))
    ids = [f"s{i}" for i in range(n)]
    metrics = [Prepared(name, dict(zip(ids, values))) for name, values in columns.items()]
    return evaluate([{"id": i, "user_input": question} for i in ids], metrics)


def rule_ids(findings):
    return [f.rule_id for f in findings]


def test_a_healthy_run_gets_no_finding():
    result = run(
        {
            "context_recall": [0.9, 1.0, 0.8, 1.0],
            "context_precision": [0.9, 0.8, 1.0, 1.0],
            "faithfulness": [1.0, 0.9, 1.0, 0.8],
            "answer_relevancy": [0.9, 0.85, 0.9, 0.95],
            "answer_correctness": [0.8, 0.9, 0.7, 1.0],
        }
    )
    assert diagnose(result) == []


def test_low_recall_points_at_retrieval_with_figures_and_worst_samples_first():
    result = run({"context_recall": [0.2, 0.9, 0.4, 1.0, 0.0]})
    (finding,) = diagnose(result)
    assert finding.rule_id == "retrieval_misses" and finding.area == "retrieval"
    assert (finding.n_matching, finding.n_evaluated) == (3, 5)
    assert finding.sample_ids == ["s4", "s0", "s2"]
    (figure,) = finding.figures
    assert (figure.name, figure.n_flagged, figure.n_run) == ("context_recall", 3, 5)
    assert figure.flagged == pytest.approx(0.2) and figure.run == pytest.approx(0.5)
    assert figure.text() == "context_recall 0.20 over the 3 samples flagged (run mean 0.50 over 5)"
    assert "chunking" in " ".join(finding.advice)


def test_good_recall_low_precision_is_noise_ranked_high():
    result = run(
        {
            "context_recall": [0.9, 1.0, 0.8, 1.0],
            "context_precision": [0.3, 0.2, 0.9, 1.0],
        }
    )
    assert rule_ids(diagnose(result)) == ["noise_ranked_high"]


def test_low_faithfulness_with_good_recall_blames_generation_not_retrieval():
    result = run(
        {
            "context_recall": [0.9, 1.0, 0.8, 1.0],
            "faithfulness": [0.3, 0.5, 1.0, 0.2],
        }
    )
    (finding,) = diagnose(result)
    assert finding.rule_id == "unsupported_generation" and finding.area == "generation"
    assert finding.sample_ids == ["s3", "s0", "s1"]


def test_on_topic_but_wrong():
    result = run(
        {
            "answer_relevancy": [0.9, 0.95, 0.9, 0.3],
            "answer_correctness": [0.1, 0.2, 0.9, 0.9],
        }
    )
    assert rule_ids(diagnose(result)) == ["on_topic_but_wrong"]


def test_a_rule_reads_only_samples_scored_on_every_metric_it_needs():
    # s0 is low on recall but has no faithfulness: it counts for retrieval_misses only.
    result = run(
        {
            "context_recall": [0.1, 0.2, 0.9, 0.9, 0.3],
            "faithfulness": [None, 0.2, 0.9, 1.0, 0.1],
        }
    )
    findings = {f.rule_id: f for f in diagnose(result)}
    assert findings["retrieval_misses"].n_evaluated == 5
    assert findings["unsupported_without_context"].n_evaluated == 4
    assert findings["unsupported_without_context"].sample_ids == ["s4", "s1"]


def test_a_figure_labelled_the_runs_is_the_runs_mean_not_the_evaluated_subsets():
    # The rule reads s1-s4 (s0 has no faithfulness) and flags s1 and s4. Recall over the
    # four it read is 0.575; the run's recall, as its summary shows it, is 0.48 over all 5.
    result = run(
        {
            "context_recall": [0.1, 0.2, 0.9, 0.9, 0.3],
            "faithfulness": [None, 0.2, 0.9, 1.0, 0.1],
        }
    )
    finding = {f.rule_id: f for f in diagnose(result)}["unsupported_without_context"]
    figures = {f.name: f for f in finding.figures}
    recall, faithfulness = figures["context_recall"], figures["faithfulness"]
    assert recall.run == pytest.approx(result.aggregates["context_recall"].mean)  # 0.48
    assert recall.run == pytest.approx(0.48) and recall.n_run == 5
    assert recall.flagged == pytest.approx(0.25) and recall.n_flagged == 2
    assert faithfulness.run == pytest.approx(result.aggregates["faithfulness"].mean)
    assert faithfulness.n_run == 4
    assert recall.text() == "context_recall 0.25 over the 2 samples flagged (run mean 0.48 over 5)"
    assert finding.to_dict()["figures"][0] == {
        "name": "faithfulness",
        "flagged": pytest.approx(0.15),
        "n_flagged": 2,
        "run": pytest.approx(0.55),
        "n_run": 4,
    }


def test_a_figure_over_one_sample_says_sample():
    assert (
        Figure("mrr", 0.0, 1, 0.5, 2).text()
        == "mrr 0.00 over the 1 sample flagged (run mean 0.50 over 2)"
    )


def test_a_rare_pattern_below_the_share_stays_quiet():
    result = run({"context_recall": [0.1] + [0.9] * 9})
    assert diagnose(result) == []


def test_alternative_metrics_and_cutoff_patterns():
    result = run({"recall@5": [0.0, 0.0, 1.0]})
    (finding,) = diagnose(result)
    assert finding.rule_id == "retrieval_misses"
    assert [f.name for f in finding.figures] == ["recall@5"]


def test_findings_speak_the_dataset_language():
    result = run({"context_recall": [0.0, 0.1]}, question="保修期是多久？")
    (finding,) = diagnose(result)
    assert "检索" in finding.title
    assert diagnose(result, language="en")[0].title.startswith("Retrieval")


def test_rules_are_data_and_extendable(tmp_path):
    path = tmp_path / "rules.toml"
    path.write_text(
        '[[rule]]\nid = "slow"\nwhen = ["latency > 2"]\n'
        '[rule.en]\ntitle = "Slow"\nexplanation = "x"\n',
        encoding="utf-8",
    )
    rules = load_rules(path)
    assert [r.id for r in rules] == ["slow"]
    result = run({"latency": [3.0, 5.0, 1.0]})
    assert rule_ids(diagnose(result, rules=rules)) == ["slow"]
    assert {r.id for r in load_rules()} >= {"retrieval_misses", "on_topic_but_wrong"}


def test_a_bad_condition_says_how_to_write_it():
    with pytest.raises(ValueError, match="METRIC OP NUMBER"):
        Condition.parse("context_recall<0.5")
    assert str(Condition.parse("a|b@* >= 0.7")) == "a|b@* >= 0.7"
    with pytest.raises(ValueError, match=r"METRIC:DETAIL\.PATH"):
        Condition.parse("abstention: >= 1")  # a detail path that is empty


def test_a_condition_reads_a_number_from_the_details():
    condition = Condition.parse("m:found.flag >= 1")
    assert str(condition) == "m:found.flag >= 1" and condition.key("m") == "m:found.flag"
    assert condition.value_of({"found": {"flag": False}}) == 0.0
    assert condition.value_of({"found": {"flag": 0.25}}) == 0.25
    assert condition.value_of({"found": {"flag": "yes"}}) is None  # not a number
    assert condition.value_of({"found": {}}) is None and condition.value_of(None) is None


def test_examples_unscored_on_the_order_by_metric_come_last(tmp_path):
    # order_by names a metric the rule does not read; s1 has no score for it.
    path = tmp_path / "rules.toml"
    path.write_text(
        '[[rule]]\nid = "slow"\nwhen = ["latency > 2"]\norder_by = "quality"\nmin_share = 0\n'
        '[rule.en]\ntitle = "Slow"\nexplanation = "x"\n',
        encoding="utf-8",
    )
    result = run({"latency": [3.0, 5.0, 4.0], "quality": [0.9, None, 0.2]})
    (finding,) = diagnose(result, rules=load_rules(path))
    assert finding.sample_ids == ["s2", "s0", "s1"]
