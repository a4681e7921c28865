"""Metrics: what they need, which way is better, and how they score a sample.

Two protocols: a :class:`BatchMetric` is pure and scores a batch at a time; a
:class:`SampleMetric` is async, per sample, and computes from the facts it declares it needs
(:func:`score_sample` runs a set of them on a sample, sharing every judge call).
"""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.metrics._base import BatchContext as BatchContext
    from ragmeter.metrics._base import BatchMetric as BatchMetric
    from ragmeter.metrics._base import Direction as Direction
    from ragmeter.metrics._base import Metric as Metric
    from ragmeter.metrics._base import MetricResult as MetricResult
    from ragmeter.metrics._base import Requirements as Requirements
    from ragmeter.metrics._base import ScoreColumn as ScoreColumn
    from ragmeter.metrics._base import Status as Status
    from ragmeter.metrics._base import missing_fields_result as missing_fields_result
    from ragmeter.metrics._base import parse_direction as parse_direction
    from ragmeter.metrics._details import AbstentionFinding as AbstentionFinding
    from ragmeter.metrics._details import AbstentionOutcome as AbstentionOutcome
    from ragmeter.metrics._details import ClaimCheck as ClaimCheck
    from ragmeter.metrics._details import ClaimVerdict as ClaimVerdict
    from ragmeter.metrics._details import ContextCriterion as ContextCriterion
    from ragmeter.metrics._details import ContextJudgment as ContextJudgment
    from ragmeter.metrics._details import Details as Details
    from ragmeter.metrics._details import EntityFinding as EntityFinding
    from ragmeter.metrics._details import GeneratedQuestion as GeneratedQuestion
    from ragmeter.metrics._details import HopUse as HopUse
    from ragmeter.metrics._details import NoiseClaimVerdict as NoiseClaimVerdict
    from ragmeter.metrics._details import PassageMatch as PassageMatch
    from ragmeter.metrics._details import StatementFinding as StatementFinding
    from ragmeter.metrics._registry import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
    from ragmeter.metrics._registry import METRIC_FILE_SUFFIXES as METRIC_FILE_SUFFIXES
    from ragmeter.metrics._registry import SPECS as SPECS
    from ragmeter.metrics._registry import MetricSource as MetricSource
    from ragmeter.metrics._registry import get_metric as get_metric
    from ragmeter.metrics._registry import metric_specs as metric_specs
    from ragmeter.metrics._registry import register as register
    from ragmeter.metrics._registry import resolve_metric as resolve_metric
    from ragmeter.metrics._registry import resolve_metrics as resolve_metrics
    from ragmeter.metrics._sample import CannotScore as CannotScore
    from ragmeter.metrics._sample import Fallback as Fallback
    from ragmeter.metrics._sample import SampleMetric as SampleMetric
    from ragmeter.metrics._sample import SampleOutcome as SampleOutcome
    from ragmeter.metrics._sample import ServicesOf as ServicesOf
    from ragmeter.metrics._sample import score_sample as score_sample
    from ragmeter.metrics._spec import MetricLoadError as MetricLoadError
    from ragmeter.metrics._spec import MetricSpec as MetricSpec
    from ragmeter.metrics._spec import UnknownMetricError as UnknownMetricError
    from ragmeter.metrics._spec import normalize_name as normalize_name
    from ragmeter.metrics._spec import suggest_names as suggest_names
    from ragmeter.metrics._sync import is_async as is_async
    from ragmeter.metrics._sync import run_sync as run_sync
    from ragmeter.metrics.context import IDContextPrecision as IDContextPrecision
    from ragmeter.metrics.context import IDContextRecall as IDContextRecall
    from ragmeter.metrics.context import StringContextPrecision as StringContextPrecision
    from ragmeter.metrics.context import StringContextRecall as StringContextRecall
    from ragmeter.metrics.retrieval import MAP as MAP
    from ragmeter.metrics.retrieval import MRR as MRR
    from ragmeter.metrics.retrieval import NDCG as NDCG
    from ragmeter.metrics.retrieval import F1AtK as F1AtK
    from ragmeter.metrics.retrieval import HitAtK as HitAtK
    from ragmeter.metrics.retrieval import PrecisionAtK as PrecisionAtK
    from ragmeter.metrics.retrieval import RecallAtK as RecallAtK
    from ragmeter.metrics.retrieval import RPrecision as RPrecision
    from ragmeter.metrics.retrieval import evaluate_run as evaluate_run
    from ragmeter.metrics.text import BLEU as BLEU
    from ragmeter.metrics.text import ChrF as ChrF
    from ragmeter.metrics.text import ExactMatch as ExactMatch
    from ragmeter.metrics.text import Rouge as Rouge
    from ragmeter.metrics.text import StringPresence as StringPresence

_lazy.attach(__name__, __file__)
