"""Metrics by name, as the CLI and ``evaluate(metrics=["precision@5", ...])`` take them.

A name is looked up, in this order, among the metrics registered with :func:`register`, the
built-in and shipped ones (:data:`SPECS`, by name, alias or CamelCase class name, in any
case), and the entry points of group ``ragmeter.metrics`` (loaded only for a name nothing
else knows). ``module:attribute`` and ``path/to/file.py:attribute`` name a metric in code.

A built-in metric is declared where it is defined, with ``@builtin_metric``
(``ragmeter.metrics._spec``); :data:`SPECS` comes from the generated index of those
declarations (``_index.py``), so that looking a name up imports no metric module.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeAlias

from ragmeter.metrics._base import Metric
from ragmeter.metrics._index import INDEX
from ragmeter.metrics._spec import (
    LIST_HINT,
    MetricLoadError,
    MetricSpec,
    UnknownMetricError,
    build_spec,
    find_spec,
    name_keys,
    normalize_name,
    spec_keys,
    split_name,
    unknown_name_error,
)
from ragmeter.metrics._spec import no_k as _no_k

#: The built-in and shipped metrics, in the order ``ragmeter metrics`` lists them: from the
#: generated index of their ``@builtin_metric`` declarations, each imported when built.
SPECS: tuple[MetricSpec, ...] = tuple(declared.spec() for declared in INDEX)

#: Names other libraries use for something ragmeter computes differently: not aliases (a
#: name must not stand for another computation), but an error that says what differs and
#: which metric is closest. Keyed by normalized name (see ``normalize_name``).
_DEEPEVAL_RELEVANCY = (
    "DeepEval's ContextualRelevancyMetric is the share of the statements in the contexts "
    "that are relevant to the input; ragmeter's context_relevance judges whole contexts "
    "(split the contexts into sentences for a statement-level figure)"
)
_RUBRIC = (
    "{} is a judged criterion of your own: write it as a prompt metric "
    '(kind = "{}", docs/custom-metrics.md) and name its file, e.g. -m polite.toml'
)
EXPLAINED: dict[str, tuple[str, tuple[str, ...]]] = {
    "faithfulness_metric": (
        "DeepEval's FaithfulnessMetric counts the claims the retrieval context does not "
        "contradict (a claim it does not mention passes); ragmeter's faithfulness counts the "
        "claims the contexts support, a stricter test",
        ("faithfulness",),
    ),
    "answer_relevancy_metric": (
        "DeepEval's AnswerRelevancyMetric is the share of the output's statements relevant "
        "to the input; ragmeter's answer_relevancy (RAGAS's) is the similarity to the "
        "question of questions generated back from the response",
        ("answer_relevancy",),
    ),
    "contextual_relevancy_metric": (_DEEPEVAL_RELEVANCY, ("context_relevance",)),
    "contextual_relevancy": (_DEEPEVAL_RELEVANCY, ("context_relevance",)),
    "context_relevancy": (
        "RAGAS 0.1's context_relevancy is the share of the contexts' sentences relevant to "
        "the question; ragmeter's context_relevance judges whole contexts (split the contexts "
        "into sentences for the sentence-level figure)",
        ("context_relevance",),
    ),
    "faithfulness_with_hhem": (
        "RAGAS's FaithfulnesswithHHEM checks claims with Vectara's HHEM classifier; "
        "ragmeter's faithfulness asks the judge",
        ("faithfulness",),
    ),
    "llm_sql_equivalence_with_reference": (
        "RAGAS's LLMSQLEquivalence asks a judge, given the schema; ragmeter's sql_equivalence "
        "runs both queries on the sample's database, and sql_equivalence_judge asks a judge "
        "without the schema",
        ("sql_equivalence", "sql_equivalence_judge"),
    ),
    "aspect_critic": (_RUBRIC.format("RAGAS's AspectCritic", "discrete"), ()),
    "simple_criteria_score": (_RUBRIC.format("RAGAS's SimpleCriteriaScore", "numeric"), ()),
    "rubrics_score": (_RUBRIC.format("RAGAS's RubricsScore", "rubric"), ()),
    "domain_specific_rubrics": (_RUBRIC.format("RAGAS's RubricsScore", "rubric"), ()),
    "g_eval": (_RUBRIC.format("DeepEval's GEval", "rubric"), ()),
    "geval": (_RUBRIC.format("DeepEval's GEval", "rubric"), ()),
}
for _key in ("llm_sql_equivalence", "llmsql_equivalence"):  # LLMSQLEquivalence
    EXPLAINED[_key] = EXPLAINED["llm_sql_equivalence_with_reference"]
EXPLAINED["faithfulnesswith_hhem"] = EXPLAINED["faithfulness_with_hhem"]

#: The entry point group a package declares its metrics in, e.g. in its pyproject.toml:
#: ``[project.entry-points."ragmeter.metrics"] my_metric = "my_package.metrics:MyMetric"``.
ENTRY_POINT_GROUP = "ragmeter.metrics"

#: What :func:`register` takes: a metric, a metric class, or a zero-argument factory.
MetricSource: TypeAlias = Metric | type[Metric] | Callable[[], Metric]


@dataclass(frozen=True)
class _Registration:
    """A user's metric by name: its spec, and where it was defined (a registration from the
    same place, e.g. a notebook cell run again, replaces the earlier one)."""

    spec: MetricSpec
    origin: str


_lock = threading.RLock()
#: Registered metrics by name, most recent last; consulted before the built-in ones.
_registered: dict[str, _Registration] = {}


def _origin(source: object) -> str:
    """``module.qualname`` of what defines ``source``: a class or a function itself; for a
    metric object its class, and the function it wraps if any (``@metric``)."""
    parts = [source] if inspect.isclass(source) or not isinstance(source, Metric) else []
    if isinstance(source, Metric):
        parts = [type(source), *([source.fn] if hasattr(source, "fn") else [])]
    return " ".join(
        f"{getattr(p, '__module__', None) or '?'}.{getattr(p, '__qualname__', None) or '?'}"
        for p in parts
    )


def _describe(source: object) -> str:
    name = getattr(source, "__qualname__", None) or repr(source)
    return f"{name}()"


def _builder(source: object) -> tuple[Callable[[], Metric], Metric | None]:
    """How to build the metric ``source`` stands for, and the metric when it is one (or a
    class whose instances have no class-level name, built once to learn it)."""
    if isinstance(source, Metric):
        metric = source
        return (lambda: metric), metric
    if inspect.isclass(source):
        if not issubclass(source, Metric):
            raise TypeError(
                f"{source.__qualname__} is not a metric class: subclass "
                "ragmeter.metrics.Metric (or SampleMetric), or register an instance"
            )
        if inspect.isabstract(source):
            missing = ", ".join(sorted(getattr(source, "__abstractmethods__", ())))
            raise TypeError(f"{source.__qualname__} is abstract: implement {missing}")
    elif not callable(source):
        raise TypeError(
            f"register() takes a metric, a metric class or a zero-argument factory, got {source!r}"
        )
    try:
        inspect.signature(source).bind()
    except TypeError:
        raise TypeError(
            f"{_describe(source)} cannot be called without arguments: register an instance "
            f"(e.g. register({getattr(source, '__qualname__', 'Metric')}(...))) or a "
            "zero-argument factory"
        ) from None
    except ValueError:  # no signature to inspect (some builtins): found out when it is built
        pass

    def build() -> Metric:
        made = source()
        if not isinstance(made, Metric):
            raise TypeError(
                f"{_describe(source)} returned {made!r}, not a metric: a factory must return a "
                "ragmeter.metrics.Metric"
            )
        return made

    return build, None


def _check_name(name: str, what: str) -> str:
    parts = split_name(name) if isinstance(name, str) else None
    if parts is None or parts[1] is not None:
        raise ValueError(
            f"{what} {name!r} is not a metric name: use letters, digits, _, - or + "
            "(no @K, no spaces)"
        )
    return name.strip()


def _summary(metric: Metric | None, source: object) -> str:
    if metric is not None:
        return metric.description
    doc = inspect.getdoc(source) or ""
    return doc.splitlines()[0] if doc else ""


def register(
    metric_or_factory: MetricSource,
    *,
    name: str | None = None,
    aliases: Sequence[str] = (),
    replace: bool = False,
) -> MetricSource:
    """Make a metric of your own available by name, to ``evaluate(metrics=["my_metric"])``,
    metric lists and ``ragmeter`` commands run in this process (a package gives the CLI its
    metrics through entry points of group ``ragmeter.metrics``).

    ``metric_or_factory`` is a :class:`Metric`, a metric class, or a zero-argument factory
    that returns one; a class or a factory builds a new metric each time the name is used, an
    instance is used as is. ``name`` is what to type (default: the metric's own ``name``; a
    factory is then called once to learn it); results keep the metric's own name. A name or
    alias of a built-in metric is refused unless ``replace=True`` (yours is then used in its
    place), as is one registered from elsewhere; registering again from the same class or
    function (a notebook cell run twice) replaces the earlier registration. Returns
    ``metric_or_factory``, so it also decorates a class.

    For example (``evaluate(data, ["brief"])`` then scores with ``Short``)::

        class Short(Metric):  # 1 when the response has at most 20 words
            name = "short_answer"
            requires = (("response",),)
            def score(self, sample):
                return MetricResult.ok(float(len(sample.response.split()) <= 20))

        register(Short, aliases=["brief"])
    """
    build, metric = _builder(metric_or_factory)
    if name is None:
        if metric is None:
            declared = getattr(metric_or_factory, "name", None)
            if inspect.isclass(metric_or_factory) and isinstance(declared, str):
                name = declared
            else:
                metric = build()
        name = name if name is not None else getattr(metric, "name", None)
        if not isinstance(name, str):
            raise ValueError(
                f"{metric_or_factory!r} has no name: give one, register(..., name='my_metric')"
            )
    name = _check_name(name, "name")
    if isinstance(aliases, str):
        aliases = [aliases]
    alias_names = tuple(dict.fromkeys(_check_name(a, "alias") for a in aliases))
    spec = MetricSpec(
        name,
        _no_k(build),
        "none",
        "registered",
        _summary(metric, metric_or_factory),
        tuple(a for a in alias_names if a != name),
    )
    keys = spec_keys(spec)
    origin = _origin(metric_or_factory)
    with _lock:
        taken = [s for s in SPECS if keys & spec_keys(s)]
        if taken and not replace:
            raise ValueError(
                f"metric name {_clash(spec, taken[0])!r} is taken by the built-in metric "
                f"{taken[0].name!r}: choose another name, or pass replace=True to use yours "
                "in its place"
            )
        clashes = [r for r in _registered.values() if keys & spec_keys(r.spec)]
        foreign = [r for r in clashes if r.origin != origin]
        if foreign and not replace:
            other = foreign[0]
            raise ValueError(
                f"metric name {_clash(spec, other.spec)!r} is already registered by "
                f"{other.origin} (as {other.spec.name!r}): choose another name, or pass "
                "replace=True"
            )
        for registration in clashes:
            del _registered[registration.spec.name]
        _registered[name] = _Registration(spec, origin)
    return metric_or_factory


def _clash(mine: MetricSpec, theirs: MetricSpec) -> str:
    """The name or alias of ``mine`` that collides with one of ``theirs``."""
    taken = spec_keys(theirs)
    return next(k for k in (mine.name, *mine.aliases) if name_keys(k) & taken)


def registered_specs() -> tuple[MetricSpec, ...]:
    """The specs of the metrics registered in this process, in order of registration."""
    with _lock:
        return tuple(r.spec for r in _registered.values())


def metric_specs() -> tuple[MetricSpec, ...]:
    """Every metric a name can select now, as ``ragmeter metrics`` lists them: registered
    ones first (they win a shared name), the built-in and shipped ones, then the entry
    points of group ``ragmeter.metrics`` not loaded yet (building one loads it)."""
    known = (*registered_specs(), *SPECS)
    names = frozenset().union(*(spec_keys(s) for s in known))
    plugins = tuple(
        MetricSpec(
            ep.name,
            _no_k(_entry_point_builder(ep.name)),
            "none",
            "plugin",
            f"from {ep.value}" + (f" ({_distribution(ep)})" if _distribution(ep) else ""),
        )
        for ep in _entry_points()
        if not name_keys(ep.name) & names
    )
    return (*known, *plugins)


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    return list(entry_points(group=ENTRY_POINT_GROUP))


def _distribution(ep: Any) -> str:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return ""
    version = getattr(dist, "version", "")
    name = getattr(dist, "name", None) or dist.metadata["Name"]
    return f"{name} {version}".strip()


def _entry_point_builder(name: str) -> Callable[[], Metric]:
    def build() -> Metric:
        spec = _load_entry_point(name)
        assert spec is not None
        return spec.build(None)

    return build


def _load_entry_point(base: str) -> MetricSpec | None:
    """The metric an entry point of group ``ragmeter.metrics`` named ``base`` declares,
    loaded and registered under the entry point's name; ``None`` when no entry point has
    that name."""
    wanted = name_keys(base)
    found = [ep for ep in _entry_points() if name_keys(ep.name) & wanted]
    if not found:
        return None
    ep = found[0]
    where = f"the entry point '{ep.name} = {ep.value}' (group {ENTRY_POINT_GROUP}"
    where += f", package {_distribution(ep)})" if _distribution(ep) else ")"
    try:
        source = ep.load()
    except Exception as error:  # re-raised: a plugin's import can raise anything
        raise MetricLoadError(
            f"metric {base!r} comes from {where}, which failed to load: "
            f"{type(error).__name__}: {error}. Fix or reinstall that package, or uninstall it"
        ) from error
    with _lock:
        registered = find_spec(base, registered_specs())
        if registered is not None:  # loaded by another thread meanwhile
            return registered
        try:
            register(source, name=ep.name)
        except (TypeError, ValueError) as error:
            raise MetricLoadError(
                f"metric {base!r} comes from {where}, which is not a metric: {error}"
            ) from error
        return find_spec(base, registered_specs())


#: Files loaded for ``path/to/file.py:attribute`` names, by resolved path and modification
#: time, so that naming a file's metrics several times runs the file once.
_file_modules: dict[tuple[str, int], ModuleType] = {}


def _module_of(where: str, reference: str) -> ModuleType:
    """The module ``where`` names: a ``.py`` file path, or an importable dotted module."""
    if where.endswith(".py") or "/" in where or "\\" in where:
        path = Path(where).expanduser().resolve()
        if not path.is_file():
            raise MetricLoadError(f"no such Python file: {where!r} (in the metric {reference!r})")
        key = (str(path), path.stat().st_mtime_ns)
        with _lock:
            if key in _file_modules:
                return _file_modules[key]
            digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
            module_name = f"_ragmeter_user_metrics_{path.stem}_{digest}"
            spec = importlib.util.spec_from_file_location(module_name, path)
            if spec is None or spec.loader is None:
                raise MetricLoadError(f"cannot load {where!r} as Python (in {reference!r})")
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module  # dataclasses and pickling look modules up
            try:
                spec.loader.exec_module(module)
            except Exception as error:  # re-raised: the user's file can raise anything
                del sys.modules[module_name]
                raise MetricLoadError(
                    f"{where!r} (in the metric {reference!r}) failed to run: "
                    f"{type(error).__name__}: {error}"
                ) from error
            _file_modules[key] = module
            return module
    if not all(part.isidentifier() for part in where.split(".")):
        raise MetricLoadError(f"{reference!r} is not module:attribute or path/to/file.py:attribute")
    try:
        return importlib.import_module(where)
    except Exception as error:  # re-raised: a user module can raise anything
        hint = (
            f"; for a file in this folder write ./{where.replace('.', '/')}.py:..."
            if isinstance(error, ModuleNotFoundError)
            else ""
        )
        raise MetricLoadError(
            f"cannot import {where!r} (in the metric {reference!r}): "
            f"{type(error).__name__}: {error}{hint}"
        ) from error


def load_reference(reference: str) -> Metric:
    """The metric ``module:attribute`` or ``path/to/file.py:attribute`` names (the attribute
    may be dotted): a metric, a metric class or a zero-argument factory, as for
    :func:`register`. Runs the named code: name only code you trust."""
    where, _, attribute = reference.strip().rpartition(":")
    if not where or not attribute or not all(p.isidentifier() for p in attribute.split(".")):
        raise MetricLoadError(f"{reference!r} is not module:attribute or path/to/file.py:attribute")
    found: Any = _module_of(where, reference)
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise MetricLoadError(f"{where!r} has no attribute {attribute!r} (in {reference!r})")
        found = getattr(found, part)
    try:
        build, metric = _builder(found)
        return metric if metric is not None else build()
    except TypeError as error:
        raise MetricLoadError(f"{reference!r} is not a metric: {error}") from error


def _explained(name: str, base: str) -> UnknownMetricError | None:
    """The error for a name another library uses for a different computation."""
    found = EXPLAINED.get(normalize_name(base))
    if found is None:
        return None
    why, closest = found
    message = f"unknown metric {name!r}: {why}"
    if closest:
        message += f"; did you mean {' or '.join(map(repr, closest))}?"
    return UnknownMetricError(message)


def get_metric(name: str) -> Metric:
    """Build a metric from its name, with ``@K`` for a cutoff: a registered metric, a
    built-in or shipped one (by name, alias or class name, in any case), or one an entry
    point of group ``ragmeter.metrics`` declares.

    >>> get_metric("ndcg@10").name, get_metric("mrr").name, get_metric("average_precision@3").name
    ('ndcg@10', 'mrr', 'map@3')
    >>> get_metric("LLMContextPrecisionWithoutReference").name
    'context_utilization'
    """
    specs = (*registered_specs(), *SPECS)
    parts = split_name(name)
    if parts is None:
        raise unknown_name_error(name, specs)
    base, raw_k = parts
    spec = find_spec(base, specs) or _load_entry_point(base)
    if spec is None:
        raise _explained(name, base) or unknown_name_error(name, specs)
    return build_spec(spec, name, raw_k)


#: The extensions of metric files (prompt metrics, see ``ragmeter.metrics.custom.load_metric``).
METRIC_FILE_SUFFIXES = (".toml", ".yaml", ".yml", ".json")


def resolve_metric(name: str) -> Metric:
    """A metric by name (see :func:`get_metric`: ``faithfulness``, ``recall@5``, a registered
    or plugin metric), the prompt metric a metric file defines (``.toml``, ``.yaml``,
    ``.yml``, ``.json``), or the metric ``module:attribute`` / ``file.py:attribute`` names.

    >>> resolve_metric("hit_rate@3").name
    'hit@3'
    """
    if Path(name).suffix.lower() in METRIC_FILE_SUFFIXES:
        if not Path(name).is_file():
            raise UnknownMetricError(f"no such metric file: {name!r} (no metric file at that path)")
        from ragmeter.metrics.custom import load_metric

        return load_metric(name)
    if ":" in name:
        return load_reference(name)
    return get_metric(name)


def _unknown_message(problems: list[str]) -> str:
    """One message for every metric name not understood, with the command that lists all."""
    if len(problems) == 1:
        return f"{problems[0]} ({LIST_HINT})"
    lines = [f"{len(problems)} metric names not understood:", *(f"  - {p}" for p in problems)]
    return "\n".join([*lines, f"{LIST_HINT[0].upper()}{LIST_HINT[1:]}."])


def resolve_metrics(metrics: Sequence[Metric | str] | str) -> list[Metric]:
    """Metric objects from objects, names, or files defining prompt metrics (``.toml``,
    ``.yaml``, ``.yml``, ``.json``); a comma-separated string is split."""
    if isinstance(metrics, str):
        metrics = [m for m in (part.strip() for part in metrics.split(",")) if m]
    resolved: list[Metric] = []
    unknown: list[str] = []
    for given in metrics:
        try:
            if isinstance(given, Metric):
                resolved.append(given)
            elif isinstance(given, str):
                resolved.append(resolve_metric(given))
            else:
                raise TypeError(
                    f"metrics are names or Metric objects, got {given!r}: wrap a class or "
                    "factory as MyMetric(), or register it (ragmeter.metrics.register)"
                )
        except UnknownMetricError as error:  # every unknown name is reported, not the first
            unknown.append(error.short)
    if unknown:
        raise UnknownMetricError(_unknown_message(unknown))
    names = [m.name for m in resolved]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"metric(s) given twice: {', '.join(duplicates)}")
    if not resolved:
        raise ValueError("no metrics given")
    return resolved
