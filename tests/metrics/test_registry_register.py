"""ragmeter.metrics.register(): a user's metric by name, in evaluate(), lists and the CLI;
entry points of group ragmeter.metrics; module:attribute and file.py:attribute names."""

import sys
import textwrap
import threading

import pytest
from typer.testing import CliRunner

from ragmeter import Metric, MetricResult, Sample, evaluate
from ragmeter.cli import app
from ragmeter.metrics import (
    MetricLoadError,
    Requirements,
    UnknownMetricError,
    _registry,
    get_metric,
    metric_specs,
    register,
    resolve_metric,
    resolve_metrics,
)
from ragmeter.metrics.custom import metric


@pytest.fixture(autouse=True)
def clean_registry(monkeypatch):
    """Each test registers into an empty registry of its own."""
    monkeypatch.setattr(_registry, "_registered", {})


class WordCount(Metric):
    """Words in the response, over ten."""

    name = "word_count"
    requires: Requirements = (("response",),)

    def score(self, sample: Sample) -> MetricResult:
        return MetricResult.ok(len((sample.response or "").split()) / 10)


class Cutoff(Metric):
    """1 when the response has at most ``limit`` words."""

    requires: Requirements = (("response",),)

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.name = f"at_most_{limit}_words"

    def score(self, sample: Sample) -> MetricResult:
        return MetricResult.ok(float(len((sample.response or "").split()) <= self.limit))


ROWS = [{"response": "one two three"}, {"response": "a b c d e f g h"}]


def test_a_registered_instance_is_used_by_name_in_evaluate():
    instance = Cutoff(5)
    assert register(instance, aliases=["short"]) is instance
    assert get_metric("at_most_5_words") is instance
    assert get_metric("Short") is instance  # aliases in any case
    result = evaluate(ROWS, ["short"])
    assert result.scores("at_most_5_words") == [1.0, 0.0]  # 3 words <= 5, 8 words > 5


def test_a_registered_class_builds_a_new_metric_each_time():
    register(WordCount)
    first, second = get_metric("word_count"), get_metric("WordCount")
    assert isinstance(first, WordCount) and first is not second
    assert evaluate(ROWS, ["word_count"]).scores("word_count") == [0.3, 0.8]


def test_a_factory_with_a_name_is_called_only_when_the_name_is_used():
    calls = []

    def make() -> Metric:
        calls.append(1)
        return Cutoff(3)

    register(make, name="tiny")
    assert calls == []
    assert get_metric("tiny").name == "at_most_3_words"  # results keep the metric's own name
    assert calls == [1]
    with pytest.raises(UnknownMetricError, match="takes no @K"):
        get_metric("tiny@3")


def test_a_factory_without_a_name_is_called_once_to_learn_it():
    calls = []

    def make() -> Metric:
        calls.append(1)
        return Cutoff(4)

    register(make)
    assert calls == [1]
    assert get_metric("at_most_4_words").limit == 4 and calls == [1, 1]


def test_a_metric_made_with_the_decorator_registers():
    @metric(requires=["response"])
    def shouts(sample: Sample) -> float:
        return float((sample.response or "").isupper())

    register(shouts)
    assert evaluate([{"response": "HI"}, {"response": "hi"}], ["shouts"]).scores("shouts") == [
        1.0,
        0.0,
    ]


def test_a_built_in_name_or_alias_is_refused_unless_replace():
    class MyFaithfulness(WordCount):
        name = "faithfulness"

    with pytest.raises(
        ValueError, match=r"taken by the built-in metric 'faithfulness'.*replace=True"
    ):
        register(MyFaithfulness)
    with pytest.raises(ValueError, match="'em' is taken by the built-in metric 'exact_match'"):
        register(WordCount, aliases=["em"])
    with pytest.raises(ValueError, match="'ContextRecall' is taken"):
        register(WordCount, name="ContextRecall")  # the class name of context_recall
    register(MyFaithfulness, replace=True)
    assert isinstance(get_metric("faithfulness"), MyFaithfulness)


def test_a_name_registered_elsewhere_is_refused_the_same_place_replaces():
    register(WordCount, name="mine")
    register(WordCount, name="mine")  # a notebook cell run again: replaced, no error
    with pytest.raises(ValueError, match=r"'mine' is already registered by .*WordCount"):
        register(Cutoff(2), name="mine")
    register(Cutoff(2), name="mine", replace=True)
    assert get_metric("mine").name == "at_most_2_words"
    assert [s.name for s in _registry.registered_specs()] == ["mine"]


class Abstract(Metric):
    name = "abstract"


class NeedsArguments(Metric):
    name = "needs_arguments"

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold

    def score(self, sample: Sample) -> MetricResult:
        return MetricResult.ok(self.threshold)


@pytest.mark.parametrize(
    ("given", "options", "error", "says"),
    [
        (42, {}, TypeError, "takes a metric, a metric class or a zero-argument factory, got 42"),
        (dict, {}, TypeError, "dict is not a metric class"),
        (Abstract, {}, TypeError, "Abstract is abstract: implement score"),
        (NeedsArguments, {}, TypeError, "cannot be called without arguments"),
        (lambda: 3, {}, TypeError, "returned 3, not a metric"),
        (WordCount, {"name": "my metric"}, ValueError, "name 'my metric' is not a metric name"),
        (WordCount, {"name": "wc@5"}, ValueError, "no @K"),
        (WordCount, {"aliases": ["a:b"]}, ValueError, "alias 'a:b' is not a metric name"),
    ],
)
def test_what_is_not_a_metric_is_refused_clearly(given, options, error, says):
    with pytest.raises(error) as raised:
        register(given, **options)
    assert says in str(raised.value)
    assert _registry.registered_specs() == ()


