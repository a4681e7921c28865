"""Labelling's JSON API (/api/labels...) and pages: labels kept and listed with who and when,
export and import, the queue from a run or a file, the agreement against figures computed
here by hand, errors as 422 {"error": ...}, and the token and Origin protection of its POSTs."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from ragmeter.dashboard import create_app
from ragmeter.store import Store, sample_key

LOCAL = "http://127.0.0.1:8321"
METRIC = "context_precision"


@pytest.fixture
def client(populated) -> TestClient:
    store, _ = populated
    return TestClient(create_app(store, port=8321), base_url=LOCAL)


def contexts(store: Store, run: str) -> list[dict[str, object]]:
    """Every context the run's judge gave a verdict on, as a label record to fill."""
    records = []
    for s in store.load(run):
        for c in s.scores[METRIC].details.contexts:
            records.append(
                {
                    "sample_id": s.sample_id,
                    "sample_key": sample_key(s.sample),
                    "metric": METRIC,
                    "level": "context",
                    "item": c.rank - 1,
                    "judge": c.verdict,
                }
            )
    return records


def record(item: dict[str, object], value: object, labeller: str = "alice") -> dict[str, object]:
    kept = {k: v for k, v in item.items() if k != "judge"}
    return {**kept, "value": value, "labeller": labeller}


def test_a_posted_label_is_kept_with_who_and_when_listed_and_exported(client, populated):
    store, (run, _) = populated
    item = contexts(store, run)[0]
    answer = client.post("/api/labels", json=record(item, "no"))  # a verdict word reads too
    assert answer.status_code == 200
    assert answer.json()["added"] == 1
    (kept,) = store.labels()
    assert (kept.labeller, kept.value, kept.item, kept.level) == ("alice", False, 0, "context")
    assert kept.created_at.tzinfo is not None
    listed = client.get("/api/labels", params={"metric": METRIC, "labeller": "alice"}).json()
    assert listed["n_labels"] == 1 and listed["labels"][0]["sample_key"] == item["sample_key"]
    assert client.get("/api/labels", params={"labeller": "bob"}).json()["n_labels"] == 0
    # the same label again is not kept twice; a list of labels is one request
    again = client.post("/api/labels", json=[record(item, False), record(item, True, "bob")])
    assert again.json()["added"] == 1 and len(store.labels()) == 2

    exported = client.get("/api/labels/export", params={"metric": METRIC})
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in exported.text.splitlines()]
    assert [(r["labeller"], r["value"]) for r in lines] == [("alice", False), ("bob", True)]
    assert all(r["created_at"].endswith("Z") for r in lines)


def test_exported_labels_import_into_another_store_unchanged(client, populated, tmp_path):
    store, (run, _) = populated
    items = contexts(store, run)[:3]
    client.post("/api/labels", json=[record(i, True) for i in items])
    exported = client.get("/api/labels/export").text
    other = Store(f"sqlite:///{tmp_path / 'other.db'}")
    fresh = TestClient(create_app(other, port=8321), base_url=LOCAL)
    answer = fresh.post("/api/labels/import", content=exported.encode())
    assert answer.status_code == 200 and answer.json() == {"added": 3, "read": 3}
    assert [k.to_dict() for k in other.labels()] == [k.to_dict() for k in store.labels()]
    assert fresh.post("/api/labels/import", content=exported.encode()).json()["added"] == 0


