"""Were two runs measured the same way? Their judges, embedding models, prompt versions and
metric settings, from the records the runs keep (``EvaluationResult.config``).

A judge is the measuring instrument of every judged metric: the same answers scored by
gpt-4o-mini and by deepseek-chat differ, so a change across judges is no change of the
system. :func:`comparability` lists every difference, naming both sides;
:func:`~ragmeter.stats.compare` and the gate refuse a verdict across different judges or
embedding models unless told to compare anyway. Prompt-version and metric-setting
differences are warnings: they are the user's own knobs, visible in both records.

What a run did not record is unknown, never guessed: a run made before judges were recorded
(or built in memory without a config) has no ``judges`` entry, and a metric judged in the
other run is then "unknown" — warned about, not refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from ragmeter._record import attributes
from ragmeter.results import EvaluationResult

Aspect = Literal["judge", "embeddings", "prompts", "params"]
#: ``none``: neither run used one; ``unknown``: a run did not record it.
State = Literal["same", "different", "unknown", "none"]

#: Which served model answers, a judge's or an embedding model's: the kind, the provider, the
#: endpoint's host (and port), the model or deployment (a scripted judge's name).
_SERVED = ("kind", "provider", "host", "model", "azure_deployment", "deployment", "name")
#: Who answers: the served model, the embedded model's file hash and the llama.cpp build that
#: runs it.
JUDGE_IDENTITY = (*_SERVED, "sha256", "runtime")
#: How it is asked: every setting that changes its answers. Operational settings (timeouts,
#: retries, concurrency, rate limits, price, whether a key is set) are not compared.
JUDGE_GENERATION = (
    "temperature",
    "seed",
    "max_tokens",
    "logprobs",
    "reasoning_effort",
    "extra_body",
    "litellm_params",
    "verdict_method",
    # A verdict calibration fitted on the team's labels (name@version and content hash):
    # the same answers decided by another map are other verdicts.
    "verdict_calibration",
)
EMBEDDING_IDENTITY = (*_SERVED, "quantization")
EMBEDDING_SETTINGS = ("dimensions", "dimension", "query_prefix", "passage_prefix", "prefixes")

#: Shown with a judge on both sides of a difference, even when equal.
_ALWAYS_SHOWN = {"judge": ("temperature",), "embeddings": ()}
_LABEL_KEYS = ("model", "azure_deployment", "deployment", "name", "host", "kind")

_DIFFER = {
    "judge": "judge differs",
    "embeddings": "embedding model differs",
    "prompts": "prompt versions differ (recorded per run, not per metric)",
    "params": "settings differ",
}
_UNKNOWN = {
    "judge": "judge unknown",
    "embeddings": "embedding model unknown",
    "prompts": "prompt versions unknown",
    "params": "settings unknown",
}
_CHANGED = {"judge": "judge changed", "embeddings": "embedding model changed"}


@dataclass(frozen=True)
class Difference:
    """One way the runs were measured differently. ``baseline`` / ``candidate`` describe
    each side (``None``: that run did not record it). ``metric`` is ``None`` for what runs
    record as a whole (prompt versions)."""

    aspect: Aspect
    metric: str | None
    baseline: str | None
    candidate: str | None
    #: A judge or embedding model on both sides, and not the same one.
    refuses: bool = False

    @property
    def known(self) -> bool:
        return self.baseline is not None and self.candidate is not None

    @property
    def reason(self) -> str:
        """Why a verdict is refused, e.g. "judge changed (A vs B)"."""
        what = _CHANGED.get(self.aspect, _DIFFER[self.aspect])
        return f"{what} ({self.baseline} vs {self.candidate})"

    def text(self, metrics: Iterable[str] | None = None) -> str:
        """One line naming both sides, baseline first (for ``metrics``, by default its own)."""
        names = list(metrics) if metrics is not None else [self.metric] if self.metric else []
        where = f"{', '.join(names)}: " if names else ""
        if self.known:
            return f"{where}{_DIFFER[self.aspect]}: {self.baseline} vs {self.candidate}"
        which, other = (
            ("baseline", self.candidate) if self.baseline is None else ("candidate", self.baseline)
        )
        return (
            f"{where}{_UNKNOWN[self.aspect]}: the {which} run did not record it "
            f"(the other run: {other})"
        )

    def __str__(self) -> str:
        return self.text()

    def to_dict(self) -> dict[str, Any]:
        names = ("aspect", "metric", "baseline", "candidate", "known", "refuses")
        return {**attributes(self, *names), "text": self.text()}


@dataclass(frozen=True)
class MetricCheck:
    """One metric both runs have: is its judge, embedding model and setting the same?"""

    metric: str
    judge: State
    embeddings: State
    params: State
    differences: tuple[Difference, ...] = ()

    @property
    def refusal(self) -> Difference | None:
        """The judge or embedding change that makes a verdict on this metric meaningless."""
        return next((d for d in self.differences if d.refuses), None)

    @property
    def comparable(self) -> bool:
        return self.refusal is None

    def to_dict(self) -> dict[str, Any]:
        return {
            **attributes(self, "metric", "judge", "embeddings", "params", "comparable"),
            "differences": [d.to_dict() for d in self.differences],
        }


@dataclass(frozen=True)
class Comparability:
    """How comparable a baseline and a candidate run are, metric by metric."""

    metrics: dict[str, MetricCheck]
    prompts: State
    #: Differences of the runs as a whole (prompt versions).
    run_differences: tuple[Difference, ...] = ()

    @property
    def differences(self) -> list[Difference]:
        """Every difference and unknown: per metric, then the runs' own."""
        return [d for c in self.metrics.values() for d in c.differences] + list(
            self.run_differences
        )

    @property
    def comparable(self) -> bool:
        """No metric's judge or embedding model changed."""
        return all(c.comparable for c in self.metrics.values())

    @property
    def refusals(self) -> list[Difference]:
        return [d for d in self.differences if d.refuses]

    def refusal(self, metric: str) -> Difference | None:
        check = self.metrics.get(metric)
        return None if check is None else check.refusal

    def for_metric(self, metric: str) -> tuple[Difference, ...]:
        """The metric's differences and the runs' own (prompt versions)."""
        check = self.metrics.get(metric)
        own = check.differences if check is not None else ()
        return (*own, *self.run_differences)

    def lines(self, *, refusing: bool | None = None) -> list[str]:
        """Every difference as a line, the metrics sharing one named together (``refusing``:
        only those that refuse a verdict, or only those that do not)."""
        grouped: dict[tuple[Aspect, str | None, str | None, bool], list[str]] = {}
        for d in self.differences:
            if refusing is None or d.refuses == refusing:
                key = (d.aspect, d.baseline, d.candidate, d.refuses)
                grouped.setdefault(key, []).extend([d.metric] if d.metric else [])
        lines = []
        for (aspect, baseline, candidate, refuses), names in grouped.items():
            lines.append(Difference(aspect, None, baseline, candidate, refuses).text(names))
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "comparable": self.comparable,
            "prompts": self.prompts,
            "metrics": {name: c.to_dict() for name, c in self.metrics.items()},
            "differences": [d.to_dict() for d in self.run_differences],
        }


