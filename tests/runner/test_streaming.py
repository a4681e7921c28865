"""A JSONL path is read, checked and stored a chunk at a time, and scores as if loaded whole."""

import json

import pytest

from ragmeter import DatasetError, EvaluationResult, evaluate, load_dataset
from ragmeter.judge import NullCache
from ragmeter.metrics import get_metric
from ragmeter.results import STORE_FILE, RunDatabase
from tests.metrics.llm import scripts
from tests.runner._fakes import samples

METRICS = ["mrr", "recall@10", "hit@1"]
DOCS = [f"d{k}" for k in range(10)]


def row(i):
    """Sample i: its relevant document at rank i % 12 + 1, or (i % 12 >= 10) not retrieved."""
    return {"id": f"q{i}", "retrieved_context_ids": DOCS, "reference_context_ids": [f"d{i % 12}"]}


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 7 lines and judged samples read 3 at a time, so small files span many."""
    monkeypatch.setattr("ragmeter.dataset._stream.STREAM_CHUNK_SIZE", 7)
    monkeypatch.setattr("ragmeter.runner._evaluate.TODO_CHUNK", 3)


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def good_file(path, n):
    return write(path, [json.dumps(row(i)) for i in range(n)])


def summary(result):
    return {
        "scores": {m: result.scores(m) for m in METRICS},
        "ids": [s.sample_id for s in result],
        "rows": [s.row for s in result],
        "skipped": [(r.row, r.sample_id, [str(p) for p in r.problems]) for r in result.skipped],
        "dataset": {k: v for k, v in result.config["dataset"].items() if k != "source"},
    }


def test_a_streamed_file_scores_as_the_dataset_loaded_whole(tmp_path, small_chunks):
    lines = [json.dumps(row(i)) for i in range(40)]
    lines[6] = json.dumps(row(3))  # line 7: id q3 again, in the next chunk's reach
    lines[7] = json.dumps({"id": "q7", "retrieved_context_ids": DOCS})  # line 8: no reference
    lines[20] = "{not json"  # line 21
    path = write(tmp_path / "data.jsonl", lines)
    streamed = evaluate(str(path), METRICS, skip_invalid=True, run_dir=tmp_path / "run")
    loaded = evaluate(load_dataset(path, skip_invalid=True), METRICS, skip_invalid=True)
    assert summary(streamed) == summary(loaded)

    kept = [i for i in range(40) if i not in (6, 7, 20)]
    assert [s.row for s in streamed] == [i + 1 for i in kept]
    # By hand: the relevant document is at rank i % 12 + 1 when i % 12 < 10.
    assert streamed.scores("mrr") == [1 / (i % 12 + 1) if i % 12 < 10 else 0.0 for i in kept]
    assert streamed.scores("hit@1") == [1.0 if i % 12 == 0 else 0.0 for i in kept]
    assert [(r.row, r.sample_id) for r in streamed.skipped] == [(7, None), (8, "q7"), (21, None)]
    assert "duplicate sample id 'q3' (first seen in row 4)" in str(streamed.skipped[0].problems[0])
    assert streamed.config["dataset"]["n_samples"] == 37
    assert streamed.config["dataset"]["n_skipped"] == 3
    assert streamed.config["dataset"]["source"] == str(path)
    # The run directory holds the same run as the result.
    database = RunDatabase.in_dir(tmp_path / "run", read_only=True)
    assert database.n_samples() == 37
    assert database.samples_at([36, 0]) == [
        (36, "q39", {**row(39), "metadata": {}}),
        (0, "q0", {**row(0), "metadata": {}}),
    ]
    database.close()


def test_judged_metrics_read_their_samples_back_from_the_store(tmp_path, small_chunks):
    path = write(tmp_path / "data.jsonl", [json.dumps(s) for s in samples(8)])
    judge = scripts.judge(cache=NullCache())
    result = evaluate(path, ["faithfulness", "rouge_l"], judge=judge)
    assert len(judge.calls) == 8 * 2  # claims, then their verdicts, per sample
    # The scripted answers support two of the three claims of every sample.
    assert result.scores("faithfulness") == [pytest.approx(2 / 3)] * 8
    assert [s.sample_id for s in result] == [f"case-{i}" for i in range(8)]
    assert [s.sample.metadata["question_type"] for s in result][:4] == [
        "multi_hop",
        "single_hop",
        "single_hop",
        "multi_hop",
    ]


def test_problems_in_every_chunk_are_raised_together_and_no_run_is_left(tmp_path, small_chunks):
    lines = [json.dumps(row(i)) for i in range(30)]
    lines[2] = json.dumps({"id": "q2", "retrieved_context_ids": DOCS})
    lines[15] = "[1"
    lines[28] = json.dumps(row(2))
    path = write(tmp_path / "data.jsonl", lines)
    run_dir = tmp_path / "runs" / "first"
    with pytest.raises(DatasetError) as raised:
        evaluate(path, METRICS, run_dir=run_dir)
    problems = raised.value.problems
    assert [(p.row, p.field) for p in problems] == [
        (3, "reference_context_ids or relevance"),
        (3, "reference_context_ids or relevance"),
        (3, "reference_context_ids or relevance"),
        (16, None),
        (29, "id"),
    ]
    assert "metric 'mrr' needs it" in problems[0].message
    assert problems[4].message == "duplicate sample id 'q2' (first seen in row 3)"
    assert str(raised.value).endswith("to evaluate the valid rows only.")
    assert "The first" not in str(raised.value)
    assert not run_dir.exists()  # made for the run, removed with it
    # Fixed, the same run directory takes the run.
    lines[2], lines[15], lines[28] = json.dumps(row(2)), json.dumps(row(15)), json.dumps(row(28))
    result = evaluate(write(path, lines), METRICS, run_dir=run_dir)
    assert len(result) == 30 and (run_dir / STORE_FILE).exists()


def test_a_folder_that_was_there_is_kept_when_the_data_is_refused(tmp_path):
    path = write(tmp_path / "data.jsonl", ["{"])
    (tmp_path / "run").mkdir()
    with pytest.raises(DatasetError):
        evaluate(path, METRICS, run_dir=tmp_path / "run")
    assert (tmp_path / "run").is_dir() and not (tmp_path / "run" / STORE_FILE).exists()


def test_many_problems_are_counted_and_the_first_ones_listed(tmp_path, monkeypatch):
    monkeypatch.setattr("ragmeter.runner._evaluate.MAX_LISTED_PROBLEMS", 4)
    lines = [json.dumps({"id": f"q{i}", "retrieved_context_ids": DOCS}) for i in range(6)]
    path = write(tmp_path / "data.jsonl", [*lines, "{", json.dumps(row(9))])
    with pytest.raises(DatasetError) as raised:
        evaluate(path, ["mrr"])
    # the first 4, and the first of each other kind (the line that is no JSON): none is lost
    assert [p.row for p in raised.value.problems] == [1, 2, 3, 4, 7]
    text = str(raised.value)
    assert "(The first 4 of 7 problems in 7 rows, and the first of each other kind.)" in text
    assert "needs it, in 6/8 rows (first rows 1, 2, 3, 4; ids 'q0', 'q1'," in text
    assert "row 7: invalid JSON" in text


def test_a_streamed_run_resumes_and_refuses_other_data(tmp_path, small_chunks):
    path = good_file(tmp_path / "data.jsonl", 20)
    run_dir = tmp_path / "run"
    first = evaluate(path, ["mrr"], run_dir=run_dir)
    again = evaluate(path, ["mrr", "hit@1"], run_dir=run_dir, resume=True)
    assert again.scores("mrr") == first.scores("mrr")
    assert again.scores("hit@1") == [1.0 if i % 12 == 0 else 0.0 for i in range(20)]
    assert again.config["dataset"]["fingerprint"] == first.config["dataset"]["fingerprint"]
    lines = path.read_text().splitlines()
    lines[17] = json.dumps({**row(17), "reference_context_ids": ["d0"]})
    with pytest.raises(ValueError, match="dataset differs"):
        evaluate(write(path, lines), ["mrr"], run_dir=run_dir, resume=True)
    assert (run_dir / STORE_FILE).exists()  # a refused resume keeps the run


def test_a_run_started_from_a_loaded_dataset_resumes_from_the_file(tmp_path, small_chunks):
    path = good_file(tmp_path / "data.jsonl", 10)
    evaluate(load_dataset(path), ["mrr"], run_dir=tmp_path / "run")
    result = evaluate(path, ["mrr", "hit@1"], run_dir=tmp_path / "run", resume=True)
    assert result.scores("hit@1") == [1.0] + [0.0] * 9


@pytest.mark.parametrize("resume", [True, False])
def test_a_run_stopped_while_its_data_was_stored_starts_again_in_its_place(tmp_path, resume):
    path = good_file(tmp_path / "data.jsonl", 3)
    RunDatabase.in_dir(tmp_path / "run").close()  # a store that never got its dataset
    result = evaluate(path, ["mrr"], run_dir=tmp_path / "run", resume=resume)
    assert result.scores("mrr") == [1.0, 0.5, 1 / 3]
    assert EvaluationResult.load(tmp_path / "run").scores("mrr") == result.scores("mrr")


def test_a_missing_file_is_refused_before_any_run_is_made(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such dataset file"):
        evaluate(tmp_path / "missing.jsonl", ["mrr"], run_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_new_run_scores_chunks_as_it_stores_them_and_a_resumed_one_reads_back(
    tmp_path, small_chunks, monkeypatch
):
    batches = []
    for name in ("mrr", "hit@1"):  # each metric's public score_column, which sees each batch
        metric_class = type(get_metric(name))
        score_column = metric_class.score_column

        def recorded(metric, batch, context, score_column=score_column):
            batches.append((metric.name, len(batch)))
            return score_column(metric, batch, context)

        monkeypatch.setattr(metric_class, "score_column", recorded)
    path = good_file(tmp_path / "data.jsonl", 30)
    first = evaluate(str(path), ["mrr"], run_dir=tmp_path / "run", batch_size=4)
    # Chunks of 7 lines, each scored in batches of at most 4 as soon as it is stored.
    assert batches == [("mrr", n) for n in [4, 3] * 4 + [2]]
    expected_mrr = [1 / (i % 12 + 1) if i % 12 < 10 else 0.0 for i in range(30)]
    assert first.scores("mrr") == expected_mrr
    batches.clear()
    again = evaluate(
        str(path), ["mrr", "hit@1"], run_dir=tmp_path / "run", resume=True, batch_size=4
    )
    # Resumed: only the new metric is missing, its samples read back 4 at a time; mrr is
    # not computed again.
    assert batches == [("hit@1", n) for n in [4] * 7 + [2]]
    assert again.scores("hit@1") == [1.0 if i % 12 == 0 else 0.0 for i in range(30)]
    assert again.scores("mrr") == expected_mrr
