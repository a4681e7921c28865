"""ragmeter.monitor end to end on a growing file with a scripted judge: windows, CIs, a drop
against the baseline, stored runs, bad rows, rotation, restarts, time windows."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragmeter import evaluate
from ragmeter.judge import JudgeTransientError
from ragmeter.monitor import Monitor, WindowSpec, monitor
from ragmeter.store import Store
from ragmeter.testing import ScriptedJudge
from tests.monitor.judge import answer, judge, row

# 16 samples, window 8: faithfulness 3/4 and 4/4 alternately in the first window (mean
# 0.875), 1/4 and 2/4 in the second (mean 0.375): a drop of 0.5.
GOOD = [row(i, 3 + i % 2) for i in range(8)]
BAD = [row(i, 1 + i % 2) for i in range(8, 16)]


def write(path, rows, mode="a"):
    with path.open(mode, encoding="utf-8") as handle:
        for r in rows:
            handle.write((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n")


def make(tmp_path, scripted, **options):
    options.setdefault("window", 8)
    options.setdefault("n_resamples", 20_000)
    return Monitor(
        tmp_path / "traffic.jsonl",
        "faithfulness",
        state_dir=tmp_path / "state",
        judge=scripted,
        log=tmp_path / "alerts.jsonl",
        **options,
    )


def test_windows_with_cis_a_drop_an_alert_and_stored_runs(tmp_path):
    source = tmp_path / "traffic.jsonl"
    write(source, GOOD + BAD, mode="w")
    scripted = judge()
    report = make(tmp_path, scripted).poll()

    assert report.lines == 16 and report.samples == 16 and not report.bad
    first, second = report.windows
    assert first.baseline and first.n_samples == 8
    (m1,) = first.metrics
    assert m1.mean == pytest.approx(0.875) and m1.difference is None  # the baseline itself
    assert m1.ci[0] < 0.875 < m1.ci[1]
    (m2,) = second.metrics
    assert m2.mean == pytest.approx(0.375) and m2.baseline_mean == pytest.approx(0.875)
    assert m2.difference == pytest.approx(-0.5)
    assert m2.difference_ci[1] < 0  # the whole interval is a drop
    # 12870 ways to split 16 scores into 8 + 8; only the observed split and its mirror are
    # 0.5 apart: an exact p of 2 / 12870 (one metric: Holm changes nothing).
    assert m2.p_value == pytest.approx(2 / 12870) and m2.p_adjusted == m2.p_value
    assert m2.drop
    # The worst samples of the window: the four scored 1/4 (ids s8, s10, s12, s14) first.
    assert set(m2.worst_ids[:4]) == {"s8", "s10", "s12", "s14"}
    assert len(scripted.calls) == 16 * 2  # faithfulness: claims, then their support

    (alert,) = report.alerts
    logged = [json.loads(line) for line in (tmp_path / "alerts.jsonl").read_text().splitlines()]
    assert logged == [alert]
    assert alert["metric"] == "faithfulness" and alert["window"] == 2
    assert alert["baseline_mean"] == pytest.approx(0.875)
    assert alert["window_mean"] == pytest.approx(0.375)
    assert alert["difference_ci"][1] < 0 and alert["p_value"] < 0.05

    store = Store()  # the test's own ($RAGMETER_STORE_URL, see tests/conftest.py)
    runs = sorted(store.list(tag="monitor"), key=lambda info: info.params["window_index"])
    assert [info.name for info in runs] == ["monitor:traffic:window-1", "monitor:traffic:window-9"]
    assert runs[1].id == second.run_id
    assert runs[1].params["window_start"] == second.start
    assert runs[1].aggregates["faithfulness"]["mean"] == pytest.approx(0.375)
    assert len(store.load(second.run_id)) == 8


def test_bad_rows_are_skipped_counted_and_said_and_a_partial_line_waits(tmp_path):
    source = tmp_path / "traffic.jsonl"
    write(source, [*GOOD[:3], "{not json", {"id": "x", "user_input": "q?"}], mode="w")
    with source.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(GOOD[3])[:20])  # being written: no newline yet
    monitoring = make(tmp_path, judge())
    report = monitoring.poll()
    assert report.lines == 5 and report.samples == 3
    not_json, *missing = report.bad
    assert not_json.row == 4 and "invalid JSON" in not_json.message
    assert not_json.source == str(source)
    assert {p.field for p in missing} == {"response", "retrieved_contexts"}
    assert all(p.row == 5 and "add" in p.fix for p in missing)
    assert monitoring.state["counts"]["bad"] == 2  # rows: 4 and 5

    with source.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(GOOD[3])[20:] + "\n")
    report = monitoring.poll()
    assert report.lines == 1 and report.samples == 1 and not report.bad
    ids = [s["record"]["id"] for s in monitoring.state["open"][0]["samples"]]
    assert ids == ["s0", "s1", "s2", "s3"]


def test_a_restart_loses_nothing_and_scores_nothing_twice(tmp_path):
    source = tmp_path / "traffic.jsonl"
    write(source, GOOD + BAD[:4], mode="w")
    first_judge = judge()
    assert len(make(tmp_path, first_judge).poll().windows) == 1
    assert len(first_judge.calls) == 8 * 2  # the 4 samples of the open window wait

    write(source, BAD[4:])
    second_judge = judge()
    restarted = make(tmp_path, second_judge)  # a new process: state from the folder
    report = restarted.poll()
    (window,) = report.windows
    assert window.index == 2 and window.n_samples == 8
    assert window.metrics[0].mean == pytest.approx(0.375) and window.metrics[0].drop
    assert len(second_judge.calls) == 8 * 2
    assert [w.index for w in restarted.windows] == [1, 2]


def test_killed_after_judging_a_window_the_restart_pays_no_judge_call(tmp_path, monkeypatch):
    source = tmp_path / "traffic.jsonl"
    write(source, GOOD, mode="w")

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # between scoring the window and saving that it closed

    monkeypatch.setattr(Monitor, "_record", killed)
    first_judge = judge()
    with pytest.raises(KeyboardInterrupt):
        make(tmp_path, first_judge).poll()
    assert len(first_judge.calls) == 16
    monkeypatch.undo()

    second_judge = judge()
    report = make(tmp_path, second_judge).poll()
    (window,) = report.windows
    assert window.n_samples == 8 and window.metrics[0].mean == pytest.approx(0.875)
    assert len(second_judge.calls) == 0  # resumed from the window's run directory
    assert len(Store().list(tag="monitor")) == 1


def test_a_truncated_file_is_read_again_and_said(tmp_path):
    source = tmp_path / "traffic.jsonl"
    write(source, GOOD[:5], mode="w")
    monitoring = make(tmp_path, judge())
    assert monitoring.poll().samples == 5
    write(source, GOOD[5:7], mode="w")  # rotated by truncation: shorter than the offset
    report = monitoring.poll()
    assert report.samples == 2
    (note,) = report.notes
    assert "truncated" in note and "from its start" in note


def test_a_replaced_file_is_detected_by_its_inode(tmp_path):
    source = tmp_path / "traffic.jsonl"
    write(source, GOOD[:2], mode="w")
    monitoring = make(tmp_path, judge())
    monitoring.poll()
    rotated = tmp_path / "new.jsonl"
    write(rotated, GOOD[2:7], mode="w")  # longer than before: only the inode tells
    os.replace(rotated, source)
    report = monitoring.poll()
    assert report.samples == 5 and "replaced (rotated)" in report.notes[0]


def test_a_folder_is_read_file_by_file_in_name_order(tmp_path):
    folder = tmp_path / "exports"
    folder.mkdir()
    write(folder / "a.jsonl", GOOD[:3], mode="w")
    with (folder / "a.jsonl").open("a") as handle:  # a finished export without a last newline
        handle.write(json.dumps(GOOD[3]))
    write(folder / "b.jsonl", GOOD[4:6], mode="w")
    with (folder / "b.jsonl").open("a") as handle:  # the newest file: still being written
        handle.write(json.dumps(GOOD[6])[:10])
    monitoring = Monitor(folder, "faithfulness", window=8, state_dir=tmp_path / "s", judge=judge())
    report = monitoring.poll()
    assert report.samples == 6
    ids = [s["record"]["id"] for s in monitoring.state["open"][0]["samples"]]
    assert ids == ["s0", "s1", "s2", "s3", "s4", "s5"]
    write(folder / "c.jsonl", GOOD[7:8], mode="w")  # a new file: b.jsonl is finished
    report = monitoring.poll()
    assert report.samples == 1  # c's line; b's cut line, now read, is not JSON: a bad row
    (bad,) = report.bad
    assert bad.source == str(folder / "b.jsonl") and bad.row == 3
    assert monitoring.state["counts"]["bad"] == 1


def test_a_baseline_run_is_compared_from_the_first_window(tmp_path):
    baseline = evaluate(GOOD, ["faithfulness"], judge=judge())
    source = tmp_path / "traffic.jsonl"
    write(source, BAD, mode="w")
    report = make(tmp_path, judge(), baseline=baseline, record_runs=False).poll()
    (window,) = report.windows
    assert not window.baseline and window.run_id is None
    assert window.metrics[0].baseline_mean == pytest.approx(0.875)
    assert window.metrics[0].drop and len(report.alerts) == 1


def test_no_alert_for_a_small_or_insignificant_change(tmp_path):
    source = tmp_path / "traffic.jsonl"
    write(source, GOOD + [row(16 + i, 3 + i % 2) for i in range(7)] + [row(99, 3)], mode="w")
    report = make(tmp_path, judge()).poll()
    assert len(report.windows) == 2 and not report.alerts
    # Window 2 scores 3,4,3,4,3,4,3 and 3 of 4: mean 27/32 vs 0.875, -0.031 < --min-drop.
    assert report.windows[1].metrics[0].difference == pytest.approx(-0.03125)
    assert not report.windows[1].metrics[0].drop


def test_time_windows_close_on_the_samples_timestamps(tmp_path):
    def at(i, k, stamp):
        return row(i, k, metadata={"timestamp": stamp})

    source = tmp_path / "traffic.jsonl"
    write(
        source,
        [
            at(1, 4, "2026-12-01T10:05:00Z"),
            at(2, 3, "2026-12-01T10:40:00+00:00"),
            at(3, 4, "2026-12-01T11:02:00Z"),  # window 11:00; within the grace of 10:00
            at(4, 2, "2026-12-01T11:06:00Z"),  # past 11:00 + 5 min: 10:00 closes
            at(5, 2, "2026-12-01T10:50:00Z"),  # read in the same poll: still in time
            at(6, 1, "yesterday"),
        ],
        mode="w",
    )
    monitoring = Monitor(
        source,
        "faithfulness",
        window="1h",
        grace_s=300,
        state_dir=tmp_path / "s",
        judge=judge(),
        record_runs=False,
    )
    report = monitoring.poll()
    (window,) = report.windows
    assert (window.start, window.end) == ("2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z")
    # 10:05, 10:40 and 10:50: faithfulness 4/4, 3/4 and 2/4.
    assert window.n_samples == 3 and window.metrics[0].mean == pytest.approx(0.75)
    assert report.late == 0
    (bad,) = report.bad
    assert bad.row == 6 and bad.field == "metadata.timestamp" and "ISO 8601" in bad.message
    write(source, [at(7, 4, "2026-12-01T10:55:00Z")])  # its window closed in the last poll
    assert monitoring.poll().late == 1
    flushed = monitoring.poll(flush=True).windows
    assert [(w.start, w.n_samples) for w in flushed] == [("2026-12-01T11:00:00Z", 2)]


def test_a_metric_that_needs_a_reference_is_refused(tmp_path):
    (tmp_path / "t.jsonl").write_text("")
    with pytest.raises(ValueError, match=r"context_recall.*reference"):
        Monitor(tmp_path / "t.jsonl", "faithfulness,context_recall", state_dir=tmp_path / "s")


def test_window_specs():
    assert WindowSpec.parse(100).size == 100
    assert WindowSpec.parse("1d").seconds == 86_400
    assert WindowSpec.parse("30m").seconds == 1_800
    for wrong in ("1", "0h", "hour", "-5"):
        with pytest.raises(ValueError, match="cannot be read"):
            WindowSpec.parse(wrong)


def test_the_state_refuses_another_window_size(tmp_path):
    source = tmp_path / "traffic.jsonl"
    write(source, GOOD[:2], mode="w")
    make(tmp_path, judge()).poll()
    with pytest.raises(ValueError, match="was made with window '8', not '10'"):
        make(tmp_path, judge(), window=10)


def test_monitor_function_is_one_pass(tmp_path):
    source = tmp_path / "traffic.jsonl"
    write(source, GOOD[:3], mode="w")
    report = monitor(
        source, "faithfulness", flush=True, window=8, state_dir=tmp_path / "s", judge=judge()
    )
    assert [w.n_samples for w in report.windows] == [3]


def test_run_follows_the_file_until_stopped(tmp_path):
    import threading
    import time

    source = tmp_path / "traffic.jsonl"
    write(source, GOOD, mode="w")
    monitoring = make(tmp_path, judge(), n_resamples=2000)
    stop = threading.Event()
    alerts = []
    thread = threading.Thread(
        target=lambda: alerts.append(monitoring.run(interval_s=0.05, stop=stop))
    )
    thread.start()
    write(source, BAD)  # appended while it follows
    deadline = time.monotonic() + 20
    while len(monitoring.windows) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert [w.n_samples for w in monitoring.windows] == [8, 8]
    assert alerts == [1]


def test_a_baseline_judged_by_another_judge_is_noted(tmp_path):
    from ragmeter.testing import ScriptedJudge
    from tests.monitor.judge import answer

    baseline = evaluate(GOOD, ["faithfulness"], judge=ScriptedJudge(answer, name="older"))
    write(tmp_path / "traffic.jsonl", GOOD, mode="w")
    report = make(tmp_path, judge(), baseline=baseline, record_runs=False).poll()
    (note,) = report.notes
    assert note.startswith("window 1: faithfulness: judge differs: older")
    assert not report.alerts  # the same scores: compared all the same, no drop
    same = evaluate(GOOD, ["faithfulness"], judge=judge())
    write(tmp_path / "other.jsonl", GOOD, mode="w")
    quiet = Monitor(
        tmp_path / "other.jsonl",
        "faithfulness",
        window=8,
        baseline=same,
        state_dir=tmp_path / "s2",
        judge=judge(),
        record_runs=False,
    ).poll()
    assert quiet.notes == [] and len(quiet.windows) == 1


def test_the_state_keeps_only_the_last_closed_windows(tmp_path, monkeypatch):
    from ragmeter.monitor import _monitor

    monkeypatch.setattr(_monitor, "KEEP_CLOSED", 2)
    write(tmp_path / "traffic.jsonl", GOOD[:6] + BAD[:4], mode="w")
    monitoring = make(tmp_path, judge(), window=2, baseline_windows=3, record_runs=False)
    report = monitoring.poll()
    assert [w.index for w in report.windows] == [1, 2, 3, 4, 5]
    assert [w.baseline for w in report.windows] == [True, True, True, False, False]
    # The baseline: the first 3 windows' 6 scores (3, 4, 3, 4, 3, 4 of 4): mean 0.875.
    assert report.windows[3].metrics[0].baseline_mean == pytest.approx(0.875)
    assert [w.index for w in monitoring.windows] == [4, 5]
    assert monitoring.state["next_index"] == 6


def test_the_dashboard_trend_shows_the_windows_in_order(tmp_path):
    from fastapi.testclient import TestClient

    from ragmeter.dashboard import create_app

    write(tmp_path / "traffic.jsonl", GOOD + BAD, mode="w")
    make(tmp_path, judge(), n_resamples=2000).poll()
    client = TestClient(create_app(Store(), port=8321), base_url="http://127.0.0.1:8321")
    body = client.get("/api/trends", params={"tag": "monitor:traffic"}).json()
    (trend,) = body["metrics"]
    assert trend["metric"] == "faithfulness"
    points = trend["points"]
    assert [p["name"] for p in points] == ["monitor:traffic:window-1", "monitor:traffic:window-9"]
    assert [p["mean"] for p in points] == pytest.approx([0.875, 0.375])
    assert all(p["ci_low"] <= p["mean"] <= p["ci_high"] for p in points)


def test_rows_without_ids_keep_apart_across_a_rotation(tmp_path):
    unnamed = [{k: v for k, v in r.items() if k != "id"} for r in GOOD]
    source = tmp_path / "traffic.jsonl"
    write(source, unnamed[:3], mode="w")
    monitoring = make(tmp_path, judge())
    monitoring.poll()
    write(source, unnamed[3:5], mode="w")  # truncated: line numbers start again
    report = monitoring.poll()
    assert report.samples == 2 and not report.bad
    ids = [s["record"]["id"] for s in monitoring.state["open"][0]["samples"]]
    assert ids == [
        "traffic.jsonl:1",
        "traffic.jsonl:2",
        "traffic.jsonl:3",
        "traffic.jsonl#1:1",
        "traffic.jsonl#1:2",
    ]


def test_p_values_are_holm_corrected_across_metrics(tmp_path):
    write(tmp_path / "traffic.jsonl", GOOD + BAD, mode="w")
    monitoring = Monitor(
        tmp_path / "traffic.jsonl",
        "faithfulness,context_utilization",
        window=8,
        n_resamples=20_000,
        state_dir=tmp_path / "state",
        judge=judge(),
        record_runs=False,
    )
    faithfulness, utilization = monitoring.poll().windows[1].metrics
    # context_utilization is 1 everywhere: p = 1. Holm over (2 / 12870, 1): the smaller
    # p-value is doubled, the larger stays 1.
    assert utilization.p_value == 1.0 and utilization.p_adjusted == 1.0
    assert not utilization.drop and utilization.mean == 1.0
    assert faithfulness.p_value == pytest.approx(2 / 12870)
    assert faithfulness.p_adjusted == pytest.approx(4 / 12870) and faithfulness.drop


def test_a_line_nested_too_deeply_is_a_bad_row_not_a_crash(tmp_path):
    source = tmp_path / "traffic.jsonl"
    write(source, [*GOOD[:2]], mode="w")
    with source.open("a", encoding="utf-8") as handle:
        handle.write("[" * 100_000 + "]" * 100_000 + "\n")  # json.loads: RecursionError
    report = make(tmp_path, judge()).poll()
    assert report.lines == 3 and report.samples == 2
    assert [p.row for p in report.bad] == [3]
    assert "nested too deeply" in report.bad[0].message


def _hostile_stamps(now: float) -> list[tuple[str, object, str]]:
    """Timestamps that once wedged every later pass, and what each is refused as."""
    return [
        ("nan", float("nan"), "is not a number"),
        ("inf", float("inf"), "is not a number"),
        ("huge", 1e300, "epoch milliseconds"),
        ("epoch-ms", int(now * 1000), "epoch milliseconds"),
        ("negative", -1e300, "before 2000"),
        ("zero", 0, "before 2000"),
        ("2099", "2099-01-01T00:00:00Z", "ahead of this machine's clock"),
        ("year-9999", "9999-12-31T23:59:59-14:00", "ahead of this machine's clock"),
        ("year-1", "0001-01-01T00:00:00+14:00", "before 2000"),
    ]


@pytest.mark.parametrize("case", range(len(_hostile_stamps(0.0))))
def test_a_hostile_timestamp_is_a_bad_row_and_later_traffic_goes_on(tmp_path, case):
    now = time.time()
    name, stamp, message = _hostile_stamps(now)[case]
    source = tmp_path / "traffic.jsonl"
    write(source, [row(1, 4, metadata={"timestamp": stamp}), row(2, 4)], mode="w")

    def monitoring():
        return Monitor(
            source, "faithfulness", window="1h", state_dir=tmp_path / "s", judge=judge(),
            record_runs=False, n_resamples=200,
        )  # fmt: skip

    report = monitoring().poll()
    (bad,) = report.bad
    assert (bad.row, bad.field) == (1, "metadata.timestamp") and message in bad.message, name
    assert report.samples == 1 and report.late == 0
    # Later passes, by this monitor and by one resumed from its state, are not wedged:
    write(source, [row(3, 4), row(4, 4, metadata={"timestamp": now - 1})])
    later = monitoring().poll()
    assert (later.samples, later.late, later.bad) == (2, 0, [])
    flushed = monitoring().poll(flush=True)
    assert sum(w.n_samples for w in flushed.windows) == 3


def test_a_lone_surrogate_in_a_sample_does_not_wedge_the_state(tmp_path):
    source = tmp_path / "traffic.jsonl"
    lone = '{"id": "s0", "user_input": "q \\ud800?", "response": "answer 4 of 4",'
    write(source, [lone + ' "retrieved_contexts": ["context \\udfff"]}'], mode="w")

    def monitoring():
        return Monitor(
            source, "faithfulness", window=2, state_dir=tmp_path / "s", judge=judge(),
            record_runs=False, n_resamples=200,
        )  # fmt: skip

    first = monitoring().poll()
    # the dataset's own check (one for eval and the monitor) names each field that has one
    assert [(bad.row, bad.field) for bad in first.bad] == [
        (1, "user_input"),
        (1, "retrieved_contexts"),
    ]
    assert first.samples == 0 and all("lone surrogate" in bad.message for bad in first.bad)
    write(source, [row(1, 4), row(2, 4)])
    resumed = monitoring().poll()
    assert resumed.samples == 2 and [w.n_samples for w in resumed.windows] == [2]


def _damaged_states() -> list[tuple[str | None, object, str]]:
    return [
        ("open", "x", "'open' is str, expected list"),
        ("counts", {"lines": "1", "samples": 0, "bad": 0, "late": 0}, "counts['lines']"),
        ("next_index", 1.5, "'next_index' is float"),
        ("next_index", True, "'next_index' is bool"),
        ("baseline", {"faithfulness": [0.5, None]}, "baseline['faithfulness']"),
        ("open", [{"key": 0, "samples": [{"record": {}}], "full": False}], "open[0].samples[0]"),
        ("open", [{"samples": [], "full": False}], "open[0] has no numeric 'key'"),
        ("closed", [{"window": {}}], "closed[0] needs"),
        ("files", {"a": {"offset": "9"}}, "files['a'].offset"),
        ("watermark", "NaN", "'watermark' is 'NaN'"),
        (None, [1, 2], "expected a JSON object, got list"),
    ]


@pytest.mark.parametrize("case", range(len(_damaged_states())))
def test_a_well_formed_state_with_wrong_types_is_refused_in_one_line(tmp_path, case):
    key, value, message = _damaged_states()[case]
    source = tmp_path / "traffic.jsonl"
    write(source, GOOD, mode="w")

    def monitoring():
        return Monitor(source, "faithfulness", window=100, state_dir=tmp_path / "s",
                       judge=judge(), record_runs=False)  # fmt: skip

    monitoring().poll()
    state_file = tmp_path / "s" / "state.json"
    state = json.loads(state_file.read_text(encoding="utf-8"))
    state_file.write_text(json.dumps(value if key is None else {**state, key: value}))
    with pytest.raises(ValueError, match="is damaged") as caught:
        monitoring().poll()
    assert message in str(caught.value) and "move it away" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_window_whose_judge_was_down_stays_open_and_is_scored_later_once(tmp_path):
    down = True
    calls = []

    def answering(messages, schema):
        if down:
            raise JudgeTransientError("HTTP 503 from the judge")
        calls.append(schema.__name__)
        return answer(messages, schema)

    source = tmp_path / "traffic.jsonl"
    write(source, GOOD, mode="w")

    def monitoring():
        return Monitor(
            source, "faithfulness", window=8, state_dir=tmp_path / "s",
            judge=ScriptedJudge(answering), record_runs=False, n_resamples=200,
        )  # fmt: skip

    first = monitoring().poll()
    assert first.windows == [] and len(first.unscored) == 1
    assert "window 1" in first.unscored[0] and "0 of 8 sample(s) scored" in first.unscored[0]
    assert "HTTP 503" in first.unscored[0]
    again = monitoring().poll()  # still down: still open, still not closed as 0 of 8
    assert again.windows == [] and len(again.unscored) == 1
    down = False
    later = monitoring().poll()  # a new process, resumed from the state: scored now
    (window,) = later.windows
    assert (window.index, window.n_samples, later.unscored) == (1, 8, [])
    assert window.metrics[0].mean == pytest.approx(0.875)
    assert len(calls) == 2 * 8  # two judge calls a sample, each made once
    assert monitoring().poll(flush=True).windows == []  # nothing left to score twice


KILLED_MONITOR = """
import os, sys
from pathlib import Path
from ragmeter.monitor import Monitor
from ragmeter.testing import ScriptedJudge
from tests.monitor.judge import answer

