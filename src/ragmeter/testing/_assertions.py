"""``assert_metric``: score a sample or a dataset and fail with the reasons, not just a number.

Works in any test runner (it raises :class:`AssertionError`); under pytest with the ragmeter
plugin every call is also listed in the session summary. ragmeter itself is imported when the
function runs, not when this module loads.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter.dataset import Sample
    from ragmeter.embed import Embeddings
    from ragmeter.judge import Judge
    from ragmeter.metrics import ClaimVerdict, ContextJudgment, Details, Metric, MetricResult
    from ragmeter.results import EvaluationResult, SampleResult

#: Scores within this distance of a bound count as meeting it (floating-point rounding).
TOLERANCE = 1e-9
#: How many samples a failed dataset assertion describes, and how many items of each finding.
WORST_SAMPLES = 5
ITEMS_SHOWN = 10
TEXT_WIDTH = 160

_PLUGIN = "ragmeter.testing.pytest_plugin"


@dataclass(frozen=True)
class _Bound:
    ge: float | None
    le: float | None

    def met(self, score: float) -> bool:
        if self.ge is not None and score < self.ge - TOLERANCE:
            return False
        return not (self.le is not None and score > self.le + TOLERANCE)

    def __str__(self) -> str:
        if self.ge is not None and self.le is not None:
            return f"in [{self.ge:g}, {self.le:g}]"
        if self.ge is not None:
            return f">= {self.ge:g}"
        return f"<= {self.le:g}"

    def distance(self, score: float) -> float:
        """How far ``score`` is outside the bound (0 inside): orders the worst samples."""
        below = self.ge - score if self.ge is not None else 0.0
        above = score - self.le if self.le is not None else 0.0
        return max(below, above, 0.0)


def assert_metric(
    sample_or_dataset: Any,
    metric: Metric | str,
    *,
    ge: float | None = None,
    le: float | None = None,
    judge: Judge | None = None,
    embeddings: Embeddings | None = None,
    mean: bool = True,
    allow_not_applicable: bool = False,
) -> Any:
    """Score ``sample_or_dataset`` with ``metric`` and assert the score is ``>= ge`` and/or
    ``<= le``; return the :class:`MetricResult` (one sample) or the
    :class:`EvaluationResult` (a dataset) for further checks.

    ``sample_or_dataset`` is one sample (a :class:`Sample` or a dict) or a dataset (a list of
    them, a :class:`Dataset`, a path, a DataFrame, ...). ``metric`` is a name such as
    ``"faithfulness"`` or ``"precision@5"``, or a metric object. For a dataset the bound applies
    to the mean over the scored samples (``mean=False``: to every sample). Judged metrics use
    the metric's own judge, else ``judge``, else the configured default, as in
    :func:`ragmeter.evaluate`.

    A result that could not be scored never passes: a failed sample fails the assertion, and
    so does a not-applicable one unless ``allow_not_applicable`` (a not-applicable single
    sample then passes; in a dataset it is left out of the mean). The :class:`AssertionError`
    names the metric, the score and the bound, the reason, what the judge found wrong
    (unsupported claims, contexts not useful, reference statements not retrieved, ...) and,
    for a dataset, the worst samples by id.

    >>> sample = {"retrieved_context_ids": ["a", "b"], "reference_context_ids": ["b"]}
    >>> assert_metric(sample, "mrr", ge=0.5).score
    0.5
    >>> assert_metric(sample, "mrr", ge=0.9)
    Traceback (most recent call last):
    ...
    AssertionError: mrr = 0.5000, expected >= 0.9 (sample 'row-1')
    """
    __tracebackhide__ = True
    from ragmeter.dataset import Sample
    from ragmeter.metrics import Metric, get_metric
    from ragmeter.runner import evaluate

    if ge is None and le is None:
        raise ValueError("assert_metric needs a bound: ge=, le= or both")
    for name, value in (("ge", ge), ("le", le)):
        if value is not None and not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if ge is not None and le is not None and ge > le:
        raise ValueError(f"ge={ge} is above le={le}: no score can pass")
    bound = _Bound(ge, le)
    resolved = metric if isinstance(metric, Metric) else get_metric(metric)
    single = isinstance(sample_or_dataset, Sample | Mapping)
    data = [sample_or_dataset] if single else sample_or_dataset
    result = evaluate(data, [resolved], judge=judge, embeddings=embeddings, progress=False)
    _note_services(resolved, judge, embeddings, result)
    if single:
        return _check_sample(result, resolved, bound, allow_not_applicable)
    return _check_dataset(result, resolved, bound, mean=mean, allow_na=allow_not_applicable)


def _check_sample(
    result: EvaluationResult, metric: Metric, bound: _Bound, allow_na: bool
) -> MetricResult:
    __tracebackhide__ = True
    from ragmeter.metrics import Status

    entry = result.samples[0]
    outcome = entry.scores[metric.name]
    where = f"sample {entry.sample_id!r}"
    if outcome.status is Status.OK:
        assert outcome.score is not None
        passed = bound.met(outcome.score)
        _record(metric, outcome.score, bound, passed, 1, "1 sample", result)
        if not passed:
            lines = [f"{metric.name} = {outcome.score:.4f}, expected {bound} ({where})"]
            lines += _describe(entry, metric.name, indent="  ")
            raise AssertionError("\n".join(lines))
        return outcome
    if outcome.status is Status.NOT_APPLICABLE and allow_na:
        _record(metric, None, bound, True, 1, "1 sample, not_applicable allowed", result)
        return outcome
    _record(metric, None, bound, False, 1, f"1 sample, {outcome.status.value}", result)
    lines = [
        f"{metric.name} was not scored ({where}): status {outcome.status.value}, "
        f"expected a score {bound}"
    ]
    lines += _describe(entry, metric.name, indent="  ")
    if outcome.status is Status.NOT_APPLICABLE:
        lines.append("  (pass allow_not_applicable=True if this sample may be not applicable)")
    raise AssertionError("\n".join(lines))


def _check_dataset(
    result: EvaluationResult, metric: Metric, bound: _Bound, *, mean: bool, allow_na: bool
) -> EvaluationResult:
    __tracebackhide__ = True
    from ragmeter.metrics import Status

    entries = result.samples
    ok = [e for e in entries if e.scores[metric.name].status is Status.OK]
    failed = [e for e in entries if e.scores[metric.name].status is Status.FAILED]
    not_applicable = [e for e in entries if e.scores[metric.name].status is Status.NOT_APPLICABLE]
    scores = [_score(e, metric.name) for e in ok]
    average = sum(scores) / len(scores) if scores else None
    outside = [e for e in ok if not bound.met(_score(e, metric.name))]
    problems: list[str] = []
    if average is None:
        problems.append(f"no sample of {len(entries)} got a score")
    elif mean and not bound.met(average):
        problems.append("the mean is outside the bound")
    elif not mean and outside:
        problems.append(f"{len(outside)} of {len(ok)} scored samples are outside the bound")
    if failed:
        problems.append(f"{len(failed)} sample(s) failed")
    if not_applicable and not allow_na:
        problems.append(f"{len(not_applicable)} sample(s) not applicable")
    coverage = f"{len(ok)}/{len(entries)} scored"
    note = f"mean of {len(ok)}" if mean else f"each of {len(ok)}"
    if failed or not_applicable:
        note += f" of {len(entries)} ({len(failed)} failed, {len(not_applicable)} n/a)"
    _record(metric, average, bound, not problems, len(entries), note, result)
    if not problems:
        return result

    shown = "none" if average is None else f"{average:.4f}"
    expected = f"expected {bound}" if mean else f"expected every sample {bound}"
    lines = [
        f"{metric.name} mean = {shown} over {coverage} samples, {expected}: {'; '.join(problems)}"
    ]
    if failed:
        lines.append(f"  failed samples ({len(failed)}):")
        lines += _sample_lines(failed, metric.name)
    if not_applicable and not allow_na:
        lines.append(f"  not-applicable samples ({len(not_applicable)}):")
        lines += _sample_lines(not_applicable, metric.name)
        lines.append(
            "  (pass allow_not_applicable=True to leave not-applicable samples out of the mean)"
        )
    if ok and (outside or not mean):
        ranked = sorted(ok, key=lambda e: bound.distance(_score(e, metric.name)), reverse=True)
        worst = [e for e in ranked if not bound.met(_score(e, metric.name))] or ranked
        lines.append(
            f"  samples outside the bound ({len(outside)} of {len(ok)} scored, worst first):"
        )
        lines += _sample_lines(worst, metric.name)
    raise AssertionError("\n".join(lines))


def _score(entry: SampleResult, metric: str) -> float:
    score = entry.scores[metric].score
    assert score is not None
    return score


def _sample_lines(entries: Sequence[SampleResult], metric: str) -> list[str]:
    lines: list[str] = []
    for entry in entries[:WORST_SAMPLES]:
        outcome = entry.scores[metric]
        value = outcome.status.value if outcome.score is None else f"{outcome.score:.4f}"
        lines.append(f"  - {entry.sample_id!r}: {value}")
        lines += _describe(entry, metric, indent="      ", items=3)
    if len(entries) > WORST_SAMPLES:
        lines.append(f"  ... and {len(entries) - WORST_SAMPLES} more")
    return lines


def _describe(
    entry: SampleResult, metric: str, *, indent: str, items: int = ITEMS_SHOWN
) -> list[str]:
    """The reason, the error and the judge's findings of one sample's result."""
    outcome = entry.scores[metric]
    lines = []
    if outcome.reason:
        lines.append(f"{indent}reason: {_short(outcome.reason)}")
    if outcome.error:
        lines.append(f"{indent}error: {_short(outcome.error)}")
    for title, found in findings(outcome.details, entry.sample):
        lines.append(f"{indent}{title}:")
        lines += [f"{indent}  - {_short(text)}" for text in found[:items]]
        if len(found) > items:
            lines.append(f"{indent}  ... and {len(found) - items} more")
    if entry.sample.user_input:
        lines.append(f"{indent}question: {_short(entry.sample.user_input)}")
    return lines


def findings(
    details: Details | Mapping[str, Any], sample: Sample | None = None
) -> list[tuple[str, list[str]]]:
    """What a judged result's ``details`` say went wrong, as (title, items) pairs: the
    unsupported claims, the contexts judged not useful or not relevant, the reference
    statements or entities not found in the contexts, and the like. A plain mapping is read
    as the stored form of :class:`ragmeter.metrics.Details`.

    >>> claims = [{"claim": "a", "supported": True}, {"claim": "b", "supported": False}]
    >>> findings({"claims": claims})
    [('unsupported claims (1 of 2)', ['b'])]
    """
    from ragmeter.metrics import ClaimCheck, ContextCriterion, Details, NoiseClaimVerdict

    typed = Details.from_dict(details)
    out: list[tuple[str, list[str]]] = []
    for title, check in (
        ("unsupported claims", ClaimCheck.SUPPORTED),
        ("response claims the reference does not support", ClaimCheck.IN_REFERENCE),
        ("reference statements missing from the response", ClaimCheck.IN_RESPONSE),
    ):
        _add(out, title, [c for c in typed.claims if c.check is check], _claim_wrong)
    _add(
        out,
        "incorrect claims counted as noise",
        [c for c in typed.claims if c.check is ClaimCheck.CORRECT],
        lambda c: (c.text, c.reason) if isinstance(c, NoiseClaimVerdict) and c.counted else None,
    )
    texts = list(sample.retrieved_contexts or []) if sample is not None else []

    def wrong_context(entry: ContextJudgment) -> tuple[str, str | None] | None:
        if entry.verdict:
            return None
        rank = entry.rank
        text = texts[rank - 1] if 0 < rank <= len(texts) else ""
        return f"#{rank} {text}".rstrip(), entry.reason

    for criterion in (ContextCriterion.USEFUL, ContextCriterion.RELEVANT):
        judged = [c for c in typed.contexts if c.criterion is criterion]
        _add(out, f"contexts judged not {criterion.value}", judged, wrong_context)
    _add(
        out,
        "reference statements not found in the contexts",
        list(typed.statements),
        lambda s: None if s.found else (s.text, None),
    )
    _add(
        out,
        "reference entities not found in the contexts",
        list(typed.entities),
        lambda e: None if e.in_contexts else (e.text, None),
    )
    if typed.noncommittal is True:
        out.append(("the response is noncommittal", []))
    questions = typed.questions
    if questions and all(q.similarity is not None for q in questions):
        pairs = [f"{q.text} (similarity {q.similarity:.2f})" for q in questions]
        out.append(("questions the response answers, by similarity to the question", pairs))
    return out


def _claim_wrong(claim: ClaimVerdict) -> tuple[str, str | None] | None:
    return (claim.text, claim.reason) if claim.verdict is False else None


def _add(
    out: list[tuple[str, list[str]]],
    title: str,
    entries: Sequence[Any],
    wrong: Callable[[Any], tuple[str, str | None] | None],
) -> None:
    """Add the entries ``wrong`` finds wrong (it returns their text and the judge's reason)."""
    bad = [found for found in map(wrong, entries) if found is not None]
    if not bad:
        return
    items = []
    for item, reason in bad:
        if isinstance(reason, str) and reason.strip():
            item += f" (judge: {reason.strip()})"
        items.append(item)
    out.append((f"{title} ({len(bad)} of {len(entries)})", items))


def _short(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= TEXT_WIDTH else flat[: TEXT_WIDTH - 1] + "…"


def _note_services(
    metric: Metric, judge: Judge | None, embeddings: Embeddings | None, result: EvaluationResult
) -> None:
    """Tell the pytest session (when the plugin runs one) which judge was used."""
    log = _session_log()
    if log is None:
        return
    chosen_judge = getattr(metric, "judge", None) or judge
    chosen_embeddings = getattr(metric, "embeddings", None) or embeddings
    if getattr(metric, "uses_judge", False):
        if chosen_judge is not None:
            log.add_judge(chosen_judge)
        else:  # ragmeter made a default judge for this call alone: count the run's usage
            log.add_usage(result.usage or {})
    if getattr(metric, "uses_embeddings", False) and chosen_embeddings is not None:
        log.add_embeddings(chosen_embeddings)


def _record(
    metric: Metric,
    score: float | None,
    bound: _Bound,
    passed: bool,
    n_samples: int,
    note: str,
    result: EvaluationResult,
) -> None:
    log = _session_log()
    if log is None:
        return
    usage = result.usage or {}
    judged = bool(getattr(metric, "uses_judge", False))
    test = os.environ.get("PYTEST_CURRENT_TEST", "")
    log.add_record(
        test=test.rsplit(" (", 1)[0] or None,
        metric=metric.name,
        score=score,
        bound=str(bound),
        passed=passed,
        n_samples=n_samples,
        note=note,
        calls=int(usage.get("calls", 0)) if judged else None,
        cached_calls=int(usage.get("cached_calls", 0)) if judged else None,
    )


def _session_log() -> Any:
    """The running pytest session's log, when the plugin is loaded and a session is on."""
    plugin = sys.modules.get(_PLUGIN)
    return None if plugin is None else plugin.current_log()
