"""Reading metrics in pairs: rules (data, in rules.toml) that say where a run fails."""

from __future__ import annotations

import operator
import statistics
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ragmeter.diagnosis._finding import Figure, Finding
from ragmeter.metrics import Direction
from ragmeter.prompts import Language, detect_language
from ragmeter.results import EvaluationResult

_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}
#: How many example samples a finding names.
MAX_EXAMPLES = 10


def _resolve(alternatives: Sequence[str], metrics: Sequence[str]) -> str | None:
    """The first of ``alternatives`` the run has; ``name@*`` matches any cutoff."""
    for name in alternatives:
        if name.endswith("@*"):
            found = sorted(m for m in metrics if m.startswith(name[:-1]))
            if found:
                return found[0]
        elif name in metrics:
            return name
    return None


@dataclass(frozen=True)
class Condition:
    """``METRIC OP THRESHOLD``; METRIC may list alternatives (``a|b``) and use ``name@*``.

    ``METRIC:PATH`` reads a number from the metric's details instead of its score: the dotted
    ``PATH`` into their stored form, ``true``/``false`` read as 1/0 (``abstention:abstention.
    should_abstain >= 1``: the samples that should have abstained). A sample whose details
    lack it is not evaluated.

    >>> c = Condition.parse("abstention:abstention.should_abstain >= 1")
    >>> c.alternatives, c.detail, c.value_of({"abstention": {"should_abstain": True}})
    (('abstention',), 'abstention.should_abstain', 1.0)
    """

    alternatives: tuple[str, ...]
    op: str
    threshold: float
    detail: str | None = None

    @classmethod
    def parse(cls, text: str) -> Condition:
        for op in _OPERATORS:  # two-character operators are tried first
            left, sep, right = text.partition(f" {op} ")
            if sep:
                try:
                    threshold = float(right)
                except ValueError:
                    break
                left, colon, path = left.partition(":")
                names = tuple(name.strip() for name in left.split("|") if name.strip())
                if names and (not colon or path.strip()):
                    return cls(names, op, threshold, path.strip() or None)
        raise ValueError(
            f"cannot read condition {text!r}: write 'METRIC OP NUMBER' (or "
            "'METRIC:DETAIL.PATH OP NUMBER') with OP one of < <= > >= and spaces around it, "
            "e.g. 'context_recall < 0.5'"
        )

    def resolve(self, metrics: Sequence[str]) -> str | None:
        """The run's metric this condition reads, if the run has one."""
        return _resolve(self.alternatives, metrics)

    def key(self, metric: str) -> str:
        """What the condition reads of ``metric``: its score, or ``metric:PATH``."""
        return metric if self.detail is None else f"{metric}:{self.detail}"

    def value_of(self, details: Any) -> float | None:
        """The number at :attr:`detail` in a result's stored details, if there is one."""
        value = details
        for part in (self.detail or "").split("."):
            if not isinstance(value, Mapping) or part not in value:
                return None
            value = value[part]
        if isinstance(value, bool | int | float):
            return float(value)
        return None

    def holds(self, value: float) -> bool:
        return _OPERATORS[self.op](value, self.threshold)

    def __str__(self) -> str:
        detail = f":{self.detail}" if self.detail else ""
        return f"{'|'.join(self.alternatives)}{detail} {self.op} {self.threshold:g}"


@dataclass(frozen=True)
class Rule:
    id: str
    area: str
    severity: str
    when: tuple[Condition, ...]
    order_by: tuple[str, ...]  # metric alternatives whose worst scores pick the examples
    min_share: float
    min_samples: int
    text: dict[str, dict[str, Any]]  # language -> title, explanation, advice

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rule:
        try:
            when = tuple(Condition.parse(c) for c in data["when"])
            text: dict[str, dict[str, Any]] = {
                lang: data[lang] for lang in ("en", "zh") if lang in data
            }
            if not text:
                raise ValueError("a rule needs its text in [rule.en] and/or [rule.zh]")
            order_by = tuple(data["order_by"].split("|")) if "order_by" in data else ()
            return cls(
                id=data["id"],
                area=data.get("area", "other"),
                severity=data.get("severity", "medium"),
                when=when,
                order_by=order_by,
                min_share=float(data.get("min_share", 0.2)),
                min_samples=int(data.get("min_samples", 2)),
                text=text,
            )
        except KeyError as missing:
            raise ValueError(f"diagnosis rule {data.get('id', '?')!r} lacks {missing}") from None

    def words(self, language: Language) -> dict[str, Any]:
        return self.text.get(language) or next(iter(self.text.values()))


