"""What the dashboard shows, as plain JSON-ready data: the API returns it as is and the
pages render it. The statistics come from :mod:`ragmeter.stats` (bootstrap intervals,
paired tests); nothing here re-derives them.

A score is a number only when its status is ``ok``; a failed, not-applicable or not-started
result has ``score: null`` and its status, never a number standing in for it.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ragmeter.gate import GateRules
from ragmeter.metrics import Status
from ragmeter.results import (
    ConversationAggregate,
    ConversationResult,
    EvaluationResult,
    SampleResult,
    tags_of,
    worst_conversations,
)
from ragmeter.stats import Interval, MeanEstimate, compare, estimate_means
from ragmeter.store import ESTIMATE_RESAMPLES, RunInfo

#: Bootstrap resamples for the dashboard's intervals (fewer than a report's: pages stay fast);
#: those a run keeps in the store, which are then read instead of its samples.
RESAMPLES = ESTIMATE_RESAMPLES
#: Status filter values (``n/a`` is the short name of ``not_applicable``).
STATUSES = {
    "ok": Status.OK,
    "failed": Status.FAILED,
    "n/a": Status.NOT_APPLICABLE,
    "not_applicable": Status.NOT_APPLICABLE,
    "not_started": Status.NOT_STARTED,
}
MAX_PER_PAGE = 200
CHANGED_SHOWN = 20

Loader = Callable[[RunInfo], EvaluationResult]


class QueryError(ValueError):
    """A query parameter the dashboard cannot use; the message says which and why."""


def _number(value: Any) -> float | None:
    """A finite float, or None (NaN is never shown as a score)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def parse_time(value: str | None, name: str) -> dt.datetime | None:
    """``YYYY-MM-DD`` or an ISO time, as UTC; None when not given."""
    if not value:
        return None
    try:
        when = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        message = f"{name}: expected a date (YYYY-MM-DD) or an ISO time, got {value!r}"
        raise QueryError(message) from None
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def within(infos: Sequence[RunInfo], since: str | None, until: str | None) -> list[RunInfo]:
    """The runs recorded from ``since`` up to ``until`` (a bare date includes that day)."""
    start, end = parse_time(since, "since"), parse_time(until, "until")
    if end is not None and until is not None and len(until.strip()) == 10:
        end += dt.timedelta(days=1)
    return [
        info
        for info in infos
        if (start is None or info.created_at >= start) and (end is None or info.created_at < end)
    ]


# -- runs ----------------------------------------------------------------------------------
def run_summary(info: RunInfo) -> dict[str, Any]:
    """A run's record with its per-metric means and counts (no samples loaded)."""
    metrics = {}
    for described in info.metrics:
        name = described["name"]
        aggregate = info.aggregates.get(name) or {}
        metrics[name] = {
            "direction": described.get("direction"),
            "mean": _number(aggregate.get("mean")),
            "n_total": aggregate.get("n_total"),
            "n_ok": aggregate.get("n_ok"),
            "n_failed": aggregate.get("n_failed"),
            "n_not_applicable": aggregate.get("n_not_applicable"),
            "n_not_started": aggregate.get("n_not_started", 0),  # 0 in runs from before it
        }
    return {
        "id": info.id,
        "name": info.name,
        "created_at": info.created_at.isoformat(),
        "status": info.status,
        "n_samples": info.n_samples,
        "params": info.params,
        "tags": info.tags,
        "notes": info.notes,
        "git_commit": info.git_commit,
        "git_dirty": info.git_dirty,
        "dataset_hash": info.dataset_hash,
        "metrics": metrics,
    }


def metric_names(infos: Sequence[RunInfo]) -> list[str]:
    """Every metric of these runs, in the order first seen."""
    return list(dict.fromkeys(m["name"] for info in infos for m in info.metrics))


class Estimates:
    """Each run's means with bootstrap intervals (:func:`ragmeter.stats.estimate_means`):
    those the store keeps with the run (one row, no sample read: a trend over runs of 50k
    samples answers at once), else computed from its samples, once per run: stored runs
    never change."""

    def __init__(self, load: Loader, limit: int = 1024) -> None:
        self.load = load
        self.limit = limit
        self._done: dict[str, dict[str, MeanEstimate]] = {}

    def __call__(self, info: RunInfo) -> dict[str, MeanEstimate]:
        found = self._done.get(info.id)
        if found is None:
            found = kept_estimates(info)
        if found is None:
            found = estimate_means(self.load(info), n_resamples=RESAMPLES)
            if len(self._done) >= self.limit:
                self._done.pop(next(iter(self._done)))
            self._done[info.id] = found
        return found


