"""``align()`` end to end with Python-defined metrics: agreement, coverage, disagreements, and
few-shot improvement measured on a held-out split that no example comes from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter import Metric, MetricResult, Sample
from ragmeter.align import (
    AlignmentReport,
    SupportsExamples,
    accuracy,
    align,
    cohen_kappa,
    pearson,
    spearman,
)
from ragmeter.metrics import Requirements

# Human labels by the first word of the response. The metric below gets "meh" wrong until it
# is shown an example of it.
HUMAN = {"good": "pass", "bad": "fail", "meh": "fail"}


def labelled_rows(per_word: int = 8) -> list[dict[str, Any]]:
    rows = []
    for i in range(per_word):
        for word in ("good", "bad", "meh"):
            rows.append(
                {
                    "id": f"{word}-{i}",
                    "user_input": f"question {word} {i}?",
                    "response": f"{word} answer {i}",
                    "label": HUMAN[word],
                    "reason": f"a {word} answer",
                    "metadata": {"topic": "t"},
                }
            )
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


class Verdict(Metric):
    """pass / fail by the response's first word; learns words from its examples."""

    name = "verdict"
    kind = "discrete"
    requires: Requirements = (("response",),)

    def __init__(self, examples: list[dict[str, Any]] | None = None) -> None:
        self.examples = list(examples or [])
        self.seen: list[str] = []
        self.improved: list[Verdict] = []

    def learned(self) -> dict[str, str]:
        return {e["response"].split()[0]: e["label"] for e in self.examples}

    def verdict(self, sample: Sample) -> str:
        word = str(sample.response).split()[0]
        return self.learned().get(word, "fail" if word == "bad" else "pass")

    def score(self, sample: Sample) -> MetricResult:
        assert "label" not in sample.metadata and "reason" not in sample.metadata
        self.seen.append(str(sample.id))
        label = self.verdict(sample)
        return MetricResult.ok(
            1.0 if label == "pass" else 0.0, reason=f"the answer is {sample.response}", label=label
        )

    def with_examples(self, examples: list[dict[str, Any]]) -> Metric:
        improved = type(self)(examples)
        self.improved.append(improved)
        return improved


class Memorizer(Verdict):
    """Answers its examples' items from memory and every other item as before: a metric that
    only looks better where it was taught."""

    def verdict(self, sample: Sample) -> str:
        remembered = {e["id"]: e["label"] for e in self.examples}
        if sample.id in remembered:
            return remembered[sample.id]
        word = str(sample.response).split()[0]
        return "fail" if word == "bad" else "pass"


def base_verdict(sample_id: str) -> str:
    return "fail" if sample_id.startswith("bad") else "pass"


# -- measuring -------------------------------------------------------------------------------


def test_align_reports_agreement_with_cis_and_the_disagreements(tmp_path: Path):
    path = write_jsonl(tmp_path / "labels.jsonl", labelled_rows())
    report = align(Verdict(), path)
    assert (report.kind, report.kind_source, report.measured_on) == (
        "discrete",
        "metric",
        "all labelled items",
    )
    assert report.n_labelled == 24 and report.original.n_compared == 24
    assert report.original.coverage == 1.0
    human = [HUMAN[r["id"].split("-")[0]] for r in labelled_rows()]
    metric = [base_verdict(r["id"]) for r in labelled_rows()]
    kappa = report.agreement["cohen_kappa"]
    assert kappa.value == pytest.approx(cohen_kappa(human, metric))
    assert report.agreement["accuracy"].value == pytest.approx(accuracy(human, metric))
    assert kappa.value is not None and kappa.ci is not None
    assert kappa.ci.low <= kappa.value <= kappa.ci.high
    assert list(report.agreement) == ["cohen_kappa", "accuracy"]
    # Every "meh" answer is a disagreement, with the metric's reason and the human's.
    assert sorted(d.sample_id for d in report.disagreements) == [f"meh-{i}" for i in range(8)]
    first = report.disagreements[0]
    assert (first.human_label, first.metric_label, first.score, first.size) == (
        "fail",
        "pass",
        1.0,
        1.0,
    )
    assert first.reason == "the answer is meh answer 0"
    assert first.human_reason == "a meh answer"
    assert report.original.confusion == {"pass": {"pass": 8}, "fail": {"fail": 8, "pass": 8}}
    text = report.summary()
    assert "measured on all 24 labelled items" in text
    assert "cohen_kappa 0.400 (95% CI" in text
    assert "meh-0: human fail, metric pass" in text