def test_a_mine_file_imports_as_sample_labels_of_the_metric_named(client, populated):
    store, (run, _) = populated
    first = store.load(run).samples[0].sample
    row = {
        "id": "x1",
        "user_input": first.user_input,
        "response": first.response,
        "retrieved_contexts": list(first.retrieved_contexts or []),
        "label": "pass",
        "reason": "fine",
    }
    body = json.dumps(row, ensure_ascii=False).encode()
    refused = client.post("/api/labels/import", content=body)
    assert refused.status_code == 422 and "--metric" in refused.json()["error"]
    answer = client.post(
        "/api/labels/import", params={"metric": "faithfulness", "labeller": "carol"}, content=body
    )
    assert answer.json()["added"] == 1
    (kept,) = store.labels()
    assert (kept.level, kept.sample_key, kept.note) == ("sample", sample_key(first), "fine")


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"{not json", "not JSON"),
        (b'["a label"]', "label 1: a label is a JSON object"),
        (b'{"sample_key": "k", "metric": "m", "level": "claim", "value": true}', "sample_id"),
        (
            b'{"sample_id": "q", "sample_key": "k", "metric": "m", "level": "claim", '
            b'"item": "c", "value": 0.5, "labeller": "a"}',
            "field 'value'",
        ),
        (
            b'{"sample_id": "q", "sample_key": "k", "metric": "m", "level": "context", '
            b'"item": -1, "value": true, "labeller": "a"}',
            "field 'item'",
        ),
    ],
)
def test_a_bad_label_is_refused_with_422_naming_the_field(client, populated, body, said):
    store, _ = populated
    answer = client.post("/api/labels", content=body)
    assert answer.status_code == 422
    assert said in answer.json()["error"]
    assert store.labels() == []


def test_an_import_with_a_bad_line_names_it_and_keeps_nothing(client, populated):
    store, (run, _) = populated
    good = json.dumps(record(contexts(store, run)[0], True))
    answer = client.post("/api/labels/import", content=f'{good}\n{good[:-1]}, "x": 1}}\n')
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert "row 2" in error and "'x'" in error and "the uploaded file" in error
    assert store.labels() == []


def test_the_queue_leaves_out_what_is_labelled_and_errors_are_422(client, populated):
    store, (run, _) = populated
    queue = client.get("/api/labels/queue", params={"run": run, "metric": METRIC, "n": 40}).json()
    assert queue["n"] == 30 and {i["level"] for i in queue["items"]} == {"context"}
    first = queue["items"][0]
    first.pop("verdicts")  # the page's; the rest of a queue record's fields are ignored
    assert client.post("/api/labels", json=record(first, True)).status_code == 200
    again = client.get("/api/labels/queue", params={"run": run, "metric": METRIC, "n": 40})
    keys = {(i["sample_key"], i["item"]) for i in again.json()["items"]}
    assert len(keys) == 29 and (first["sample_key"], first["item"]) not in keys
    samples = client.get(
        "/api/labels/queue", params={"run": run, "metric": METRIC, "level": "sample"}
    ).json()
    assert samples["n"] == 6 and samples["items"][0]["judge"]["score"] is not None
    # a sample's item lists the judge's verdict on each of its contexts, with P(yes)
    first_sample = samples["items"][0]
    found = next(s for s in store.load(run) if sample_key(s.sample) == first_sample["sample_key"])
    expected = [(c.rank - 1, c.verdict) for c in found.scores[METRIC].details.contexts]
    listed = [(v["item"], v["verdict"]) for v in first_sample["verdicts"]]
    assert listed == expected and all(v["level"] == "context" for v in first_sample["verdicts"])
    for params, said in [
        ({"metric": "nope"}, "metric"),
        ({"strategy": "best"}, "strategy"),
        ({"level": "word"}, "level"),
        ({"n": 0}, "n must be a positive integer"),
        ({"n": 501}, "at most 500"),
    ]:
        answer = client.get("/api/labels/queue", params={"run": run, **params})
        assert answer.status_code == 422 and said in answer.json()["error"], params
    missing = client.get("/api/labels/queue", params={"run": "nosuchrun"})
    assert missing.status_code == 404 and "error" in missing.json()


