"""A verdict calibration fitted on the team's labels of a run's verdicts (issue 39): the one
place that lines claim and context labels up with the judge's verdicts of a run and fits
:func:`ragmeter.judge.fit_calibration` on them. ``ragmeter calibrate fit`` and the Python API
both call :func:`calibrate_on_labels`."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field

from ragmeter.align._on_labels import Judged, judged_items
from ragmeter.judge import CalibrationError, CrossValidation, VerdictCalibration, judge_identity
from ragmeter.results import EvaluationResult
from ragmeter.store import Label

#: The label levels a verdict calibration learns from.
VERDICT_LEVELS = ("claim", "context")


@dataclass(frozen=True)
class LabelledVerdicts:
    """The judge's P(yes) and the people's verdict per task (``pairs``), each pair's sample
    (``groups``: the cross-validation keeps a sample's verdicts in one fold), how many of the
    ``n_labels`` claim/context labels matched a verdict with a probability, and the identity
    of the judge that gave them."""

    pairs: dict[str, list[tuple[float, bool]]] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)
    matched: int = 0
    n_labels: int = 0
    judge: str = ""


def labelled_verdicts(
    result: EvaluationResult, labels: Iterable[Label], metrics: Iterable[str] | None = None
) -> LabelledVerdicts:
    """The claim and context ``labels`` (of ``metrics``, default all) lined up with the run's
    judge verdicts: same sample_key, metric, level and item. A verdict decided without the
    judge (P exactly 0: a claim stating a figure no context holds) has no probability to
    calibrate and is left out. :class:`CalibrationError` when the labelled metrics ran with
    several judges, or with a verdict calibration already applied."""
    wanted = set(metrics or ())
    used = [k for k in labels if k.level in VERDICT_LEVELS and (not wanted or k.metric in wanted)]
    names = {m.name for m in result.metrics}
    verdicts: dict[tuple[str, str, str, str | int | None], Judged] = {}
    for metric in sorted({k.metric for k in used} & names):
        judged, _ = judged_items(result, metric)
        for (key, level, item), verdict in judged.items():
            if level in VERDICT_LEVELS and verdict.probability and verdict.task:
                verdicts[(key, metric, level, item)] = verdict
    found = LabelledVerdicts(n_labels=len(used), judge=_judge_of(result, {k.metric for k in used}))
    for k in used:
        match = verdicts.get(k.target)
        if match is None or match.probability is None or match.task is None:
            continue
        found.pairs.setdefault(match.task, []).append((match.probability, bool(k.value)))
        found.groups.setdefault(match.task, []).append(k.sample_key)
    return dataclasses.replace(found, matched=sum(map(len, found.pairs.values())))


def calibrate_on_labels(
    result: EvaluationResult,
    labels: Iterable[Label],
    *,
    method: str = "platt",
    folds: int = 5,
    metrics: Iterable[str] | None = None,
    fitted_on: str = "",
) -> tuple[VerdictCalibration, CrossValidation, LabelledVerdicts]:
    """A calibration of the run's judge verdicts fitted on the team's claim / context
    ``labels`` (:func:`labelled_verdicts`), with its cross-validated figures (folds by
    sample) and what it was fitted on. Save it with :func:`ragmeter.judge.save_calibration`;
    runs use it with ``evaluate(..., calibration=...)``. :class:`CalibrationError` when no
    label matches a verdict with a probability, or the fit cannot be made."""
    from ragmeter.judge import fit_calibration

    found = labelled_verdicts(result, labels, metrics)
    if not found.matched:
        raise CalibrationError(
            f"none of the {found.n_labels} claim/context labels matches a judge verdict with "
            "a probability in the run (same sample_key, metric, level and item): label the "
            "verdicts of this run (ragmeter labels queue, the dashboard's /label page)"
        )
    calibration, cv = fit_calibration(
        found.pairs,
        method=method,
        folds=folds,
        groups=found.groups,
        judge=found.judge,
        fitted_on=fitted_on or f"{found.matched} labels",
    )
    return calibration, cv, found


def _judge_of(result: EvaluationResult, metrics: set[str]) -> str:
    """The identity of the one judge the labelled metrics ran with."""
    judges = result.config.get("judges") or {}
    seen = {}
    for metric in sorted(metrics):
        described = judges.get(metric)
        if not isinstance(described, dict):
            continue
        if described.get("verdict_calibration"):
            raise CalibrationError(
                f"the run judged {metric!r} with verdict calibration "
                f"{described['verdict_calibration']}: fit on a run made without --calibration "
                "(calibrations apply to the judge's own P(yes))"
            )
        seen[judge_identity(described)] = metric
    if len(seen) > 1:
        raise CalibrationError(
            f"the labelled metrics ran with different judges ({', '.join(seen)}): fit one "
            "calibration per judge with --metric"
        )
    return next(iter(seen), "")