def comparability(
    baseline: EvaluationResult,
    candidate: EvaluationResult,
    *,
    metrics: Iterable[str] | None = None,
) -> Comparability:
    """Compare how two runs were measured: for each metric both have (or those named), its
    judge (kind, provider, endpoint host, model, generation settings), its embedding model
    and its settings; and the prompt versions of the runs.

    A judge or embedding model recorded on both sides and not the same refuses a verdict
    (:attr:`Difference.refuses`); a judge recorded on one side only (the other run kept no
    record: "unknown", or used no judge for the metric), prompt versions and settings are
    warnings. Metrics without a judge (retrieval, text overlap) compare their settings only.

    >>> from ragmeter.results import EvaluationResult, MetricInfo
    >>> from ragmeter.metrics import Direction
    >>> def run(model, url):
    ...     judge = {"kind": "openai-compatible", "model": model, "base_url": url,
    ...              "temperature": 0.0, "seed": 42, "timeout_s": 60}
    ...     return EvaluationResult([], [MetricInfo("faithfulness", Direction.HIGHER_IS_BETTER)],
    ...                             {"judges": {"faithfulness": judge}})
    >>> checked = comparability(run("gpt-4o-mini", "https://api.openai.com/v1"),
    ...                         run("deepseek-chat", "https://api.deepseek.com/v1"))
    >>> checked.comparable
    False
    >>> print(checked.lines()[0])
    faithfulness: judge differs: gpt-4o-mini @ api.openai.com (temperature 0) vs deepseek-chat @ api.deepseek.com (temperature 0)
    """  # noqa: E501
    names = _metrics(baseline, candidate, metrics)
    before, after = baseline.config or {}, candidate.config or {}
    params_before = {m.name: m.params for m in baseline.metrics}
    params_after = {m.name: m.params for m in candidate.metrics}
    checks = {}
    for name in names:
        judge, judge_diff = _service(
            "judge", name, before.get("judges"), after.get("judges"), JUDGE_IDENTITY,
            JUDGE_GENERATION,
        )  # fmt: skip
        vectors, vectors_diff = _service(
            "embeddings", name, before.get("embeddings"), after.get("embeddings"),
            EMBEDDING_IDENTITY, EMBEDDING_SETTINGS,
        )  # fmt: skip
        params, params_diff = _params(name, params_before.get(name), params_after.get(name))
        found = tuple(d for d in (judge_diff, vectors_diff, params_diff) if d is not None)
        checks[name] = MetricCheck(name, judge, vectors, params, found)
    prompts, prompt_diff = _prompts(before.get("prompt_versions"), after.get("prompt_versions"))
    return Comparability(checks, prompts, () if prompt_diff is None else (prompt_diff,))


