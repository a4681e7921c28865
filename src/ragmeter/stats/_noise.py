"""Judge noise: how much a metric's scores move when the judge scores the same sample again."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ragmeter.results import EvaluationResult
from ragmeter.stats._format import decimals_for
from ragmeter.stats._power import min_detectable_effect
from ragmeter.stats._runs import metric_names

_NO_REPEATS = (
    "judge noise needs a run that judged every sample more than once: run with --repeats R "
    "(R >= 2), or evaluate(..., repeats=R)"
)


@dataclass(frozen=True)
class JudgeNoise:
    """A judged metric's noise, measured from a run that judged each sample ``repeats`` times.

    ``within_variance`` is the mean over samples of the variance of a sample's repeated
    scores (ddof=1, over the ``n_samples`` samples with at least 2 ok repeats);
    ``total_variance`` the variance of all ok repeat scores of the run; ``share`` their ratio
    (capped at 1): the part of the spread in the run's scores that is the judge's own.
    ``noise_sd_of_mean`` is the judge noise left in the run's mean when each sample's score
    is the mean of its repeats: sqrt(within_variance / repeats / n_samples).
    ``min_detectable_effect`` is the smallest change in the mean that a paired comparison of
    two such runs on these samples could detect at 80% power (alpha 0.05) if judge noise were
    the only difference between them: a floor no comparison on this dataset gets below.
    """

    metric: str
    n_samples: int
    repeats: int
    within_variance: float
    total_variance: float
    share: float
    noise_sd_of_mean: float
    min_detectable_effect: float | None
    #: The same figures for the metric's score from the judge's P(yes) (``soft_score``),
    #: where the judge returns probabilities: how much of the noise they remove.
    probabilistic: JudgeNoise | None = None

    def summary(self) -> str:
        """The figures in one plain sentence."""
        sd = math.sqrt(self.within_variance)
        dec = decimals_for(sd)
        text = (
            f"{self.metric}: the judge's scores of the same sample vary by {sd:.{dec}f} (sd over "
            f"{self.repeats} repeats, {self.n_samples} samples), {self.share:.0%} of the run's "
            f"variance; the run mean carries ±{self.noise_sd_of_mean:.{dec + 1}f} (sd) of judge "
            "noise"
        )
        if self.min_detectable_effect is None:
            text += "."
        else:
            text += (
                f", so changes smaller than {self.min_detectable_effect:.{dec}f} cannot be "
                "told from judge noise (80% power)."
            )
        soft = self.probabilistic
        if soft is not None:
            reduction = (
                1 - soft.within_variance / self.within_variance if self.within_variance else 0.0
            )
            text += (
                f" Scored from the judge's P(yes) instead, the same samples vary by "
                f"{math.sqrt(soft.within_variance):.{dec}f} ({reduction:.0%} less judge variance)."
            )
        return text

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _matrix(rows: list[list[float | None]]) -> np.ndarray:
    width = max((len(r) for r in rows), default=0)
    matrix = np.full((len(rows), max(width, 1)), np.nan)
    for i, row in enumerate(rows):
        matrix[i, : len(row)] = [np.nan if s is None else s for s in row]
    return matrix


def noise_from_matrix(metric: str, scores: np.ndarray, repeats: int | None = None) -> JudgeNoise:
    """:class:`JudgeNoise` of one metric from its n_samples x repeats matrix of scores (NaN
    where a repeat did not score).

    >>> m = np.array([[0.8, 0.9, 0.7], [0.2, 0.3, np.nan], [0.5, 0.5, 0.6]])
    >>> noise = noise_from_matrix("faithfulness", m)
    >>> noise.n_samples, noise.repeats, round(noise.within_variance, 4), round(noise.share, 3)
    (3, 3, 0.0061, 0.107)
    >>> print(noise.summary())
    faithfulness: the judge's scores of the same sample vary by 0.08 (sd over 3 repeats, 3
    samples), 11% of the run's variance; the run mean carries ±0.026 (sd) of judge noise, so
    changes smaller than 0.10 cannot be told from judge noise (80% power).
    """
    matrix = np.asarray(scores, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"scores must be samples x repeats, got shape {matrix.shape}")
    if np.isinf(matrix).any():
        raise ValueError("scores must be finite (NaN marks a repeat that did not score)")
    ok = ~np.isnan(matrix)
    counts = ok.sum(axis=1)
    rows = matrix[counts >= 2]
    if len(rows) == 0:
        raise ValueError(
            f"{metric!r}: no sample has 2 or more scored repeats; " + _NO_REPEATS.split(": ")[1]
        )
    within = float(np.mean(np.nanvar(rows, axis=1, ddof=1)))
    every = matrix[ok]
    total = float(every.var(ddof=1))
    repeats = int(repeats if repeats is not None else matrix.shape[1])
    n = len(rows)
    share = min(1.0, within / total) if total > 0 else 0.0
    return JudgeNoise(
        metric=metric,
        n_samples=n,
        repeats=repeats,
        within_variance=within,
        total_variance=total,
        share=share,
        noise_sd_of_mean=math.sqrt(within / repeats / n),
        # Each run's per-sample score is a mean of `repeats` judgements, so a per-sample
        # difference between two runs carries judge noise of variance 2 * within / repeats.
        min_detectable_effect=(
            min_detectable_effect(math.sqrt(2 * within / repeats), n) if n >= 2 else None
        ),
    )


def judge_noise(
    result: EvaluationResult, *, metrics: Iterable[str] | None = None
) -> dict[str, JudgeNoise]:
    """Per judged metric, how noisy the judge is, from a run with ``repeats`` R >= 2 (each
    sample judged R times; see :class:`JudgeNoise` for the figures).

    Without ``metrics``, every metric that was judged repeatedly; metrics scored without a
    judge (deterministic) are left out. Raises ValueError for a run without repeats.

    >>> from ragmeter import EvaluationResult
    >>> judge_noise(EvaluationResult(samples=[], metrics=[]))
    Traceback (most recent call last):
    ...
    ValueError: judge noise needs a run that judged every sample more than once: run with
    --repeats R (R >= 2), or evaluate(..., repeats=R)
    """
    repeats = int(result.config.get("repeats") or 1)
    repeat_scores = getattr(result, "repeat_scores", None)
    if repeat_scores is None or repeats < 2:
        raise ValueError(_NO_REPEATS)
    out: dict[str, JudgeNoise] = {}
    for name in metric_names(result, metrics):
        rows = repeat_scores(name)
        if max((len(r) for r in rows), default=0) < 2:
            if metrics is not None:
                raise ValueError(f"{name!r} was not judged repeatedly (only judged metrics are)")
            continue
        noise = noise_from_matrix(name, _matrix(rows), repeats)
        soft_rows = repeat_scores(name, soft=True)
        if soft_rows and all(len(r) >= 2 for r in soft_rows):
            soft = noise_from_matrix(name, _matrix(soft_rows), repeats)
            noise = dataclasses.replace(noise, probabilistic=soft)
        out[name] = noise
    return out