def kept_estimates(info: RunInfo) -> dict[str, MeanEstimate] | None:
    """The estimates the store keeps with ``info``, when made as the dashboard makes them
    (every metric, :data:`RESAMPLES` resamples, seed 0); None for a run without them."""
    kept = info.estimates or {}
    names = [m["name"] for m in info.metrics]
    if any(
        kept.get(name, {}).get("n_resamples") != RESAMPLES or kept[name].get("seed") != 0
        for name in names
    ):
        return None
    found = {}
    for name in names:
        item, ci = kept[name], kept[name]["ci"]
        interval = (
            None if ci is None else Interval(ci["low"], ci["high"], ci["level"], ci["method"])
        )
        found[name] = MeanEstimate(name, item["n"], item["n_total"], item["mean"], interval)
    return found


def _mean_json(mean: float | None, ci: Interval | None) -> dict[str, Any]:
    """A mean and its interval as JSON."""
    return {
        "mean": _number(mean),
        "ci_low": None if ci is None else _number(ci.low),
        "ci_high": None if ci is None else _number(ci.high),
        "level": None if ci is None else ci.level,
    }


def estimate_json(estimate: MeanEstimate) -> dict[str, Any]:
    return {**_mean_json(estimate.mean, estimate.ci), "n": estimate.n, "n_total": estimate.n_total}


def run_detail(info: RunInfo, estimates: dict[str, MeanEstimate]) -> dict[str, Any]:
    """:func:`run_summary` with each metric's confidence interval."""
    out = run_summary(info)
    for name, metric in out["metrics"].items():
        if name in estimates:
            metric.update(estimate_json(estimates[name]))
    out["config"] = info.config
    return out


# -- samples -------------------------------------------------------------------------------
@dataclass(frozen=True)
class SampleQuery:
    """Which samples, in which order: ``status`` of ``metric`` (of any metric without one),
    a ``tag`` (``key=value``, ``key:value`` or a bare value), free text ``q`` (id,
    question, response, reference), ``sort`` by a metric's score (``order`` asc or desc;
    samples without a score come last either way), a page of ``per_page``."""

    metric: str | None = None
    status: str | None = None
    tag: str | None = None
    q: str | None = None
    sort: str | None = None
    order: Literal["asc", "desc"] = "asc"
    page: int = 1
    per_page: int = 100

    def params(self, **changes: object) -> dict[str, str]:
        """The query as URL parameters (those set), with ``changes``."""
        values: dict[str, object] = {
            "metric": self.metric,
            "status": self.status,
            "tag": self.tag,
            "q": self.q,
            "sort": self.sort,
            "order": self.order if self.sort else None,
            "page": self.page if self.page != 1 else None,
        }
        values.update(changes)
        return {k: str(v) for k, v in values.items() if v not in (None, "")}


def check_query(query: SampleQuery, metrics: Sequence[str]) -> None:
    for name, value in (("metric", query.metric), ("sort", query.sort)):
        if value and value != "index" and value not in metrics:
            raise QueryError(f"{name}: no metric {value!r} in this run; it has {list(metrics)}")
    if query.status and query.status not in STATUSES:
        raise QueryError(f"status: expected ok, failed, n/a or not_started, got {query.status!r}")
    if query.order not in ("asc", "desc"):
        raise QueryError(f"order: expected asc or desc, got {query.order!r}")
    if query.page < 1 or not 1 <= query.per_page <= MAX_PER_PAGE:
        raise QueryError(f"page must be >= 1 and per_page 1 to {MAX_PER_PAGE}")


def _has_tag(sample: SampleResult, wanted: str) -> bool:
    tags = tags_of(sample.sample.metadata or {})
    for separator in ("=", ":"):
        key, found, value = wanted.partition(separator)
        if found:
            return value.strip() in tags.get(key.strip(), [])
    return any(wanted in values or wanted == key for key, values in tags.items())


def _matches_text(sample: SampleResult, needle: str) -> bool:
    s = sample.sample
    texts = (sample.sample_id, s.user_input, s.response, s.reference)
    return any(needle in text.casefold() for text in texts if text)


