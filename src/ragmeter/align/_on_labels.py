"""How far a run's metric agrees with the team's own labels, from what the run stored.

:func:`agreement_on_labels` lines each label up with the judge's verdict on the same thing
(sample_key, metric, level and item; see :class:`ragmeter.store.Label`) in a run's results
and details, and measures the agreement per level with the statistics of ``ragmeter align``
(one computation: :class:`~ragmeter.align.Measurement`), without calling the judge. Labels of
items the run did not score are counted and listed, never dropped.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter._record import attributes
from ragmeter.align._agreement import DEFAULT_RESAMPLES, Agreement
from ragmeter.align._align import (
    Disagreement,
    Measurement,
    Unscored,
    _arrays,
    _coverage,
    _disagreement_lines,
    _Item,
    _Measure,
)
from ragmeter.align._labels import label_verdict
from ragmeter.metrics import MetricResult, Status
from ragmeter.stats import LabelledPairs, Validation
from ragmeter.store import LEVELS, Label, sample_key

if TYPE_CHECKING:
    from ragmeter.dataset import Sample
    from ragmeter.results import EvaluationResult

#: The statistics measured per kind of label, the headline one first. Pass / fail labels
#: (every claim and context label, and sample labels that are verdicts) are compared with
#: the judge's verdict (kappa, accuracy) and with its P(yes) or score (Spearman, pairwise);
#: score labels with the metric's score; preferences between two samples with the order of
#: their scores.
LABEL_STATISTICS: dict[str, tuple[str, ...]] = {
    "discrete": ("cohen_kappa", "accuracy", "spearman", "pairwise_agreement"),
    "numeric": ("spearman", "pairwise_agreement"),
    "preference": ("preference_agreement",),
}


@dataclass(frozen=True)
class Judged:
    """What the run's judge said of one labelled thing (``level``, ``item`` as in a
    :class:`~ragmeter.store.Label`). ``result`` is the metric's result for a sample; for a
    claim or a context, a result made of its verdict (``details["label"]``: True / False),
    its P(yes) as the score (the verdict as 1 / 0 when the judge gave no probability) and
    its reason. For a claim or a context, ``probability`` is the judge's own P(yes) (None when
    it gave none) and ``task`` the verdict's task as calibrations name it (``"supported"``
    for a claim, the context's criterion, e.g. ``"useful"``)."""

    sample_id: str
    sample: Sample
    level: str
    item: str | int | None
    result: MetricResult
    probability: float | None = None
    task: str | None = None


def judged_items(
    result: EvaluationResult, metric: str
) -> tuple[dict[tuple[str, str, str | int | None], Judged], dict[str, tuple[str, str]]]:
    """Every verdict of ``metric`` in ``result``, by (sample_key, level, item): the sample's
    result, each claim's verdict and each context's; and, by sample_key, the samples the
    metric did not score with their (status, message)."""
    if metric not in {m.name for m in result.metrics}:
        names = ", ".join(m.name for m in result.metrics) or "none"
        raise ValueError(
            f"the run has no metric {metric!r} (it has {names}): choose one with --metric"
        )
    found: dict[tuple[str, str, str | int | None], Judged] = {}
    unscored: dict[str, tuple[str, str]] = {}
    for sample in result:
        key = sample_key(sample.sample)
        scored = sample.scores.get(metric)
        if scored is None or scored.status is not Status.OK or scored.score is None:
            status = "not_started" if scored is None else scored.status.value
            message = "" if scored is None else scored.error or scored.reason or status
            unscored[key] = (status, message)
            continue
        found[(key, "sample", None)] = Judged(
            sample.sample_id, sample.sample, "sample", None, scored
        )
        for claim in scored.details.claims:
            if claim.verdict is not None:
                found[(key, "claim", claim.text)] = Judged(
                    sample.sample_id,
                    sample.sample,
                    "claim",
                    claim.text,
                    _verdict(claim.verdict, claim.probability, claim.reason),
                    claim.probability,
                    "supported",
                )
        for context in scored.details.contexts:
            found[(key, "context", context.rank - 1)] = Judged(
                sample.sample_id,
                sample.sample,
                "context",
                context.rank - 1,
                _verdict(context.verdict, context.probability, context.reason),
                context.probability,
                context.criterion.value,
            )
    return found, unscored


