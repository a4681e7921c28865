"""Two runs, metric by metric: the change, its confidence interval, a test, and a verdict."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from ragmeter._bootstrap import Interval, bootstrap_ci, check_method, difference_ci
from ragmeter._record import attributes
from ragmeter._validate import check_level, check_resamples
from ragmeter.metrics import Direction
from ragmeter.results import EvaluationResult
from ragmeter.stats._comparability import comparability
from ragmeter.stats._effect import cohens_dz, hedges_g
from ragmeter.stats._format import about, decimals_for, p_text, percent, signed
from ragmeter.stats._holm import holm
from ragmeter.stats._permutation import label_permutation_test, sign_flip_test
from ragmeter.stats._power import min_detectable_effect, samples_needed
from ragmeter.stats._runs import RunScores, check_pairing, metric_names, read_scores, restrict
from ragmeter.stats._wilcoxon import wilcoxon_test

TESTS = ("permutation", "wilcoxon")
SIGN_FLIP = "sign-flip permutation"
WILCOXON = "wilcoxon"
UNPAIRED = "permutation (unpaired)"

#: How a metric changed between two runs, in words (:attr:`Comparison.change`): "better"
#: and "worse" only when the change is significant. Every surface that words a metric's
#: change (CLI, reports, dashboard) reads it from there.
Change = Literal["better", "worse", "no significant change", "not comparable"]


@dataclass(frozen=True)
class Comparison:
    """One metric compared between a baseline run and a candidate run.

    ``difference`` is candidate - baseline as measured (not adjusted for the metric's
    direction; :attr:`change` is). Paired comparisons (the runs share sample ids) use the
    samples scored in both runs, and their means are over those samples; unpaired ones use
    every scored sample of each run. ``p_adjusted`` is Holm-corrected over the metrics
    compared in the same :func:`compare` call and decides :attr:`significant`.
    ``min_detectable_effect`` is the change this comparison would detect with 80% power;
    ``samples_needed`` the samples (per run, when unpaired) that would detect a true change
    of the size observed.

    ``differences`` says how the runs were measured differently for this metric (judge,
    embedding model, settings, prompt versions; see :func:`comparability`).
    ``not_comparable`` is set (e.g. "judge changed (A vs B)") when the judge or embedding
    model changed and the comparison was not allowed across it: the means are given, but no
    test, interval or winner.
    """

    metric: str
    direction: Direction
    paired: bool
    n_baseline: int
    n_candidate: int
    n_pairs: int
    baseline_mean: float | None
    candidate_mean: float | None
    difference: float | None
    ci: Interval | None
    p_value: float | None
    p_adjusted: float | None
    test: str
    effect_size: float | None
    min_detectable_effect: float | None
    samples_needed: int | None
    alpha: float
    level: float
    not_comparable: str | None = None
    differences: tuple[str, ...] = ()

    @property
    def significant(self) -> bool:
        return self.p_adjusted is not None and self.p_adjusted < self.alpha

    @property
    def change(self) -> Change:
        """ "better" or "worse" (read in the metric's direction) only when the change is
        :attr:`significant`: the test's p-value, Holm-corrected, below alpha; else "no
        significant change" however large the difference looks; "not comparable" when the
        judge or embedding model changed."""
        if self.not_comparable is not None:
            return "not comparable"
        if not self.significant or not self.difference:
            return "no significant change"
        rose = self.difference > 0
        return "better" if rose == (self.direction is Direction.HIGHER_IS_BETTER) else "worse"

    def verdict(self) -> str:
        """The comparison in one plain sentence, e.g. "answer_correctness -0.03 (95% CI -0.07
        to +0.01, p = 0.19): not significant with 50 samples; about 180 samples would detect
        a 0.03 drop." """
        if self.not_comparable is not None:
            return self._refused()
        if self.p_value is None or self.ci is None or self.difference is None:
            return self._untested()
        diff, ci = self.difference, self.ci
        dec = decimals_for(ci.high - ci.low or abs(diff))
        p = f"p {p_text(self.p_value)}"
        if self.p_adjusted is not None and self.p_adjusted != self.p_value:
            p += f", Holm-adjusted {p_text(self.p_adjusted).removeprefix('= ')}"
        head = (
            f"{self.metric} {signed(diff, dec)} ({percent(self.level)} CI "
            f"{signed(ci.low, dec)} to {signed(ci.high, dec)}, {p})"
        )
        with_n = (
            f"{self.n_pairs} sample{'s' * (self.n_pairs != 1)}"
            if self.paired
            else f"{self.n_baseline} and {self.n_candidate} samples (unpaired: different samples)"
        )
        if self.significant:
            return f"{head}: significant with {with_n}, {self.change}."
        text = f"{head}: not significant with {with_n}"
        if diff == 0:
            nothing = "no sample's score changed" if self.paired else "the means are equal"
            return f"{text}; {nothing}."
        have = self.n_pairs if self.paired else min(self.n_baseline, self.n_candidate)
        if self.samples_needed is not None and self.samples_needed > have:
            per_run = "" if self.paired else " per run"
            size = f"{abs(diff):.{dec}f} {'rise' if diff > 0 else 'drop'}"
            text += f"; about {about(self.samples_needed)} samples{per_run} would detect a {size}"
        return text + "."

    def _refused(self) -> str:
        means = [self.baseline_mean, self.candidate_mean]
        shown = " → ".join("—" if m is None else f"{m:.2f}" for m in means)
        return (
            f"{self.metric}: not comparable: {self.not_comparable}; means {shown}, no test "
            "and no winner across them (allow_judge_change / --allow-judge-change compares "
            "anyway)."
        )

    def _untested(self) -> str:
        if self.paired:
            if self.n_pairs == 0:
                return (
                    f"{self.metric}: not compared: no sample was scored in both runs "
                    "(a paired comparison needs at least 2)."
                )
            assert self.difference is not None
            dec = decimals_for(abs(self.difference))
            return (
                f"{self.metric} {signed(self.difference, dec)} on 1 sample: not tested; a "
                "paired comparison needs at least 2 samples scored in both runs."
            )
        counts = f"{self.n_baseline} and {self.n_candidate} scored samples"
        head = self.metric
        if self.difference is not None:
            head += f" {signed(self.difference, decimals_for(abs(self.difference)))}"
        return (
            f"{head} (unpaired: different samples): not tested with {counts}; "
            "each run needs at least 2."
        )

    def to_dict(self) -> dict[str, Any]:
        """Every figure, with ``significant``, ``change`` and ``verdict``, JSON-ready."""
        out = attributes(self, *self.__dataclass_fields__)
        out["direction"] = self.direction.value
        out["ci"] = self.ci.to_dict() if self.ci else None
        out["differences"] = list(self.differences)
        out.update(significant=self.significant, change=self.change, verdict=self.verdict())
        return out