def load_rules(path: str | Path | None = None) -> list[Rule]:
    """The rules in a TOML file (default: the built-in ``rules.toml``)."""
    if path is None:
        text = resources.files("ragmeter.diagnosis").joinpath("rules.toml").read_text("utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    return [Rule.from_dict(rule) for rule in tomllib.loads(text).get("rule", [])]


def _detail_values(result: EvaluationResult, metric: str, condition: Condition) -> dict[int, float]:
    """Sample index -> the number ``condition`` reads from ``metric``'s details, for the
    samples with an ok result that has it."""
    found = {i: sample.scores.get(metric) for i, sample in enumerate(result)}
    ok = {i: f for i, f in found.items() if f is not None and f.score is not None}
    values = {i: condition.value_of(f.details) for i, f in ok.items()}
    return {i: value for i, value in values.items() if value is not None}


def _run_language(result: EvaluationResult) -> Language:
    votes = [detect_language(s.sample_value("user_input") or "") for _, s in zip(range(50), result)]
    return "zh" if votes.count("zh") > len(votes) / 2 else "en"


def diagnose(
    result: EvaluationResult,
    *,
    rules: Iterable[Rule] | None = None,
    language: Language | None = None,
) -> list[Finding]:
    """The rules that fire on ``result``, most severe and most widespread first.

    A rule reads only the samples that have an ok score for every metric it names; a rule
    whose metrics the run lacks stays silent. Each finding cites the means behind it, each
    over the samples flagged next to the run's own mean (:class:`Figure`), and the samples
    that show it, worst first.
    """
    names = [m.name for m in result.metrics]
    directions = {m.name: m.direction for m in result.metrics}
    language = language or _run_language(result)
    # metric -> sample index -> score, for the samples with an ok score
    scored = {
        name: {i: value for i, value in enumerate(result.scores(name)) if value is not None}
        for name in names
    }
    ids = result.sample_ids()
    findings: list[Finding] = []
    for rule in load_rules() if rules is None else rules:
        resolved = [c.resolve(names) for c in rule.when]
        metrics = [m for m in resolved if m is not None]
        if len(metrics) < len(resolved):
            continue
        keys = [c.key(m) for c, m in zip(rule.when, metrics, strict=True)]
        for c, m, key in zip(rule.when, metrics, keys, strict=True):
            if key not in scored:
                scored[key] = _detail_values(result, m, c)
        read = list(dict.fromkeys(keys))
        evaluated = [i for i in range(len(ids)) if all(i in scored[k] for k in read)]
        matching = [
            i
            for i in evaluated
            if all(c.holds(scored[k][i]) for c, k in zip(rule.when, keys, strict=True))
        ]
        if len(matching) < rule.min_samples or len(matching) < rule.min_share * len(evaluated):
            continue
        key = _resolve(rule.order_by, names) or metrics[0]
        order = scored[key]
        sign = 1 if directions[key] is Direction.HIGHER_IS_BETTER else -1
        # samples without a score for the order_by metric (one the rule does not read) go last
        worst_first = sorted(matching, key=lambda i: (i not in order, sign * order.get(i, 0.0)))
        figures = [
            Figure(
                key,
                statistics.fmean(scored[key][i] for i in matching),
                len(matching),
                # over every sample with a value, not only those the rule evaluated: the
                # run's mean, as its summary shows it
                statistics.fmean(scored[key].values()),
                len(scored[key]),
            )
            for key in read
        ]
        words = rule.words(language)
        findings.append(
            Finding(
                rule_id=rule.id,
                area=rule.area,
                severity=rule.severity,
                title=words["title"],
                explanation=words["explanation"],
                advice=list(words.get("advice", [])),
                n_matching=len(matching),
                n_evaluated=len(evaluated),
                figures=figures,
                sample_ids=[ids[i] for i in worst_first[:MAX_EXAMPLES]],
            )
        )
    rank = {"high": 0, "medium": 1, "low": 2}
    return sorted(findings, key=lambda f: (rank.get(f.severity, 3), -f.share))
