"""UsageLedger.sample_usage: a sample's finished calls plus what its calls under way sent,
as a snapshot that later requests do not change."""

from __future__ import annotations

from ragmeter.judge import Usage, UsageLedger


def test_a_sample_with_nothing_recorded_has_no_usage() -> None:
    assert UsageLedger().sample_usage("s1") == Usage()


def test_a_lone_call_under_way_is_counted_as_a_snapshot() -> None:
    ledger = UsageLedger()
    live = Usage(calls=1)
    ledger.begin_call(live, "s1")
    seen = ledger.sample_usage("s1")
    live.calls += 1  # a retry goes out after the snapshot was taken
    assert seen.calls == 1 and seen is not live
    assert ledger.sample_usage("s1").calls == 2


def test_recorded_and_live_calls_add_up() -> None:
    ledger = UsageLedger()
    ledger.record(Usage(calls=2, prompt_tokens=30), sample_id="s1")
    ledger.begin_call(Usage(calls=1, prompt_tokens=5), "s1")
    ledger.begin_call(Usage(calls=1, retries=1), "s1")
    ledger.begin_call(Usage(calls=7), "s2")  # another sample's call: not counted
    used = ledger.sample_usage("s1")
    # calls 2 + 1 + 1 = 4; prompt tokens 30 + 5 = 35; retries 0 + 0 + 1 = 1
    assert (used.calls, used.prompt_tokens, used.retries) == (4, 35, 1)


def test_a_finished_call_leaves_only_its_record() -> None:
    ledger = UsageLedger()
    live = Usage(calls=1, completion_tokens=4)
    ledger.begin_call(live, "s1")
    ledger.record(live, sample_id="s1")
    ledger.end_call(live, "s1")
    # counted once (recorded), not twice (recorded + live)
    assert ledger.sample_usage("s1") == Usage(calls=1, completion_tokens=4)