def test_a_queue_file_is_lined_up_with_the_runs_verdicts_in_its_order(client, populated):
    store, (run, _) = populated
    result = store.load(run)
    first, second = result.samples[1].sample, result.samples[4].sample
    lines = [
        {"sample_id": "b", "sample_key": sample_key(second), "metric": METRIC, "level": "context",
         "item": 2, "value": None},
        {"sample_id": "a", "sample_key": sample_key(first), "metric": METRIC, "level": "sample",
         "item": None, "value": None},
        {"sample_id": "z", "sample_key": "0000000000000000", "metric": METRIC, "level": "sample",
         "item": None, "value": None},
        {"user_input": first.user_input, "response": first.response,  # a mine row
         "retrieved_contexts": list(first.retrieved_contexts or []), "label": None},
    ]  # fmt: skip
    body = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines)
    answer = client.post("/api/labels/queue", params={"run": run, "metric": METRIC}, content=body)
    assert answer.status_code == 200
    queue = answer.json()
    assert [(i["sample_id"], i["level"], i["item"]) for i in queue["items"]] == [
        (result.samples[4].sample_id, "context", 2),
        (result.samples[1].sample_id, "sample", None),
    ]  # the mine row is the same sample as the second line: once
    assert queue["not_in_run"] == 1
    expected = result.samples[4].scores[METRIC].details.contexts[2].verdict
    assert queue["items"][0]["judge"]["verdict"] == expected
    bad = client.post("/api/labels/queue", params={"run": run}, content=b"[1]\n")
    assert bad.status_code == 422 and "line 1" in bad.json()["error"]


def kappa(pairs: list[tuple[bool, bool]]) -> float:
    """Cohen's kappa of two raters' yes / no, from its definition."""
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    a_yes = sum(a for a, _ in pairs) / n
    b_yes = sum(b for _, b in pairs) / n
    chance = a_yes * b_yes + (1 - a_yes) * (1 - b_yes)
    return (observed - chance) / (1 - chance)


def test_the_agreement_matches_figures_computed_by_hand(client, populated):
    store, (run, _) = populated
    items = contexts(store, run)[:12]
    people = [bool(i["judge"]) if n % 3 else not i["judge"] for n, i in enumerate(items)]
    client.post("/api/labels", json=[record(i, v) for i, v in zip(items, people)])
    # bob labels the first six: he agrees with alice on four
    bob = [v if n < 4 else not v for n, v in enumerate(people[:6])]
    client.post("/api/labels", json=[record(i, v, "bob") for i, v in zip(items, bob)])
    body = client.get("/api/labels/agreement", params={"run": run, "metric": METRIC}).json()
    level = body["levels"]["context"]
    judged = [bool(i["judge"]) for i in items]
    # the first six are compared with the people's majority: a tie on two of them
    assert body["n_labels"] == 18 and level["n_labels"] == 18
    assert level["labellers"]["statistic"] == "cohen_kappa" and level["n_shared"] == 6
    assert level["labellers"]["value"] == pytest.approx(kappa(list(zip(people[:6], bob))))
    compared = [(p, j) for n, (p, j) in enumerate(zip(people, judged)) if n not in (4, 5)]
    accuracy = sum(p == j for p, j in compared) / len(compared)
    assert level["agreement"]["accuracy"]["value"] == pytest.approx(accuracy)
    assert level["agreement"]["cohen_kappa"]["value"] == pytest.approx(kappa(compared))
    cells = sum(n for row in level["confusion"].values() for n in row.values())
    assert cells == len(compared)
    assert body["validation"]["text"].startswith(f"validated on {len(compared)} of your labels")
    assert body["validation"]["shown"] == body["validation"]["text"]
    chinese = client.get(
        "/api/labels/agreement", params={"run": run, "metric": METRIC, "lang": "zh"}
    ).json()
    assert chinese["validation"]["shown"].startswith(f"已在你的 {len(compared)} 条标注上验证")


def test_run_pages_say_whether_each_judged_metric_was_validated(client, populated):
    store, (run, _) = populated
    page = client.get(f"/runs/{run}").text
    assert page.count("not validated on your data") == 2  # faithfulness, context_precision
    assert f'href="/label?run={run}&amp;metric={METRIC}"' in page
    items = contexts(store, run)[:4]
    client.post("/api/labels", json=[record(i, i["judge"]) for i in items])
    page = client.get(f"/runs/{run}").text
    assert page.count("not validated on your data") == 1
    assert "validated on 4 of your labels (context level)" in page
    chinese = client.get(f"/runs/{run}", params={"lang": "zh"}).text
    assert (
        "未在你的数据上验证" in chinese
        and "已在你的 4 条标注上验证（上下文层级）：kappa" in chinese
    )


