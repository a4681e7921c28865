"""Is a change real or noise? Confidence intervals, paired comparisons, judge noise.

A run's mean of 0.72 against last week's 0.69 means little without its uncertainty.
:func:`estimate_means` gives each metric's mean with a bootstrap confidence interval (per tag
group: :func:`estimate_group_means`); :func:`compare` tests two runs metric by metric (paired on
shared samples, Holm-corrected across metrics) and says what it found in a plain sentence;
:func:`judge_noise` measures how much of a run's spread is the judge's own, from a run with
repeats. :func:`comparability` says whether two runs were measured the same way (judge,
embedding model, prompt versions, metric settings); ``compare`` gives no verdict across a
changed judge unless ``allow_judge_change=True``. Everything is numpy; scipy is needed
only for ``test="wilcoxon"`` (``ragmeter[stats]``).
"""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter._bootstrap import Interval, bootstrap_ci
    from ragmeter.stats._comparability import Comparability, Difference, MetricCheck, comparability
    from ragmeter.stats._compare import Comparison, compare
    from ragmeter.stats._estimate import MeanEstimate, estimate_group_means, estimate_means
    from ragmeter.stats._holm import holm
    from ragmeter.stats._noise import JudgeNoise, judge_noise
    from ragmeter.stats._permutation import sign_flip_test
    from ragmeter.stats._power import min_detectable_effect, samples_needed
    from ragmeter.stats._two_sample import TwoSampleTest, two_sample_test

__all__ = [
    "Comparability",
    "Comparison",
    "Difference",
    "Interval",
    "JudgeNoise",
    "MeanEstimate",
    "MetricCheck",
    "TwoSampleTest",
    "bootstrap_ci",
    "comparability",
    "compare",
    "estimate_group_means",
    "estimate_means",
    "holm",
    "judge_noise",
    "min_detectable_effect",
    "samples_needed",
    "sign_flip_test",
    "two_sample_test",
]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter._bootstrap": ("Interval", "bootstrap_ci"),
        "ragmeter.stats._comparability": (
            "Comparability",
            "Difference",
            "MetricCheck",
            "comparability",
        ),
        "ragmeter.stats._compare": ("Comparison", "compare"),
        "ragmeter.stats._estimate": ("MeanEstimate", "estimate_group_means", "estimate_means"),
        "ragmeter.stats._holm": ("holm",),
        "ragmeter.stats._noise": ("JudgeNoise", "judge_noise"),
        "ragmeter.stats._permutation": ("sign_flip_test",),
        "ragmeter.stats._power": ("min_detectable_effect", "samples_needed"),
        "ragmeter.stats._two_sample": ("TwoSampleTest", "two_sample_test"),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