def _verdict(verdict: bool, probability: float | None, reason: str | None) -> MetricResult:
    """A claim's or context's verdict as a result ``ragmeter align`` compares: its label the
    verdict, its score P(yes) (the verdict itself without one)."""
    score = probability if probability is not None else float(verdict)
    return MetricResult.ok(score, reason=reason or None, label=verdict)


@dataclass(frozen=True)
class LevelAgreement:
    """The agreement at one level (sample, claim, context or preference).

    ``measurement`` is ``ragmeter align``'s record (agreement with CIs, confusion matrix,
    disagreements largest first with the judge's reasons, the items not scored);
    ``n_labels`` counts the labels, ``labellers`` the agreement between people on the items
    ``n_shared`` several of them labelled (``None`` when none did).
    """

    level: str
    kind: str
    n_labels: int
    measurement: Measurement
    labellers: Agreement | None = None
    n_shared: int = 0

    @property
    def statistic(self) -> str:
        return LABEL_STATISTICS[self.kind][0]

    @property
    def headline(self) -> Agreement:
        return self.measurement.agreement[self.statistic]

    def to_dict(self) -> dict[str, Any]:
        return {
            **attributes(self, "level", "kind", "statistic", "n_labels"),
            **self.measurement.to_dict(),
            "labellers": None if self.labellers is None else self.labellers.to_dict(),
            "n_shared": self.n_shared,
        }


@dataclass(frozen=True)
class LabelAgreement:
    """A run's metric against the team's labels, per level (see :func:`agreement_on_labels`).

    ``levels`` has an entry for each level with labels of the metric; ``n_labels`` counts
    them all; ``run`` names the run (its stored id and name, when it has them).
    """

    metric: str
    run: str | None
    n_labels: int
    levels: dict[str, LevelAgreement] = field(default_factory=dict)
    confidence: float = 0.95
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    #: The verdict calibration the run's judge applied (its label), if any.
    calibration: str | None = None

    @property
    def validation(self) -> Validation:
        """The headline: the first level (sample, claim, context) whose headline statistic
        has a value, else the first level with an item the run judged."""
        judged = [
            found
            for level in LEVELS
            if (found := self.levels.get(level)) is not None and found.measurement.n_compared
        ]
        defined = [found for found in judged if found.headline.value is not None]
        for found in (defined or judged)[:1]:
            headline = found.headline
            ci = None if headline.ci is None else (headline.ci.low, headline.ci.high)
            n = found.measurement.n_compared
            return Validation(
                self.metric,
                n,
                found.level,
                found.statistic,
                headline.value,
                ci,
                self.calibration,
            )
        return Validation(self.metric, 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            **attributes(self, "metric", "run", "n_labels"),
            "validation": self.validation.to_dict(),
            "levels": {name: level.to_dict() for name, level in self.levels.items()},
            **attributes(self, "confidence", "n_resamples", "seed", "calibration"),
        }

    def summary(self, top: int = 10) -> str:
        """The figures in plain text lines."""
        lines = [
            f"metric {self.metric} against {self.n_labels} of your labels"
            + (f" (run {self.run})" if self.run else ""),
            self.validation.describe(),
        ]
        for level in self.levels.values():
            m = level.measurement
            lines.append(f"{level.level} level ({level.kind}): {level.n_labels} label(s)")
            lines += [f"  {a.describe()}" for a in m.agreement.values()]
            if m.confusion:
                cells = "; ".join(
                    f"human {h} -> " + ", ".join(f"judge {k}: {v}" for k, v in row.items())
                    for h, row in sorted(m.confusion.items())
                )
                lines.append(f"  confusion (human -> judge): {cells}")
            if level.labellers is not None:
                lines.append(
                    f"  between labellers, on {level.n_shared} item(s): "
                    f"{level.labellers.describe()}"
                )
            first, *rest = _coverage(m)
            lines += [f"  judged by the run: {first}", *(f"  {line}" for line in rest)]
            lines += [f"  {line}" for line in _disagreement_lines(level.level, level.kind, m, top)]
        return "\n".join(lines)


