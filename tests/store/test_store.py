"""The run store, on SQLite and PostgreSQL: recording, loading, listing, concurrency."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path

import pytest
import sqlalchemy as sa

from ragmeter import Metric, MetricResult, evaluate
from ragmeter.metrics import Requirements
from ragmeter.stats import compare
from ragmeter.store import RunNotFoundError, Store, git_state


class Given(Metric):
    """Scores given per sample id (None: fails), with details."""

    requires: Requirements = ()

    def __init__(self, name: str, scores: dict[str, float | None]) -> None:
        self.name, self.scores = name, scores

    def score(self, sample):
        value = self.scores[sample.id]
        if value is None:
            raise RuntimeError("the judge said nothing")
        return MetricResult.ok(value, reason=f"given {value}", claims=[{"text": "c", "ok": 1}])


def rows(n: int = 6) -> list[dict]:
    return [
        {
            "id": f"q{i}",
            "user_input": f"question {i}?",
            "response": f"答案 {i}",
            "retrieved_contexts": [f"context {i}"],
            "metadata": {"kind": "multi" if i % 2 else "single"},
        }
        for i in range(n)
    ]


def run(scores: Mapping[str, float | None], name: str = "faithfulness", data=None):
    return evaluate(data or rows(len(scores)), [Given(name, dict(scores))], progress=False)


def test_a_recorded_run_loads_back_equal(store_url: str):
    store = Store(store_url)
    result = run({f"q{i}": i / 10 for i in range(6)})
    info = store.record(result, name="baseline", params={"top_k": 5}, tags=["nightly"])
    assert info.status == "complete" and info.n_samples == 6
    assert info.mean("faithfulness") == pytest.approx(0.25)
    loaded = store.load(info.id)
    assert [s.sample_id for s in loaded] == [s.sample_id for s in result]
    for before, after in zip(result, loaded, strict=True):
        assert after.sample == before.sample
        assert after.scores["faithfulness"] == before.scores["faithfulness"]
    assert loaded.aggregates["faithfulness"] == result.aggregates["faithfulness"]
    assert loaded.breakdowns()["kind"] == result.breakdowns()["kind"]
    again = store.get(info.id)
    assert (again.params, again.tags, again.name) == ({"top_k": 5}, ["nightly"], "baseline")
    assert again.config["dataset"]["fingerprint"] == result.config["dataset"]["fingerprint"]


def test_failures_are_kept_and_the_run_is_marked_partial(store_url: str):
    store = Store(store_url)
    info = store.record(run({"q0": 0.5, "q1": None, "q2": 1.0}))
    assert info.status == "partial"
    loaded = store.load(info.id)
    failed = loaded.samples[1].scores["faithfulness"]
    assert failed.status.value == "failed" and "the judge said nothing" in str(failed.error)
    aggregate = loaded.aggregates["faithfulness"]
    assert (aggregate.n_ok, aggregate.n_failed, aggregate.mean) == (2, 1, 0.75)


def test_results_never_started_are_stored_as_such_and_the_run_is_partial(
    store_url: str, tmp_path: Path
):
    import sqlite3

    from ragmeter import EvaluationResult, Status

    evaluate(rows(3), [Given("faithfulness", {f"q{i}": 0.5 for i in range(3)})], run_dir=tmp_path)
    with sqlite3.connect(tmp_path / "run.db") as db:  # as a run its budget stopped leaves it
        db.execute("DELETE FROM results WHERE idx = 2")
    db.close()
    stopped = EvaluationResult.load(tmp_path)
    store = Store(store_url)
    info = store.record(stopped)
    assert info.status == "partial"
    assert info.aggregates["faithfulness"]["n_not_started"] == 1
    assert info.aggregates["faithfulness"]["n_failed"] == 0
    loaded = store.load(info.id)
    never = loaded.samples[2].scores["faithfulness"]
    assert never.status is Status.NOT_STARTED and "the run stopped" in (never.reason or "")
    aggregate = loaded.aggregates["faithfulness"]
    assert (aggregate.n_ok, aggregate.n_failed, aggregate.n_not_started) == (2, 0, 1)
    assert stopped.store is not None
    stopped.store.close()


def test_runs_are_listed_newest_first_and_found_by_id_prefix_or_name(store_url: str):
    store = Store(store_url)
    first = store.record(run({"q0": 0.1}), name="a", tags=["x"])
    second = store.record(run({"q0": 0.2}), name="b")
    third = store.record(run({"q0": 0.3}), name="a")
    assert [r.id for r in store.list()] == [third.id, second.id, first.id]
    assert [r.id for r in store.list(name="a")] == [third.id, first.id]
    assert [r.id for r in store.list(tag="x")] == [first.id]
    assert store.get(second.id[:8]).id == second.id
    assert store.get("a").id == third.id  # the latest run of that name
    with pytest.raises(RunNotFoundError, match="ragmeter runs list"):
        store.get("nothing-like-it")
    store.annotate(first.id, tags=["keep"], notes="before the reranker")
    assert store.get(first.id).tags == ["x", "keep"]
    assert store.get(first.id).notes == "before the reranker"
    store.delete(second.id)
    assert [r.id for r in store.list()] == [third.id, first.id]


def test_stored_runs_compare_like_fresh_ones(store_url: str):
    store = Store(store_url)
    ids = [f"q{i}" for i in range(30)]
    data = [{"id": i, "user_input": f"{i}?"} for i in ids]
    before = {i: 0.5 + 0.01 * (n % 7) for n, i in enumerate(ids)}
    after = {i: s + 0.1 for i, s in before.items()}
    a = store.record(run(before, data=data))
    b = store.record(run(after, data=data))
    (stored,) = compare(store.load(a.id), store.load(b.id), n_resamples=2000)
    (fresh,) = compare(run(before, data=data), run(after, data=data), n_resamples=2000)
    assert stored.paired and stored.change == "better"
    assert stored.difference == pytest.approx(fresh.difference)
    assert stored.p_value == pytest.approx(fresh.p_value)


def test_concurrent_writers_lose_nothing(store_url: str):
    Store(store_url)  # schema first: the writers below open it concurrently too
    results = [run({f"q{i}": (i + k) / 20 for i in range(5)}) for k in range(6)]
    errors: list[BaseException] = []

    def write(result):
        try:
            Store(store_url).record(result, name="parallel")
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=write, args=(r,)) for r in results]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    stored = Store(store_url).list(name="parallel")
    assert len(stored) == 6
    means = sorted(r.mean("faithfulness") or 0.0 for r in stored)
    assert means == pytest.approx(sorted(r.aggregates["faithfulness"].mean for r in results))
    engine = sa.create_engine(Store(store_url).url)
    with engine.connect() as connection:
        counted = connection.execute(sa.text("SELECT COUNT(*) FROM run_results")).scalar()
    engine.dispose()
    assert counted == 6 * 5


def test_not_a_number_in_details_is_stored_as_null(store_url: str):
    class Odd(Given):
        def score(self, sample):
            return MetricResult.ok(0.5, weights=[float("nan"), 1.0])

    store = Store(store_url)
    info = store.record(evaluate(rows(1), [Odd("odd", {})], progress=False))
    details = store.load(info.id).samples[0].scores["odd"].details
    assert details == {"weights": [None, 1.0]}


def test_details_stored_in_the_old_shape_load_as_typed_records(store_url: str):
    """Rows written before details were typed: multi-hop claims as {"claim": 1, "text": ...},
    faithfulness claims with their verdicts and probabilities."""
    import json

    store = Store(store_url)
    info = store.record(run({"q0": 0.5}, name="multihop_completeness"))
    old = {
        "hops": [{"hop": 1, "used": True, "claims": [1]}, {"hop": 2, "used": False, "claims": []}],
        "claims": [{"claim": 1, "text": "The X200 comes with Buds S."}],
    }
    engine = sa.create_engine(store.url)
    with engine.begin() as connection:
        connection.execute(
            sa.text("UPDATE run_results SET details = :details WHERE run_id = :run_id"),
            {"details": json.dumps(old), "run_id": info.id},
        )
    engine.dispose()
    details = store.load(info.id).samples[0].scores["multihop_completeness"].details
    assert [c.text for c in details.claims] == ["The X200 comes with Buds S."]
    assert [h.used for h in details.hops] == [True, False]


def test_the_git_commit_and_dirty_flag_are_recorded(tmp_path: Path, store_url: str):
    project = tmp_path / "project"
    project.mkdir()
    assert git_state(project) == (None, None)
    git = ["git", "-C", str(project), "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run([*git, "init", "-q"], check=True)
    (project / "pipeline.py").write_text("top_k = 5\n")
    subprocess.run([*git, "add", "pipeline.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "first"], check=True)
    commit = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    store = Store(store_url)
    clean = store.record(run({"q0": 0.5}), project_dir=project)
    assert (clean.git_commit, clean.git_dirty) == (commit, False)
    (project / "pipeline.py").write_text("top_k = 8\n")
    dirty = store.record(run({"q0": 0.5}), project_dir=project)
    assert (dirty.git_commit, dirty.git_dirty) == (commit, True)


def test_the_default_store_is_an_sqlite_file_under_dot_ragmeter(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGMETER_STORE_URL", raising=False)
    store = Store()
    store.record(run({"q0": 1.0}))
    assert (tmp_path / ".ragmeter" / "runs.db").exists()
    monkeypatch.setenv("RAGMETER_STORE_URL", f"sqlite:///{tmp_path / 'team.db'}")
    Store().record(run({"q0": 1.0}))
    assert (tmp_path / "team.db").exists()


def test_a_store_url_that_cannot_be_read_is_refused_without_its_password():
    with pytest.raises(ValueError, match="cannot be read") as caught:
        Store("postgres//dbuser:s3cretdb@127.0.0.1/runs")  # no "://"
    assert "s3cretdb" not in str(caught.value)


def test_a_password_in_the_url_never_shows():
    store = Store("sqlite:///:memory:")
    assert "secret" not in repr(store)
    with pytest.raises(RunNotFoundError) as caught:
        Store("sqlite:///:memory:").get("x")
    assert "secret" not in str(caught.value)


def test_head_revision_is_the_newest_migration() -> None:
    """A current store is opened without Alembic, by comparing its stamp with HEAD_REVISION:
    the constant must name the head of the migration scripts."""
    from importlib import resources

    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from ragmeter.store import _store

    config = Config()
    config.set_main_option("script_location", str(resources.files("ragmeter.store") / "migrations"))
    assert ScriptDirectory.from_config(config).get_current_head() == _store.HEAD_REVISION


def test_a_current_store_opens_without_alembic(tmp_path) -> None:
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    code = (
        "import sys; from ragmeter.store import Store; Store({url!r}); "
        "print('alembic' in sys.modules)"
    )
    first = subprocess.run([sys.executable, "-c", code.format(url=url)], capture_output=True,
                           text=True, check=True)  # fmt: skip
    again = subprocess.run([sys.executable, "-c", code.format(url=url)], capture_output=True,
                           text=True, check=True)  # fmt: skip
    assert first.stdout.strip() == "True"  # a new store is migrated by Alembic
    assert again.stdout.strip() == "False"  # a current one is not


def test_a_run_keeps_the_means_and_intervals_its_samples_give(store_url: str):
    from ragmeter.stats import estimate_means
    from ragmeter.store import ESTIMATE_RESAMPLES

    store = Store(store_url)
    scores: dict[str, float | None] = {f"q{i}": (i * 7 % 10) / 10 for i in range(9)}
    scores["q4"] = None  # a failed result: not in the mean
    result = run(scores)
    info = store.record(result, name="kept")
    expected = estimate_means(result, n_resamples=ESTIMATE_RESAMPLES)["faithfulness"]
    kept = store.get(info.id).estimates
    assert kept == info.estimates
    assert kept is not None and kept["faithfulness"] == {
        "n": expected.n,
        "n_total": expected.n_total,
        "mean": expected.mean,
        "ci": expected.ci.to_dict() if expected.ci else None,
        "n_resamples": ESTIMATE_RESAMPLES,
        "seed": 0,
    }
    assert kept["faithfulness"]["n"] == 8


def test_a_store_from_before_kept_estimates_is_upgraded_and_its_runs_have_none(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    store = Store(url)
    old = store.record(run({"q0": 0.5, "q1": 1.0}), name="old")
    with store.engine.begin() as connection:  # the store as migration 0001 left it
        connection.execute(sa.text("ALTER TABLE runs DROP COLUMN estimates"))
        connection.execute(sa.text("DROP TABLE labels"))  # migration 0003's
        connection.execute(sa.text("UPDATE alembic_version SET version_num = '0001'"))
    store.engine.dispose()
    upgraded = Store(url)
    assert upgraded.get(old.id).estimates is None
    new = upgraded.record(run({"q0": 0.5, "q1": 1.0}), name="new")
    assert upgraded.get(new.id).estimates is not None


KILLED_WRITER = """
import sys
from ragmeter import evaluate
from ragmeter.store import Store
rows = [{"id": f"q{i}", "response": f"a {i}", "reference": f"a {i}"} for i in range(20_000)]
result = evaluate(rows, ["exact_match"], progress=False)
print("recording", flush=True)
Store(sys.argv[1]).record(result, name="killed")
print("recorded", flush=True)
"""


def test_a_kill_while_a_run_is_recorded_leaves_the_store_whole_and_recording_again_works(
    tmp_path: Path,
):
    """kill -9 in the middle of Store.record (one transaction): the store keeps every run
    it had, holds no half run, and the same run records whole afterwards."""
    import os
    import signal
    import sys
    import time

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    Store(url).record(run({"q0": 1.0, "q1": 0.5}), name="before")
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, url], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "recording"
    journal = [tmp_path / "runs.db-journal", tmp_path / "runs.db-wal"]
    deadline = time.monotonic() + 60
    while not any(p.exists() and p.stat().st_size for p in journal) and child.poll() is None:
        assert time.monotonic() < deadline, "the writer never started its transaction"
        time.sleep(0.005)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=60)
    store = Store(url)
    names = [info.name for info in store.list()]
    assert "before" in names
    if "killed" in names:  # the kill came after the commit: the run is whole
        assert len(store.load("killed")) == 20_000
    rows_ = [{"id": f"q{i}", "response": f"a {i}", "reference": f"a {i}"} for i in range(20_000)]
    again = store.record(evaluate(rows_, ["exact_match"], progress=False), name="killed")
    assert len(store.load(again.id)) == 20_000