tmp, kill_at = Path(sys.argv[1]), int(sys.argv[2])
answered = []

def answering(messages, schema):
    if len(answered) + 1 == kill_at:
        os._exit(9)  # as kill -9: no cleanup, no state saved after this point
    answered.append(schema.__name__)
    with (tmp / "paid.txt").open("a") as handle:
        handle.write(schema.__name__ + "\\n")
    return answer(messages, schema)

Monitor(tmp / "traffic.jsonl", "faithfulness", window=8, state_dir=tmp / "s",
        judge=ScriptedJudge(answering), record_runs=False, concurrency=1).poll()
"""


def test_a_monitor_killed_mid_window_resumes_it_losing_nothing_and_paying_nothing_twice(
    tmp_path,
):
    write(tmp_path / "traffic.jsonl", GOOD, mode="w")
    root = Path(__file__).resolve().parents[2]
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_MONITOR, str(tmp_path), "5"],
        cwd=root, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert killed.returncode == 9, killed.stderr
    first = (tmp_path / "paid.txt").read_text().splitlines()
    assert len(first) == 4  # two samples scored (two calls each), then killed
    calls = []

    def answering(messages, schema):
        calls.append(schema.__name__)
        return answer(messages, schema)

    resumed = Monitor(
        tmp_path / "traffic.jsonl", "faithfulness", window=8, state_dir=tmp_path / "s",
        judge=ScriptedJudge(answering), record_runs=False, n_resamples=200,
    ).poll()  # fmt: skip
    (window,) = resumed.windows
    assert (window.index, window.n_samples) == (1, 8)
    assert window.metrics[0].mean == pytest.approx(0.875)  # every sample, once
    assert len(first) + len(calls) == 2 * 8  # the 4 calls paid before the kill not redone


def test_a_state_nested_too_deeply_is_refused_in_one_line(tmp_path):
    """Found by bench/probe_surfaces.py: a RecursionError reached the user as a traceback."""
    source = tmp_path / "traffic.jsonl"
    write(source, GOOD, mode="w")
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "state.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="nested too deeply") as caught:
        Monitor(source, "faithfulness", window=100, state_dir=tmp_path / "s", judge=judge(),
                record_runs=False).poll()  # fmt: skip
    assert "move it away" in str(caught.value)
