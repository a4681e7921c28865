"""The gate's agreement rule (issue 39): ``[[agreements]] metric, min_agreement, statistic,
min_labels`` fails a metric not validated on enough of the team's labels, or whose agreement
with them is below the floor; the caller gives the validations (the gate does not measure)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from ragmeter import gate
from ragmeter.gate import Agreement, GateFileError, GateUsageError, parse_rules, run_gate
from ragmeter.stats import Validation
from tests.stats._build import run

RESULT = run({"faithfulness": [1.0, 0.0, 1.0, 1.0], "relevance": [0.5] * 4})


def rules(**entry):
    return parse_rules({"agreements": [{"metric": "faithfulness", **entry}]})


def kappa(n: int, value: float | None = 0.7) -> Validation:
    return Validation("faithfulness", n, "claim", "cohen_kappa", value, (0.5, 0.85))


def outcome(validations, **entry):
    (found,) = run_gate(RESULT, rules(**entry), validations=validations).outcomes
    return found


def test_the_rule_reads_as_the_file_says_with_30_labels_by_default():
    assert rules(min_agreement=0.6).agreements == (Agreement("faithfulness", 0.6, None, 30),)
    assert rules(min_agreement=0.6, statistic="kappa", min_labels=5).agreements == (
        Agreement("faithfulness", 0.6, "cohen_kappa", 5),
    )
    for entry, said in (
        ({}, "give min_agreement"),
        ({"min_agreement": 0.6, "statistic": "pearson"}, "statistic must be one of"),
        ({"min_agreement": 0.6, "min_labels": 0}, "min_labels is a whole number"),
        ({"min_agreement": "high"}, "expected a number"),
        ({"min_agreement": 0.6, "max": 1}, "unknown setting"),
    ):
        with pytest.raises(GateFileError, match=said):
            rules(**entry)


def test_enough_labels_and_agreement_pass_with_the_validation_as_figures():
    found = outcome({"faithfulness": kappa(40)}, min_agreement=0.6)
    assert found.passed and found.kind == "agreement"
    assert found.message == "validated on 40 of your labels (claim level): kappa 0.70 [0.50, 0.85]"
    assert found.rule == "faithfulness: validated on >= 30 of your labels, agreement >= 0.6"
    assert found.figures["n_labels"] == 40 and found.figures["value"] == 0.7


@pytest.mark.parametrize(
    ("validations", "entry", "said"),
    [
        ({}, {}, "not validated on your data: label the run's verdicts"),
        ({"faithfulness": kappa(0, None)}, {}, "ragmeter labels queue RUN"),
        ({"faithfulness": kappa(12)}, {}, "fewer than the 30 labels the rule needs"),
        ({"faithfulness": kappa(40, 0.55)}, {}, "kappa 0.55 [0.50, 0.85]: below 0.6"),
        ({"faithfulness": kappa(40, None)}, {}, "below 0.6"),
        (
            {"faithfulness": Validation("faithfulness", 40, "sample", "spearman", 0.9, None)},
            {"statistic": "kappa"},
            "the rule asks for kappa, which these labels do not measure",
        ),
    ],
)
def test_each_shortfall_fails_saying_which_and_how_to_fix_it(validations, entry, said):
    found = outcome(validations, min_agreement=0.6, **entry)
    assert not found.passed
    assert said in found.message
    if "fewer" in said:
        assert "18 more" in found.message


def test_junit_and_markdown_show_the_rule_like_the_others():
    report = run_gate(RESULT, rules(min_agreement=0.6), validations={"faithfulness": kappa(5)})
    case = ET.fromstring(gate.to_junit(report)).find("testsuite/testcase")
    assert case is not None and case.get("classname") == "ragmeter.gate.agreement"
    failure = case.find("failure")
    assert failure is not None and "fewer than the 30 labels" in str(failure.get("message"))
    text = gate.to_markdown(report)
    assert "| ❌ | faithfulness: validated on >= 30 of your labels, agreement >= 0.6 |" in text


def test_a_metric_the_run_lacks_is_a_usage_error():
    with pytest.raises(GateUsageError, match="metric 'answer_relevancy'"):
        run_gate(
            RESULT,
            parse_rules({"agreements": [{"metric": "answer_relevancy", "min_agreement": 0.5}]}),
        )


def test_a_rule_can_ask_for_preference_agreement_on_preference_labels():
    assert rules(min_agreement=0.8, statistic="preference").agreements == (
        Agreement("faithfulness", 0.8, "preference_agreement", 30),
    )
    preferred = Validation("faithfulness", 40, "preference", "preference_agreement", 0.85, None)
    found = outcome({"faithfulness": preferred}, min_agreement=0.8, statistic="preference")
    assert found.passed, found.message
    assert found.message == (
        "validated on 40 of your labels (preference level): preference agreement 0.85"
    )
    wrong = outcome({"faithfulness": kappa(40)}, min_agreement=0.8, statistic="preference")
    assert not wrong.passed and "preference agreement preference labels" in wrong.message


def test_a_rule_on_the_intervals_lower_bound_is_not_passed_by_a_lucky_value():
    assert rules(min_agreement=0.6, on="ci_low").agreements == (
        Agreement("faithfulness", 0.6, None, 30, "ci_low"),
    )
    with pytest.raises(GateFileError, match=r"on must be value .* or ci_low"):
        rules(min_agreement=0.6, on="mean")
    # kappa 0.70 [0.50, 0.85]: its value passes 0.6, its lower bound does not
    assert outcome({"faithfulness": kappa(40)}, min_agreement=0.6).passed
    low = outcome({"faithfulness": kappa(40)}, min_agreement=0.6, on="ci_low")
    assert not low.passed and "(lower bound 0.50): below 0.6" in low.message
    assert low.rule == (
        "faithfulness: validated on >= 30 of your labels, agreement's CI lower bound >= 0.6"
    )
    assert outcome({"faithfulness": kappa(40)}, min_agreement=0.45, on="ci_low").passed
    no_interval = Validation("faithfulness", 40, "claim", "cohen_kappa", 0.9, None)
    found = outcome({"faithfulness": no_interval}, min_agreement=0.6, on="ci_low")
    assert not found.passed and "no confidence interval" in found.message
