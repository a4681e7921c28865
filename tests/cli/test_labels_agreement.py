"""``ragmeter labels queue`` -> people fill values -> ``labels import`` -> ``labels agreement``."""

from __future__ import annotations

import json
from pathlib import Path

from ragmeter.align import agreement_on_labels
from ragmeter.store import Store
from tests.align.test_on_labels import HUMAN, judged_run, key
from tests.cli.test_labels import invoke


def stored(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    Store(url).record(judged_run(), name="judged")
    return url


def queue(url: str, path: Path, n: int):
    """``ragmeter labels queue`` of the stored run's claims."""
    return invoke(
        "labels",
        "queue",
        "judged",
        "-o",
        str(path),
        "--n",
        str(n),
        "--level",
        "claim",
        "--store",
        url,
    )


def test_queue_label_import_and_agreement_end_to_end(tmp_path: Path):
    url = stored(tmp_path)
    path = tmp_path / "queue.jsonl"
    made = queue(url, path, 6)
    assert made.exit_code == 0, made.output
    assert "6 item(s) to label" in made.output
    items = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert all(item["value"] is None and item["judge"]["probability"] is not None for item in items)
    # a person labels 5 of the 6 (the truth is HUMAN), leaving the last one empty
    for item in items[:5]:
        item["value"] = "yes" if HUMAN[int(item["sample_id"][1:])] else "no"
    path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), "utf-8")
    refused = invoke("labels", "import", str(path), "--store", url)
    assert refused.exit_code == 2 and "field 'labeller'" in refused.output
    imported = invoke("labels", "import", str(path), "--labeller", "ana", "--store", url)
    assert imported.exit_code == 0, imported.output
    assert "5 new label(s) kept" in imported.output
    assert "1 queue item(s) not labelled yet" in imported.output
    shown = invoke("labels", "agreement", "judged", "--store", url)
    assert shown.exit_code == 0, shown.output
    assert "validated on 5 of your labels (claim level): kappa" in shown.output
    as_json = invoke("labels", "agreement", "judged", "--json", "--store", url)
    document = json.loads(as_json.output)
    store = Store(url)
    expected = agreement_on_labels(store.load("judged"), store.labels(), "faithfulness")
    assert document == {"metrics": [json.loads(json.dumps(expected.to_dict()))]}
    # the queue now leaves out what ana labelled
    again = queue(url, path, 20)
    assert "4 item(s) to label" in again.output  # 9 judged claims (q9 failed), 5 labelled


def test_agreement_of_a_metric_the_run_lacks_or_without_labels_is_a_usage_error(tmp_path: Path):
    url = stored(tmp_path)
    missing = invoke("labels", "agreement", "judged", "-m", "answer_relevancy", "--store", url)
    assert missing.exit_code == 2 and "no metric 'answer_relevancy'" in missing.output
    none = invoke("labels", "agreement", "judged", "--store", url)
    assert none.exit_code == 2 and "ragmeter labels import" in " ".join(none.output.split())


def test_queue_options_are_checked(tmp_path: Path):
    url = stored(tmp_path)
    out = str(tmp_path / "q.jsonl")
    bad = invoke("labels", "queue", "judged", "-o", out, "--strategy", "best", "--store", url)
    assert bad.exit_code == 2 and "strategy must be one of" in bad.output
    assert not Path(out).exists()


