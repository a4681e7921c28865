import asyncio
import io
import json
from pathlib import Path

from rich.console import Console

from ragmeter import Dataset, evaluate, load_dataset
from ragmeter.runner import SampleTask, aevaluate
from ragmeter.runner._progress import RichProgress
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