def _has_status(sample: SampleResult, status: Status, metric: str | None) -> bool:
    if metric:
        found = sample.scores.get(metric)
        return found is not None and found.status is status
    return any(r.status is status for r in sample.scores.values())


def ok_score(sample: SampleResult, metric: str) -> float | None:
    """The sample's score on ``metric`` when its status is ok, else None."""
    found = sample.scores.get(metric)
    if found is None or found.status is not Status.OK:
        return None
    return _number(found.score)


def select_samples(result: EvaluationResult, query: SampleQuery) -> list[SampleResult]:
    """The samples ``query`` asks for, in its order (every page)."""
    check_query(query, [m.name for m in result.metrics])
    chosen: list[SampleResult] = list(result.samples)
    if query.status:
        status = STATUSES[query.status]
        chosen = [s for s in chosen if _has_status(s, status, query.metric)]
    if query.tag:
        chosen = [s for s in chosen if _has_tag(s, query.tag.strip())]
    if query.q and query.q.strip():
        needle = query.q.strip().casefold()
        chosen = [s for s in chosen if _matches_text(s, needle)]
    if query.sort and query.sort != "index":
        keyed = [(ok_score(s, query.sort), s) for s in chosen]
        scored = [(value, s) for value, s in keyed if value is not None]
        scored.sort(key=lambda pair: (pair[0], pair[1].index), reverse=query.order == "desc")
        chosen = [s for _, s in scored] + [s for value, s in keyed if value is None]
    elif query.order == "desc":
        chosen.reverse()
    return chosen


def page_of(chosen: Sequence[SampleResult], query: SampleQuery) -> list[SampleResult]:
    start = (query.page - 1) * query.per_page
    return list(chosen[start : start + query.per_page])


def result_json(sample: SampleResult, metric: str) -> dict[str, Any]:
    found = sample.scores.get(metric)
    if found is None:
        return {"status": None, "score": None, "reason": None, "error": None}
    return {
        "status": found.status.value,
        "score": _number(found.score) if found.status is Status.OK else None,
        "reason": found.reason,
        "error": found.error,
    }


def sample_json(sample: SampleResult, metrics: Sequence[str]) -> dict[str, Any]:
    s = sample.sample
    return {
        "index": sample.index,
        "id": sample.sample_id,
        "question": s.user_input,
        "response": s.response,
        "reference": s.reference,
        "tags": tags_of(s.metadata or {}),
        "scores": {m: result_json(sample, m) for m in metrics},
    }


def samples_json(info: RunInfo, result: EvaluationResult, query: SampleQuery) -> dict[str, Any]:
    chosen = select_samples(result, query)
    metrics = [m.name for m in result.metrics]
    return {
        "run": info.id,
        "total": len(result),
        "matched": len(chosen),
        "page": query.page,
        "per_page": query.per_page,
        "query": query.params(),
        "samples": [sample_json(s, metrics) for s in page_of(chosen, query)],
    }


# -- conversations -------------------------------------------------------------------------
def ranked_conversations(result: EvaluationResult) -> list[ConversationResult]:
    """The run's conversations, worst first (:func:`ragmeter.results.worst_conversations`);
    a turn without a number is a :class:`QueryError` that says which row and how to fix it."""
    try:
        found = result.conversations()
    except ValueError as error:
        raise QueryError(str(error)) from None
    return worst_conversations(found, result.metrics)


def find_conversation(result: EvaluationResult, conversation_id: str) -> ConversationResult | None:
    return next(
        (c for c in ranked_conversations(result) if c.conversation_id == conversation_id), None
    )


def conversation_levels(
    result: EvaluationResult, found: list[ConversationResult]
) -> dict[str, ConversationAggregate]:
    """Per metric the conversation-level mean (of each conversation's mean) with its
    interval over conversations, and the turn-level mean beside it."""
    return result.conversation_aggregates(n_resamples=RESAMPLES) if found else {}


def _level_json(agg: ConversationAggregate) -> dict[str, Any]:
    return {
        "direction": agg.direction.value,
        **_mean_json(agg.mean, agg.ci),
        "n_conversations": agg.n_conversations,
        "n_scored": agg.n_scored,
        "turn_mean": _number(agg.turn_mean),
        "n_turns": agg.n_turns,
        "n_turns_ok": agg.n_turns_ok,
    }