def test_align_with_a_stored_run_gives_the_figures_of_labels_agreement(tmp_path: Path):
    url = stored(tmp_path)
    labels = tmp_path / "labels.jsonl"
    rows = [
        {
            "sample_id": f"q{i}",
            "sample_key": key(i),
            "metric": "faithfulness",
            "level": "claim",
            "item": f"claim {i}",
            "value": h,
            "labeller": "ana",
        }
        for i, h in enumerate(HUMAN)
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    assert invoke("labels", "import", str(labels), "--store", url).exit_code == 0
    aligned = invoke(
        "align",
        "faithfulness",
        "--run",
        "judged",
        "--json",
        str(tmp_path / "a.json"),
        "--store",
        url,
    )
    assert aligned.exit_code == 0, aligned.output
    agreement = invoke("labels", "agreement", "judged", "--json", "--store", url)
    assert json.loads((tmp_path / "a.json").read_text("utf-8")) == json.loads(agreement.output)
    plain = invoke("labels", "agreement", "judged", "--store", url)
    assert aligned.output.split("report:")[0] == plain.output
    both = invoke("align", "faithfulness", str(labels), "--run", "judged", "--store", url)
    assert both.exit_code == 2 and "not both" in both.output
    neither = invoke("align", "faithfulness")
    assert neither.exit_code == 2 and "--run RUN" in neither.output


def test_preference_labels_are_imported_and_measured_on_the_order_of_scores(tmp_path: Path):
    url = stored(tmp_path)  # judged_run: q{i} scores 0.5 + i / 40, q9 failed
    records = [
        # q3 (0.575) better than q1 (0.525): the metric agrees
        {"sample_id": "q3", "sample_key": key(3), "item": key(1), "value": "better"},
        # q2 (0.55) worse than q1 (0.525): it does not
        {"sample_id": "q2", "sample_key": key(2), "item": key(1), "value": "Worse"},
        # q9 failed: listed, not compared
        {"sample_id": "q9", "sample_key": key(9), "item": key(1), "value": "better"},
    ]
    path = tmp_path / "preferences.jsonl"
    path.write_text(
        "".join(
            json.dumps({**r, "metric": "faithfulness", "level": "preference"}) + "\n"
            for r in records
        ),
        "utf-8",
    )
    imported = invoke("labels", "import", str(path), "--labeller", "ana", "--store", url)
    assert imported.exit_code == 0, imported.output
    assert "3 new label(s) kept" in imported.output
    shown = invoke("labels", "agreement", "judged", "--store", url)
    assert shown.exit_code == 0, shown.output
    assert "validated on 2 of your labels (preference level): preference agreement 0.50" in (
        shown.output
    )
    assert "q2 vs q1: human q1 better, metric q2 0.55, q1 0.525" in shown.output
    assert "q9 vs q1 (failed)" in shown.output
    bad = tmp_path / "bad.jsonl"
    wrong = {**records[0], "metric": "faithfulness", "level": "preference", "value": "yes"}
    bad.write_text(json.dumps(wrong) + "\n", "utf-8")
    refused = invoke("labels", "import", str(bad), "--labeller", "ana", "--store", url)
    assert refused.exit_code == 2 and "row 1" in refused.output
    assert "write better (this sample is the better one), worse or tie" in refused.output


def test_two_runs_answers_are_queued_blind_labelled_and_measured_with_versus(tmp_path: Path):
    from tests.align.test_queue import answered

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    Store(url).record(answered("old", [0.2, 0.5, 0.9, 0.4]), name="before")
    Store(url).record(answered("new", [0.8, 0.55, 0.3, 0.4]), name="after")
    path = tmp_path / "pairs.jsonl"
    made = invoke("labels", "queue", "after", "--versus", "before", "-o", str(path), "--store", url)
    assert made.exit_code == 0, made.output
    assert "4 pair(s) of answers to compare" in made.output
    items = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    # people prefer the new answer everywhere: q0, q1 (the metric agrees), q2 (it does not),
    # q3 (the metric scores them level: half)
    for item in items:
        item["value"] = "better" if item["response"].startswith("new") else "worse"
    path.write_text("".join(json.dumps(i) + "\n" for i in items), "utf-8")
    imported = invoke("labels", "import", str(path), "--labeller", "ana", "--store", url)
    assert imported.exit_code == 0 and "4 new label(s) kept" in imported.output
    shown = invoke("labels", "agreement", "after", "--versus", "before", "--store", url)
    assert shown.exit_code == 0, shown.output
    assert "(preference level): preference agreement 0.62" in shown.output  # (1+1+0+.5)/4
    wrong = invoke(
        "labels",
        "queue",
        "after",
        "--versus",
        "before",
        "--level",
        "claim",
        "-o",
        str(path),
        "--store",
        url,
    )
    assert wrong.exit_code == 2 and "--versus writes preference items" in wrong.output
