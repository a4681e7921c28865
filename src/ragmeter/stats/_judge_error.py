"""A run's mean on the human scale, with a confidence interval that includes the judge's
measured error (issue 39): "0.82, 95% CI 0.78-0.86 (sampling), 0.75-0.88 (with judge error)".

The sampling-only interval is the summary's (BCa bootstrap of the run's scores): it is about
the judge's mean, and misses the human one by the judge's bias. The interval with judge error
is about the human mean of the population the run's samples come from, from the run's judge
scores and a labelled set (items with both a judge score and a human label), by one of:

- ``"ppi"`` (the default), prediction-powered inference (Angelopoulos et al., Science 2023):
  ``mean(judge_run) - mean(judge_lab - human_lab)``, the run's mean less the judge's bias
  measured on the labelled items. Works for scores and verdicts alike; assumes the labelled
  items are a random sample of the items the run scores.
- ``"rogan-gladen"`` (binary verdicts, Rogan & Gladen 1978): ``(mean(judge_run) - fpr) /
  (sensitivity - fpr)`` with the judge's sensitivity P(yes | human yes) and false-positive
  rate P(yes | human no) from the confusion matrix of labelled verdicts (resampled within
  each human class). It assumes only that the judge's error rates carry over, so it stays
  right when the run's share of "yes" differs from the labelled set's (labels gathered on an
  earlier run); it is affine, so it also corrects a mean of per-sample shares of verdicts
  (faithfulness: the share of claims supported) with claim-level labels. Wider, and it
  needs a judge clearly better than chance.

Both intervals resample the run and the labelled set, each on its own
(:mod:`ragmeter._bootstrap`), as an "expanded percentile" bootstrap (Hesterberg 2015): the
values spread so that the bootstrap matches a Student-t interval, which small labelled sets
need. bench/judge_error_coverage.py checks the coverage on RGB zh dev.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any, cast

import numpy as np

from ragmeter._bootstrap import Interval, bootstrap_ci, difference_ci, groups_ci
from ragmeter._validate import check_level, check_resamples
from ragmeter.results import EvaluationResult
from ragmeter.stats._format import percent

METHODS = ("ppi", "rogan-gladen")
#: Fewer labelled pairs than this: no estimate (the judge's error is not measured).
MIN_LABELLED = 10
#: A confusion matrix whose sensitivity + specificity - 1 (Youden's J) is at most this: the
#: judge's verdicts carry next to nothing about the human ones, no Rogan-Gladen estimate.
MIN_YOUDEN = 0.05


@dataclass(frozen=True)
class LabelledPairs:
    """One metric's labelled items as the interval with judge error reads them: ``pairs``
    of (judge, human) at ``level`` and the ``method`` they call for: ``"ppi"`` for sample
    labels ((the metric's score, the person's score or verdict) per sample),
    ``"rogan-gladen"`` for claim or context labels of a metric whose score is the share of
    its verdicts ((the judge's verdict, the person's) per claim or context). What
    :func:`ragmeter.align.judge_error_pairs` gives and :func:`with_judge_error` takes."""

    pairs: tuple[tuple[float, float], ...]
    method: str = "ppi"
    level: str = "sample"
    #: Why the labels cannot give the interval (then ``pairs`` is empty), e.g. claim labels
    #: of a metric whose score is not the share of its claim verdicts.
    reason: str | None = None


@dataclass(frozen=True)
class JudgeErrorEstimate:
    """A run's mean with two confidence intervals: ``sampling_ci`` (the judge's scores as
    they are, only the run's samples resampled) and ``judge_error_ci`` (the human-scale
    mean, ``corrected_mean``, with the judge's measured error and its uncertainty included).

    ``mean`` is the run's mean as the judge scored it (the figure every summary shows).
    When it could not be computed (too few labels, a judge no better than chance) the
    figures are None and ``reason`` says why; :meth:`sentence` then says so too.
    """

    metric: str | None
    method: str
    n_run: int
    n_labelled: int
    level: float
    mean: float | None
    sampling_ci: Interval | None
    corrected_mean: float | None
    judge_error_ci: Interval | None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None

    def sentence(self) -> str:
        """``0.82, 95% CI 0.78-0.86 (sampling), 0.75-0.88 (with judge error)``, or why not."""
        s, j = self.sampling_ci, self.judge_error_ci
        if self.mean is None or s is None or j is None:
            return f"with judge error: not computed ({self.reason})"
        return (
            f"{self.mean:.2f}, {percent(self.level)} CI {s.low:.2f}-{s.high:.2f} (sampling), "
            f"{j.low:.2f}-{j.high:.2f} (with judge error)"
        )

    @property
    def basis(self) -> str:
        """What the interval with judge error stands on, e.g. ``ppi, 40 labelled pairs``
        (empty when it was not computed)."""
        return f"{self.method}, {self.n_labelled} labelled pairs" if self.ok else ""

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "sentence": self.sentence()}  # the intervals' too


def _unit_values(values: Iterable[Any], what: str, skip_none: bool = False) -> np.ndarray:
    """Numbers in [0, 1] (True/False read as 1/0), None left out with ``skip_none``; an
    error names the first bad row."""
    out = []
    for i, v in enumerate(values):
        if v is None and skip_none:
            continue
        if not (isinstance(v, numbers.Real) and math.isfinite(v) and 0 <= float(v) <= 1):
            raise ValueError(
                f"{what} row {i}: {v!r} is not a score in [0, 1] "
                "(drop the samples that did not score; verdicts are True/False or 1/0)"
            )
        out.append(float(v))
    return np.asarray(out, dtype=float)


def _pairs(labelled: Iterable[Sequence[Any]]) -> tuple[np.ndarray, np.ndarray]:
    judge, human = [], []
    for i, pair in enumerate(labelled):
        if not isinstance(pair, Sequence | np.ndarray) or isinstance(pair, str) or len(pair) != 2:
            raise ValueError(
                f"labelled pair {i}: {pair!r} is not a (judge score, human label) pair"
            )
        judge.append(pair[0])
        human.append(pair[1])
    return _unit_values(judge, "labelled judge score"), _unit_values(human, "labelled human label")


def _clip(ci: Interval) -> Interval:
    """The human-scale mean lies in [0, 1]: so does its interval."""
    low, high = min(max(ci.low, 0.0), 1.0), min(max(ci.high, 0.0), 1.0)
    return Interval(low, high, ci.level, ci.method)


def _t_quantile(q: float, df: float) -> float:
    """Student's t quantile from the normal one (Cornish-Fisher, Abramowitz & Stegun 26.7.5):
    within 0.004 of the exact value from 5 degrees of freedom at 95%."""
    z = NormalDist().inv_cdf(q)
    return float(
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def _expanded(groups: list[np.ndarray], weights: list[float], level: float) -> list[np.ndarray]:
    """The groups spread about their means so that a percentile bootstrap of the estimate
    (a function of the group means with these derivatives, ``weights``) is as wide as a
    Student-t interval: Hesterberg's "expanded percentile" (The American Statistician 69,
    2015), for several groups with Welch-Satterthwaite's degrees of freedom. A plain
    bootstrap of n values has (n - 1) / n of their variance and a normal tail; with 10
    labelled items its intervals cover too rarely (bench/RESULTS_judge_error.md)."""
    parts = [
        (w**2 * x.var(ddof=1) / len(x)) if len(x) >= 2 else 0.0 for x, w in zip(groups, weights)
    ]
    total = sum(parts)
    dfs = [len(x) - 1 for x in groups]
    denominator = sum(p**2 / d for p, d in zip(parts, dfs) if d > 0 and p > 0)
    df = total**2 / denominator if denominator > 0 else math.inf
    q = 1 - (1 - level) / 2
    widen = 1.0 if math.isinf(df) else _t_quantile(q, max(df, 1.0)) / NormalDist().inv_cdf(q)
    return [
        x if len(x) < 2 else x.mean() + (x - x.mean()) * widen * math.sqrt(len(x) / (len(x) - 1))
        for x in groups
    ]


def _rogan_gladen(
    p: np.ndarray, sensitivity: np.ndarray, fpr: np.ndarray
) -> np.ndarray:  # element-wise over bootstrap means
    youden = sensitivity - fpr
    # A resample in which the judge is no better than chance bounds the estimate at 0 or 1.
    safe = np.where(youden > 1e-9, youden, 1e-9)
    return cast(np.ndarray, np.clip((p - fpr) / safe, 0.0, 1.0))


def _widened(ci: Interval, mean: float, positives: np.ndarray, negatives: np.ndarray) -> Interval:
    """A Rogan-Gladen interval stretched by what a constant class cannot show (see
    :func:`_unseen`): each end moved by how far the estimate moves when the sensitivity or
    the false-positive rate of such a class goes to its bound."""
    ranges = []
    for x in (positives, negatives):
        bound = _unseen(x, ci.level)
        v = float(x.mean())
        ranges.append([v] if bound is None else [max(0.0, v - bound), min(1.0, v + bound)])
    if len(ranges[0]) == len(ranges[1]) == 1:
        return ci

    point = _at(mean, float(positives.mean()), float(negatives.mean()))
    corners = [_at(mean, sens, fpr) for sens in ranges[0] for fpr in ranges[1]]
    return Interval(
        ci.low - max(0.0, point - min(corners)),
        ci.high + max(0.0, max(corners) - point),
        ci.level,
        ci.method,
    )


def estimate_with_judge_error(
    run_scores: Iterable[float | None],
    labelled_pairs: Iterable[Sequence[Any]],
    *,
    method: str = "ppi",
    metric: str | None = None,
    level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> JudgeErrorEstimate:
    """The run's mean on the human scale from ``run_scores`` (the judge's per-sample scores,
    None for samples not scored) and ``labelled_pairs`` ((judge score, human label) per
    labelled item, each in [0, 1]; verdicts as True/False or 1/0), with its sampling-only
    and its judge-error confidence intervals (see the module's text for the two methods).

    With fewer than :data:`MIN_LABELLED` pairs, or for Rogan-Gladen a human class with no
    labels or a judge whose sensitivity + specificity - 1 is at most :data:`MIN_YOUDEN`, the
    result carries no figures and ``reason`` says why. A pair or score that is not a number
    in [0, 1] raises ``ValueError`` naming its row.

    >>> run = [1, 1, 1, 0] * 25                       # the judge says yes to 75%
    >>> pairs = [(1, 1)] * 10 + [(1, 0)] * 5 + [(0, 0)] * 5   # yes to half the human no's
    >>> est = estimate_with_judge_error(run, pairs, n_resamples=2000)
    >>> est.mean, round(est.corrected_mean, 2)
    (0.75, 0.5)
    >>> est.sentence()
    '0.75, 95% CI 0.66-0.83 (sampling), 0.27-0.71 (with judge error)'
    """
    key = method.lower() if isinstance(method, str) else method
    if key not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    level = check_level(level)
    check_resamples(n_resamples)
    run = _unit_values(run_scores, "run score", skip_none=True)
    judge, human = _pairs(labelled_pairs)
    options: dict[str, Any] = {
        "level": level,
        "method": "percentile",
        "n_resamples": n_resamples,
        "seed": seed,
    }
    found: tuple[float, Interval] | str
    if len(run) < 2:
        found = f"the run has {len(run)} scored samples, at least 2 are needed"
    elif len(judge) < MIN_LABELLED:
        found = (
            f"{len(judge)} labelled pairs, at least {MIN_LABELLED} are needed to measure "
            "the judge's error"
        )
    elif key == "ppi":
        found = _ppi(run, judge, human, options)
    else:
        found = _rogan_gladen_estimate(run, judge, human, options)
    if isinstance(found, str):
        return JudgeErrorEstimate(
            metric, key, len(run), len(judge), level, None, None, None, None, reason=found
        )
    # as the summary's interval: BCa, the same resamples (ragmeter.stats.estimate_means)
    sampling = bootstrap_ci(run, level=level, n_resamples=n_resamples, seed=seed)
    corrected, ci = found
    mean = float(run.mean())
    return JudgeErrorEstimate(
        metric, key, len(run), len(judge), level, mean, sampling, corrected, _clip(ci)
    )


def _rogan_gladen_estimate(
    run: np.ndarray, judge: np.ndarray, human: np.ndarray, options: dict[str, Any]
) -> tuple[float, Interval] | str:
    """The Rogan-Gladen mean and CI, or why there is none."""
    binary = np.isin(judge, (0.0, 1.0)) & np.isin(human, (0.0, 1.0))
    if not binary.all():
        row = int(np.flatnonzero(~binary)[0])
        raise ValueError(
            f"labelled pair {row}: ({judge[row]:g}, {human[row]:g}) is not a pair of "
            "verdicts; Rogan-Gladen needs yes/no (1/0) judge verdicts and human labels "
            "(method='ppi' takes scores)"
        )
    positives, negatives = judge[human == 1], judge[human == 0]
    if not len(positives) or not len(negatives):
        which = "yes" if not len(positives) else "no"
        return f"no labelled item a person said {which} to: the confusion matrix has an empty row"
    mean, sensitivity, fpr = float(run.mean()), float(positives.mean()), float(negatives.mean())
    youden = sensitivity - fpr
    if youden <= MIN_YOUDEN:
        return (
            f"the judge's sensitivity + specificity - 1 is {youden:.2f} on the labels (at "
            f"most {MIN_YOUDEN}): its verdicts say next to nothing about the human ones"
        )
    corrected = _at(mean, sensitivity, fpr)
    weights = [1 / youden, -(mean - fpr) / youden**2, (mean - sensitivity) / youden**2]
    groups = _expanded([run, positives, negatives], weights, options["level"])
    ci = groups_ci(groups, _rogan_gladen, **options)
    return corrected, _widened(ci, mean, positives, negatives)


def _at(mean: float, sensitivity: float, fpr: float) -> float:
    """The Rogan-Gladen estimate of one set of figures."""
    return float(_rogan_gladen(*(np.asarray([v]) for v in (mean, sensitivity, fpr)))[0])


def _ppi(
    run: np.ndarray, judge: np.ndarray, human: np.ndarray, options: dict[str, Any]
) -> tuple[float, Interval]:
    """Prediction-powered mean and CI: the run's mean less the judge's mean error on the
    labelled items (``difference_ci`` resamples both groups, each on its own)."""
    rectifier = judge - human
    corrected = min(max(float(run.mean() - rectifier.mean()), 0.0), 1.0)
    expanded = _expanded([rectifier, run], [1.0, 1.0], options["level"])
    ci = difference_ci(*expanded, **options)
    unseen = _unseen(rectifier, options["level"])
    if unseen is None:
        return corrected, ci
    # no error seen on the labels: the judge's mean error may still be up to +- unseen
    return corrected, Interval(ci.low - unseen, ci.high + unseen, ci.level, ci.method)


def _unseen(x: np.ndarray, level: float) -> float | None:
    """For a labelled group with no variation at all (no disagreement seen, or a judge that
    said yes to every positive): how far its mean may still be from the truth, the
    Clopper-Pearson bound on a share with no events, ``1 - (alpha / 2) ** (1 / n)`` (0.31
    for 10 items at 95%: about the rule of three). A bootstrap of constant values sees no
    uncertainty at all, and the interval would cover too rarely (in 8% of the 10-label
    folds of bench/judge_error_coverage.py's rgb/as-run rows it missed every time).
    None when the group varies."""
    if len(x) and x.min() != x.max():
        return None
    return float(1 - ((1 - level) / 2) ** (1 / max(1, len(x))))


def with_judge_error(
    result: EvaluationResult,
    metric: str,
    labelled_pairs: Iterable[Sequence[Any]] | LabelledPairs,
    **options: Any,
) -> JudgeErrorEstimate:
    """:func:`estimate_with_judge_error` for ``metric``'s scores in ``result`` (the samples
    it scored), with ``labelled_pairs`` (judge score, human label) for that metric: what the
    summary, the report and the dashboard show next to the sampling-only interval.
    ``options``: those of :func:`estimate_with_judge_error` (``method``, ``level``, ...); a
    :class:`LabelledPairs` brings its own ``method``."""
    if isinstance(labelled_pairs, LabelledPairs):
        if labelled_pairs.reason is not None:
            run = [score for score in result.scores(metric) if score is not None]
            level = check_level(options.get("level", 0.95))
            return JudgeErrorEstimate(
                metric, labelled_pairs.method, len(run), 0, level, None, None, None, None,
                reason=labelled_pairs.reason,
            )  # fmt: skip
        options = {"method": labelled_pairs.method, **options}
        labelled_pairs = labelled_pairs.pairs
    return estimate_with_judge_error(
        result.scores(metric), labelled_pairs, metric=metric, **options
    )