def conversation_summary_json(conversation: ConversationResult) -> dict[str, Any]:
    """A conversation's id, its number of turns and per metric its mean over the ok turns,
    its worst turn and its coverage."""
    return {
        "id": conversation.conversation_id,
        "n_turns": conversation.n_turns,
        "metrics": {
            name: {
                "mean": _number(m.mean),
                "worst_turn": m.worst_turn,
                "worst_score": _number(m.worst_score),
                "n_ok": m.n_ok,
                "n_failed": m.n_failed,
                "n_not_applicable": m.n_not_applicable,
                "n_not_started": m.n_not_started,
            }
            for name, m in conversation.metrics.items()
        },
    }


def conversations_json(info: RunInfo, result: EvaluationResult) -> dict[str, Any]:
    """A run's conversations, worst first, with the conversation-level means (an empty list
    for a single-turn run)."""
    found = ranked_conversations(result)
    return {
        "run": info.id,
        "total": len(found),
        "levels": {m: _level_json(a) for m, a in conversation_levels(result, found).items()},
        "conversations": [conversation_summary_json(c) for c in found],
    }


def conversation_json(
    info: RunInfo, result: EvaluationResult, conversation: ConversationResult
) -> dict[str, Any]:
    """One conversation with each of its turns in order: its sample and scores."""
    metrics = [m.name for m in result.metrics]
    return {
        "run": info.id,
        **conversation_summary_json(conversation),
        "turns": [
            {"turn": number, **sample_json(sample, metrics)}
            for number, sample in zip(conversation.turn_numbers(), conversation.turns, strict=True)
        ],
    }


# -- trends --------------------------------------------------------------------------------
def thresholds_json(rules: GateRules | None) -> list[dict[str, Any]]:
    """The gate's thresholds; those over a tag group (``tag`` set) do not bound a run mean."""
    if rules is None:
        return []
    return [
        {
            "metric": t.metric,
            "min": t.min,
            "max": t.max,
            "statistic": t.statistic,
            "tag": t.tag,
            "value": t.value,
            "rule": t.name,
        }
        for t in rules.thresholds
        if t.min is not None or t.max is not None
    ]


#: The dataset key and label of runs whose samples came from Python, not from a file.
NO_SOURCE, NO_SOURCE_LABEL = "", "samples given in Python"


def dataset_key(info: RunInfo) -> str:
    """The dataset a run scored, as trends group runs by: its source (the file or folder
    given to ``evaluate`` or ``ragmeter eval``; for a monitor's window, the production
    source it was read from, its ``source`` parameter), or :data:`NO_SOURCE` for samples
    given in Python. Not the fingerprint: it covers the responses too, so it changes with
    every run of a system that changes."""
    source = info.params.get("source") if isinstance(info.params, dict) else None
    return info.dataset_path or (source if isinstance(source, str) else "") or NO_SOURCE


def datasets_json(ordered: Sequence[RunInfo]) -> list[dict[str, Any]]:
    """The datasets of ``ordered`` (in the order their first run comes), each with the label
    a chart's legend shows (the file's name; its whole path where two names are the same),
    its source, how many runs scored it and the fingerprints their samples had.

    >>> from types import SimpleNamespace as Run
    >>> runs = [Run(dataset_path=p, dataset_hash=h, params={}) for p, h in
    ...         (("a/golden.jsonl", "f1"), ("b/golden.jsonl", "f2"), ("c.csv", "f3"),
    ...          (None, "f4"), ("c.csv", "f5"))]
    >>> [(d["label"], d["runs"], d["fingerprints"]) for d in datasets_json(runs)]
    [('a/golden.jsonl', 1, ['f1']), ('b/golden.jsonl', 1, ['f2']), ('c.csv', 2, ['f3', 'f5']),
     ('samples given in Python', 1, ['f4'])]
    """
    found: dict[str, dict[str, Any]] = {}
    for info in ordered:
        key = dataset_key(info)
        entry = found.setdefault(
            key,
            {
                "dataset": key,
                "label": "",
                "source": key or None,
                "runs": 0,
                "fingerprints": [],
            },
        )
        entry["runs"] += 1
        if info.dataset_hash and info.dataset_hash not in entry["fingerprints"]:
            entry["fingerprints"].append(info.dataset_hash)
    names: dict[str, int] = {}
    for entry in found.values():
        source = entry["source"]
        entry["label"] = source.replace("\\", "/").rsplit("/", 1)[-1] if source else ""
        names[entry["label"]] = names.get(entry["label"], 0) + 1
    for entry in found.values():
        if not entry["source"]:
            entry["label"] = NO_SOURCE_LABEL
        elif names[entry["label"]] > 1:
            entry["label"] = entry["source"]
    return list(found.values())