def test_align_lists_the_items_it_could_not_compare(tmp_path: Path):
    rows = labelled_rows(per_word=4)
    rows.append({"id": "no-label", "response": "good answer"})
    rows.append({"id": "no-response", "user_input": "q?", "label": "pass"})

    class Flaky(Verdict):
        def score(self, sample: Sample) -> MetricResult:
            if sample.id == "good-1":
                raise RuntimeError("the judge said nothing")
            return super().score(sample)

    report = align(Flaky(), rows)
    assert report.unlabelled == ["no-label"]
    assert report.n_labelled == 13 and report.original.n_compared == 11
    unscored = {u.sample_id: (u.status, u.message) for u in report.original.unscored}
    assert unscored == {
        "good-1": ("failed", "RuntimeError: the judge said nothing"),
        "no-response": ("skipped", "missing field(s) the metric needs: response"),
    }
    assert report.agreement["accuracy"].n == 11
    text = report.summary()
    assert "11/13 items scored (85%)" in text
    assert "not scored: good-1 (failed): RuntimeError: the judge said nothing" in text
    assert "1 row(s) without a label were left out: no-label" in text


def test_a_numeric_label_is_compared_with_the_score_when_the_metric_gives_no_label():
    class PassFail(Metric):
        name = "pass_fail"

        def score(self, sample: Sample) -> MetricResult:
            return MetricResult.ok(1.0 if "yes" in (sample.response or "") else 0.0)

    rows = [
        {"id": "a", "response": "yes", "label": 1},
        {"id": "b", "response": "no", "label": 0},
        {"id": "c", "response": "yes", "label": True},
        {"id": "d", "response": "no", "label": "1"},  # a CSV-like text label
    ]
    report = align(PassFail(), rows, kind="discrete")
    assert report.agreement["accuracy"].value == 0.75
    assert [d.sample_id for d in report.disagreements] == ["d"]


def test_text_labels_need_the_metric_to_give_a_label():
    class ScoreOnly(Metric):
        name = "score_only"

        def score(self, sample: Sample) -> MetricResult:
            return MetricResult.ok(1.0)

    rows = [{"id": "a", "response": "x", "label": "partial"}]  # pass / fail would compare
    with pytest.raises(ValueError, match=r"gave no label \(details\['label'\]\)"):
        align(ScoreOnly(), rows)


def test_pass_fail_labels_are_compared_with_a_0_1_score_as_1_and_0():
    class Supported(Metric):
        """A faithfulness-like score: the share of the response's claims that are supported,
        no label."""

        name = "supported"
        requires: Requirements = (("response",),)

        def score(self, sample: Sample) -> MetricResult:
            words = str(sample.response).split()
            return MetricResult.ok(words.count("ok") / len(words), reason=f"{words}")

    answers = ["ok ok ok", "ok ok no", "ok no no", "no no no"] * 3  # 1, 0.67, 0.33, 0
    labels = ["pass", "Yes ", "FAIL", "no", "true", "1", "false", "0", "是", "通过", "否", "不通过"]
    rows = [
        {"id": f"r{i}", "response": answer, "label": label}
        for i, (answer, label) in enumerate(zip(answers, labels))
    ]
    rows[0]["label"], rows[3]["label"] = "fail", "pass"  # two disagreements
    report = align(Supported(), rows)
    assert (report.kind, report.original.n_compared) == ("discrete", 12)
    assert report.agreement["accuracy"].value == pytest.approx(10 / 12)
    assert sorted(d.sample_id for d in report.disagreements) == ["r0", "r3"]
    first = report.disagreements[0]
    assert (first.human_label, first.metric_label, first.score) == ("fail", 1.0, 1.0)
    assert report.original.confusion["Yes "] == {"1": 1}  # 0.67 passes: at 0.5 or more
    assert "r3: human pass, metric 0;" in report.summary()
    assert "no_label" not in json.dumps(report.to_dict())


def test_a_single_label_everywhere_gives_an_undefined_kappa_never_nan(tmp_path: Path):
    rows = [r for r in labelled_rows(per_word=5) if r["id"].startswith("good")]
    report = align(Verdict(), rows)
    kappa = report.agreement["cohen_kappa"]
    assert kappa.value is None and kappa.ci is None
    assert kappa.note is not None and "same single label" in kappa.note
    assert report.agreement["accuracy"].value == 1.0
    json.dumps(report.to_dict(), allow_nan=False)
    assert "cohen_kappa undefined" in report.summary()


