"""Is a change real or noise? Confidence intervals, paired comparisons, judge noise.

A run's mean of 0.72 against last week's 0.69 means little without its uncertainty.
:func:`estimate_means` gives each metric's mean with a bootstrap confidence interval (per tag
group: :func:`estimate_group_means`); :func:`compare` tests two runs metric by metric (paired on
shared samples, Holm-corrected across metrics) and says what it found in a plain sentence;
:func:`judge_noise` measures how much of a run's spread is the judge's own, from a run with
repeats; :func:`estimate_with_judge_error` (for a run: :func:`with_judge_error`) puts the
judge's error, measured on labelled items (:class:`LabelledPairs`), into a mean's interval;
:class:`Validation` is a metric's agreement with the team's labels as summaries read it.
:func:`comparability` says whether two runs were measured the same way (judge, embedding
model, prompt versions, metric settings); ``compare`` gives no verdict across a changed judge
unless ``allow_judge_change=True``. Everything is numpy; scipy is needed only for
``test="wilcoxon"`` (``ragmeter[stats]``).
"""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter._bootstrap import Interval as Interval
    from ragmeter._bootstrap import bootstrap_ci as bootstrap_ci
    from ragmeter._bootstrap import difference_ci as difference_ci
    from ragmeter.stats._comparability import Comparability as Comparability
    from ragmeter.stats._comparability import Difference as Difference
    from ragmeter.stats._comparability import MetricCheck as MetricCheck
    from ragmeter.stats._comparability import comparability as comparability
    from ragmeter.stats._compare import Change as Change
    from ragmeter.stats._compare import Comparison as Comparison
    from ragmeter.stats._compare import compare as compare
    from ragmeter.stats._estimate import MeanEstimate as MeanEstimate
    from ragmeter.stats._estimate import estimate_group_means as estimate_group_means
    from ragmeter.stats._estimate import estimate_means as estimate_means
    from ragmeter.stats._holm import holm as holm
    from ragmeter.stats._judge_error import JudgeErrorEstimate as JudgeErrorEstimate
    from ragmeter.stats._judge_error import LabelledPairs as LabelledPairs
    from ragmeter.stats._judge_error import (
        estimate_with_judge_error as estimate_with_judge_error,
    )
    from ragmeter.stats._judge_error import with_judge_error as with_judge_error
    from ragmeter.stats._noise import JudgeNoise as JudgeNoise
    from ragmeter.stats._noise import judge_noise as judge_noise
    from ragmeter.stats._noise import noise_from_matrix as noise_from_matrix
    from ragmeter.stats._permutation import label_permutation_test as label_permutation_test
    from ragmeter.stats._permutation import sign_flip_test as sign_flip_test
    from ragmeter.stats._power import min_detectable_effect as min_detectable_effect
    from ragmeter.stats._power import samples_needed as samples_needed
    from ragmeter.stats._two_sample import TwoSampleTest as TwoSampleTest
    from ragmeter.stats._two_sample import two_sample_test as two_sample_test
    from ragmeter.stats._validation import Validation as Validation
    from ragmeter.stats._validation import statistic_name as statistic_name
    from ragmeter.stats._wilcoxon import wilcoxon_test as wilcoxon_test

_lazy.attach(__name__, __file__)
