"""What to label next: the items of a run whose labels teach the most, as a file to label.

:func:`next_to_label` picks the judge's verdicts a person should check next. ``uncertain``:
those whose P(yes) is nearest 0.5 (a label there is the one most likely to disagree, so it
narrows the agreement's CI fastest), taken in turn from each tag group; ``worst``: the
lowest-scored samples' first; ``random``: a seeded sample, stratified by tag group (by the
judge's verdict without one). Items someone already labelled are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.align._on_labels import Judged, judged_items
from ragmeter.results import tags_of
from ragmeter.store import LEVELS, Label

if TYPE_CHECKING:
    from ragmeter.results import EvaluationResult

#: How :func:`next_to_label` chooses.
STRATEGIES: tuple[str, ...] = ("uncertain", "worst", "random")
#: The group of samples without the ``by`` tag.
NO_TAG = "(none)"


@dataclass(frozen=True)
class QueueItem:
    """One item to label: the label record to fill (``value`` empty) and what the person
    reads to fill it: the sample, the judge's verdict, P(yes), score and reason, and the tag
    group it was taken from."""

    metric: str
    sample_key: str
    judged: Judged
    group: str

    @property
    def probability(self) -> float | None:
        """The judge's P(yes) (a sample's score: its only number)."""
        return self.judged.result.score

    def to_dict(self, labeller: str = "") -> dict[str, Any]:
        """The record of the queue file: the label format with ``value`` null, then the
        sample and the judge's side (``ragmeter labels import`` reads it back, ignoring
        those)."""
        judged = self.judged
        sample = judged.sample
        result = judged.result
        verdict = result.details.get("label")
        record: dict[str, Any] = {
            "sample_id": judged.sample_id,
            "sample_key": self.sample_key,
            "metric": self.metric,
            "level": judged.level,
            "item": judged.item,
            "value": None,
            "labeller": labeller,
            "created_at": None,
            "note": "",
            "user_input": sample.user_input,
            "response": sample.response,
            "retrieved_contexts": list(sample.retrieved_contexts or []),
        }
        if judged.level == "context" and isinstance(judged.item, int):
            contexts = sample.retrieved_contexts or []
            if judged.item < len(contexts):
                record["context"] = contexts[judged.item]
        record["judge"] = {
            "verdict": verdict if judged.level != "sample" else None,
            "probability": result.score if judged.level != "sample" else None,
            "score": result.score if judged.level == "sample" else None,
            "reason": result.reason,
        }
        record["tags"] = self.group or None  # the --by group it was taken from
        return record


def _group(judged: Judged, by: str | None) -> str:
    if by is None:
        return ""
    values = tags_of(dict(judged.sample.metadata)).get(by)
    return ",".join(values) if values else NO_TAG


def _in_turn(groups: dict[str, list[QueueItem]], n: int) -> list[QueueItem]:
    """``n`` items taken in turn from each group (groups in name order), each group's in
    its order."""
    chosen: list[QueueItem] = []
    queues = [list(groups[name]) for name in sorted(groups)]
    while len(chosen) < n and any(queues):
        for queue in queues:
            if queue and len(chosen) < n:
                chosen.append(queue.pop(0))
    return chosen


def next_to_label(
    result: EvaluationResult,
    metric: str,
    *,
    labels: Iterable[Label] = (),
    n: int = 20,
    strategy: str = "uncertain",
    by: str | None = None,
    level: str | None = None,
    seed: int = 0,
) -> list[QueueItem]:
    """The ``n`` items of ``metric`` in ``result`` to label next (see the module's text),
    those already in ``labels`` (any labeller) left out. ``level`` chooses what to label:
    by default the claims and contexts the judge gave verdicts on, the samples' results when
    it gave none. ``by`` names a tag (a metadata field) whose groups are taken in turn.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    queued = tuple(name for name in LEVELS if name != "preference")
    if level == "preference":
        raise ValueError(
            "the queue proposes samples, claims and contexts; preference labels (which of two "
            "samples is better) are written to a labels file and imported: ragmeter labels "
            "import FILE"
        )
    if level is not None and level not in queued:
        raise ValueError(f"level must be one of {', '.join(queued)}, got {level!r}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    judged, _ = judged_items(result, metric)
    done = {(k.sample_key, k.level, k.item) for k in labels if k.metric == metric}
    levels = (level,) if level else _levels(judged)
    candidates = [
        QueueItem(metric, target[0], found, _group(found, by))
        for target, found in judged.items()
        if target[1] in levels and target not in done
    ]
    if strategy == "worst":  # the lowest-scored samples' items first, in the run's order
        scores = {
            t[0]: float(found.result.score or 0.0)  # only scored samples are judged
            for t, found in judged.items()
            if t[1] == "sample"
        }
        return sorted(candidates, key=lambda c: scores[c.sample_key])[:n]
    return _chosen(candidates, strategy, n, by, seed)


def _levels(judged: dict[tuple[str, str, str | int | None], Judged]) -> Sequence[str]:
    finer = {target[1] for target in judged} - {"sample"}
    return sorted(finer) if finer else ("sample",)


def _chosen(
    candidates: list[QueueItem], strategy: str, n: int, by: str | None, seed: int
) -> list[QueueItem]:
    groups: dict[str, list[QueueItem]] = {}
    if strategy == "uncertain":
        ordered = sorted(candidates, key=lambda c: abs((c.probability or 0.0) - 0.5))
        for item in ordered:
            groups.setdefault(item.group, []).append(item)
        return _in_turn(groups, n)
    rng = np.random.default_rng(seed)
    shuffled = [candidates[i] for i in rng.permutation(len(candidates))]
    for item in shuffled:  # strata: the tag groups, else the judge's verdicts
        stratum = item.group if by is not None else str(item.judged.result.details.get("label"))
        groups.setdefault(stratum, []).append(item)
    return _in_turn(groups, n)


def preference_pairs(
    result: EvaluationResult,
    versus: EvaluationResult,
    metric: str,
    *,
    labels: Iterable[Label] = (),
    n: int = 20,
    seed: int = 0,
    labeller: str = "",
) -> list[dict[str, Any]]:
    """The answers of ``result`` and of ``versus`` to the same question (``user_input``)
    that differ, as preference items to label: the label format (``level`` preference,
    ``value`` empty: better, worse or tie, of ``response`` against ``other_response``), with
    the question and both answers and contexts to read. The pairs the metric scores closest
    come first (its call between the two is the least sure); each pair's order is shuffled
    (``seed``) and no score or run is shown, so people judge blind. Only samples the metric
    scored are paired; pairs already labelled (either way round) are left out."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    ours, _ = judged_items(result, metric)
    theirs, _ = judged_items(versus, metric)
    by_question: dict[str, list[tuple[str, Judged]]] = {}
    for (key, level, _), found in theirs.items():
        if level == "sample" and found.sample.user_input:
            by_question.setdefault(found.sample.user_input, []).append((key, found))
    done = {
        (min(k.sample_key, str(k.item)), max(k.sample_key, str(k.item)))
        for k in labels
        if k.metric == metric and k.level == "preference"
    }
    pairs = []
    for (key, level, _), found in ours.items():
        if level != "sample" or not found.sample.user_input:
            continue
        for other_key, other in by_question.get(found.sample.user_input, []):
            if other_key == key or (min(key, other_key), max(key, other_key)) in done:
                continue
            gap = abs(float(found.result.score or 0.0) - float(other.result.score or 0.0))
            pairs.append((gap, (key, found), (other_key, other)))
    pairs.sort(key=lambda pair: pair[0])
    rng = np.random.default_rng(seed)
    records = []
    for _, first, second in pairs[:n]:
        (key_a, a), (key_b, b) = (second, first) if rng.random() < 0.5 else (first, second)
        records.append(
            {
                "sample_id": a.sample_id,
                "sample_key": key_a,
                "metric": metric,
                "level": "preference",
                "item": key_b,
                "value": None,
                "labeller": labeller,
                "note": "",
                "user_input": a.sample.user_input,
                "response": a.sample.response,
                "retrieved_contexts": a.sample.retrieved_contexts,
                "other_sample_id": b.sample_id,
                "other_response": b.sample.response,
                "other_contexts": b.sample.retrieved_contexts,
            }
        )
    return records
