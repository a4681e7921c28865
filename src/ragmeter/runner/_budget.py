"""A cheap first pass: a subset of the samples (``limit``, ``sample``) and a spending limit
(``max_cost``) that stops starting samples before the run's cost would pass it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.dataset import Dataset, head
from ragmeter.dataset import sample as draw_sample
from ragmeter.judge import Judge, Usage
from ragmeter.metrics import Metric, SampleMetric
from ragmeter.runner._estimate import EstimatingJudge, estimate_sample, price_of
from ragmeter.runner._judged import JudgedSetup, judges_for
from ragmeter.runner._task import SampleTask

PRICE_HINT = (
    "give the judge's price in its config file (--judge-config), e.g. a [judge.price] table "
    'with input_per_million = 0.15, output_per_million = 0.60, currency = "USD" (from '
    "Python: JudgeConfig(..., price=Price(input_per_million=..., output_per_million=...)))"
)


def take_subset(
    data: Dataset,
    *,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    stratify: str | None = None,
) -> Dataset:
    """The first ``limit`` samples, or ``sample`` of them drawn with ``seed`` (by the
    metadata tag ``stratify``), or all of them."""
    if limit is not None and sample is not None:
        raise ValueError("give limit or sample, not both (--limit N or --sample N)")
    if stratify is not None and sample is None:
        raise ValueError("stratify applies to a random sample: give sample too (--sample N)")
    if limit is not None:
        return head(data, limit)
    if sample is not None:
        return draw_sample(data, sample, seed=seed, stratify=stratify)
    return data


def _unpriced(judge: Judge) -> str:
    described = judge.describe()
    if described.get("kind") == "local":
        return (
            "the embedded offline judge costs nothing and has no price, so max_cost "
            "(--max-cost) cannot apply to it: drop it, or judge with an endpoint; to cap it "
            f"anyway, {PRICE_HINT}"
        )
    model = described.get("model") or judge.identity
    return f"max_cost (--max-cost) needs the judge's price, and {model!r} has none known: " + (
        PRICE_HINT
    )


def check_prices(metrics: Sequence[SampleMetric], judges: Mapping[str, Judge | None]) -> str | None:
    """The currency every judge the run asks (``judges``: each metric's) is priced in; a
    ``ValueError`` saying how to give prices when one has none (or they differ)."""
    currencies: set[str] = set()
    for metric in metrics:
        judge = judges.get(metric.name)
        if judge is None or not metric.uses_judge:
            continue
        price = price_of(judge)
        if price is None:
            raise ValueError(_unpriced(judge))
        currencies.add(price.currency)
    if len(currencies) > 1:
        raise ValueError(
            f"the judges are priced in different currencies ({', '.join(sorted(currencies))}): "
            "one max_cost (--max-cost) cannot cap them; price them in one currency"
        )
    return currencies.pop() if currencies else None


def check_budget(max_cost: float, metrics: Sequence[Metric], judge: Judge | None) -> None:
    """Refuse a ``max_cost`` that cannot work, before the run starts: not positive, or a
    judge the run would ask has no price."""
    if not max_cost > 0:
        raise ValueError(f"max_cost (--max-cost) must be more than 0, got {max_cost}")
    judged = [m for m in metrics if isinstance(m, SampleMetric) and m.uses_judge]
    if judged:
        check_prices(judged, judges_for(judged, judge))


class Budget:
    """Starts a sample only while what the run spent, plus the estimates of the samples in
    flight (or what they spent so far, when more), plus its own estimate stays within
    ``max_cost``. What was spent before in the same run directory counts."""

    def __init__(self, max_cost: float, services: JudgedSetup, spent_before: float) -> None:
        self.max_cost = max_cost
        self.currency = check_prices(services.metrics, services.judges)
        self.spent_before = spent_before
        self.spent_now = 0.0
        #: The estimated cost of each sample in flight, by index.
        self.estimates: dict[int, float] = {}
        self.stopped = False
        #: The estimate of the sample that was not started.
        self.next_estimate: float | None = None
        self._metrics = {m.name: m for m in services.metrics}
        self._judges = services.judges
        self._estimators: dict[int, EstimatingJudge] = {}

    @property
    def spent(self) -> float:
        return self.spent_before + self.spent_now

    async def _estimate(self, task: SampleTask) -> float:
        try:
            used = await estimate_sample(
                task.sample,
                [self._metrics[name] for name in task.metrics],
                self._judges,
                self._estimators,
                language=task.language,
                sample_id=f"estimate:{task.sample_id}",
                repeats=task.repeats,
            )
        except Exception:  # noqa: BLE001 - an odd sample costs what the others were estimated
            return max(self.estimates.values(), default=0.0)
        return used.cost

    async def admits(self, task: SampleTask, live: Mapping[int, Mapping[str, Any]]) -> bool:
        """Whether ``task`` may start (``live``: the usage so far of the samples in flight)."""
        cost = await self._estimate(task)
        flying = sum(
            max(estimate, float(live.get(index, {}).get("cost", 0.0)))
            for index, estimate in self.estimates.items()
        )
        if self.spent + flying + cost > self.max_cost:
            self.stopped = True
            self.next_estimate = cost
            return False
        self.estimates[task.index] = cost
        return True

    def finished(self, index: int, usage: Usage) -> None:
        self.estimates.pop(index, None)
        self.spent_now += usage.cost

    def record(self, n_samples: int, n_done: int) -> dict[str, Any]:
        """For the run's config: the limit, what was spent, whether it stopped the run."""
        return {
            "max_cost": self.max_cost,
            "spent": self.spent,
            "currency": self.currency,
            "stopped": self.stopped,
            "next_sample_estimate": self.next_estimate,
            "samples": n_samples,
            "samples_judged": n_done,
        }