def _item_name(sample_id: str, level: str, item: str | int | None) -> str:
    """How an item is named in reports: ``q7``, ``q7 claim "Paris is..."``, ``q7 context 2``."""
    if level == "claim":
        text = str(item)
        return f'{sample_id} claim "{text[:60]}{"…" if len(text) > 60 else ""}"'
    if level == "context":
        return f"{sample_id} context {item}"
    return sample_id


def _latest_per_labeller(labels: Iterable[Label]) -> dict[tuple[Any, ...], dict[str, Label]]:
    """Per target (sample_key, level, item), each labeller's latest label."""
    targets: dict[tuple[Any, ...], dict[str, Label]] = {}
    for label in sorted(labels, key=lambda k: k.created_at):
        targets.setdefault((label.sample_key, label.level, label.item), {})[label.labeller] = label
    return targets


def _kind(level: str, labels: Sequence[Label]) -> str:
    """Pass / fail for claims and contexts, and for samples whose labels are all verdicts
    (true / false, pass / fail words, 0 / 1); scores otherwise."""
    if level != "sample" or all(label_verdict(k.value) in (0.0, 1.0) for k in labels):
        return "discrete"
    return "numeric"


def _consensus(kind: str, by_labeller: Mapping[str, Label]) -> float | None:
    """The people's value of one target: the majority verdict (None on a tie), the mean
    score."""
    values = [label_verdict(k.value) for k in by_labeller.values()]
    if kind == "numeric":
        return float(np.mean(values))
    counts = Counter(values).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


def _between_labellers(
    kind: str, targets: Mapping[tuple[Any, ...], Mapping[str, Label]], options: _Measure
) -> tuple[Agreement | None, int]:
    """Agreement between people on the targets several labelled: every pair of labellers of
    a target is one comparison (kappa for verdicts, Spearman for scores)."""
    first: list[float] = []
    second: list[float] = []
    shared = 0
    for by_labeller in targets.values():
        if len(by_labeller) < 2:
            continue
        shared += 1
        names = sorted(by_labeller)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                first.append(label_verdict(by_labeller[a].value))
                second.append(label_verdict(by_labeller[b].value))
    if not shared:
        return None, 0
    statistic = "cohen_kappa" if kind == "discrete" else "spearman"
    human, other = _arrays(kind, first, second)
    return options.agreement(statistic, human, other), shared


def _level_agreement(
    level: str,
    labels: Sequence[Label],
    judged: Mapping[tuple[str, str, str | int | None], Judged],
    unscored_samples: Mapping[str, tuple[str, str]],
    options: tuple[float, int, int],
) -> LevelAgreement:
    kind = _kind(level, labels)
    measure_on = _Measure(kind, kind == "numeric", *options, binary_labels=kind == "discrete")
    targets = _latest_per_labeller(labels)
    items: list[_Item] = []
    results: dict[str, MetricResult | str] = {}
    not_scored: list[Unscored] = []
    split: list[Unscored] = []
    for (key, _, item), by_labeller in targets.items():
        some = next(iter(by_labeller.values()))
        verdict = judged.get((key, level, item))
        name = _item_name(verdict.sample_id if verdict else some.sample_id, level, item)
        value = _consensus(kind, by_labeller)
        if value is None:
            split.append(Unscored(name, "labellers_split", "the labellers are evenly split"))
            continue
        if verdict is None:
            status, message = unscored_samples.get(
                key, ("not_in_run", "the run has no sample with this content")
            )
            if key not in unscored_samples and (key, "sample", None) in judged:
                status, message = "not_judged", f"the judge gave no verdict on this {level}"
            not_scored.append(Unscored(name, status, message))
            continue
        notes = "; ".join(k.note for k in by_labeller.values() if k.note)
        shown = _shown(kind, level, value, by_labeller)
        items.append(_Item(name, verdict.sample, shown, value, notes or None))
        results[name] = verdict.result
    if items:
        measurement, _ = measure_on(labels[0].metric, items, results)
    else:
        measurement = Measurement(labels[0].metric, (), 0, {}, [], [])
    measurement = _with_statistics(kind, measurement, items, results, measure_on)
    measurement = dataclasses.replace(
        measurement,
        sample_ids=(*measurement.sample_ids, *(u.sample_id for u in (*not_scored, *split))),
        unscored=[*measurement.unscored, *not_scored, *split],
    )
    labellers, shared = _between_labellers(kind, targets, measure_on)
    return LevelAgreement(level, kind, len(labels), measurement, labellers, shared)


