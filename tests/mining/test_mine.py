"""``mine()`` on questions whose vectors are built by hand (see corpus.py)."""

from __future__ import annotations

import csv
import itertools
import json

import pytest

from ragmeter.dataset import Dataset, Sample, load_dataset
from ragmeter.metrics import Direction, MetricResult
from ragmeter.mining import LABEL_COLUMNS, mine
from ragmeter.results import EvaluationResult, MetricInfo, SampleResult
from ragmeter.testing import ScriptedEmbeddings
from tests.mining import corpus
from tests.mining.corpus import NEAR_DUPLICATE, SAME_TEXT, cosine, question, topic_of

STAMP = "2026-06-01T12:00:00+00:00"


def run_of(scores: dict[str, float | None], *, metric: str = "quality") -> EvaluationResult:
    """A run of the corpus' samples with one metric: ``None`` is a failed result, ids not in
    ``scores`` score 0.9."""
    samples = []
    for index, record in enumerate(corpus.records()):
        value = scores.get(record["id"], 0.9)
        result = MetricResult.failed("judge error") if value is None else MetricResult.ok(value)
        samples.append(
            SampleResult(index, index + 1, record["id"], Sample(**record), {metric: result})
        )
    return EvaluationResult(samples, [MetricInfo(metric, Direction.HIGHER_IS_BETTER)])


def test_near_duplicates_are_removed_counted_and_credited_to_the_kept_question():
    result = mine(corpus.records(extra=True), 25, embeddings=corpus.embeddings(), keep="first")
    # 22 samples: the reworded t0 q0 (cosine 0.9993) and "T1  Q1?" (same text as t1 q1) go.
    assert (result.n_samples, result.n_same_text, result.n_similar) == (22, 1, 1)
    assert result.n_candidates == 20
    texts = [r["user_input"] for r in result.records]
    assert len(texts) == 20 and NEAR_DUPLICATE not in texts and SAME_TEXT not in texts
    # no two share the same-question key: mined again, none is the same text as another
    again = mine(result.records, 20, embeddings=corpus.embeddings(), dedupe=1.0)
    assert (again.n_samples, again.n_same_text, again.n_candidates) == (20, 0, 20)
    assert max(cosine(a, b) for a, b in itertools.combinations(texts, 2)) < 0.95
    duplicates = {r["id"]: r["metadata"]["mined_duplicates"] for r in result.records}
    assert duplicates["s-t0-q0"] == 1 and duplicates["s-t1-q1"] == 1
    assert sum(duplicates.values()) == 2


def test_the_most_recent_of_near_duplicates_is_kept_when_samples_have_times():
    rows = corpus.records(extra=True)
    for row in rows:
        row.setdefault("metadata", {})["timestamp"] = "2026-05-01T08:00:00Z"
    rows[-2]["metadata"]["timestamp"] = "2026-05-03T08:00:00Z"  # the reworded t0 q0, later
    result = mine(rows, 25, embeddings=corpus.embeddings())
    ids = {r["id"] for r in result.records}
    assert "dup-near" in ids and "s-t0-q0" not in ids
    assert result.kept == "latest"
    first = mine(rows, 25, embeddings=corpus.embeddings(), keep="first")
    assert "s-t0-q0" in {r["id"] for r in first.records}


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_every_cluster_is_covered_nearest_to_its_centre_first(seed):
    result = mine(corpus.records(), 4, embeddings=corpus.embeddings(), clusters=4, seed=seed)
    # One pick per topic; q2 (offset 0.5, the smallest) lies nearest each topic's centre.
    assert sorted(r["user_input"] for r in result.records) == [
        "t0 q2",
        "t1 q2",
        "t2 q2",
        "t3 q2",
    ]
    assert result.cluster_sizes == [8, 4, 4, 4]
    assert result.clusters_covered == 4
    assert all(r["metadata"]["mined_because"] == "cluster" for r in result.records)


def test_picks_follow_the_cluster_sizes_beyond_coverage():
    result = mine(corpus.records(), 10, embeddings=corpus.embeddings(), clusters=4)
    per_topic = [0, 0, 0, 0]
    for record in result.records:
        per_topic[topic_of(record["user_input"])] += 1
    # 10 picks over topics of 8, 4, 4, 4 questions (of 20): 4, 2, 2, 2.
    assert per_topic == [4, 2, 2, 2]
    topic0 = [r["user_input"] for r in result.records if topic_of(r["user_input"]) == 0]
    # nearest the centre first: the smallest offsets 0.5 (q2), 0.6 (q4), 0.7 (q3), 0.75 (q7)
    assert topic0 == ["t0 q2", "t0 q4", "t0 q3", "t0 q7"]