def trends_json(
    infos: Sequence[RunInfo],
    estimates: Estimates,
    rules: GateRules | None,
    metrics: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Per metric, oldest run first: its mean and 95% interval in each run (each point names
    its run's ``dataset``, see :func:`dataset_key`: a chart draws a line per dataset), and the
    gate's thresholds on it; ``datasets`` lists the datasets with their labels."""
    ordered = sorted(infos, key=lambda i: (i.created_at, i.id))
    names = list(metrics) if metrics else metric_names(ordered)
    thresholds = thresholds_json(rules)
    out: dict[str, Any] = {
        "runs": len(ordered),
        "datasets": datasets_json(ordered),
        "metrics": [],
    }
    for name in names:
        points = []
        for info in ordered:
            if not any(m["name"] == name for m in info.metrics):
                continue
            found = estimates(info).get(name)
            if found is None:
                continue
            points.append(
                {
                    "run": info.id,
                    "name": info.name,
                    "created_at": info.created_at.isoformat(),
                    "tags": info.tags,
                    "dataset": dataset_key(info),
                    **estimate_json(found),
                }
            )
        direction = next(
            (m.get("direction") for i in ordered for m in i.metrics if m["name"] == name), None
        )
        out["metrics"].append(
            {
                "metric": name,
                "direction": direction,
                "points": points,
                "thresholds": [t for t in thresholds if t["metric"] == name],
            }
        )
    return out


# -- compare -------------------------------------------------------------------------------
def _change(a: SampleResult, b: SampleResult, metrics: Sequence[str]) -> dict[str, Any] | None:
    """The metric on which a sample changed most between two runs (a change of status
    before any change of score), or None when nothing changed."""
    best: dict[str, Any] | None = None
    best_key: tuple[int, float] = (-1, 0.0)
    for metric in metrics:
        before, after = result_json(a, metric), result_json(b, metric)
        if before["status"] is None or after["status"] is None:
            continue
        if before["status"] != after["status"]:
            key: tuple[int, float] = (1, 0.0)
            delta = None
        elif before["score"] is not None and after["score"] is not None:
            delta = after["score"] - before["score"]
            key = (0, abs(delta))
            if delta == 0:
                continue
        else:
            continue
        if key > best_key:
            best_key = key
            best = {
                "id": a.sample_id,
                "question": a.sample.user_input,
                "metric": metric,
                "baseline_index": a.index,
                "candidate_index": b.index,
                "baseline": before,
                "candidate": after,
                "delta": delta,
            }
    return best


def changed_samples(
    old: EvaluationResult, new: EvaluationResult, limit: int = CHANGED_SHOWN
) -> list[dict[str, Any]]:
    """The samples (paired by id) that changed most: status changes first, then the
    largest score change on any metric."""
    metrics = [m.name for m in old.metrics if m.name in {n.name for n in new.metrics}]
    after = {s.sample_id: s for s in new.samples}
    changes = (_change(s, after[s.sample_id], metrics) for s in old.samples if s.sample_id in after)
    found = [change for change in changes if change is not None]
    found.sort(key=lambda c: (c["delta"] is not None, -abs(c["delta"] or 0.0)))
    return found[:limit]


def compare_json(
    before: RunInfo, after: RunInfo, old: EvaluationResult, new: EvaluationResult
) -> dict[str, Any]:
    """Per metric the paired change with its interval and p-values
    (:func:`ragmeter.stats.compare`), and the samples that changed most."""
    try:
        comparisons = compare(old, new, n_resamples=RESAMPLES)
    except ValueError as error:
        raise QueryError(str(error)) from None
    metrics = []
    for comparison in comparisons:
        figures = comparison.to_dict()
        for key in ("baseline_mean", "candidate_mean", "difference", "p_value", "p_adjusted"):
            figures[key] = _number(figures[key])
        metrics.append(figures)
    return {
        "baseline": run_summary(before),
        "candidate": run_summary(after),
        "metrics": metrics,
        "changed": changed_samples(old, new),
    }