def _preference_agreement(
    labels: Sequence[Label],
    judged: Mapping[tuple[str, str, str | int | None], Judged],
    unscored_samples: Mapping[str, tuple[str, str]],
    options: tuple[float, int, int],
    ids: Mapping[str, str],
) -> LevelAgreement:
    """Preference labels against the order of the metric's scores of the two samples: one
    comparison per pair (the people's majority; each labeller's latest label), a level score
    counting half. Pairs people called a tie, split on, or whose samples the run did not
    both score are listed with the reason, not compared. ``ids``: the run's sample ids by
    sample_key (a sample not in the run is named by its key's first 8 digits)."""
    measure_on = _Measure("discrete", False, *options, binary_labels=True)
    targets = _latest_per_labeller(_in_key_order(k) for k in labels)
    written: dict[tuple[str, str], tuple[str, str]] = {}  # each pair as first written
    for k in labels:
        pair = (k.sample_key, str(k.item))
        written.setdefault((min(pair), max(pair)), pair)
    names: list[str] = []
    human: list[float] = []  # 1: people preferred the pair's first sample as written
    gaps: list[float] = []  # its score minus the second's
    not_compared: list[Unscored] = []
    disagreements: list[Disagreement] = []
    for (first, _, second), by_labeller in targets.items():
        x, y = written[(first, str(second))]
        name_x, name_y = ids.get(x, x[:8]), ids.get(y, y[:8])
        name = f"{name_x} vs {name_y}"
        names.append(name)
        value = _consensus("discrete", by_labeller)  # from the key-order first's side
        if value is not None and x != first:
            value = 1.0 - value
        found_x, found_y = judged.get((x, "sample", None)), judged.get((y, "sample", None))
        if value is None:
            not_compared.append(Unscored(name, "labellers_split", "the labellers are split"))
        elif value == 0.5:
            not_compared.append(
                Unscored(name, "tie", "people found the two equally good: no order to compare")
            )
        elif found_x is None or found_y is None:
            key, missing = (x, name_x) if found_x is None else (y, name_y)
            status, message = unscored_samples.get(
                key, ("not_in_run", "the run has no sample with this content")
            )
            not_compared.append(Unscored(name, status, f"{missing}: {message}"))
        else:
            score_x, score_y = _score(found_x.result), _score(found_y.result)
            human.append(value)
            gaps.append(score_x - score_y)
            if abs(score_x - score_y) < 1e-12 or (score_x > score_y) != (value == 1.0):
                notes = "; ".join(k.note for k in by_labeller.values() if k.note)
                reasons = (found_x.result.reason, found_y.result.reason)
                disagreements.append(
                    Disagreement(
                        name,
                        f"{name_x if value == 1.0 else name_y} better",
                        f"{name_x} {score_x:.3g}, {name_y} {score_y:.3g}",
                        None,
                        abs(score_x - score_y),
                        "; ".join(r for r in reasons if r) or None,
                        notes or None,
                    )
                )
    agreement = {}
    if human:
        statistic = "preference_agreement"
        agreement[statistic] = measure_on.agreement(statistic, np.array(human), np.array(gaps))
    disagreements.sort(key=lambda d: -d.size)
    measurement = Measurement(
        labels[0].metric, tuple(names), len(human), agreement, not_compared, disagreements
    )
    labellers, shared = _between_labellers("discrete", targets, measure_on)
    return LevelAgreement("preference", "preference", len(labels), measurement, labellers, shared)


def _in_key_order(label: Label) -> Label:
    """A preference label with its two samples in key order, the value turned round when it
    was written the other way: both ways of writing one comparison are one target."""
    other = str(label.item)
    if label.sample_key < other:
        return label
    turned = {"better": "worse", "worse": "better"}.get(str(label.value), str(label.value))
    return dataclasses.replace(label, sample_key=other, item=label.sample_key, value=turned)


def _shown(kind: str, level: str, value: float, by_labeller: Mapping[str, Label]) -> Any:
    """The people's label as reports show it."""
    if kind == "numeric":
        return value
    if level == "sample" and len(by_labeller) == 1:
        return next(iter(by_labeller.values())).value
    return value == 1.0