def test_default_cluster_count_is_the_square_root_of_the_candidates():
    result = mine(corpus.records(), 10, embeddings=corpus.embeddings())
    assert len(result.cluster_sizes) == 4  # round(sqrt(20)) = 4, below the 10 picks
    assert result.clusters_covered == 4
    small = mine(corpus.records(), 2, embeddings=corpus.embeddings())
    assert len(small.cluster_sizes) == 2  # never more clusters than picks


def test_the_worst_scored_are_over_sampled_and_failures_are_not_worst():
    low = {"s-t0-q5": 0.1, "s-t1-q3": 0.15, "s-t2-q0": 0.2, "s-t3-q1": 0.3}
    failed = {"s-t0-q1": None, "s-t2-q3": None}
    result = mine(
        corpus.records(),
        10,
        scores=run_of({**low, **failed}),
        embeddings=corpus.embeddings(),
        clusters=4,
    )
    worst = [r["id"] for r in result.records if r["metadata"]["mined_because"] == "worst_scored"]
    # worst_share 0.3 of 10 picks: the three lowest of the 18 scored samples.
    assert worst == ["s-t0-q5", "s-t1-q3", "s-t2-q0"]
    assert result.n_scored == 18
    picked_low = [r["id"] for r in result.records if r["id"] in low]
    share_in_data, share_in_picks = len(low) / 20, len(picked_low) / 10
    assert share_in_data == 0.2 and share_in_picks >= 0.3
    scored = {r["id"]: r["metadata"].get("mined_score") for r in result.records}
    assert scored["s-t0-q5"] == 0.1
    assert all(scored[i] is None for i in failed if i in scored)
    assert result.clusters_covered == 4


def test_scores_are_read_from_a_run_directory(tmp_path):
    run_of({"s-t3-q3": 0.05}).save(tmp_path / "run")
    result = mine(corpus.records(), 5, scores=tmp_path / "run", embeddings=corpus.embeddings())
    assert result.records[0]["id"] == "s-t3-q3"  # 0.3 * 5 = 1.5 -> 2 worst, lowest first
    assert result.counts == {"worst_scored": 2, "novel": 0, "cluster": 3}


def test_a_run_of_other_samples_is_refused():
    other = EvaluationResult(
        [SampleResult(0, 1, "x", Sample(user_input="x"), {"quality": MetricResult.ok(1.0)})],
        [MetricInfo("quality", Direction.HIGHER_IS_BETTER)],
    )
    with pytest.raises(ValueError, match="no score for any of the samples"):
        mine(corpus.records(), 5, scores=other, embeddings=corpus.embeddings())


def test_novel_questions_are_preferred_and_known_ones_left_out():
    golden = [{"id": f"g{t}", "user_input": question(t, 0), "reference": "r"} for t in (0, 1, 2)]
    result = mine(corpus.records(), 10, golden=golden, embeddings=corpus.embeddings(), clusters=4)
    assert result.n_in_golden == 3  # t0 q0, t1 q0, t2 q0 are in the golden set already
    novel = [r for r in result.records if r["metadata"]["mined_because"] == "novel"]
    # novel_share 0.2 of 10: two picks, from topic 3, the one topic with no golden question
    # (cosine 0 with all of it; every other question has one above 0.6 with its topic's).
    assert [r["user_input"] for r in novel] == ["t3 q0", "t3 q1"]
    assert all(r["metadata"]["mined_nearest_golden"] == 0.0 for r in novel)
    assert not {question(t, 0) for t in (0, 1, 2)} & {r["user_input"] for r in result.records}
    t0 = next(r for r in result.records if r["user_input"] == "t0 q2")
    assert t0["metadata"]["mined_nearest_golden"] == pytest.approx(cosine("t0 q2", "t0 q0"), 1e-3)


def test_the_labelling_file_has_its_exact_shape(tmp_path):
    out = tmp_path / "to_label.jsonl"
    result = mine(
        corpus.records(),
        1,
        scores=run_of({"s-t2-q1": 0.25}),
        worst_share=1.0,  # the one pick goes to the worst-scored
        embeddings=corpus.embeddings(),
        mined_at=STAMP,
        output=out,
    )
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows == result.records
    assert rows == [
        {
            "id": "s-t2-q1",
            "user_input": "t2 q1",
            "response": "answer 2.1",
            "retrieved_contexts": ["context 2.1"],
            "retrieved_context_ids": ["doc-2-1"],
            "reference": "",
            "reference_context_ids": [],
            "label": "",
            "reason": "",
            "metadata": {
                "trace_id": "trace-2-1",
                "user": "u1",
                "source": "production",
                "original_id": "s-t2-q1",
                "mined_at": STAMP,
                "mined_because": "worst_scored",
                "mined_cluster": rows[0]["metadata"]["mined_cluster"],
                "mined_duplicates": 0,
                "mined_score": 0.25,
                "mined_scores": {"quality": 0.25},
            },
        }
    ]
    assert list(rows[0]) == list(LABEL_COLUMNS)
    loaded = load_dataset(out)  # the file is a dataset; label and reason land in metadata
    assert loaded[0].reference == "" and loaded[0].metadata["label"] == ""


