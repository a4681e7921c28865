"""A sample's standing in a run: the mean over its metrics, each on a 0-1 scale, 1 best."""

from __future__ import annotations

import pytest

from ragmeter.dataset import Sample
from ragmeter.metrics import Direction, MetricResult
from ragmeter.mining import standings
from ragmeter.results import EvaluationResult, MetricInfo, SampleResult


def test_directions_scales_and_failures():
    metrics = [
        MetricInfo("faithfulness", Direction.HIGHER_IS_BETTER),
        MetricInfo("hallucination", Direction.LOWER_IS_BETTER),
        MetricInfo("latency_s", Direction.LOWER_IS_BETTER),  # not a 0-1 score
    ]
    rows = {
        "a": (0.8, 0.6, 10.0),
        "b": (0.2, 0.0, 30.0),
        "c": (None, None, 20.0),  # two failed results
        "d": (None, None, None),  # nothing scored
    }
    samples = []
    for index, (sample_id, values) in enumerate(rows.items()):
        scores = {
            m.name: MetricResult.failed("judge error") if v is None else MetricResult.ok(v)
            for m, v in zip(metrics, values)
        }
        samples.append(SampleResult(index, index + 1, sample_id, Sample(user_input="q"), scores))
    found = standings(EvaluationResult(samples, metrics))
    assert set(found) == {"a", "b", "c"}  # d has no ok score: no standing, never "worst"
    # latency 10..30 rescaled and flipped: 10 -> 1, 20 -> 0.5, 30 -> 0
    assert found["a"].score == pytest.approx((0.8 + (1 - 0.6) + 1.0) / 3)
    assert found["b"].score == pytest.approx((0.2 + (1 - 0.0) + 0.0) / 3)
    assert found["c"].score == pytest.approx(0.5)
    assert found["c"].scores == {"latency_s": 20.0}


def test_a_constant_metric_outside_0_1_counts_as_best():
    metric = MetricInfo("tokens", Direction.LOWER_IS_BETTER)
    samples = [
        SampleResult(i, i + 1, f"s{i}", Sample(user_input="q"), {"tokens": MetricResult.ok(7.0)})
        for i in range(2)
    ]
    assert {s.score for s in standings(EvaluationResult(samples, [metric])).values()} == {1.0}