def _with_statistics(
    kind: str,
    measurement: Measurement,
    items: Sequence[_Item],
    results: Mapping[str, MetricResult | str],
    measure_on: _Measure,
) -> Measurement:
    """``measurement`` with the statistics of :data:`LABEL_STATISTICS` that ``align``'s kind
    does not measure: the order statistics of the judge's P(yes) or score."""
    compared = [i for i in items if i.sample_id not in {u.sample_id for u in measurement.unscored}]
    human = np.array([float(i.value) for i in compared], dtype=float)
    scores = np.array([_score(results[i.sample_id]) for i in compared], dtype=float)
    agreement = dict(measurement.agreement)
    for statistic in LABEL_STATISTICS[kind]:
        if statistic not in agreement:
            agreement[statistic] = measure_on.agreement(statistic, human, scores)
    ordered = {name: agreement[name] for name in LABEL_STATISTICS[kind]}
    if kind == "numeric":
        return dataclasses.replace(measurement, agreement=ordered)
    # The worst first: the verdicts the judge was surest of, against the people.
    gap = {i.sample_id: abs(float(i.value) - s) for i, s in zip(compared, scores)}
    worst = sorted(measurement.disagreements, key=lambda d: -gap.get(d.sample_id, 0.0))
    return dataclasses.replace(measurement, agreement=ordered, disagreements=worst)


def _score(result: MetricResult | str) -> float:
    if isinstance(result, str) or result.score is None:  # never: only scored items come here
        raise ValueError("an unscored item has no score")
    return result.score


def agreement_on_labels(
    result: EvaluationResult,
    labels: Iterable[Label],
    metric: str,
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    versus: EvaluationResult | None = None,
) -> LabelAgreement:
    """How far ``metric`` in the run ``result`` agrees with the people's ``labels`` (those of
    other metrics are ignored), per level, from the run's stored results and details: the
    judge is not called.

    ``versus``, another run with the metric: preference labels may then compare a sample of
    ``result`` with one of ``versus`` (the same question answered before and after a change),
    so that the preference agreement says whether the metric's "better" is the people's.

    A label lines up with the judge's verdict on the same sample content
    (:func:`ragmeter.store.sample_key`), level and item. Per level: Cohen's kappa, accuracy,
    Spearman and pairwise agreement of pass / fail labels (the last two against the judge's
    P(yes), its verdict where it gave none), or Spearman and pairwise agreement of score
    labels, each with a percentile bootstrap CI at ``confidence`` (``n_resamples``,
    ``seed``); the confusion matrix; the disagreements, largest first, with the judge's
    reasons; the labelled items the run did not score (``not_in_run``, ``not_judged``, the
    metric's own status) or the people split on (``labellers_split``); and Cohen's kappa
    between labellers on the items several labelled. When several people labelled an item,
    the judge is compared with their majority (their mean score); each labeller's latest
    label counts.
    """
    mine = [k for k in labels if k.metric == metric]
    judged, unscored = judged_items(result, metric)
    options = (confidence, n_resamples, seed)
    levels: dict[str, LevelAgreement] = {}
    for level in LEVELS:
        at = [k for k in mine if k.level == level]
        if at and level == "preference":
            both, missing, ids = {}, {}, {}
            if versus is not None:  # this run's own verdicts win where both have a sample
                found, left = judged_items(versus, metric)
                both = {t: j for t, j in found.items() if t[1] == "sample"}
                missing = dict(left)
                other = str(versus.config.get("name") or "other run")
                ids = {sample_key(s.sample): f"{s.sample_id}@{other}" for s in versus}
            both.update(judged)
            missing.update(unscored)
            ids.update({sample_key(s.sample): s.sample_id for s in result})
            levels[level] = _preference_agreement(at, both, missing, options, ids)
        elif at:
            levels[level] = _level_agreement(level, at, judged, unscored, options)
    run = _run_name(result)
    if versus is not None:
        run = f"{run or 'this run'} and {_run_name(versus) or 'the other run'}"
    judge = (result.config.get("judges") or {}).get(metric) or {}
    calibration = judge.get("verdict_calibration") if isinstance(judge, dict) else None
    return LabelAgreement(
        metric, run, len(mine), levels, confidence, n_resamples, seed, calibration
    )


def _run_name(result: EvaluationResult) -> str | None:
    stored, name = result.config.get("store_run_id"), result.config.get("name")
    return f"{str(stored)[:8]} ({name})" if stored else (str(name) if name else None)


