"""The notebook display of a result: a compact, escaped, self-contained HTML summary."""

import re

import pytest

from ragmeter import EvaluationResult, MetricResult, Sample, evaluate
from ragmeter.dataset import InvalidRow, Problem
from ragmeter.experiments import ExperimentResult
from ragmeter.metrics import Direction
from ragmeter.results import MetricInfo, SampleResult
from ragmeter.testing import ScriptedJudge

EVIL = "<script>alert(1)</script>"


def _result() -> EvaluationResult:
    """Four samples: metric EVIL (lower is better) scores 1.0 and 0.0, one n/a, one failed;
    ``rare`` scores once."""
    outcomes = [
        MetricResult.ok(1.0),
        MetricResult.ok(0.0),
        MetricResult.not_applicable("nothing"),
        MetricResult.failed("boom"),
    ]
    samples = [
        SampleResult(
            i,
            i + 1,
            f"s{i}",
            Sample(response=EVIL),
            {EVIL: outcome, "rare": MetricResult.ok(0.25) if i == 0 else MetricResult.failed("x")},
        )
        for i, outcome in enumerate(outcomes)
    ]
    config = {
        "judges": {EVIL: {"kind": "openai", "model": "<b>gpt</b>"}},
        "usage": {
            "calls": 1234,
            "cached_calls": 3,
            "prompt_tokens": 15000,
            "completion_tokens": 200,
            "cost": 0.0123,
            "currency": "USD",
        },
    }
    skipped = [InvalidRow(7, "bad", (Problem(7, "response", "missing", "add it"),))]
    metrics = [
        MetricInfo(EVIL, Direction.LOWER_IS_BETTER),
        MetricInfo("rare", Direction.HIGHER_IS_BETTER),
    ]
    return EvaluationResult(samples, metrics, config, skipped)


def _cells(html: str) -> list[list[str]]:
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", html)]
    return [cells for cells in rows if cells]  # the header row has <th> cells only


def test_every_text_is_escaped():
    html = _result()._repr_html_()
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;b&gt;gpt&lt;/b&gt;" in html


def test_each_metric_shows_mean_ci_coverage_and_direction():
    rows = _cells(_result()._repr_html_())
    evil, rare = rows
    # EVIL: mean of 1.0 and 0.0; 2 of 4 ok; 1 failed; 1 n/a; lower is better
    assert evil[0] == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert evil[1:3] == ["↓", "0.5000"]
    assert evil[4:] == ["2 / 4 (50%)", "1", "1"]
    low, high = (float(x) for x in evil[3].split("–"))
    assert 0.0 <= low <= 0.5 <= high <= 1.0
    # rare: one score, so no interval; 3 failed
    assert rare[1:] == ["↑", "0.2500", "—", "1 / 4 (25%)", "3", "0"]


def test_the_ci_is_the_one_ragmeter_stats_gives():
    from ragmeter.stats import estimate_means

    rows = [
        {"retrieved_context_ids": ["a", "b", "c"], "reference_context_ids": [r]}
        for r in "abcabdaacb"
    ]
    result = evaluate(rows, ["mrr", "hit@1"])
    shown = [row[3] for row in _cells(result._repr_html_())]
    estimates = estimate_means(result, n_resamples=2_000)  # as the display draws them
    assert shown == [
        f"{estimates[m].ci.low:.4f}–{estimates[m].ci.high:.4f}" for m in ("mrr", "hit@1")
    ]


def test_the_footer_has_samples_skipped_rows_judge_and_cost():
    html = _result()._repr_html_()
    assert "4 samples, 1 rows skipped as invalid" in html
    assert "judge: &lt;b&gt;gpt&lt;/b&gt; · openai" in html
    assert (
        "judge usage: 1,234 calls (3 cached), 15,000 prompt + 200 completion tokens, "
        "cost 0.0123 USD" in html
    )
    assert "http" not in html and "<link" not in html and "<style" not in html  # self-contained


def test_repr_is_one_short_line():
    assert repr(_result()) == f"EvaluationResult(4 samples, 1 skipped: {EVIL}=0.5000, rare=0.2500)"
    many = evaluate(
        [{"response": "the cat sat", "reference": "the cat sat"}],
        ["exact_match", "string_presence", "rouge_l", "rouge_1", "rouge_2", "chrf", "bleu"],
    )
    assert repr(many).endswith("rouge_2=1.0000, chrf=1.0000, +1 more)")


def test_a_judged_run_shows_its_judge_and_unpriced_usage():
    from tests.metrics.llm import scripts

    result = evaluate([scripts.SAMPLE], ["faithfulness"], judge=ScriptedJudge(scripts.answer))
    html = result._repr_html_()
    (row,) = _cells(html)
    assert row[:3] == ["faithfulness", "↑", "0.6667"]  # 2 of the 3 claims are supported
    assert row[3] == "—"  # one sample: no interval
    assert "judge: scripted" in html and "cost not counted (no price set)" in html


def test_an_experiment_shows_its_name_and_failures_above_the_result():
    result = _result()
    experiment = ExperimentResult(
        result,
        None,
        [{"id": "s0", "ok": True, "latency_s": 0.1}, {"id": "s1", "ok": False, "latency_s": None}],
        name="<i>exp</i>",
    )
    html = experiment._repr_html_()
    assert html.startswith("<div><strong>&lt;i&gt;exp&lt;/i&gt; · 1 of 2 pipeline calls failed")
    assert html.endswith(result._repr_html_())


@pytest.mark.parametrize("currency", [None, ""])
def test_no_judge_call_no_usage_line(currency):
    result = evaluate([{"response": "a", "reference": "a"}], ["exact_match"])
    result.config["usage"] = {"calls": 0, "currency": currency}
    assert "judge usage" not in result._repr_html_()
