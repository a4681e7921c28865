"""Function metrics (@metric): return values, failures, versions, sync and async scoring."""

from __future__ import annotations

import asyncio
import gc
import threading
import warnings

import numpy as np
import pytest

from ragmeter import DatasetError, Direction, MetricResult, Sample, Status, aevaluate, evaluate
from ragmeter.metrics import Metric, SampleMetric
from ragmeter.metrics.custom import AsyncFunctionMetric, FunctionMetric, metric

SAMPLE = Sample(id="s", user_input="How much is it?", response="It costs $20.", reference="$20")


def to_result(value: object) -> MetricResult:
    """What a ``@metric`` function's return value becomes: a function metric returning it,
    scored on one sample."""

    @metric
    def returns(sample: Sample) -> object:
        return value

    return returns.score(SAMPLE)


def rows(*responses: str) -> list[dict[str, str]]:
    return [{"id": f"r{i}", "response": r} for i, r in enumerate(responses)]


# -- what the function returns --------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "score", "reason"),
    [
        (0.25, 0.25, None),
        (3, 3.0, None),
        (True, 1.0, None),
        (False, 0.0, None),
        (np.float32(0.5), 0.5, None),
        (np.bool_(True), 1.0, None),
        ((0.75, "three of four"), 0.75, "three of four"),
        ((False, "no price"), 0.0, "no price"),
    ],
)
def test_scores(value, score, reason):
    result = to_result(value)
    assert result.status is Status.OK
    assert result.score == score and isinstance(result.score, float)
    assert result.reason == reason


def test_none_is_not_applicable():
    assert to_result(None).status is Status.NOT_APPLICABLE
    result = to_result((None, "no price asked"))
    assert result.status is Status.NOT_APPLICABLE and result.reason == "no price asked"


def test_a_metric_result_is_kept():
    given = MetricResult.ok(0.5, "half", matched=["a"])
    assert to_result(given) is given


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), "returned nan, which is not a score"),
        (float("inf"), "returned inf, which is not a score"),
        (np.float64("nan"), "returned nan, which is not a score"),
        ("0.5", "returned str '0.5'; expected a number"),
        ([1.0], "returned list [1.0]; expected a number"),
        ((1.0, "ok", "extra"), "returned a tuple of 3"),
        ((1.0, 2), "expected (score, reason) with a str reason"),
        ((float("nan"), "why"), "returned nan, which is not a score"),
    ],
)
def test_what_is_not_a_score_fails(value, message):
    result = to_result(value)
    assert result.status is Status.FAILED
    assert result.score is None
    assert message in result.error


def test_a_coroutine_from_a_sync_function_fails_without_a_warning():
    async def late(sample):
        return 1.0

    wrapped = metric(name="late")(lambda sample: late(sample))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited" would fail here
        result = wrapped.score(SAMPLE)
        gc.collect()
    assert result.status is Status.FAILED and "async def" in result.error


# -- the decorator ------------------------------------------------------------------------------
def test_bare_decorator_uses_the_function_name_and_docstring():
    @metric
    def mentions_price(sample):
        """The answer states a price.

        More text that is not the description.
        """
        return "$" in sample.response

    assert isinstance(mentions_price, FunctionMetric) and isinstance(mentions_price, Metric)
    assert not isinstance(mentions_price, SampleMetric)  # scored with the plain metrics
    assert mentions_price.name == "mentions_price"
    assert mentions_price.description == "The answer states a price."
    assert mentions_price.requires == (("response",),)
    assert mentions_price.direction is Direction.HIGHER_IS_BETTER
    assert mentions_price.score(SAMPLE).score == 1.0
    assert mentions_price.fn(SAMPLE) is True  # the function itself is still there


def test_decorator_options():
    @metric(
        "answer_length",
        requires=["response", ("reference", "reference_contexts")],
        direction="lower",
        version="3",
        description="Characters in the answer.",
    )
    def length(sample):
        return len(sample.response)

    assert length.name == "answer_length"
    assert length.requires == (("response",), ("reference", "reference_contexts"))
    assert length.direction is Direction.LOWER_IS_BETTER
    assert length.description == "Characters in the answer."
    assert length.params() == {"version": "3", "function": f"{__name__}.{length.fn.__qualname__}"}
    assert metric(direction=Direction.LOWER_IS_BETTER)(len).direction is Direction.LOWER_IS_BETTER


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"requires": ["answer_text"]}, "unknown sample field"),
        ({"requires": [()]}, "unknown sample field"),
        ({"direction": "up"}, "direction must be 'higher' or 'lower'"),
    ],
)
def test_bad_options_are_refused_at_definition(options, error):
    with pytest.raises(ValueError, match=error):
        metric(name="m", **options)(lambda sample: 1.0)


def test_a_lambda_needs_a_name():
    with pytest.raises(ValueError, match="give the metric a name"):
        metric(lambda sample: 1.0)
    assert metric(name="one")(lambda sample: 1.0).name == "one"


def test_a_metric_cannot_be_wrapped_twice():
    one = metric(name="one")(lambda sample: 1.0)
    with pytest.raises(TypeError, match="a metric already"):
        metric(one)


# -- in evaluate ----------------------------------------------------------------------------------
@metric(version="2")
def price_stated(sample):
    """The answer states a price."""
    if sample.response == "boom":
        raise RuntimeError("exploded")
    if sample.response == "nan":
        return float("nan")
    if sample.response == "skip":
        return None
    return ("$" in sample.response, "looked for a dollar sign")