def validations(
    result: EvaluationResult, labels: Iterable[Label], metrics: Iterable[str], **options: Any
) -> dict[str, Validation]:
    """Per metric of ``metrics`` (each one the run has): its :class:`Validation` on
    ``labels``, "not validated" (``n_labels`` 0) for a metric nobody labelled; what
    ``ragmeter show``, the reports and the gate's ``min_agreement`` read. ``options``: those
    of :func:`agreement_on_labels`."""
    kept = list(labels)
    labelled = {k.metric for k in kept}
    names = {m.name for m in result.metrics}
    return {
        metric: (
            agreement_on_labels(result, kept, metric, **options).validation
            if metric in labelled
            else Validation(metric, 0)
        )
        for metric in metrics
        if metric in names
    }


def judge_error_pairs(
    result: EvaluationResult, labels: Iterable[Label], metric: str
) -> LabelledPairs | None:
    """The labelled items of ``metric`` in ``result`` as (judge, human) pairs for the mean's
    interval with judge error (:func:`ragmeter.stats.with_judge_error`), or None when no
    label lines up with a verdict of the run.

    Sample labels first: (the metric's score, the people's score or verdict) per sample,
    prediction-powered (``"ppi"``). Else claim, then context labels, when the metric's score
    is the share of its verdicts at that level on every sample it scored (faithfulness: the
    share of claims supported): (the judge's verdict, the people's) per item, Rogan-Gladen
    (``"rogan-gladen"``), which corrects such a share for the judge's error rates. Several
    labellers of one item: their majority (mean score), as :func:`agreement_on_labels`.
    Claim or context labels of a metric whose score is not such a share: no pairs, and the
    ``reason`` why."""
    mine = [k for k in labels if k.metric == metric]
    if not mine:
        return None
    judged, _ = judged_items(result, metric)
    unusable = None
    for level in LEVELS:
        at = [k for k in mine if k.level == level]
        if not at:
            continue
        if level == "preference":  # which of two is better says nothing of the mean's scale
            unusable = unusable or level
            continue
        if level != "sample" and not _share_of_verdicts(result, metric, level):
            unusable = unusable or level
            continue
        kind = _kind(level, at)
        pairs = []
        for (key, _, item), by_labeller in _latest_per_labeller(at).items():
            verdict = judged.get((key, level, item))
            value = _consensus(kind, by_labeller)
            if verdict is None or value is None:
                continue
            judge = _score(verdict.result) if level == "sample" else _judge_verdict(verdict)
            pairs.append((judge, value))
        if pairs:
            method = "ppi" if level == "sample" else "rogan-gladen"
            return LabelledPairs(tuple(pairs), method, level)
    if unusable == "preference":
        reason = (
            "preference labels say which of two samples is better, not how good either is, "
            f"so they cannot correct {metric}'s mean: label whole samples (level sample) for "
            "this interval"
        )
        return LabelledPairs((), "ppi", unusable, reason=reason)
    if unusable is not None:  # said, not left out in silence
        reason = (
            f"{metric}'s score is not the share of its {unusable} verdicts that are yes in "
            f"this run (e.g. the judge's P(yes) averaged), so {unusable} labels cannot "
            "correct it: label whole samples (level sample) for this interval"
        )
        return LabelledPairs((), "rogan-gladen", unusable, reason=reason)
    return None


def _judge_verdict(judged: Judged) -> float:
    """A claim's or context's verdict as 1 / 0 (``_verdict`` keeps it as ``label``)."""
    return 1.0 if judged.result.details.get("label") else 0.0


def _share_of_verdicts(result: EvaluationResult, metric: str, level: str) -> bool:
    """Whether ``metric``'s score is the share of its ``level`` verdicts that are yes on
    every sample it scored (and it scored some)."""
    seen = False
    for sample in result:
        scored = sample.scores.get(metric)
        if scored is None or scored.status is not Status.OK or scored.score is None:
            continue
        details = scored.details
        found = details.claims if level == "claim" else details.contexts
        verdicts = [v.verdict for v in found if v.verdict is not None]
        if not verdicts or abs(scored.score - sum(verdicts) / len(verdicts)) > 1e-9:
            return False
        seen = True
    return seen