def compare(
    baseline: EvaluationResult,
    candidate: EvaluationResult,
    *,
    metrics: Iterable[str] | None = None,
    level: float = 0.95,
    alpha: float = 0.05,
    test: str = "permutation",
    n_resamples: int = 10_000,
    seed: int = 0,
    tag: str | None = None,
    value: str | None = None,
    method: str = "bca",
    allow_judge_change: bool = False,
) -> list[Comparison]:
    """Compare every metric (or those named) of two runs: is the change real or noise?

    When the runs share sample ids, each metric is compared on the samples scored in both
    (paired): the CI is a bootstrap of the mean per-sample difference and the test a sign-flip
    permutation test (``test="wilcoxon"``: the Wilcoxon signed-rank test, needs scipy).
    Runs on different samples are compared unpaired: a bootstrap of each run's mean and a
    label permutation test, and the verdict says so. P-values are Holm-corrected across the
    metrics of the call. ``tag`` and ``value`` restrict both runs to the samples whose
    metadata field ``tag`` has ``value``. ``method`` is the CI's ("bca" or "percentile").

    The judge must stay fixed: a metric whose judge (or embedding model) differs between the
    runs (:func:`comparability`) gets no test, interval or winner; its verdict says "not
    comparable: judge changed (A vs B)" while the other metrics compare as usual.
    ``allow_judge_change=True`` compares it anyway. Each comparison's ``differences`` lists
    how the runs were measured differently, refused or not.

    >>> from typing import ClassVar
    >>> from ragmeter import Metric, MetricResult, evaluate
    >>> class Given(Metric):
    ...     requires: ClassVar = ()
    ...     def __init__(self, scores):
    ...         self.name, self.scores = "answer_correctness", scores
    ...     def score(self, sample):
    ...         return MetricResult.ok(self.scores[sample.id])
    >>> ids = [f"q{i}" for i in range(40)]
    >>> before = [0.5 + 0.1 * (i % 5) for i in range(40)]
    >>> after = [s + (0.1 if i % 4 else -0.05) for i, s in enumerate(before)]
    >>> rows = [{"id": i, "user_input": "?"} for i in ids]
    >>> baseline = evaluate(rows, [Given(dict(zip(ids, before)))])
    >>> candidate = evaluate(rows, [Given(dict(zip(ids, after)))])
    >>> (c,) = compare(baseline, candidate, n_resamples=2000)
    >>> c.paired, c.n_pairs, round(c.difference, 4), c.change
    (True, 40, 0.0625, 'better')
    >>> print(c.verdict())
    answer_correctness +0.06 (95% CI +0.04 to +0.09, p < 0.001): significant with 40 samples,
    better.
    """
    level, alpha = check_level(level), check_level(alpha, "alpha")
    check_resamples(n_resamples)
    method = check_method(method)
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    if (tag is None) != (value is None):
        raise ValueError("give tag and value together (e.g. tag='question_type', value='multi')")
    names = _shared_metrics(baseline, candidate, metrics)
    directions = {m.name: m.direction for m in baseline.metrics}
    for m in candidate.metrics:
        if m.name in names and m.direction is not directions[m.name]:
            raise ValueError(f"{m.name!r} has opposite directions in the two runs")
    base, cand = read_scores(baseline, names), read_scores(candidate, names)
    if tag is not None:
        base = restrict(base, tag, str(value), "baseline")
        cand = restrict(cand, tag, str(value), "candidate")
    shared = set(base.ids) & set(cand.ids)
    check_pairing(base, cand)
    if not shared and test == "wilcoxon":
        raise ValueError(
            "test='wilcoxon' needs paired runs (shared sample ids); these runs share none: "
            "use test='permutation'"
        )
    settings = _Settings(level, alpha, test, n_resamples, seed, method)
    checked = comparability(baseline, candidate, metrics=names)
    results = []
    for name in names:
        refusal = None if allow_judge_change else checked.refusal(name)
        found = _compared(
            name, directions[name], base, cand, settings, bool(shared), refusal is None
        )
        results.append(
            replace(
                found,
                not_comparable=None if refusal is None else refusal.reason,
                differences=tuple(str(d) for d in checked.for_metric(name)),
            )
        )
    tested = [(i, r.p_value) for i, r in enumerate(results) if r.p_value is not None]
    adjusted = dict(zip([i for i, _ in tested], holm([p for _, p in tested])))
    return [
        replace(r, p_adjusted=adjusted[i]) if i in adjusted else r for i, r in enumerate(results)
    ]