def test_a_factory_returning_something_else_later_fails_clearly():
    made = iter([Cutoff(1), "oops"])
    register(lambda: next(made), name="flaky")  # built once to check it only when unnamed
    assert get_metric("flaky").name == "at_most_1_words"
    with pytest.raises(TypeError, match="returned 'oops', not a metric"):
        get_metric("flaky")


def test_registered_names_are_suggested_and_listed():
    register(WordCount)
    with pytest.raises(UnknownMetricError, match="did you mean 'word_count'"):
        get_metric("word_cont")
    listed = {s.name: s for s in metric_specs()}
    assert listed["word_count"].family == "registered"
    assert listed["word_count"].summary == "Words in the response, over ten."


def test_registering_from_many_threads_keeps_every_metric():
    errors = []

    def work(i: int) -> None:
        try:
            register(Cutoff(i), name=f"limit_{i}")
        except ValueError as error:  # pragma: no cover - would be the bug
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert errors == []
    assert sorted(s.name for s in _registry.registered_specs()) == sorted(
        f"limit_{i}" for i in range(20)
    )


# -- entry points ---------------------------------------------------------------------------
PLUGIN = '''
from ragmeter import Metric, MetricResult

class PlugMetric(Metric):
    """Length of the response in characters, over 100."""
    name = "plug_metric"
    requires = (("response",),)
    def score(self, sample):
        return MetricResult.ok(len(sample.response) / 100)

NOT_A_METRIC = 7
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """An installed distribution ``fakeplug`` declaring three metrics, one good."""
    module = f"fakeplug_mod_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    info = tmp_path / "fakeplug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fakeplug\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[ragmeter.metrics]\n"
        f"plug_metric = {module}:PlugMetric\n"
        "broken_metric = fakeplug_missing_module:Thing\n"
        f"not_metric = {module}:NOT_A_METRIC\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield module
    sys.modules.pop(module, None)


def test_an_entry_point_is_loaded_only_for_a_name_nothing_else_knows(plugin):
    assert get_metric("mrr").name == "mrr"
    with pytest.raises(UnknownMetricError):
        get_metric("nothing_like_it")
    assert plugin not in sys.modules
    listed = {s.name: s for s in metric_specs()}
    assert (
        listed["plug_metric"].family == "plugin" and "fakeplug 1.0" in listed["plug_metric"].summary
    )
    assert plugin not in sys.modules  # listed, not loaded
    result = evaluate([{"response": "x" * 25}], ["PlugMetric"])  # by class name too
    assert result.scores("plug_metric") == [0.25]
    assert plugin in sys.modules
    assert [s.name for s in _registry.registered_specs()] == ["plug_metric"]


def test_an_entry_point_that_fails_to_load_is_named(plugin):
    with pytest.raises(MetricLoadError) as error:
        get_metric("broken_metric")
    message = str(error.value)
    assert "'broken_metric = fakeplug_missing_module:Thing'" in message
    assert "package fakeplug 1.0" in message and "ModuleNotFoundError" in message
    with pytest.raises(MetricLoadError, match=r"not a metric: .*got 7"):
        get_metric("not_metric")


def test_the_cli_runs_a_metric_from_an_entry_point(plugin, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"response": "' + "y" * 50 + '"}\n', encoding="utf-8")
    result = CliRunner().invoke(
        app, ["eval", str(data), "-m", "plug_metric", "--no-store", "-o", str(tmp_path / "run")]
    )
    assert result.exit_code == 0, result.output
    assert "plug_metric" in result.output and "0.5" in result.output
    broken = CliRunner().invoke(app, ["eval", str(data), "-m", "broken_metric", "--no-store"])
    assert broken.exit_code == 2 and "failed to load" in broken.output


# -- module:attribute -----------------------------------------------------------------------
def test_a_file_and_attribute_name_a_metric(tmp_path):
    path = tmp_path / "my_metrics.py"
    path.write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    assert resolve_metric(f"{path}:PlugMetric").name == "plug_metric"
    metrics = resolve_metrics(f"{path}:PlugMetric,mrr")
    assert [m.name for m in metrics] == ["plug_metric", "mrr"]
    with pytest.raises(MetricLoadError, match=r"not a metric: .*got 7"):
        resolve_metric(f"{path}:NOT_A_METRIC")
    with pytest.raises(MetricLoadError, match="has no attribute 'Missing'"):
        resolve_metric(f"{path}:Missing")
    with pytest.raises(MetricLoadError, match="no such Python file"):
        resolve_metric(f"{tmp_path / 'absent.py'}:PlugMetric")


def test_a_module_and_attribute_name_a_metric():
    assert resolve_metric("ragmeter.metrics.custom:MultiHopCompleteness").name == (
        "multihop_completeness"
    )
    with pytest.raises(MetricLoadError, match=r"No module named 'no_such_module_xyz'.*\./"):
        resolve_metric("no_such_module_xyz:Metric")
    with pytest.raises(MetricLoadError, match="is not a metric"):
        resolve_metric("json:dumps")  # needs an argument