def _metrics(
    baseline: EvaluationResult, candidate: EvaluationResult, metrics: Iterable[str] | None
) -> list[str]:
    in_candidate = {m.name for m in candidate.metrics}
    shared = [m.name for m in baseline.metrics if m.name in in_candidate]
    if metrics is None:
        return shared
    wanted = [metrics] if isinstance(metrics, str) else list(metrics)
    return [name for name in wanted if name in shared]


# -- judges and embedding models ----------------------------------------------------------
def _service(
    aspect: Aspect,
    metric: str,
    before: Any,
    after: Any,
    identity: tuple[str, ...],
    settings: tuple[str, ...],
) -> tuple[State, Difference | None]:
    """The state of one metric's judge (or embedding model) across the runs. A run whose
    record has no such entry at all did not record it; one whose record lacks the metric
    used none for it."""
    recorded = (isinstance(before, Mapping), isinstance(after, Mapping))
    a = before.get(metric) if recorded[0] else None
    b = after.get(metric) if recorded[1] else None
    if a is None and b is None:
        return ("none" if all(recorded) else "unknown"), None
    if not all(recorded):
        known = _label(_fields(a if a is not None else b, identity + settings), ())
        if a is None:
            return "unknown", Difference(aspect, metric, None, known)
        return "unknown", Difference(aspect, metric, known, None)
    if a is None or b is None:
        nothing = "no judge" if aspect == "judge" else "no embedding model"
        one = _label(_fields(a if a is not None else b, identity + settings), ())
        sides = (nothing, one) if a is None else (one, nothing)
        return "different", Difference(aspect, metric, *sides)
    fa, fb = _fields(a, identity + settings), _fields(b, identity + settings)
    # Who answers: compared where both records name it (a provider preset and the same
    # base URL given directly are the same endpoint). How it is asked: compared where both
    # records hold the setting, unset included (reasoning_effort "high" vs unset differs);
    # a setting only one record has (recorded by a newer ragmeter) is not compared.
    changed = [
        k
        for k in identity + settings
        if k in fa and k in fb and fa[k] != fb[k] and (k in settings or None not in (fa[k], fb[k]))
    ]
    if not changed:
        return "same", None
    always = [k for k in _ALWAYS_SHOWN[aspect] if k in fa or k in fb]
    shown = list(dict.fromkeys(k for k in (*changed, *always) if k not in _LABEL_KEYS))
    return "different", Difference(
        aspect, metric, _label(fa, shown), _label(fb, shown), refuses=True
    )