@dataclass(frozen=True)
class _Settings:
    level: float
    alpha: float
    test: str
    n_resamples: int
    seed: int
    method: str


def _shared_metrics(
    baseline: EvaluationResult, candidate: EvaluationResult, metrics: Iterable[str] | None
) -> list[str]:
    if metrics is not None:
        names = metric_names(baseline, metrics, "baseline ")
        metric_names(candidate, names, "candidate ")
        return names
    in_candidate = {m.name for m in candidate.metrics}
    names = [m.name for m in baseline.metrics if m.name in in_candidate]
    if not names:
        raise ValueError(
            f"the runs share no metric: baseline has {[m.name for m in baseline.metrics]}, "
            f"candidate has {sorted(in_candidate)}"
        )
    return names


def _compared(
    metric: str,
    direction: Direction,
    base: RunScores,
    cand: RunScores,
    s: _Settings,
    paired: bool,
    tested: bool = True,
) -> Comparison:
    """One metric compared: ``paired`` on the samples scored in both runs, else on every
    scored sample of each run as independent samples; tested with at least 2 of each."""
    if paired:
        cand_score = dict(zip(cand.ids, cand.scores[metric]))
        pairs = [
            (b, cand_score[i])
            for i, b in zip(base.ids, base.scores[metric])
            if b is not None and cand_score.get(i) is not None
        ]
        b = np.array([p[0] for p in pairs], dtype=float)
        c = np.array([p[1] for p in pairs], dtype=float)
        d = c - b
        n_baseline, n_candidate = _count(base.scores[metric]), _count(cand.scores[metric])
        n_pairs = len(d)
        diff = float(d.mean()) if n_pairs else None
        test = WILCOXON if s.test == "wilcoxon" else SIGN_FLIP
    else:
        b = np.array([x for x in base.scores[metric] if x is not None], dtype=float)
        c = np.array([x for x in cand.scores[metric] if x is not None], dtype=float)
        n_baseline, n_candidate, n_pairs = len(b), len(c), 0
        diff = float(c.mean() - b.mean()) if len(b) and len(c) else None
        test = UNPAIRED
    common: dict[str, Any] = {
        "metric": metric,
        "direction": direction,
        "paired": paired,
        "n_baseline": n_baseline,
        "n_candidate": n_candidate,
        "n_pairs": n_pairs,
        "baseline_mean": float(b.mean()) if len(b) else None,
        "candidate_mean": float(c.mean()) if len(c) else None,
        "difference": diff,
        "test": test,
        "alpha": s.alpha,
        "level": s.level,
    }
    if len(b) < 2 or len(c) < 2 or not tested:
        common.update(dict.fromkeys(_TESTED))
    else:
        ci, p, *rest = _paired_test(d, diff, s) if paired else _unpaired_test(b, c, diff, s)
        common.update(zip(_TESTED, (ci, p, p, *rest)))
    return Comparison(**common)


