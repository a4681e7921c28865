"""The ragmeter pytest plugin, installed with the package (entry point ``pytest11``).

Fixtures: ``ragmeter_judge`` and ``ragmeter_embeddings`` (session; the configured defaults,
override them in a ``conftest.py``), ``ragmeter_dataset`` (the file given by
``--ragmeter-dataset`` or the ``ragmeter_dataset`` ini value) and ``ragmeter_assert``
(:func:`ragmeter.testing.assert_metric` bound to the session's judge and embeddings).
Marker: ``@pytest.mark.ragmeter_judge`` for tests that call a real judge; ``--ragmeter-skip-judge``
(or ``RAGMETER_SKIP_JUDGE=1``) skips them. The terminal summary gets a ``ragmeter`` section
with every assertion's score and bound and the judge calls, tokens and cost of the session.

Loading the plugin imports no ragmeter module beyond this one's parents: the fixtures and
hooks import what they need when they run. Disable it with ``-p no:ragmeter``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ragmeter.dataset import Dataset
    from ragmeter.embed import Embeddings
    from ragmeter.judge import Judge

MARKER = "ragmeter_judge"
SKIP_OPTION = "--ragmeter-skip-judge"
SKIP_ENV = "RAGMETER_SKIP_JUDGE"
DATASET_OPTION = "--ragmeter-dataset"
DATASET_INI = "ragmeter_dataset"
SKIP_REASON = f"ragmeter: judge-using tests are skipped ({SKIP_OPTION} or {SKIP_ENV}=1)"
USAGE_FIELDS = ("calls", "cached_calls", "prompt_tokens", "completion_tokens", "cost")


@dataclass(frozen=True)
class AssertionRecord:
    """One ``assert_metric`` call of the session."""

    test: str | None
    metric: str
    score: float | None  # the sample's score or the dataset's mean; None when there is none
    bound: str
    passed: bool
    n_samples: int
    note: str = ""
    calls: int | None = None  # judge calls this assertion made; None: no judge needed
    cached_calls: int | None = None


@dataclass(eq=False)  # compared by identity: sessions nest
class SessionLog:
    """What the session's assertions scored and which judges and embeddings they used."""

    records: list[AssertionRecord] = field(default_factory=list)
    judges: dict[int, Any] = field(default_factory=dict)
    embeddings: dict[int, Any] = field(default_factory=dict)
    #: Usage of assertions that ran on a default judge ragmeter made for them alone.
    extra_usage: dict[str, float] = field(default_factory=dict)

    def add_record(self, **fields: Any) -> None:
        self.records.append(AssertionRecord(**fields))

    def add_judge(self, judge: Any) -> None:
        if hasattr(judge, "ledger"):
            self.judges[id(judge)] = judge

    def add_embeddings(self, embeddings: Any) -> None:
        if hasattr(embeddings, "ledger"):
            self.embeddings[id(embeddings)] = embeddings

    def add_usage(self, usage: dict[str, Any]) -> None:
        for name in USAGE_FIELDS:
            self.extra_usage[name] = self.extra_usage.get(name, 0) + (usage.get(name) or 0)

    def judge_usage(self) -> tuple[dict[str, float], set[str]]:
        """Summed usage of every judge seen (their ledgers) and the currencies of the cost."""
        total = dict.fromkeys(USAGE_FIELDS, 0.0)
        currencies: set[str] = set()
        for judge in self.judges.values():
            usage = judge.ledger.total
            for name in USAGE_FIELDS:
                total[name] += getattr(usage, name, 0) or 0
            price = getattr(judge, "price", None)
            if price is not None:
                currencies.add(str(price.currency))
        for name, value in self.extra_usage.items():
            total[name] += value
        return total, currencies

    def embedding_calls(self) -> int:
        return sum(int(e.ledger.total.calls) for e in self.embeddings.values())


#: Logs of the sessions running in this process, innermost last (pytester runs a session
#: inside a session); ``assert_metric`` records into the innermost.
_LOGS: list[SessionLog] = []
_LOG_KEY = pytest.StashKey[SessionLog]()


def current_log() -> SessionLog | None:
    """The log of the innermost running session, or ``None`` outside pytest."""
    return _LOGS[-1] if _LOGS else None


def _skip_judge(config: pytest.Config) -> bool:
    flag = os.environ.get(SKIP_ENV, "").strip().lower() in {"1", "true", "yes", "on"}
    return bool(config.getoption("ragmeter_skip_judge")) or flag


# -- hooks ---------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragmeter", "ragmeter: evaluating RAG systems")
    group.addoption(
        SKIP_OPTION,
        action="store_true",
        dest="ragmeter_skip_judge",
        default=False,
        help=f"skip tests marked {MARKER} and tests that need the default judge "
        f"(also {SKIP_ENV}=1): for CI without a judge",
    )
    group.addoption(
        DATASET_OPTION,
        dest="ragmeter_dataset",
        default=None,
        metavar="PATH",
        help="dataset file of the ragmeter_dataset fixture (JSONL, JSON, CSV, Parquet)",
    )
    parser.addini(
        DATASET_INI,
        "dataset file of the ragmeter_dataset fixture, relative to the ini file",
        default="",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}: the test calls an LLM judge (skipped with {SKIP_OPTION} or {SKIP_ENV}=1)",
    )
    log = SessionLog()
    config.stash[_LOG_KEY] = log
    _LOGS.append(log)