def test_the_csv_labelling_file_keeps_empty_texts_and_lists(tmp_path):
    out = tmp_path / "to_label.csv"
    mine(corpus.records(), 2, embeddings=corpus.embeddings(), mined_at=STAMP, output=out)
    with out.open(encoding="utf-8", newline="") as handle:
        table = list(csv.reader(handle))
    assert table[0] == list(LABEL_COLUMNS)
    assert len(table) == 3
    loaded = load_dataset(out)
    for sample in loaded:
        assert sample.reference == ""
        assert sample.reference_context_ids == []
        assert sample.metadata["label"] == "" and sample.metadata["reason"] == ""
        assert sample.metadata["source"] == "production"
        assert sample.retrieved_context_ids and sample.retrieved_context_ids[0].startswith("doc-")


def test_samples_without_an_id_get_a_stable_one_and_rows_without_a_question_are_counted():
    rows = [{"user_input": question(1, v)} for v in range(4)] + [{"response": "no question"}]
    first = mine(rows, 2, embeddings=corpus.embeddings())
    again = mine(Dataset.from_records(rows), 2, embeddings=corpus.embeddings())
    assert first.n_without_question == 1
    assert [r["id"] for r in first.records] == [r["id"] for r in again.records]
    assert all(r["id"].startswith("prod-") for r in first.records)
    assert first.records[0]["metadata"]["original_id"].startswith("row-")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"n": 0}, "n must be at least 1"),
        ({"worst_share": 1.5}, "worst_share must be between 0 and 1"),
        ({"dedupe": 0}, "dedupe must be"),
        ({"clusters": 0}, "clusters must be"),
        ({"output": "x.txt"}, "ending in .jsonl"),
    ],
)
def test_bad_options_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        mine(corpus.records(), **{"embeddings": corpus.embeddings(), **options})


def test_shares_above_one_together_are_refused_only_when_both_apply():
    with pytest.raises(ValueError, match="worst_share \\+ novel_share must be at most 1"):
        mine(
            corpus.records(),
            scores=run_of({}),
            golden=[{"user_input": "t0 q0"}],
            worst_share=0.9,
            novel_share=0.2,
            embeddings=corpus.embeddings(),
        )
    alone = mine(corpus.records(), 2, scores=run_of({}), worst_share=1.0, novel_share=0.5,
                 embeddings=corpus.embeddings())  # fmt: skip
    assert alone.counts["worst_scored"] == 2


def test_kmeans_finds_well_separated_groups_whatever_the_seed():
    points = [[1.0, 0.0], [0.99, 0.1], [0.98, -0.1], [0.0, 1.0], [0.1, 0.99], [-0.1, 0.98]]
    questions = [f"question {i}?" for i in range(6)]
    rows = [{"id": f"s{i}", "user_input": q} for i, q in enumerate(questions)]
    vectors = ScriptedEmbeddings(dict(zip(questions, points, strict=True)), dimension=2)
    for seed in range(5):  # dedupe 1.0: no two of them are near-duplicates
        result = mine(rows, 6, embeddings=vectors, clusters=2, seed=seed, dedupe=1.0)
        cluster = {r["id"]: r["metadata"]["mined_cluster"] for r in result.records}
        labels = [cluster[f"s{i}"] for i in range(6)]
        assert len(set(labels[:3])) == 1 and len(set(labels[3:])) == 1
        assert labels[0] != labels[3]


def test_nothing_left_to_pick_writes_an_empty_file_and_says_why(tmp_path):
    out = tmp_path / "to_label.jsonl"
    golden = corpus.records()  # every question is already in the golden set
    result = mine(corpus.records(), 5, golden=golden, embeddings=corpus.embeddings(), output=out)
    assert result.picks == [] and result.n_in_golden == 20
    assert out.read_text(encoding="utf-8") == ""
    assert "no question left to pick" in result.notes
    few = mine(corpus.records()[:3], 5, embeddings=corpus.embeddings())
    assert len(few.picks) == 3
    assert "5 asked for, 3 distinct questions to pick from: all picked" in few.notes


def test_a_source_tag_of_the_sample_is_kept_as_trace_source():
    rows = corpus.records()[:1]
    rows[0]["metadata"]["source"] = "langfuse"
    metadata = mine(rows, 1, embeddings=corpus.embeddings()).records[0]["metadata"]
    assert (metadata["source"], metadata["trace_source"]) == ("production", "langfuse")
