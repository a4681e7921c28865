"""How far a metric agrees with people: agreement statistics and their bootstrap intervals.

Pure functions of two equally long sequences, the human labels first and the metric's second.
A statistic that has no value on the data given (Cohen's kappa when one label is everywhere,
a correlation when one side is constant) raises :class:`AgreementUndefined` with the reason,
never returns NaN. Everything is numpy; the results equal ``scipy.stats.spearmanr`` /
``pearsonr`` and scikit-learn's ``cohen_kappa_score`` (and, for pass / fail labels,
:func:`pairwise_agreement` its ``roc_auc_score``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmeter._validate import as_values, check_level, check_resamples, chunks
from ragmeter.stats import Interval

#: The kinds of metric output agreement is measured for.
KINDS: tuple[str, ...] = ("discrete", "numeric", "rubric", "ranking")

#: The statistics reported per kind, the headline one first.
STATISTICS: dict[str, tuple[str, ...]] = {
    "discrete": ("cohen_kappa", "accuracy"),
    "rubric": ("quadratic_weighted_kappa", "accuracy"),
    "numeric": ("spearman", "pearson"),
    "ranking": ("spearman", "pearson"),
}

#: Resamples of the items per bootstrap interval.
DEFAULT_RESAMPLES = 2_000


class AgreementUndefined(ValueError):
    """The statistic has no value on these data; the message says why."""


# -- the statistics ---------------------------------------------------------------------------


def _check_pair(human: Sequence[Any] | np.ndarray, metric: Sequence[Any] | np.ndarray) -> int:
    n_human, n_metric = len(human), len(metric)
    if n_human != n_metric:
        raise ValueError(
            f"human and metric labels must be equally long, got {n_human} and {n_metric}"
        )
    if n_human == 0:
        raise AgreementUndefined("no item to compare")
    return n_human


def _codes(human: Sequence[Hashable], metric: Sequence[Hashable]) -> tuple[np.ndarray, ...]:
    """Both label sequences as integer codes of one shared set of labels."""
    h, m = np.asarray(human), np.asarray(metric)
    if h.dtype.kind in "iub" and m.dtype.kind in "iub":  # already codes: the bootstrap's path
        _, inverse = np.unique(np.concatenate([h, m]), return_inverse=True)
        inverse = inverse.reshape(-1)
        return inverse[: len(h)], inverse[len(h) :]
    index: dict[Hashable, int] = {}
    for label in (*human, *metric):
        if label is None:
            raise ValueError("labels must not be None (leave out the items without a label)")
        index.setdefault(label, len(index))
    return (
        np.fromiter((index[x] for x in human), dtype=np.intp, count=len(human)),
        np.fromiter((index[x] for x in metric), dtype=np.intp, count=len(metric)),
    )


def accuracy(human: Sequence[Hashable], metric: Sequence[Hashable]) -> float:
    """The share of items on which the metric gives the human's label.

    >>> accuracy(["pass", "pass", "fail", "fail"], ["pass", "fail", "fail", "fail"])
    0.75
    """
    _check_pair(human, metric)
    h, m = _codes(human, metric)
    return float(np.mean(h == m))


def cohen_kappa(human: Sequence[Hashable], metric: Sequence[Hashable]) -> float:
    """Cohen's kappa: agreement beyond what the two label distributions give by chance,
    ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the accuracy and ``p_e`` the sum over labels of
    the product of each side's share of that label. 1 is perfect agreement, 0 chance.

    Worked example: 4 of 6 items agree (p_o = 2/3); both sides say pass half of the time, so
    p_e = 0.5 x 0.5 + 0.5 x 0.5 = 0.5 and kappa = (2/3 - 1/2) / (1 - 1/2) = 1/3.

    >>> human = ["pass", "pass", "fail", "fail", "pass", "fail"]
    >>> round(cohen_kappa(human, ["pass", "fail", "fail", "fail", "pass", "pass"]), 4)
    0.3333
    >>> cohen_kappa(["pass", "pass"], ["pass", "pass"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ragmeter.align._agreement.AgreementUndefined: Cohen's kappa is undefined: both sides ...
    """
    n = _check_pair(human, metric)
    h, m = _codes(human, metric)
    k = int(max(h.max(), m.max())) + 1
    p_o = float(np.mean(h == m))
    p_e = float(np.dot(np.bincount(h, minlength=k), np.bincount(m, minlength=k))) / n**2
    if p_e >= 1.0:
        raise AgreementUndefined(
            "Cohen's kappa is undefined: both sides give the same single label to every item, "
            "so chance agreement is already 1"
        )
    return (p_o - p_e) / (1.0 - p_e)


def _ordinal(
    human: Sequence[Any], metric: Sequence[Any], labels: Sequence[Hashable] | None
) -> tuple[np.ndarray, np.ndarray]:
    if labels is None:
        try:
            return as_values(human, "human labels"), as_values(metric, "metric labels")
        except (TypeError, ValueError):
            raise ValueError(
                "ordinal labels that are not numbers need their order: pass labels=[...] "
                "from the lowest to the highest"
            ) from None
    position = {label: i for i, label in enumerate(labels)}
    if len(position) != len(labels):
        raise ValueError("labels must not repeat")
    unknown = sorted({str(x) for x in (*human, *metric) if x not in position})
    if unknown:
        raise ValueError(f"label(s) {', '.join(unknown)} are not in labels={list(labels)!r}")
    return (
        np.array([position[x] for x in human], dtype=float),
        np.array([position[x] for x in metric], dtype=float),
    )


def quadratic_weighted_kappa(
    human: Sequence[Any], metric: Sequence[Any], *, labels: Sequence[Hashable] | None = None
) -> float:
    """Cohen's kappa for ordered labels (rubric levels), where a disagreement costs the square
    of its distance: ``1 - sum(w * observed) / sum(w * expected)`` with weights
    ``w = (a - b)^2`` over the confusion matrix and ``expected`` the product of its margins.

    Numbers are their own positions, so a gap of 2 levels costs 4 even when no item used the
    level in between (as scikit-learn's ``cohen_kappa_score(weights="quadratic",
    labels=[1, 2, 3, 4, 5])``); other labels need ``labels`` in order, lowest first.

    Worked example: human 1 2 3 4, metric 1 2 4 4. Observed: the squared gaps are
    0 0 1 0, mean 1/4. Expected: the mean squared gap over all 16 (human, metric) pairs is
    var(human) + var(metric) + (mean gap)^2 = 1.25 + 1.6875 + 0.0625 = 3, so
    kappa = 1 - 0.25 / 3 = 0.9167.

    >>> round(quadratic_weighted_kappa([1, 2, 3, 4], [1, 2, 4, 4]), 4)
    0.9167
    >>> quadratic_weighted_kappa(["low", "mid", "high"], ["low", "high", "high"],
    ...                          labels=["low", "mid", "high"])
    0.8
    """
    _check_pair(human, metric)
    h, m = _ordinal(human, metric, labels)
    observed = float(np.mean((h - m) ** 2))
    # The mean of (h_i - m_j)^2 over all pairs i, j: the disagreement the margins expect.
    expected = float(h.var() + m.var() + (h.mean() - m.mean()) ** 2)
    if expected <= 0.0:
        raise AgreementUndefined(
            "quadratic weighted kappa is undefined: both sides give the same single level to "
            "every item"
        )
    return 1.0 - observed / expected


def _correlation(x: np.ndarray, y: np.ndarray, name: str) -> float:
    if len(x) < 2:
        raise AgreementUndefined(f"{name} is undefined on fewer than 2 items")
    dx, dy = x - x.mean(), y - y.mean()
    sx, sy = float(np.sqrt(np.dot(dx, dx))), float(np.sqrt(np.dot(dy, dy)))
    for spread, side in ((sx, "the human labels are"), (sy, "the metric's scores are")):
        if spread == 0.0:
            raise AgreementUndefined(f"{name} is undefined: {side} the same on every item")
    return float(np.clip(np.dot(dx, dy) / (sx * sy), -1.0, 1.0))


def pearson(human: Sequence[float], metric: Sequence[float]) -> float:
    """Pearson's correlation of the human labels and the metric's scores (linear agreement).

    >>> round(pearson([1, 2, 3, 4], [0.1, 0.3, 0.2, 0.9]), 4)
    0.8262
    """
    _check_pair(human, metric)
    return _correlation(
        as_values(human, "human labels"), as_values(metric, "metric scores"), "Pearson's r"
    )


def ranks(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """1-based ranks, ties given the mean of the ranks they span (as ``scipy.stats.rankdata``).

    >>> ranks([10, 30, 20, 20]).tolist()
    [1.0, 4.0, 2.5, 2.5]
    """
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="mergesort")
    ordered = x[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.cumsum(starts)  # 1-based tie group of each sorted value
    bounds = np.r_[np.flatnonzero(starts), len(x)]
    out = np.empty(len(x))
    out[order] = 0.5 * (bounds[group] + bounds[group - 1] + 1)
    return out


def spearman(human: Sequence[float], metric: Sequence[float]) -> float:
    """Spearman's rank correlation: Pearson's r of the ranks (ties share their mean rank), so
    only the order matters, not the scale of either side.

    >>> spearman([1, 2, 3, 4], [0.1, 0.3, 0.2, 0.9])
    0.8
    """
    _check_pair(human, metric)
    h, m = as_values(human, "human labels"), as_values(metric, "metric scores")
    return _correlation(ranks(h), ranks(m), "Spearman's rho")


def pairwise_counts(
    human: Sequence[float] | np.ndarray, metric: Sequence[float] | np.ndarray
) -> tuple[int, float, int]:
    """Over the pairs of items people ordered (different human labels): how many there are,
    how many the metric orders the same way, and how many it ties: ``(pairs, concordant,
    ties)``. Two-valued labels (pass / fail) take O(n log n) through ranks; others compare
    every pair.

    >>> pairwise_counts([0, 0, 1, 1], [0.2, 0.6, 0.6, 0.9])
    (4, 3.0, 1)
    """
    h = as_values(human, "human labels")
    m = as_values(metric, "metric scores")
    values = np.unique(h)
    if len(values) == 2:  # pass / fail: the Mann-Whitney count, ties from the shared values
        high = h == values[1]
        n_high, n_low = int(high.sum()), int((~high).sum())
        ranked = ranks(m)
        above = float(ranked[high].sum() - n_high * (n_high + 1) / 2)  # ties count half
        shared, inverse = np.unique(m, return_inverse=True)
        per_value_high = np.bincount(inverse.reshape(-1), weights=high, minlength=len(shared))
        per_value_low = np.bincount(inverse.reshape(-1), weights=~high, minlength=len(shared))
        ties = int(np.dot(per_value_high, per_value_low))
        return n_high * n_low, above - ties / 2, ties
    ordered = np.sign(h[:, None] - h[None, :]) > 0
    agree = np.sign(m[:, None] - m[None, :])[ordered]
    ties = int((agree == 0).sum())
    return int(ordered.sum()), float((agree > 0).sum()), ties


def pairwise_agreement(human: Sequence[float], metric: Sequence[float]) -> float:
    """The share of the pairs of items people ordered (different labels) that the metric
    orders the same way, a tie of the metric counting half; for pass / fail labels this is
    the area under the ROC curve of the metric's scores.

    Worked example: labels 0 0 1 1 and scores 0.2 0.6 0.6 0.9 make 4 ordered pairs, of
    which the metric orders 3 the same way and ties 1 (0.6 and 0.6): (3 + 0.5) / 4.

    >>> pairwise_agreement([0, 0, 1, 1], [0.2, 0.6, 0.6, 0.9])
    0.875
    """
    _check_pair(human, metric)
    pairs, concordant, ties = pairwise_counts(human, metric)
    if pairs == 0:
        raise AgreementUndefined(
            "pairwise agreement is undefined: the human labels are the same on every item, so "
            "no pair is ordered"
        )
    return (concordant + ties / 2) / pairs


def preference_agreement(human: Sequence[float], metric: Sequence[float]) -> float:
    """The share of pairs of samples the metric orders as people did: per pair, ``human`` is
    1 when people found its first sample the better one and 0 when the second, ``metric``
    the first sample's score minus the second's. A pair the metric scores level counts half
    (WikiEval's protocol in the RAGAS paper, and ``bench/meta_eval.py``'s).

    Worked example: three pairs, the first sample better in the first two; the metric
    prefers the first sample in pair 1 (+0.4), scores pair 2 level (0.0) and prefers the
    first sample in pair 3, where people preferred the second: (1 + 0.5 + 0) / 3.

    >>> preference_agreement([1, 1, 0], [0.4, 0.0, 0.2])
    0.5
    """
    _check_pair(human, metric)
    h = np.asarray(human, dtype=float)
    d = np.asarray(metric, dtype=float)
    points = np.where(np.abs(d) < 1e-12, 0.5, ((d > 0) == (h == 1.0)).astype(float))
    return float(np.mean(points))


#: The statistic functions by name.
FUNCTIONS: dict[str, Callable[..., float]] = {
    "preference_agreement": preference_agreement,
    "accuracy": accuracy,
    "cohen_kappa": cohen_kappa,
    "quadratic_weighted_kappa": quadratic_weighted_kappa,
    "spearman": spearman,
    "pearson": pearson,
    "pairwise_agreement": pairwise_agreement,
}


# -- bootstrap intervals -----------------------------------------------------------------------


@dataclass(frozen=True)
class Agreement:
    """One agreement statistic over ``n`` items: its ``value`` and bootstrap ``ci``.

    ``value`` is ``None`` when the statistic is undefined on these items and ``ci`` is
    ``None`` when no interval could be made; ``note`` says why (or how many resamples were
    left out of the interval for having no value).
    """

    statistic: str
    value: float | None
    ci: Interval | None
    n: int
    note: str | None = None

    def describe(self) -> str:
        """The figure in one line, e.g. ``cohen_kappa 0.61 (95% CI 0.38 to 0.82, n=40)``."""
        if self.value is None:
            return f"{self.statistic} undefined (n={self.n}): {self.note}"
        sign = "+" if self.statistic.startswith("Δ") else ""
        text = f"{self.statistic} {self.value:{sign}.3f}"
        if self.ci is None:
            text += f" (no CI: {self.note}, n={self.n})"
        else:
            text += f" ({self.ci.level:.0%} CI {self.ci.low:.3f} to {self.ci.high:.3f}, n={self.n})"
            if self.note:
                text += f"; {self.note}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic,
            "value": self.value,
            "ci": None if self.ci is None else self.ci.to_dict(),
            "n": self.n,
            "note": self.note,
        }


def _percentile_bootstrap(
    statistic: Callable[[np.ndarray], float],
    n: int,
    *,
    level: float,
    n_resamples: int,
    seed: int,
) -> tuple[Interval | None, str | None]:
    """Percentile interval of ``statistic(indices)`` over resamples of the ``n`` item indices.

    Resamples on which the statistic is undefined are left out (and counted in the note);
    when more than half are, there is no interval.
    """
    if n < 2:
        return None, "a CI needs at least 2 items"
    rng = np.random.default_rng(seed)
    values: list[float] = []
    undefined = 0
    for size in chunks(n_resamples, n):
        for indices in rng.integers(0, n, (size, n)):
            try:
                values.append(statistic(indices))
            except AgreementUndefined:
                undefined += 1
    if 2 * len(values) < n_resamples:
        return None, (
            f"the statistic is undefined on {undefined} of {n_resamples} resamples of the items"
        )
    alpha = (1.0 - level) / 2.0
    low, high = np.percentile(values, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    note = (
        f"{undefined} of {n_resamples} resamples had no value and were left out"
        if undefined
        else None
    )
    return Interval(float(low), float(high), level, "percentile"), note


def agreement_ci(
    statistic: Callable[[np.ndarray, np.ndarray], float],
    human: Sequence[Any] | np.ndarray,
    metric: Sequence[Any] | np.ndarray,
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval of ``statistic(human, metric)``, resampling items.

    Each of ``n_resamples`` resamples draws the items' indices with replacement from
    ``numpy.random.default_rng(seed)`` (so the same seed gives the same interval) and
    computes the statistic on the pairs drawn; the interval is the central ``level`` share
    of those values. ``ragmeter.stats.bootstrap_ci`` does the same for means only. Resamples
    on which the statistic is undefined are left out; :class:`AgreementUndefined` if more
    than half are, or if there are fewer than 2 items.

    >>> ci = agreement_ci(accuracy, [1, 1, 0, 0, 1, 0, 1, 1], [1, 0, 0, 0, 1, 0, 1, 1])
    >>> round(ci.low, 3), round(ci.high, 3), ci.method
    (0.625, 1.0, 'percentile')
    """
    _check_pair(human, metric)
    level = check_level(level)
    check_resamples(n_resamples)
    h, m = np.asarray(human), np.asarray(metric)
    interval, note = _percentile_bootstrap(
        lambda i: statistic(h[i], m[i]), len(h), level=level, n_resamples=n_resamples, seed=seed
    )
    if interval is None:
        raise AgreementUndefined(note)
    return interval


def _statistic(name: str) -> Callable[[np.ndarray, np.ndarray], float]:
    try:
        return FUNCTIONS[name]
    except KeyError:
        raise ValueError(f"unknown statistic {name!r}; known: {', '.join(FUNCTIONS)}") from None


def measure(
    name: str,
    human: np.ndarray,
    metric: np.ndarray,
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Agreement:
    """Statistic ``name`` with its bootstrap CI, undefined values reported with their reason.

    ``human`` and ``metric`` are integer codes for label statistics (accuracy, kappa) and
    numbers for the others.
    """
    function = _statistic(name)
    return _measured(
        name, lambda i: function(human[i], metric[i]), len(human), level, n_resamples, seed
    )


def measure_change(
    name: str,
    human: np.ndarray,
    before: np.ndarray,
    after: np.ndarray,
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Agreement:
    """``statistic(human, after) - statistic(human, before)`` on the same items, with a paired
    bootstrap CI (both versions are measured on the same resampled items)."""
    function = _statistic(name)

    def change(i: np.ndarray | slice) -> float:
        return function(human[i], after[i]) - function(human[i], before[i])

    return _measured(f"Δ{name}", change, len(human), level, n_resamples, seed)


def _measured(
    label: str,
    statistic: Callable[[np.ndarray | slice], float],
    n: int,
    level: float,
    n_resamples: int,
    seed: int,
) -> Agreement:
    """``statistic`` of all ``n`` items (``slice(None)``) with its percentile bootstrap CI
    (``statistic`` of resampled item indices); undefined values reported with their reason."""
    try:
        value = statistic(slice(None))
    except AgreementUndefined as error:
        return Agreement(label, None, None, n, str(error))
    interval, note = _percentile_bootstrap(
        statistic,
        n,
        level=check_level(level),
        n_resamples=check_resamples(n_resamples),
        seed=seed,
    )
    return Agreement(label, value, interval, n, note)