_Tested = tuple[Interval, float, float | None, float | None, int | None]
#: The fields of a :class:`Comparison` that only a test fills (the p-value twice: as is, and
#: Holm-adjusted once every metric is tested).
_TESTED = ("ci", "p_value", "p_adjusted", "effect_size", "min_detectable_effect", "samples_needed")


def _paired_test(d: np.ndarray, diff: float | None, s: _Settings) -> _Tested:
    """Interval, p-value, effect size, detectable effect and samples needed of the paired
    differences ``d`` (at least 2)."""
    n = len(d)
    sd = float(d.std(ddof=1))
    p = (
        wilcoxon_test(d)
        if s.test == "wilcoxon"
        else sign_flip_test(d, n_resamples=s.n_resamples, seed=s.seed)
    )
    return (
        bootstrap_ci(d, level=s.level, method=s.method, n_resamples=s.n_resamples, seed=s.seed),
        p,
        cohens_dz(d),
        min_detectable_effect(sd, n, alpha=s.alpha),
        samples_needed(diff, sd, alpha=s.alpha) if diff else None,
    )


def _unpaired_test(b: np.ndarray, c: np.ndarray, diff: float | None, s: _Settings) -> _Tested:
    """Interval, p-value, effect size, detectable effect and samples needed of two runs'
    independent scores ``b`` and ``c`` (at least 2 each)."""
    var_b, var_c = float(b.var(ddof=1)), float(c.var(ddof=1))
    p = label_permutation_test(b, c, n_resamples=s.n_resamples, seed=s.seed)
    ci = difference_ci(b, c, level=s.level, method=s.method, n_resamples=s.n_resamples, seed=s.seed)
    # The standard error of a difference of two independent means; with n per run it is
    # sqrt((var_b + var_c) / n), which is what samples_needed solves for.
    se = math.sqrt(var_b / len(b) + var_c / len(c))
    return (
        ci,
        p,
        hedges_g(b, c),
        min_detectable_effect(se, 1, alpha=s.alpha),
        samples_needed(diff, math.sqrt(var_b + var_c), alpha=s.alpha) if diff else None,
    )


def _count(scores: list[float | None]) -> int:
    return sum(s is not None for s in scores)