def test_evaluate_records_scores_failures_and_not_applicable():
    result = evaluate(rows("It costs $20.", "Cheap.", "boom", "nan", "skip"), [price_stated])
    scores = [s.scores["price_stated"] for s in result.samples]
    assert [r.status for r in scores] == [
        Status.OK,
        Status.OK,
        Status.FAILED,
        Status.FAILED,
        Status.NOT_APPLICABLE,
    ]
    assert [r.score for r in scores[:2]] == [1.0, 0.0]
    assert scores[0].reason == "looked for a dollar sign"
    assert scores[2].error == "RuntimeError: exploded"
    assert "not a score" in scores[3].error
    aggregate = result.aggregates["price_stated"]
    assert (aggregate.n_ok, aggregate.n_failed, aggregate.n_not_applicable) == (2, 2, 1)
    assert aggregate.mean == 0.5


def test_the_version_is_recorded_and_a_changed_version_is_not_resumed(tmp_path):
    result = evaluate(rows("$1", "none"), [price_stated], run_dir=tmp_path / "run")
    (info,) = result.metrics
    assert info.params["version"] == "2"
    assert info.direction is Direction.HIGHER_IS_BETTER
    changed = metric(name="price_stated", version="3")(price_stated.fn)
    with pytest.raises(ValueError, match="ran with settings"):
        evaluate(rows("$1", "none"), [changed], run_dir=tmp_path / "run", resume=True)


def test_required_fields_are_checked_before_scoring():
    calls = []

    @metric(requires=["reference"])
    def needs_reference(sample):
        calls.append(sample.id)
        return 1.0

    with pytest.raises(DatasetError, match="reference"):
        evaluate(rows("a"), [needs_reference])
    assert calls == []
    assert needs_reference.score_batch([Sample(response="a")])[0].error == (
        "missing field(s): reference"
    )


# -- async functions -------------------------------------------------------------------------------
class InFlight:
    """Counts how many calls run at once and on which event loops and threads."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        # The loops themselves, not their ids: a closed loop's id can be reused by the next.
        self.loops: list[asyncio.AbstractEventLoop] = []
        self.threads: set[int] = set()

    async def __call__(self, sample: Sample) -> float:
        loop = asyncio.get_running_loop()
        if not any(seen is loop for seen in self.loops):
            self.loops.append(loop)
        self.threads.add(threading.get_ident())
        self.now += 1
        self.most = max(self.most, self.now)
        await asyncio.sleep(0.02)
        self.now -= 1
        if sample.response == "boom":
            raise ValueError("async boom")
        return len(sample.response or "") / 10


def test_an_async_function_is_awaited_concurrently_on_the_runners_loop():
    counter = InFlight()
    scored = metric(name="slow_length")(counter)
    assert isinstance(scored, AsyncFunctionMetric) and isinstance(scored, FunctionMetric)
    assert isinstance(scored, SampleMetric) and not scored.uses_judge

    async def main() -> tuple[asyncio.AbstractEventLoop, object]:
        result = await aevaluate(rows(*["abcde"] * 20, "boom"), [scored], concurrency=8)
        return asyncio.get_running_loop(), result

    loop, result = asyncio.run(main())
    assert len(counter.loops) == 1 and counter.loops[0] is loop  # no loop per sample
    assert 1 < counter.most <= 8
    scores = result.scores("slow_length")
    assert scores[:20] == [0.5] * 20 and scores[20] is None
    assert result.samples[20].scores["slow_length"].error == "ValueError: async boom"
    assert "judges" not in result.config or not result.config["judges"]


def test_async_and_sync_metrics_in_one_run():
    @metric
    async def shouts(sample):
        await asyncio.sleep(0)
        return sample.response.isupper()

    result = evaluate(rows("YES", "no"), [shouts, price_stated])
    assert result.scores("shouts") == [1.0, 0.0]
    assert result.scores("price_stated") == [0.0, 0.0]
    assert [m.name for m in result.metrics] == ["shouts", "price_stated"]


def test_async_returns_are_checked_like_sync_ones():
    @metric(name="bad")
    async def bad(sample):
        return float("nan") if sample.response == "nan" else None

    result = evaluate(rows("nan", "none"), [bad])
    first, second = (s.scores["bad"] for s in result.samples)
    assert first.status is Status.FAILED and "not a score" in first.error
    assert second.status is Status.NOT_APPLICABLE


def test_async_missing_fields_fail_and_blank_fields_are_scored():
    @metric(requires=["response", "reference"])
    async def blank_ok(sample):
        return 1.0

    assert blank_ok.score(Sample(response="a")).error == "missing field(s): reference"
    assert blank_ok.score(Sample(response="  ", reference="x")).score == 1.0


def test_async_standalone_scoring_uses_one_loop_per_call():
    counter = InFlight()
    scored = metric(name="slow_length")(counter)
    assert scored.score(SAMPLE).score == pytest.approx(1.3)
    results = scored.score_batch([SAMPLE] * 10)
    assert [r.score for r in results] == [pytest.approx(1.3)] * 10
    assert counter.most > 1  # the batch ran concurrently
    assert len(counter.loops) == 2  # one loop for score, one for score_batch

    async def inside_a_running_loop() -> MetricResult:
        return scored.score(SAMPLE)  # e.g. in Jupyter: runs on a loop of its own thread

    assert asyncio.run(inside_a_running_loop()).score == pytest.approx(1.3)
    assert asyncio.run(scored.ascore(Sample(response="boom"))).status is Status.FAILED
