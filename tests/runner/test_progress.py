import asyncio
import io
import json
import sys
from pathlib import Path

from rich.console import Console

from ragmeter import Dataset, evaluate, load_dataset
from ragmeter.judge import Usage
from ragmeter.runner import (
    PlainProgress,
    QuietProgress,
    RichProgress,
    SampleTask,
    aevaluate,
    make_progress,
)
from tests.metrics.llm import scripts
from tests.runner._fakes import samples

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_progress_shows_samples_calls_and_failures():
    out = io.StringIO()
    reporter = RichProgress(Console(file=out, width=200, force_terminal=False))
    evaluate(samples(5), ["faithfulness", "rouge_l"], judge=scripts.judge(), progress=reporter)
    text = out.getvalue()
    assert "judged metrics" in text and "5/5" in text
    assert "calls 10" in text  # 2 calls per sample for faithfulness


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def plain(clock: FakeClock, interval_s: float = 10.0) -> tuple[PlainProgress, io.StringIO]:
    out = io.StringIO()
    return PlainProgress(out, interval_s=interval_s, clock=clock), out


def test_plain_progress_prints_a_whole_line_at_start_each_quarter_and_every_interval():
    clock = FakeClock()
    reporter, out = plain(clock)
    reporter.start("judged metrics", 40)
    for i in range(40):
        clock.now += 1.2
        usage = Usage(calls=3) if i % 10 else Usage(cached_calls=1)
        reporter.advance(usage=usage, failed=int(i == 5))
    reporter.stop()
    lines = out.getvalue().splitlines()
    assert lines[0] == "judged metrics: 40 to do"
    # 10 s passed at sample 9 (10.8 s): a line; then the quarter at 10 and so on.
    assert lines[1] == (
        "judged metrics: 9/40 (22%), 1 failed, 24 calls (+1 cached), 1.2 s/sample, ETA 37 s"
    )
    assert lines[2] == (
        "judged metrics: 10/40 (25%), 1 failed, 27 calls (+1 cached), 1.2 s/sample, ETA 36 s"
    )
    assert [line.split(",")[0] for line in lines[3:]] == [
        "judged metrics: 19/40 (47%)",
        "judged metrics: 20/40 (50%)",
        "judged metrics: 29/40 (72%)",
        "judged metrics: 30/40 (75%)",
        "judged metrics: 39/40 (97%)",
        "judged metrics: 40/40 (100%)",
    ]
    assert lines[-1].endswith("108 calls (+4 cached), 1.2 s/sample, took 48 s")


def test_plain_progress_is_quiet_between_quarters_when_samples_are_fast():
    clock = FakeClock()
    reporter, out = plain(clock)
    reporter.start("retrieval & text metrics", 1000)
    for _ in range(1000):
        clock.now += 0.001
        reporter.advance()
    reporter.stop()
    lines = out.getvalue().splitlines()
    assert len(lines) == 5  # the start and the four quarters
    assert lines[-1] == "retrieval & text metrics: 1000/1000 (100%), 1000 samples/s, took 1 s"


def test_plain_progress_never_cuts_a_line_or_writes_control_characters():
    clock = FakeClock()
    reporter, out = plain(clock, interval_s=0)
    reporter.start("judged metrics", 12345)
    for _ in range(100):
        clock.now += 3725.0
        reporter.advance(usage=Usage(calls=10**6, cached_calls=10**5, cost=1.5), failed=7)
    reporter.stop()
    text = out.getvalue()
    assert len(text.splitlines()) == 101
    assert "…" not in text and "\r" not in text and "\x1b" not in text
    assert all(c == "\n" or c.isprintable() for c in text)
    assert "3725.0 s/sample, ETA 12670 h 10 min" in text.splitlines()[-1]


def test_plain_progress_prints_the_last_count_of_a_phase_stopped_early():
    clock = FakeClock()
    reporter, out = plain(clock)
    reporter.start("retrieval & text metrics", 10)
    reporter.advance(3)
    reporter.start("judged metrics", 10)
    reporter.advance(1)
    reporter.stop()
    assert out.getvalue().splitlines() == [
        "retrieval & text metrics: 10 to do",
        "retrieval & text metrics: 3/10 (30%), ETA 0 s",
        "judged metrics: 10 to do",
        "judged metrics: 1/10 (10%), ETA 0 s",
    ]


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_a_live_bar_on_a_terminal_and_plain_lines_elsewhere(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert isinstance(make_progress(True), PlainProgress)
    assert isinstance(make_progress(None), QuietProgress)  # a library call in a pipe
    assert isinstance(make_progress(False), QuietProgress)
    monkeypatch.setattr("sys.stderr", Tty())
    assert isinstance(make_progress(True), RichProgress)
    assert isinstance(make_progress(None), RichProgress)
    monkeypatch.setenv("CI", "true")  # CI logs keep every redraw of a bar
    assert isinstance(make_progress(True), PlainProgress)


def test_evaluate_with_progress_in_a_pipe_prints_plain_lines(monkeypatch):
    monkeypatch.setattr("sys.stderr", io.StringIO())
    stderr = sys.stderr
    evaluate(samples(5), ["faithfulness", "rouge_l"], judge=scripts.judge(), progress=True)
    lines = stderr.getvalue().splitlines()
    assert "retrieval & text metrics: 5 to do" in lines and "judged metrics: 5 to do" in lines
    assert any(line.startswith("judged metrics: 5/5 (100%), 10 calls") for line in lines)


def test_aevaluate_in_a_running_loop_and_results_in_dataset_order():
    async def main():
        return await aevaluate(samples(30), ["faithfulness"], judge=scripts.judge(), concurrency=7)

    result = asyncio.run(main())
    assert [s.sample_id for s in result] == [f"case-{i}" for i in range(30)]
    assert result.aggregates["faithfulness"].n_ok == 30


def test_a_sample_task_is_plain_data():
    sample = Dataset.from_records(samples(1))[0]
    task = SampleTask(3, "case-0", sample, ("faithfulness",), "zh")
    assert SampleTask.from_dict(json.loads(json.dumps(task.to_dict()))) == task


def test_the_demo_covers_every_case_in_both_languages():
    demo = load_dataset(EXAMPLES / "demo.jsonl")
    cases = {(s.metadata["language"], s.metadata["case"]) for s in demo}
    for language in ("zh", "en"):
        for case in (
            "grounded",
            "hallucinated",
            "off_topic",
            "noisy_retrieval",
            "missed_retrieval",
        ):
            assert (language, case) in cases
    kb = {json.loads(line)["id"] for line in (EXAMPLES / "demo_kb.jsonl").open(encoding="utf-8")}
    for s in demo:
        assert set(s.retrieved_context_ids) <= kb and set(s.reference_context_ids) <= kb


def test_plain_progress_of_a_phase_of_unknown_length_counts_without_percent_or_eta():
    # A JSONL file is read and scored in one pass: its number of samples is not known.
    clock = FakeClock()
    reporter, out = plain(clock)
    reporter.start("retrieval & text metrics", None)
    for _ in range(4):
        clock.now += 4
        reporter.advance(1000)
    reporter.stop()
    assert out.getvalue().splitlines() == [
        "retrieval & text metrics: started",
        "retrieval & text metrics: 3000 done, 250 samples/s",
        "retrieval & text metrics: 4000 done, 250 samples/s",
    ]