def pytest_unconfigure(config: pytest.Config) -> None:
    log = config.stash.get(_LOG_KEY, None)
    if log is not None:
        _LOGS[:] = [other for other in _LOGS if other is not log]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _skip_judge(config):
        return
    skip = pytest.mark.skip(reason=SKIP_REASON)
    for item in items:
        if item.get_closest_marker(MARKER) is not None:
            item.add_marker(skip)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Any:
    """Note the session's judge and embeddings, the plugin's or a conftest's override, so the
    summary counts their calls."""
    value = yield
    log = request.config.stash.get(_LOG_KEY, None)
    if log is not None:
        if fixturedef.argname == "ragmeter_judge":
            log.add_judge(value)
        elif fixturedef.argname == "ragmeter_embeddings":
            log.add_embeddings(value)
    return value


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    log = config.stash.get(_LOG_KEY, None)
    if log is None:
        return
    lines = summary_lines(log)
    if not lines:
        return
    terminalreporter.write_sep("=", "ragmeter")
    for line in lines:
        terminalreporter.write_line(line)


def summary_lines(log: SessionLog) -> list[str]:
    """The ``ragmeter`` section: one row per assertion, then usage; empty if nothing ran."""
    usage, currencies = log.judge_usage()
    embedding_calls = log.embedding_calls()
    judge_seen = bool(log.judges) or any(log.extra_usage.values())
    if not log.records and not judge_seen and not embedding_calls:
        return []
    lines: list[str] = []
    if log.records:
        rows = [
            (
                "PASS" if r.passed else "FAIL",
                r.metric,
                "-" if r.score is None else f"{r.score:.4f}",
                r.bound,
                r.note or str(r.n_samples),
                _calls(r.calls, r.cached_calls),
                r.test or "-",
            )
            for r in log.records
        ]
        header = ("result", "metric", "score", "bound", "samples", "judge calls", "test")
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        failed = sum(not r.passed for r in log.records)
        lines.append(
            f"{len(log.records)} assertion(s): {len(log.records) - failed} passed, {failed} failed"
        )
    if judge_seen:
        currency = " " + currencies.pop() if len(currencies) == 1 else ""
        cost = f"cost {usage['cost']:.4f}{currency}"
        if len(currencies) > 1:
            cost += " (mixed currencies)"
        lines.append(
            f"judge: {int(usage['calls'])} calls, {int(usage['cached_calls'])} cached, "
            f"{int(usage['prompt_tokens'])} prompt + {int(usage['completion_tokens'])} "
            f"completion tokens, {cost}"
        )
    else:
        lines.append("judge: not used")
    if embedding_calls:
        lines.append(f"embeddings: {embedding_calls} calls")
    return lines


def _calls(calls: int | None, cached: int | None) -> str:
    if calls is None:
        return "-"
    return f"{calls}" + (f" (+{cached} cached)" if cached else "")


# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def ragmeter_judge(pytestconfig: pytest.Config) -> Generator[Judge, None, None]:
    """The judge of judged metrics: the configured endpoint (``RAGMETER_JUDGE_*`` /
    ``OPENAI_*``) or the embedded offline judge, with the judge cache. Override it in a
    ``conftest.py`` (e.g. with a :class:`ragmeter.testing.ScriptedJudge`). Skipped with
    ``--ragmeter-skip-judge``."""
    if _skip_judge(pytestconfig):
        pytest.skip(SKIP_REASON)
    from ragmeter.judge import default_judge

    judge = default_judge()
    yield judge
    judge.cache.close()


@pytest.fixture(scope="session")
def ragmeter_embeddings() -> Generator[Embeddings, None, None]:
    """The embeddings of metrics that need them: ``RAGMETER_EMBEDDINGS_*`` or the offline
    model. Override it in a ``conftest.py`` (e.g. with
    :class:`ragmeter.testing.ScriptedEmbeddings`)."""
    from ragmeter.embed import default_embeddings

    yield default_embeddings()


@pytest.fixture(scope="session")
def ragmeter_dataset(pytestconfig: pytest.Config) -> Dataset:
    """The dataset named by ``--ragmeter-dataset PATH`` (relative to the current directory)
    or the ``ragmeter_dataset`` ini value (relative to the ini file); skips when neither is
    set."""
    option = pytestconfig.getoption("ragmeter_dataset")
    if option:
        path = Path(option)
    else:
        value = str(pytestconfig.getini(DATASET_INI) or "").strip()
        if not value:
            pytest.skip(
                f"ragmeter: no dataset configured (give {DATASET_OPTION} PATH or set "
                f"{DATASET_INI} in the pytest ini file)"
            )
        base = pytestconfig.inipath.parent if pytestconfig.inipath else pytestconfig.rootpath
        path = base / value
    if not path.is_file():
        pytest.fail(f"ragmeter: dataset file {str(path)!r} does not exist", pytrace=False)
    from ragmeter.dataset import load_dataset

    return load_dataset(path)


@pytest.fixture
def ragmeter_assert(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """:func:`ragmeter.testing.assert_metric` that uses the session's ``ragmeter_judge`` and
    ``ragmeter_embeddings`` fixtures, each set up only when the metric needs it (so asserting a
    retrieval metric never makes a judge). Arguments given explicitly win."""

    def bound_assert(sample_or_dataset: Any, metric: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        from ragmeter.metrics import Metric, get_metric
        from ragmeter.testing._assertions import assert_metric

        resolved = metric if isinstance(metric, Metric) else get_metric(metric)
        for name in ("judge", "embeddings"):
            if (
                kwargs.get(name) is None
                and getattr(resolved, f"uses_{name}", False)
                and getattr(resolved, name, None) is None
            ):
                kwargs[name] = request.getfixturevalue(f"ragmeter_{name}")
        return assert_metric(sample_or_dataset, resolved, **kwargs)

    return bound_assert