def test_a_calibrated_runs_validation_says_its_own_labels_flatter_it(client, populated):
    store, (run, _) = populated
    result = store.load(run)
    result.config["judges"][METRIC]["verdict_calibration"] = "team@v2 (sha256 1a2b3c4d)"
    calibrated = store.record(result, name="calibrated").id
    items = contexts(store, run)[:4]
    client.post("/api/labels", json=[record(i, i["judge"]) for i in items])
    english = client.get(f"/runs/{calibrated}").text
    assert "(judge calibrated with team@v2: optimistic on the labels it was fitted on" in english
    chinese = client.get(f"/runs/{calibrated}", params={"lang": "zh"}).text
    assert "（评审模型使用了校准 team@v2：在拟合它的标注上结果偏乐观" in chinese
    assert "ragmeter calibrate show team）" in chinese
    plain = client.get(f"/runs/{run}", params={"lang": "zh"}).text
    assert "评审模型使用了校准" not in plain


def test_the_label_page_in_both_languages(client, populated):
    _, (run, _) = populated
    page = client.get("/label", params={"run": run, "metric": METRIC})
    assert page.status_code == 200
    text = page.text
    assert f"Label {METRIC} of baseline" in text and 'id="shortcuts"' in text
    assert '<script type="application/json" id="label-config">' in text
    config = text.split('id="label-config">', 1)[1].split("</script>", 1)[0]
    assert json.loads(config)["metric"] == METRIC and json.loads(config)["run"] == run
    chinese = client.get("/label", params={"run": run, "lang": "zh"}).text
    assert "键盘快捷键" in chinese and '"yes": "是"' in chinese
    assert "label-config" in chinese and "faithfulness" in chinese  # the first judged metric
    wrong = client.get("/label", params={"run": run, "metric": "nope"})
    assert wrong.status_code == 422 and "no metric &#x27;nope&#x27;" in wrong.text


def test_a_label_post_from_another_origin_is_refused(client, populated):
    store, (run, _) = populated
    label = record(contexts(store, run)[0], True)
    for path in ("/api/labels", "/api/labels/import", f"/api/labels/queue?run={run}"):
        answer = client.post(
            path, content=json.dumps(label), headers={"Origin": "http://attacker.example"}
        )
        assert answer.status_code == 403, path
    assert store.labels() == []
    same = client.post("/api/labels", json=label, headers={"Origin": "http://127.0.0.1:8321"})
    assert same.status_code == 200 and len(store.labels()) == 1


def test_behind_a_token_labels_need_it(populated):
    store, (run, _) = populated
    app = create_app(store, token="s3cret", port=8321)
    client = TestClient(app, base_url=LOCAL)
    label = record(contexts(store, run)[0], True)
    assert client.post("/api/labels", json=label).status_code == 401
    assert client.get("/api/labels").status_code == 401
    assert client.get("/api/labels/export").status_code == 401
    assert store.labels() == []
    bearer = {"Authorization": "Bearer s3cret"}
    assert client.post("/api/labels", json=label, headers=bearer).status_code == 200
    assert client.get("/api/labels", headers=bearer).json()["n_labels"] == 1


def test_preference_labels_posted_are_measured_and_named_in_both_languages(client, populated):
    store, (run, _) = populated
    samples = list(store.load(run))[:3]
    scores = [s.scores[METRIC].score for s in samples]
    keys = [sample_key(s.sample) for s in samples]
    # people prefer the first sample over each of the two others
    posted = [
        {
            "sample_id": samples[0].sample_id,
            "sample_key": keys[0],
            "metric": METRIC,
            "level": "preference",
            "item": keys[i],
            "value": "better",
            "labeller": "alice",
        }
        for i in (1, 2)
    ]
    assert client.post("/api/labels", json=posted).status_code == 200
    body = client.get("/api/labels/agreement", params={"run": run, "metric": METRIC}).json()
    figure = body["levels"]["preference"]["agreement"]["preference_agreement"]
    by_hand = [1.0 if scores[0] > s else 0.5 if scores[0] == s else 0.0 for s in scores[1:]]
    assert figure["value"] == pytest.approx(sum(by_hand) / 2) and figure["n"] == 2
    chinese = client.get(
        "/api/labels/agreement", params={"run": run, "metric": METRIC, "lang": "zh"}
    ).json()
    assert "两个样本之间的偏好" in chinese["validation"]["shown"]
