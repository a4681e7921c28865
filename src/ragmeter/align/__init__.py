"""Can this metric be trusted? Its agreement with people, measured on human-labelled samples.

:func:`align` scores samples that people have labelled and reports how far the metric agrees
with them: accuracy and Cohen's kappa for discrete labels, quadratic-weighted kappa for rubric
levels, Spearman and Pearson correlations for numbers, each with a bootstrap confidence
interval; the items it did not score; and the disagreements, largest first, with the metric's
reasons. With ``improve=True`` it gives the metric few-shot examples chosen from a train split
and measures the original and the improved metric on a held-out test split only.

The statistics are plain functions (numpy only): :func:`accuracy`, :func:`cohen_kappa`,
:func:`quadratic_weighted_kappa`, :func:`spearman`, :func:`pearson`, and
:func:`agreement_ci` for the bootstrap interval of any of them.
"""

from ragmeter.align._agreement import (
    KINDS,
    STATISTICS,
    Agreement,
    AgreementUndefined,
    accuracy,
    agreement_ci,
    cohen_kappa,
    measure,
    measure_change,
    pearson,
    quadratic_weighted_kappa,
    ranks,
    spearman,
)
from ragmeter.align._align import (
    AlignmentReport,
    AlignOptions,
    Disagreement,
    Measurement,
    Split,
    SupportsExamples,
    Unscored,
    align,
    cannot_improve,
    discrete_key,
    infer_kind,
)

__all__ = [
    "KINDS",
    "STATISTICS",
    "Agreement",
    "AgreementUndefined",
    "AlignOptions",
    "AlignmentReport",
    "Disagreement",
    "Measurement",
    "Split",
    "SupportsExamples",
    "Unscored",
    "accuracy",
    "agreement_ci",
    "align",
    "cannot_improve",
    "cohen_kappa",
    "discrete_key",
    "infer_kind",
    "measure",
    "measure_change",
    "pearson",
    "quadratic_weighted_kappa",
    "ranks",
    "spearman",
]
