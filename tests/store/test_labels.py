"""People's labels in the run store, on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from ragmeter import evaluate
from ragmeter.store import Label, LabelError, Store, sample_key

WHEN = dt.datetime(2026, 12, 6, 13, 0, tzinfo=dt.timezone.utc)


#: The label of the shared format's example (what tests/cli writes as JSONL too).
RECORD = {
    "sample_id": "q7",
    "sample_key": "3f2a000000000000",
    "metric": "faithfulness",
    "level": "claim",
    "item": "Paris is the capital of France.",
    "value": True,
    "labeller": "alice",
    "created_at": WHEN,
    "note": "",
}


def label(**changes) -> Label:
    return Label(**{**RECORD, **changes})


def test_labels_are_kept_with_who_and_when_and_read_back_equal(store_url: str):
    store = Store(store_url)
    given = [
        label(),
        label(labeller="bob", value=False, created_at=WHEN + dt.timedelta(hours=1)),
        label(level="context", item=2, value=False, metric="context_precision"),
        label(level="sample", item=None, value=0.75, note="mostly right"),
        label(level="sample", item=None, value="pass", metric="answer_relevancy"),
    ]
    assert store.add_labels(given) == 5
    kept = store.labels()
    assert sorted(kept, key=repr) == sorted(given, key=repr)
    assert [type(k.value) for k in kept if k.level == "context"] == [bool]
    assert all(k.created_at.tzinfo is not None for k in kept)


def test_the_same_label_imported_again_adds_nothing_but_another_labeller_or_value_does(
    store_url: str,
):
    store = Store(store_url)
    assert store.add_labels([label()]) == 1
    assert store.add_labels([label(), label(created_at=WHEN + dt.timedelta(days=1))]) == 0
    assert store.add_labels([label(labeller="bob")]) == 1
    assert store.add_labels([label(value=False)]) == 1  # alice changed her mind: both kept
    assert store.add_labels([label(level="sample", item=None, value=1)]) == 1
    assert store.add_labels([label(level="sample", item=None, value=1.0)]) == 0  # 1 is 1.0
    assert len(store.labels()) == 4


def test_labels_are_filtered_by_metric_level_and_labeller(store_url: str):
    store = Store(store_url)
    store.add_labels(
        [
            label(),
            label(labeller="bob"),
            label(level="context", item=0, metric="context_precision"),
            label(level="sample", item=None, value=0.5),
        ]
    )
    assert len(store.labels(metric="faithfulness")) == 3
    assert len(store.labels(metric="faithfulness", level="claim")) == 2
    assert [k.labeller for k in store.labels(level="claim", labeller="bob")] == ["bob"]
    assert store.labels(metric="nothing") == []


def test_labels_come_back_oldest_first(store_url: str):
    store = Store(store_url)
    late, early = label(created_at=WHEN + dt.timedelta(hours=2)), label(labeller="bob")
    store.add_labels([late, early])
    assert [k.labeller for k in store.labels()] == ["bob", "alice"]


def test_adding_labels_is_all_or_nothing(tmp_path: Path):
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    with pytest.raises(TypeError):
        store.add_labels([label(), {"not": "a label"}])  # type: ignore[list-item]
    assert store.labels() == []


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"level": "answer"}, "level"),
        ({"level": "claim", "item": ""}, "item"),
        ({"level": "context", "item": "2"}, "item"),
        ({"level": "context", "item": -1}, "item"),
        ({"level": "sample", "item": "x", "value": 1.0}, "item"),
        ({"value": "yes"}, "value"),
        ({"level": "sample", "item": None, "value": 1.5}, "value"),
        ({"level": "sample", "item": None, "value": float("nan")}, "value"),
        ({"level": "sample", "item": None, "value": " "}, "value"),
        ({"labeller": ""}, "labeller"),
        ({"metric": " "}, "metric"),
        ({"created_at": dt.datetime(2026, 12, 6)}, "created_at"),
        ({"level": "preference", "item": None, "value": "better"}, "item"),
        ({"level": "preference", "item": "3f2a000000000000", "value": "better"}, "item"),
        ({"level": "preference", "item": "9e1b000000000000", "value": True}, "value"),
        ({"level": "preference", "item": "9e1b000000000000", "value": "Better"}, "value"),
    ],
)
def test_an_invalid_label_names_its_field_and_the_fix(changes, field):
    with pytest.raises(LabelError) as caught:
        label(**changes)
    assert caught.value.field == field
    assert f"field {field!r}" in str(caught.value) and "Fix: " in str(caught.value)


def test_the_sample_key_is_the_sha256_of_the_canonical_content_and_ignores_the_id():
    content = {"user_input": "问题?", "response": "a", "retrieved_contexts": ["c1", "c2"]}
    canonical = '{"response":"a","retrieved_contexts":["c1","c2"],"user_input":"问题?"}'
    expected = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
    assert sample_key(content) == expected
    result = evaluate([{**content, "id": "x", "reference": "r"}], ["exact_match"], progress=False)
    assert sample_key(next(iter(result)).sample) == expected
    assert sample_key({**content, "response": "b"}) != expected


def test_label_records_are_written_in_the_shared_format():
    record = label(level="context", item=1, value=False, note="off topic").to_dict()
    assert record == {
        "sample_id": "q7",
        "sample_key": "3f2a000000000000",
        "metric": "faithfulness",
        "level": "context",
        "item": 1,
        "value": False,
        "labeller": "alice",
        "created_at": "2026-12-06T13:00:00Z",
        "note": "off topic",
    }
    json.dumps(record, allow_nan=False)


def test_a_store_from_before_labels_is_upgraded_and_keeps_its_runs(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    store = Store(url)
    old = store.record(
        evaluate([{"response": "a", "reference": "a"}], ["exact_match"], progress=False), name="old"
    )
    with store.engine.begin() as connection:  # the store as migration 0002 left it
        connection.execute(sa.text("DROP TABLE labels"))
        connection.execute(sa.text("UPDATE alembic_version SET version_num = '0002'"))
    store.engine.dispose()
    upgraded = Store(url)
    assert upgraded.get(old.id).name == "old"
    assert upgraded.labels() == []
    assert upgraded.add_labels([label()]) == 1


def test_a_moment_in_another_time_zone_is_kept_as_the_same_instant(store_url: str):
    store = Store(store_url)
    paris = dt.timezone(dt.timedelta(hours=1))
    store.add_labels([label(created_at=dt.datetime(2026, 12, 6, 14, 0, tzinfo=paris))])
    assert store.labels()[0].created_at == WHEN  # 14:00+01:00 is 13:00 UTC


def test_the_same_labels_imported_at_once_are_kept_once(store_url: str):
    import threading

    Store(store_url)  # migrated before the writers start
    given = [label(item=f"claim {i}") for i in range(300)]
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def add() -> None:
        try:
            start.wait(timeout=30)
            Store(store_url).add_labels(given)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=add) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert len(Store(store_url).labels()) == 300


def test_a_preference_label_names_the_other_sample_and_is_kept(store_url: str):
    store = Store(store_url)
    given = label(level="preference", item="9e1b000000000000", value="worse")
    store.add_labels([given])
    (back,) = store.labels(level="preference")
    assert back == given and back.to_dict()["item"] == "9e1b000000000000"