def _fields(described: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    """The compared fields a ``describe()`` record holds (empty values as ``None``: unset);
    the endpoint as its host (and port): no path noise, no credentials."""
    if not isinstance(described, Mapping):
        return {"name": str(described)}
    out: dict[str, Any] = {}
    for key in keys:
        if key == "host":
            host = _host(described.get("base_url") or described.get("endpoint"))
            if host:
                out["host"] = host
        elif key == "verdict_calibration":
            # A judge record without one was judged without (runs record it only when set).
            out[key] = described.get(key) or None
        elif key in described:
            value = described[key]
            out[key] = None if value in ("", {}, []) else value
    return out


def _host(url: Any) -> str | None:
    if not isinstance(url, str) or not url:
        return None
    try:
        parts = urlsplit(url if "://" in url else f"//{url}")
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    return f"{host}:{port}" if port else host


def _label(fields: Mapping[str, Any], shown: Iterable[str]) -> str:
    """e.g. "gpt-4o-mini @ api.openai.com (temperature 0)"."""
    model = next(
        (fields[k] for k in ("model", "azure_deployment", "deployment", "name") if fields.get(k)),
        None,
    )
    where = fields.get("host") or fields.get("kind") or "unknown endpoint"
    head = f"{model} @ {where}" if model is not None else str(where)
    details = [
        f"{k} {_value(fields[k])}" if fields.get(k) is not None else f"{k} unset" for k in shown
    ]
    return f"{head} ({', '.join(details)})" if details else head


def _value(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


# -- metric settings and prompts ------------------------------------------------------------
def _params(
    metric: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
) -> tuple[State, Difference | None]:
    a, b = dict(before or {}), dict(after or {})
    changed = sorted(k for k in {*a, *b} if a.get(k) != b.get(k))
    if not changed:
        return "same", None

    def side(values: dict[str, Any]) -> str:
        return ", ".join(
            f"{k} {_value(values[k])}" if k in values else f"{k} unset" for k in changed
        )

    return "different", Difference("params", metric, side(a), side(b))


def _templates(versions: Iterable[str]) -> dict[str, set[str]]:
    """``name@version/language`` strings by template name."""
    out: dict[str, set[str]] = {}
    for version in versions:
        name = str(version).split("@", 1)[0]
        out.setdefault(name, set()).add(str(version))
    return out


def _prompts(before: Any, after: Any) -> tuple[State, Difference | None]:
    """Runs record the prompt versions they used as one set (not per metric): templates both
    runs used are compared; a template only one run used belongs to a metric only it has."""
    a = list(before) if isinstance(before, list | tuple) else None
    b = list(after) if isinstance(after, list | tuple) else None
    if not a and not b:
        return ("none" if a is not None and b is not None else "unknown"), None
    if a is None or b is None:
        known = ", ".join(sorted(a or b or []))
        sides = (None, known) if a is None else (known, None)
        return "unknown", Difference("prompts", None, *sides)
    ta, tb = _templates(a), _templates(b)
    changed = sorted(name for name in ta.keys() & tb.keys() if ta[name] != tb[name])
    if not changed:
        return "same", None
    return "different", Difference(
        "prompts",
        None,
        ", ".join(v for name in changed for v in sorted(ta[name])),
        ", ".join(v for name in changed for v in sorted(tb[name])),
    )
