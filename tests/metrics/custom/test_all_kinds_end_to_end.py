"""Every way of building a metric, together, through evaluate(), the report, the statistics
and the gate: a prompt metric, a function metric and a steps metric (scripted judge)."""

from __future__ import annotations

from ragmeter import evaluate
from ragmeter.gate import parse_rules, run_gate
from ragmeter.metrics.custom import MultiHopCompleteness, PromptMetric, metric
from ragmeter.report import render_html
from ragmeter.stats import compare
from ragmeter.testing import ScriptedJudge
from tests.metrics.custom.test_multihop_completeness import BOTH, HOPS, QUESTION, Script


@metric(requires=(("response",),), direction="lower")
def length(sample):
    return len(sample.response)


def rows(n: int, answer: str) -> list[dict]:
    return [
        {"id": f"q{i}", "user_input": QUESTION, "response": f"{answer} ({i})",
         "reference_contexts": HOPS}
        for i in range(n)
    ]  # fmt: skip


def judge() -> ScriptedJudge:
    steps = Script(BOTH)

    def respond(messages, schema):
        if schema.__name__.startswith("Custom"):
            return {"reason": "direct", "label": "pass"}
        return steps(messages, schema)

    return ScriptedJudge(respond)


def test_prompt_function_and_steps_metrics_run_report_compare_and_gate_together():
    direct = PromptMetric("direct", kind="discrete", instruction="Is it direct?",
                          labels=["pass", "fail"])  # fmt: skip
    metrics = [direct, length, MultiHopCompleteness()]
    # the scripted claims are the responses' own (a claim not from the response is left out)
    answer = " ".join(BOTH)
    before = evaluate(rows(6, answer), metrics, judge=judge(), progress=False)
    after = evaluate(rows(6, answer + " Both come in the X200 bundle."), metrics, judge=judge(),
                     progress=False)  # fmt: skip
    assert before.scores("direct") == [1.0] * 6
    assert before.scores("multihop_completeness") == [1.0] * 6
    html = render_html(after, compare=before)
    for name in ("direct", "length", "multihop_completeness"):
        assert name in html
    (change,) = compare(before, after, metrics=["length"], n_resamples=500)
    assert change.change == "worse"  # longer answers, and length is lower-is-better
    rules = parse_rules(
        {"thresholds": [{"metric": "direct", "min": 0.9},
                        {"metric": "multihop_completeness", "min": 0.5}]}
    )  # fmt: skip
    assert run_gate(after, rules).passed