class Length(Metric):
    """A score from the response's length (1 to 5 words -> 0.2 to 1.0)."""

    name = "length"

    def score(self, sample: Sample) -> MetricResult:
        words = len((sample.response or "").split())
        return MetricResult.ok(min(words, 5) / 5, reason=f"{words} words", label=min(words, 5))


def test_rubric_labels_are_inferred_and_compared_by_level():
    rows = [
        {"id": f"r{i}", "response": " ".join(["w"] * words), "label": label}
        for i, (words, label) in enumerate([(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (2, 4), (5, 1)])
    ]
    report = align(Length(), rows)
    assert (report.kind, report.kind_source) == ("rubric", "labels")
    assert list(report.agreement) == ["quadratic_weighted_kappa", "accuracy"]
    assert report.agreement["accuracy"].value == pytest.approx(5 / 7)
    # The largest gap (5 vs 1) first, then 2 vs 4.
    assert [(d.sample_id, d.size) for d in report.disagreements] == [("r6", 4.0), ("r5", 2.0)]


def test_numeric_labels_are_correlated_with_the_score():
    rows = [
        {"id": f"n{i}", "response": " ".join(["w"] * words), "label": label}
        for i, (words, label) in enumerate([(1, 0.1), (2, 0.3), (3, 0.5), (4, 0.65), (5, 0.1)])
    ]
    report = align(Length(), rows)
    assert (report.kind, list(report.agreement)) == ("numeric", ["spearman", "pearson"])
    scores, labels = [0.2, 0.4, 0.6, 0.8, 1.0], [0.1, 0.3, 0.5, 0.65, 0.1]
    assert report.agreement["spearman"].value == pytest.approx(spearman(labels, scores))
    assert report.agreement["pearson"].value == pytest.approx(pearson(labels, scores))
    # n4 (5 words, human 0.1) is the largest gap once both sides are rescaled to 0-1.
    assert report.disagreements[0].sample_id == "n4"
    assert report.disagreements[0].size == pytest.approx(1.0)


def test_kind_can_be_overridden_and_is_checked():
    rows = [{"id": "a", "response": "w", "label": "pass"}]
    with pytest.raises(ValueError, match="needs numeric human labels"):
        align(Length(), rows, kind="numeric")
    with pytest.raises(ValueError, match="kind must be one of"):
        align(Length(), rows, kind="ordinal")


def test_a_file_without_the_label_column_is_a_clear_error(tmp_path: Path):
    path = write_jsonl(tmp_path / "x.jsonl", [{"id": "a", "response": "w", "grade": "pass"}])
    with pytest.raises(ValueError, match="has a 'label' field"):
        align(Verdict(), path)
    assert align(Verdict(), path, label_field="grade").n_labelled == 1


# -- improving with examples -----------------------------------------------------------------


def test_improve_measures_both_versions_on_the_test_split_only(tmp_path: Path):
    path = write_jsonl(tmp_path / "labels.jsonl", labelled_rows())
    metric = Verdict()
    report = align(metric, path, improve=True, shots=4, seed=7)
    split = report.split
    assert split is not None and report.measured_on == "test split"
    train, test = set(split.train_ids), set(split.test_ids)
    assert not train & test and len(train | test) == 24
    # Stratified by label: half of the 8 "pass" and half of the 16 "fail" items in test.
    assert sum(i.startswith("good") for i in test) == 4 and len(test) == 12
    # The examples come from train, and the wrong "meh" items come first.
    assert set(split.example_ids) <= train and len(split.example_ids) == 4
    assert sum(i.startswith("meh") for i in split.example_ids) == 2
    assert {e["label"] for e in split.examples} == {"pass", "fail"}
    example = split.examples[0]
    assert example["label"] == "fail" and example["reason"] == "a meh answer"
    assert "label" not in example.get("metadata", {}) and example["response"].startswith("meh")
    # Both versions were measured on the test items, and on nothing else.
    assert report.original.sample_ids == split.test_ids
    assert report.improved is not None and report.improved.sample_ids == split.test_ids
    (improved_metric,) = metric.improved
    assert sorted(improved_metric.seen) == sorted(test)
    # Original figures are those of the test items alone, not of all 24.
    ids = list(split.test_ids)
    human = [HUMAN[i.split("-")[0]] for i in ids]
    assert report.original.agreement["accuracy"].value == pytest.approx(
        accuracy(human, [base_verdict(i) for i in ids])
    )
    assert report.improved.agreement["accuracy"].value == 1.0
    assert report.change is not None
    change = report.change["accuracy"]
    original = report.original.agreement["accuracy"].value
    assert original is not None
    assert change.value == pytest.approx(1.0 - original)
    text = report.summary()
    assert "measured on the test split only (12 items): no example and no train item is in it" in (
        text
    )
    assert "Δcohen_kappa +" in text
    assert json.loads(json.dumps(report.to_dict(), allow_nan=False))["split"]["example_ids"] == (
        list(split.example_ids)
    )


def test_a_metric_that_memorises_its_examples_gains_nothing_on_the_test_split():
    metric = Memorizer()
    report = align(metric, labelled_rows(), improve=True, shots=6, seed=1)
    assert report.split is not None and report.improved is not None
    (improved_metric,) = metric.improved
    assert not set(improved_metric.seen) & set(report.split.example_ids)
    # Had the examples been measured, the memoriser would look better; on test it does not.
    assert report.improved.agreement["accuracy"].value == (
        report.original.agreement["accuracy"].value
    )
    assert report.change["accuracy"].value == 0.0


def test_the_split_is_seeded():
    first = align(Verdict(), labelled_rows(), improve=True, seed=3)
    again = align(Verdict(), labelled_rows(), improve=True, seed=3)
    other = align(Verdict(), labelled_rows(), improve=True, seed=4)
    assert first.split == again.split
    assert first.to_dict() == again.to_dict()
    assert other.split.test_ids != first.split.test_ids


def test_improve_needs_a_metric_that_takes_examples():
    assert isinstance(Verdict(), SupportsExamples)
    assert not isinstance(Length(), SupportsExamples)
    with pytest.raises(TypeError, match="cannot be improved with examples"):
        align(Length(), [{"id": "a", "response": "w", "label": 1}], improve=True)


def test_align_options_are_checked_before_anything_is_scored():
    from ragmeter.align import AlignOptions

    improve = AlignOptions(improve=True)
    with pytest.raises(ValueError, match="cannot be improved with examples"):  # the CLI's error
        improve.checked(Length())
    assert improve.checked(Verdict()) == improve
    with pytest.raises(ValueError, match="level"):
        AlignOptions(level=1).checked(Verdict())
    with pytest.raises(ValueError, match="is a sample field"):
        AlignOptions(label_field="response").checked(Verdict())


@pytest.mark.parametrize(
    ("options", "message"),
    [({"test_share": 1.0}, "test_share"), ({"shots": 0}, "shots must be a positive integer")],
)
def test_improve_options_are_checked(options: dict[str, Any], message: str):
    with pytest.raises(ValueError, match=message):
        align(Verdict(), labelled_rows(), improve=True, **options)


def test_the_report_is_json():
    report = align(Verdict(), labelled_rows(per_word=3), improve=True, shots=2)
    assert isinstance(report, AlignmentReport)
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert data["statistic"] == "cohen_kappa" and data["measured_on"] == "test split"
    assert data["original"]["agreement"]["accuracy"]["ci"]["method"] == "percentile"
    assert set(data["split"]["train_ids"]).isdisjoint(data["split"]["test_ids"])


class Levels(Metric):
    """A rubric metric as prompt metrics report one: score rescaled to 0-1, level in details."""

    name = "levels"
    kind = "rubric"

    def __init__(self, examples: list[dict[str, Any]] | None = None) -> None:
        self.examples = list(examples or [])

    def score(self, sample: Sample) -> MetricResult:
        level = min(len((sample.response or "").split()), 5)
        return MetricResult.ok((level - 1) / 4, reason="by length", level=level, label=str(level))

    def with_examples(self, examples: list[dict[str, Any]]) -> Metric:
        return Levels(examples)


def test_a_rubric_metric_is_compared_by_its_level_and_its_examples_carry_the_score():
    rows = [
        {"id": f"r{i}", "response": " ".join(["w"] * (1 + i % 5)), "label": 1 + i % 5}
        for i in range(20)
    ]
    rows[0]["label"] = 3  # one level-1 answer that people rate 3
    report = align(Levels(), rows, improve=True, shots=5, seed=2)
    assert report.kind_source == "metric"
    everything = align(Levels(), rows)
    assert everything.agreement["accuracy"].value == pytest.approx(19 / 20)
    (miss,) = everything.disagreements
    # The level is compared and shown, not the 0-1 score.
    assert (miss.sample_id, miss.human_label, miss.metric_label, miss.score, miss.size) == (
        "r0",
        3,
        1,
        0.0,
        2.0,
    )
    examples = report.split.examples
    assert len(examples) == 5
    assert all(e["score"] == float(e["label"]) for e in examples)
    # Balanced across levels: one example of each level the train split holds.
    assert len({e["label"] for e in examples}) == 5
