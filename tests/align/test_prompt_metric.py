"""``align`` with a real prompt metric (scripted judge): agreement, and --improve giving the
metric few-shot examples that change its answers on the held-out items."""

from __future__ import annotations

from ragmeter.align import align
from ragmeter.metrics.custom import PromptMetric
from ragmeter.testing import ScriptedJudge


def judge_that_learns() -> ScriptedJudge:
    """Says "pass" to everything, unless shown examples: then it fails hedged answers."""

    def respond(messages, schema):
        has_examples = any(m.role == "assistant" for m in messages)
        hedged = "maybe" in messages[-1].content
        label = "fail" if has_examples and hedged else "pass"
        return {"reason": "looks fine" if label == "pass" else "hedges", "label": label}

    return ScriptedJudge(respond)


def labelled(n: int = 24) -> list[dict]:
    rows = []
    for i in range(n):
        hedged = i % 2 == 1
        rows.append(
            {
                "id": f"r{i}",
                "user_input": f"Is plan {i} available?",
                "response": f"maybe, plan {i} could be" if hedged else f"Yes, plan {i} is.",
                "label": "fail" if hedged else "pass",
                "reason": "hedged" if hedged else "direct",
            }
        )
    return rows


def confident() -> PromptMetric:
    return PromptMetric("confident", kind="discrete", instruction="Is the answer direct?",
                        labels=["pass", "fail"], judge=judge_that_learns())  # fmt: skip


def test_agreement_of_a_prompt_metric_with_people():
    report = align(confident(), labelled(), n_resamples=500)
    assert report.kind == "discrete" and report.kind_source == "metric"
    accuracy = report.original.agreement["accuracy"]
    assert accuracy.value == 0.5 and accuracy.ci is not None
    assert len(report.original.disagreements) == 12
    assert all(d.human_label == "fail" for d in report.original.disagreements)
    assert all(d.metric_label == "pass" for d in report.original.disagreements)


def test_improve_measures_both_versions_on_the_held_out_items_only():
    report = align(confident(), labelled(), improve=True, shots=2, n_resamples=500)
    assert report.measured_on == "test split"
    train = set(report.split.train_ids)
    tested = set(report.original.sample_ids)
    assert tested == set(report.improved.sample_ids) and not (tested & train)
    assert report.original.agreement["accuracy"].value == 0.5
    assert report.improved.agreement["accuracy"].value == 1.0
