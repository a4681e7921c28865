"""@experiment: a pipeline run over a dataset with a concurrency limit, timeouts and retries,
every sample kept in dataset order, the outputs evaluated and the run stored."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ragmeter import DatasetError, Sample, Status
from ragmeter.experiments import ExperimentResult, experiment
from ragmeter.metrics import UnknownMetricError
from ragmeter.stats import compare
from ragmeter.store import Store
from tests.metrics.llm import scripts

#: Document ids retrieved for every question, best first; d1 and d2 are the relevant ones.
RANKING = ["d1", "x", "d2", "y"]


def rows(n: int = 4) -> list[dict[str, Any]]:
    return [
        {
            "id": f"q{i}",
            "user_input": f"question {i}?",
            "reference": f"answer {i}",
            "reference_context_ids": ["d1", "d2"],
            "metadata": {"kind": "odd" if i % 2 else "even"},
        }
        for i in range(n)
    ]


def answer(sample: Sample, top_k: int = 2) -> dict[str, Any]:
    """A deterministic pipeline: the right answer, the ranking cut at ``top_k``."""
    assert sample.id is not None
    return {
        "response": f"answer {sample.id[1:]}",
        "retrieved_context_ids": RANKING[:top_k],
        "retrieved_contexts": [f"text of {d}" for d in RANKING[:top_k]],
    }


FAST: dict[str, Any] = {"backoff_s": 0.0, "store": False}


class InFlight:
    """Counts the calls running at once, from any thread."""

    def __init__(self) -> None:
        self.now = self.max = 0
        self.lock = threading.Lock()

    def __enter__(self) -> None:
        with self.lock:
            self.now += 1
            self.max = max(self.max, self.now)

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            self.now -= 1


# -- running the pipeline -----------------------------------------------------------------


def test_a_sync_pipeline_is_run_on_every_sample_and_its_outputs_evaluated():
    seen: list[tuple[str | None, int]] = []

    @experiment(rows(), ["exact_match", "recall@3"], params={"model": "m1"}, **FAST)
    def rag(sample: Sample, top_k: int = 2) -> dict[str, Any]:
        seen.append((sample.id, top_k))
        return answer(sample, top_k)

    out = rag.run()
    assert isinstance(out, ExperimentResult)
    assert sorted(seen) == [(f"q{i}", 2) for i in range(4)]
    assert out.params == {"top_k": 2, "model": "m1"}
    assert [s.sample_id for s in out] == ["q0", "q1", "q2", "q3"]
    assert out.aggregates["exact_match"].mean == 1.0
    assert out.aggregates["recall@3"].mean == 0.5  # d2 is third: cut off at top_k=2
    first = out.result.samples[0]
    assert first.sample.response == "answer 0" and first.sample.reference == "answer 0"
    assert first.sample.metadata == {"kind": "even"}
    assert out.pipeline[0]["outputs"]["retrieved_context_ids"] == ["d1", "x"]
    assert out.pipeline[0]["attempts"] == 1 and out.pipeline[0]["error"] is None
    assert out.latency["n"] == 4 and out.latency["p50"] is not None
    assert out.failed == [] and out.run is None


def test_an_async_pipeline_is_awaited_and_a_str_is_the_response():
    @experiment(rows(3), ["exact_match"], **FAST)
    async def rag(sample: Sample) -> str:
        await asyncio.sleep(0)
        return "answer 1"

    out = rag.run()
    assert out.result.scores("exact_match") == [0.0, 1.0, 0.0]
    assert out.pipeline[1]["outputs"] == {"response": "answer 1"}


def test_the_decorated_function_still_answers_one_sample():
    @experiment(rows(), ["exact_match"], **FAST)
    def rag(sample: Sample, top_k: int = 2) -> dict[str, Any]:
        return answer(sample, top_k)

    @experiment(rows(), ["exact_match"], **FAST)
    async def arag(sample: Sample) -> str:
        return f"async {sample.id}"

    assert rag(Sample(id="q7"), top_k=1)["retrieved_context_ids"] == ["d1"]
    assert rag.__name__ == "rag" and rag.__wrapped__ is not None
    assert asyncio.run(arag(Sample(id="q7"))) == "async q7"


def test_experiment_can_wrap_a_function_without_decorator_syntax_and_arun_awaits():
    declared = experiment(rows(2), ["exact_match"], name="plain", **FAST)(answer)
    assert declared.run().aggregates["exact_match"].mean == 1.0
    out = asyncio.run(declared.arun(top_k=1))
    assert out.name == "plain" and out.params == {"top_k": 1}
    assert out.pipeline[0]["outputs"]["retrieved_context_ids"] == ["d1"]


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_no_more_calls_run_at_once_than_the_concurrency_limit(kind: str):
    counter = InFlight()

    def slow_sync(sample: Sample) -> str:
        with counter:
            time.sleep(0.05)
        return "a"

    async def slow_async(sample: Sample) -> str:
        with counter:
            await asyncio.sleep(0.05)
        return "a"

    pipeline = slow_sync if kind == "sync" else slow_async
    out = experiment(rows(12), ["exact_match"], concurrency=3, **FAST)(pipeline).run()
    assert len(out) == 12 and out.failed == []
    assert counter.max == 3  # the limit is used, never exceeded


def test_results_are_in_dataset_order_when_later_samples_finish_first():
    finished: list[str] = []

    async def rag(sample: Sample) -> str:
        assert sample.id is not None
        await asyncio.sleep(0.03 * (8 - int(sample.id[1:])))
        finished.append(sample.id)
        return f"answer {sample.id[1:]}"

    out = experiment(rows(8), ["exact_match"], concurrency=8, **FAST)(rag).run()
    assert finished == [f"q{i}" for i in reversed(range(8))]
    assert [s.sample_id for s in out] == [f"q{i}" for i in range(8)]
    assert [r["id"] for r in out.pipeline] == [f"q{i}" for i in range(8)]
    assert [s.sample.response for s in out] == [f"answer {i}" for i in range(8)]


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_call_that_times_out_is_retried_and_its_attempts_recorded(kind: str):
    tries: dict[str, int] = {}
    lock = threading.Lock()

    def attempt(sample: Sample) -> int:
        with lock:
            tries[str(sample.id)] = tries.get(str(sample.id), 0) + 1
            return tries[str(sample.id)]

    def sync_rag(sample: Sample) -> str:
        if sample.id == "q1" and attempt(sample) == 1:
            time.sleep(3.0)
        return "answer 1"

    async def async_rag(sample: Sample) -> str:
        if sample.id == "q1" and attempt(sample) == 1:
            await asyncio.sleep(3.0)
        return "answer 1"

    rag = sync_rag if kind == "sync" else async_rag
    started = time.perf_counter()
    out = experiment(rows(3), ["exact_match"], timeout_s=0.2, retries=2, **FAST)(rag).run()
    assert time.perf_counter() - started < 2.0  # the 3 s attempt was not waited for
    record = out.pipeline[1]
    assert record["attempts"] == 2 and record["ok"] is True
    assert record["attempt_errors"] == ["TimeoutError: no result within 0.2 s"]
    assert record["latency_s"] < 0.2  # the successful attempt's, not the total
    assert out.result.scores("exact_match")[1] == 1.0
    assert out.pipeline[0]["attempts"] == 1 and "attempt_errors" not in out.pipeline[0]


def test_retries_wait_longer_each_time():
    calls: list[float] = []

    def rag(sample: Sample) -> str:
        calls.append(time.perf_counter())
        raise ConnectionError("backend down")

    out = experiment(rows(1), ["exact_match"], retries=2, backoff_s=0.05, store=False)(rag).run()
    assert out.pipeline[0]["attempts"] == 3
    first_wait, second_wait = calls[1] - calls[0], calls[2] - calls[1]
    assert first_wait >= 0.05 and second_wait >= 0.1


def test_a_sample_that_always_fails_is_kept_failed_and_counted():
    def rag(sample: Sample) -> dict[str, Any]:
        if sample.id == "q2":
            raise ConnectionError("backend down")
        return answer(sample)

    out = experiment(rows(4), ["exact_match", "recall@2"], retries=2, **FAST)(rag).run()
    assert out.failed == ["q2"]
    assert [s.sample_id for s in out] == ["q0", "q1", "q2", "q3"]
    record = out.pipeline[2]
    assert record["ok"] is False and record["attempts"] == 3 and record["outputs"] is None
    assert record["error"] == {"type": "ConnectionError", "message": "backend down"}
    assert len(record["attempt_errors"]) == 3
    failed = out.result.samples[2]
    assert failed.sample.user_input == "question 2?" and failed.sample.response is None
    for name in ("exact_match", "recall@2"):
        score = failed.scores[name]
        assert score.status is Status.FAILED
        assert score.error == "pipeline failed: ConnectionError after 3 attempts: backend down"
        aggregate = out.aggregates[name]
        assert (aggregate.n_total, aggregate.n_ok, aggregate.n_failed) == (4, 3, 1)
        assert aggregate.coverage == 0.75
    assert out.latency["n"] == 3


def test_a_call_that_always_times_out_fails_with_a_timeout():
    async def rag(sample: Sample) -> str:
        await asyncio.sleep(5)
        return "never"

    out = experiment(rows(1), ["exact_match"], timeout_s=0.05, retries=1, **FAST)(rag).run()
    assert out.pipeline[0]["error"] == {
        "type": "TimeoutError",
        "message": "no result within 0.05 s",
    }
    assert out.result.samples[0].scores["exact_match"].error == (
        "pipeline failed: TimeoutError after 2 attempts: no result within 0.05 s"
    )


# -- what the pipeline returns ------------------------------------------------------------


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (42, "sample 'q1': the pipeline returned int 42, which holds none of response"),
        ({"answer": 7}, "sample 'q1': the pipeline returned a dict with keys ['answer']"),
        ({"response": 3}, "sample 'q1': response must be a str, got int 3"),
        (
            {"response": "a", "retrieved_contexts": "one text"},
            "sample 'q1': retrieved_contexts must be a list of strings in rank order, got str",
        ),
        (
            {"retrieved_context_ids": [1.5]},
            "sample 'q1': retrieved_context_ids must be a list of ids (str or int)",
        ),
        (
            {"retrieved_contexts": ["a", "b"], "retrieved_context_ids": ["d1"]},
            "sample 'q1': retrieved_context_ids: 1 ids for 2 retrieved_contexts",
        ),
    ],
)
def test_a_wrong_return_value_fails_that_sample_with_a_clear_error(returned: Any, message: str):
    def rag(sample: Sample) -> Any:
        return returned if sample.id == "q1" else answer(sample)

    out = experiment(rows(3), ["exact_match"], retries=3, **FAST)(rag).run()
    assert out.failed == ["q1"]
    record = out.pipeline[1]
    assert record["error"]["type"] == "PipelineOutputError"
    assert record["error"]["message"].startswith(message)
    assert record["attempts"] == 1  # the same code returns the same wrong value: no retry
    error = out.result.samples[1].scores["exact_match"].error
    assert error is not None
    assert error.startswith("pipeline failed: PipelineOutputError after 1 attempt: " + message)
    assert out.result.scores("exact_match") == [1.0, None, 1.0]


def test_an_object_with_output_attributes_is_read_and_extra_keys_are_kept():
    class Answer:
        response = "answer 0"
        retrieved_context_ids = ("d1", 2)

    def rag(sample: Sample) -> Any:
        return Answer() if sample.id == "q0" else {**answer(sample), "tokens": 12}

    out = experiment(rows(2), ["exact_match", "recall@2"], **FAST)(rag).run()
    assert out.pipeline[0]["outputs"] == {
        "response": "answer 0",
        "retrieved_context_ids": ["d1", 2],
    }
    assert out.result.samples[0].sample.retrieved_context_ids == ["d1", "2"]
    assert out.pipeline[1]["extra"] == {"tokens": 12}
    assert out.result.scores("recall@2") == [0.5, 0.5]


def test_a_chain_style_dict_is_read_by_its_usual_keys():
    returned = {
        "q0": {"input": "question 0?", "output": "answer 0"},
        "q1": {"result": "answer 1", "source_documents": "not documents", "text": "ignored"},
        "q2": {"response": "answer 2", "answer": "kept as extra"},
    }

    def rag(sample: Sample) -> Any:
        return returned[str(sample.id)]

    out = experiment(rows(3), ["exact_match"], **FAST)(rag).run()
    assert out.result.scores("exact_match") == [1.0, 1.0, 1.0]
    assert [r["outputs"] for r in out.pipeline] == [{"response": f"answer {i}"} for i in range(3)]
    assert [r["extra"] for r in out.pipeline] == [
        {"input": "question 0?"},
        {"source_documents": "not documents", "text": "ignored"},
        {"answer": "kept as extra"},
    ]


def test_a_field_the_pipeline_does_not_return_fails_only_the_metrics_needing_it():
    data = [{**row, "response": "stale", "retrieved_context_ids": ["d1", "d2"]} for row in rows(2)]

    def rag(sample: Sample) -> str:
        return "answer 0" if sample.id == "q0" else "wrong"

    out = experiment(data, ["exact_match", "recall@2"], **FAST)(rag).run()
    assert out.result.scores("exact_match") == [1.0, 0.0]  # the pipeline's, not "stale"
    for sample in out:  # the dataset's ids are not the pipeline's retrieval
        score = sample.scores["recall@2"]
        assert score.status is Status.FAILED
        assert score.error == (
            "missing field(s): retrieved_context_ids (the pipeline did not return it)"
        )
        assert sample.sample.retrieved_context_ids is None


def test_a_missing_input_is_reported_before_any_pipeline_call():
    calls: list[str | None] = []

    def rag(sample: Sample) -> str:
        calls.append(sample.id)
        return "a"

    data = [{"id": "q0", "user_input": "?"}]
    with pytest.raises(DatasetError, match=r"'reference'.*exact_match"):
        experiment(data, ["exact_match"], **FAST)(rag).run()
    assert calls == []
    skipped = experiment(data, ["exact_match"], skip_invalid=True, **FAST)(rag).run()
    assert len(skipped) == 0 and [r.sample_id for r in skipped.result.skipped] == ["q0"]


def test_judged_metrics_score_the_outputs_and_the_run_records_the_judge(store_url: str):
    data = [{"id": f"s{i}", "user_input": scripts.QUESTION} for i in range(3)]

    def rag(sample: Sample) -> dict[str, Any]:
        if sample.id == "s1":
            raise RuntimeError("model overloaded")
        if sample.id == "s2":
            return {"response": scripts.RESPONSE}  # no contexts: faithfulness cannot apply
        return {"response": scripts.RESPONSE, "retrieved_contexts": scripts.CONTEXTS}

    judge = scripts.judge()
    out = experiment(data, ["faithfulness"], judge=judge, retries=0, backoff_s=0, store=store_url)(
        rag
    ).run()
    assert out.result.scores("faithfulness") == [pytest.approx(2 / 3), None, None]
    errors = [s.scores["faithfulness"].error for s in out]
    assert errors[1] == "pipeline failed: RuntimeError after 1 attempt: model overloaded"
    assert errors[2] is not None and "retrieved_contexts" in errors[2]
    assert out.result.config["judges"] == {"faithfulness": judge.describe()}
    assert out.result.config["usage"]["calls"] == len(judge.calls) > 0
    assert out.run is not None and out.run.config["judges"] == out.result.config["judges"]


# -- parameters and the store ---------------------------------------------------------------


def test_params_reach_the_pipeline_and_overrides_are_recorded_and_comparable(store_url: str):
    store = Store(store_url)
    seen: list[int] = []

    @experiment(rows(6), ["recall@3"], params={"model": "m1"}, tags=["nightly"], store=store)
    def rag(sample: Sample, top_k: int = 1, *, model: str = "none") -> dict[str, Any]:
        assert model == "m1"
        seen.append(top_k)
        return answer(sample, top_k)

    baseline = rag.run()
    candidate = rag.run(top_k=3)
    assert sorted(set(seen)) == [1, 3]
    assert baseline.run is not None and candidate.run is not None
    listed = {info.id: info for info in store.list(name="rag")}
    assert listed[baseline.run.id].params == {"top_k": 1, "model": "m1"}
    assert listed[candidate.run.id].params == {"top_k": 3, "model": "m1"}
    assert listed[baseline.run.id].tags == ["nightly"]
    assert listed[baseline.run.id].dataset_hash == listed[candidate.run.id].dataset_hash
    assert listed[candidate.run.id].config["experiment"]["params"] == {"top_k": 3, "model": "m1"}
    (change,) = compare(store.load(baseline.run.id), store.load(candidate.run.id))
    assert change.paired and change.difference == pytest.approx(0.5)
    assert (change.baseline_mean, change.candidate_mean) == (0.5, 1.0)


def test_an_unknown_override_is_refused():
    @experiment(rows(), ["exact_match"], params={"model": "m1"}, **FAST)
    def rag(sample: Sample, top_k: int = 2) -> str:
        return "a"

    with pytest.raises(TypeError, match=r"no parameter 'topk'.*known: \['model', 'top_k'\]"):
        rag.run(topk=8)
    assert rag.params(model="m2") == {"top_k": 2, "model": "m2"}  # declared, even if not taken


def test_a_stored_run_loads_back_with_its_pipeline_outputs(store_url: str):
    def rag(sample: Sample) -> Any:
        if sample.id == "q3":
            raise ValueError("no index")
        return answer(sample)

    out = experiment(
        rows(4), ["exact_match", "recall@2"], name="retrieval-v2", notes="first try",
        store=store_url, backoff_s=0,
    )(rag).run()  # fmt: skip
    assert out.run is not None and out.run.status == "partial" and out.run.name == "retrieval-v2"
    store = Store(store_url)
    loaded = store.load(out.run.id)
    assert [s.sample_id for s in loaded] == ["q0", "q1", "q2", "q3"]
    for before, after in zip(out, loaded, strict=True):
        assert after.sample == before.sample and after.scores == before.scores
    assert loaded.aggregates == out.aggregates
    assert loaded.aggregates["exact_match"].n_failed == 1
    assert store.pipeline_outputs(out.run.id) == out.pipeline
    assert store.get(out.run.id).notes == "first try"


def test_the_default_store_is_the_configured_one(store_url: str, monkeypatch):
    monkeypatch.setenv("RAGMETER_STORE_URL", store_url)
    out = experiment(rows(2), ["exact_match"])(answer).run()
    assert out.run is not None
    assert [info.id for info in Store(store_url).list()] == [out.run.id]


def test_store_false_records_nothing(tmp_path: Path, monkeypatch):
    database = tmp_path / "runs.db"
    monkeypatch.setenv("RAGMETER_STORE_URL", f"sqlite:///{database}")
    monkeypatch.chdir(tmp_path)
    out = experiment(rows(2), ["exact_match"], store=False)(answer).run()
    assert out.run is None and len(out) == 2
    assert not database.exists() and not (tmp_path / ".ragmeter").exists()


# -- declaring ------------------------------------------------------------------------------


def test_bad_settings_are_refused_when_declared():
    with pytest.raises(TypeError, match=r"unexpected option.*'run_dir'"):
        experiment(rows(), ["exact_match"], run_dir="somewhere")
    with pytest.raises(ValueError, match="concurrency must be at least 1"):
        experiment(rows(), ["exact_match"], concurrency=0)
    with pytest.raises(ValueError, match="timeout_s must be positive"):
        experiment(rows(), ["exact_match"], timeout_s=0)
    with pytest.raises(UnknownMetricError):
        experiment(rows(), ["exact_macth"])


def test_the_public_name_is_the_decorator_whatever_was_imported_first():
    code = (
        "import ragmeter.experiments, ragmeter;"
        "print(ragmeter.experiment is ragmeter.experiments.experiment,"
        " ragmeter.ExperimentResult is ragmeter.experiments.ExperimentResult)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]
