"""Can this metric be trusted? Its agreement with people, measured on human-labelled samples.

:func:`align` scores samples that people have labelled and reports how far the metric agrees
with them: accuracy and Cohen's kappa for discrete labels, quadratic-weighted kappa for rubric
levels, Spearman and Pearson correlations for numbers, each with a bootstrap confidence
interval; the items it did not score; and the disagreements, largest first, with the metric's
reasons. With ``improve=True`` it gives the metric few-shot examples chosen from a train split
and measures the original and the improved metric on a held-out test split only.

The team's own labels, kept in the run store (:class:`ragmeter.store.Label`), are read and
written with :func:`read_labels` / :func:`write_labels`; :func:`agreement_on_labels` measures a
stored run's metric against them per level (sample, claim, context, and preferences between
two samples) without calling the judge,
with its one-line :class:`Validation` (:func:`validations`: per metric of a run), and
:func:`judge_error_pairs` gives the (judge, human) pairs of a run's interval with judge error;
:func:`next_to_label` picks what to label next, :func:`preference_pairs` the answers of two runs
to one question to compare.

The statistics are plain functions (numpy only): :func:`accuracy`, :func:`cohen_kappa`,
:func:`quadratic_weighted_kappa`, :func:`spearman`, :func:`pearson`,
:func:`pairwise_agreement`, :func:`preference_agreement`, and :func:`agreement_ci` for the
bootstrap interval of any of them.
"""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.align._agreement import KINDS as KINDS
    from ragmeter.align._agreement import STATISTICS as STATISTICS
    from ragmeter.align._agreement import Agreement as Agreement
    from ragmeter.align._agreement import AgreementUndefined as AgreementUndefined
    from ragmeter.align._agreement import accuracy as accuracy
    from ragmeter.align._agreement import agreement_ci as agreement_ci
    from ragmeter.align._agreement import cohen_kappa as cohen_kappa
    from ragmeter.align._agreement import measure as measure
    from ragmeter.align._agreement import measure_change as measure_change
    from ragmeter.align._agreement import pairwise_agreement as pairwise_agreement
    from ragmeter.align._agreement import pairwise_counts as pairwise_counts
    from ragmeter.align._agreement import pearson as pearson
    from ragmeter.align._agreement import preference_agreement as preference_agreement
    from ragmeter.align._agreement import quadratic_weighted_kappa as quadratic_weighted_kappa
    from ragmeter.align._agreement import ranks as ranks
    from ragmeter.align._agreement import spearman as spearman
    from ragmeter.align._align import AlignmentReport as AlignmentReport
    from ragmeter.align._align import AlignOptions as AlignOptions
    from ragmeter.align._align import Disagreement as Disagreement
    from ragmeter.align._align import Measurement as Measurement
    from ragmeter.align._align import Split as Split
    from ragmeter.align._align import SupportsExamples as SupportsExamples
    from ragmeter.align._align import Unscored as Unscored
    from ragmeter.align._align import align as align
    from ragmeter.align._align import cannot_improve as cannot_improve
    from ragmeter.align._align import discrete_key as discrete_key
    from ragmeter.align._align import infer_kind as infer_kind
    from ragmeter.align._calibrate import LabelledVerdicts as LabelledVerdicts
    from ragmeter.align._calibrate import calibrate_on_labels as calibrate_on_labels
    from ragmeter.align._calibrate import labelled_verdicts as labelled_verdicts
    from ragmeter.align._labels import label_from_record as label_from_record
    from ragmeter.align._labels import label_value as label_value
    from ragmeter.align._labels import label_verdict as label_verdict
    from ragmeter.align._labels import read_labels as read_labels
    from ragmeter.align._labels import write_labels as write_labels
    from ragmeter.align._on_labels import LABEL_STATISTICS as LABEL_STATISTICS
    from ragmeter.align._on_labels import Judged as Judged
    from ragmeter.align._on_labels import LabelAgreement as LabelAgreement
    from ragmeter.align._on_labels import LevelAgreement as LevelAgreement
    from ragmeter.align._on_labels import agreement_on_labels as agreement_on_labels
    from ragmeter.align._on_labels import judge_error_pairs as judge_error_pairs
    from ragmeter.align._on_labels import judged_items as judged_items
    from ragmeter.align._on_labels import validations as validations
    from ragmeter.align._queue import STRATEGIES as STRATEGIES
    from ragmeter.align._queue import QueueItem as QueueItem
    from ragmeter.align._queue import next_to_label as next_to_label
    from ragmeter.align._queue import preference_pairs as preference_pairs
    from ragmeter.stats import Validation as Validation

_lazy.attach(__name__, __file__)
