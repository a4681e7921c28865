"""The pytest plugin (run in inner pytest sessions with ``pytester``) and ``assert_metric``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ragmeter import Dataset, Metric, MetricResult, Sample, Status
from ragmeter.judge import JudgeOutputError
from ragmeter.testing import ScriptedJudge, assert_metric, findings
from ragmeter.testing import pytest_plugin as plugin
from tests.metrics.llm import scripts

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

#: The inner sessions' conftest: the scripted judge of the seeds' AirPods sample.
CONFTEST = """
import pytest
from tests.metrics.llm import scripts

@pytest.fixture(scope="session")
def ragmeter_judge():
    return scripts.judge()

@pytest.fixture(scope="session")
def ragmeter_embeddings():
    return scripts.embeddings()
"""


@pytest.fixture(scope="module")
def _loaded() -> None:
    """The modules the inner sessions use, imported here first. pytester's in-process runs
    drop from ``sys.modules`` what an inner session imported, so a module first imported
    there is imported again, as new classes, by the next session, while the modules loaded
    before keep the old ones: the scripted judge's answers were then read another way (2
    claims scored by P(supported) instead of 3 by verdict), and the sessions' results
    depended on which test ran first in the process (10 of 25 failed with the file alone)."""
    from ragmeter import evaluate

    metrics = ["faithfulness", "context_recall", "context_precision", "answer_relevancy"]
    evaluate([scripts.SAMPLE], metrics, judge=scripts.judge(), embeddings=scripts.embeddings())


@pytest.fixture
def inner(pytester: pytest.Pytester, _loaded: None) -> pytest.Pytester:
    """A pytester directory that imports this repository's ``tests`` package."""
    pytester.syspathinsert(ROOT)
    pytester.makeconftest(CONFTEST)
    return pytester


def write_dataset(path: Path, n: int = 2) -> Path:
    rows = [dict(scripts.SAMPLE, id=f"airpods-{i}") for i in range(1, n + 1)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


# -- the plugin in pytest sessions ---------------------------------------------------------


def test_plugin_loads_from_its_entry_point(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_fixtures_exist(request):
            for name in ("ragmeter_judge", "ragmeter_embeddings", "ragmeter_dataset",
                         "ragmeter_assert"):
                assert request._fixturemanager.getfixturedefs(name, request.node), name
            assert request.config.pluginmanager.has_plugin("ragmeter")
        """
    )
    result = pytester.runpytest_subprocess("--trace-config")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*ragmeter*ragmeter*testing*pytest_plugin*"])
    # nothing asserted, no judge: no ragmeter section
    assert "= ragmeter =" not in result.stdout.str()
    disabled = pytester.runpytest_subprocess("-p", "no:ragmeter", "--fixtures")
    assert "ragmeter_assert" not in disabled.stdout.str()


def test_fixtures_are_documented(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--fixtures")
    out = result.stdout.str()
    for name in ("ragmeter_judge", "ragmeter_embeddings", "ragmeter_dataset", "ragmeter_assert"):
        assert name in out
    help_text = pytester.runpytest("--help").stdout.str()
    assert "--ragmeter-skip-judge" in help_text
    assert "--ragmeter-dataset" in help_text


def test_scripted_judge_passes_and_fails_with_the_unsupported_claim(
    inner: pytest.Pytester,
) -> None:
    inner.makepyfile(
        """
        import pytest
        from tests.metrics.llm import scripts

        @pytest.mark.ragmeter_judge
        def test_faithful_enough(ragmeter_assert):
            result = ragmeter_assert(scripts.SAMPLE, "faithfulness", ge=0.6)
            assert result.score == pytest.approx(2 / 3)

        @pytest.mark.ragmeter_judge
        def test_not_faithful_enough(ragmeter_assert):
            ragmeter_assert(scripts.SAMPLE, "faithfulness", ge=0.9)
        """
    )
    result = inner.runpytest("--strict-markers")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: faithfulness = 0.6667, expected >= 0.9 (sample 'row-1')",
            "*reason: 2 of 3 claims are supported by the contexts",
            "*unsupported claims (1 of 3):",
            "*- 购买 AppleCare+ 可延保至 3 年*",
        ]
    )
    out = result.stdout.str()
    # the supported claims are not listed as unsupported
    assert "- AirPods Pro 2 标准保修期为 1 年" not in out


def test_terminal_summary_lists_scores_bounds_and_judge_usage(inner: pytest.Pytester) -> None:
    inner.makepyfile(
        """
        from tests.metrics.llm import scripts

        def test_pass(ragmeter_assert):
            ragmeter_assert(scripts.SAMPLE, "faithfulness", ge=0.6)

        def test_fail(ragmeter_assert):
            ragmeter_assert(scripts.SAMPLE, "faithfulness", ge=0.9)

        def test_retrieval(ragmeter_assert):
            sample = {"retrieved_context_ids": ["a", "b"], "reference_context_ids": ["b"]}
            ragmeter_assert(sample, "mrr", le=0.5)
        """
    )
    result = inner.runpytest()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*= ragmeter =*",
            "result*metric*score*bound*judge calls*test*",
            "PASS*faithfulness*0.6667*>= 0.6*2*test_*.py::test_pass",
            "FAIL*faithfulness*0.6667*>= 0.9*0 (+2 cached)*test_*.py::test_fail",
            "PASS*mrr*0.5000*<= 0.5*-*test_*.py::test_retrieval",
            "3 assertion(s): 2 passed, 1 failed",
            "judge: 2 calls, 2 cached, * prompt + * completion tokens, cost 0.0000",
        ]
    )


def test_dataset_fixture_from_option_and_ini(inner: pytest.Pytester) -> None:
    write_dataset(inner.path / "golden.jsonl")
    inner.makepyfile(
        """
        def test_recall(ragmeter_dataset, ragmeter_assert):
            assert len(ragmeter_dataset) == 2
            result = ragmeter_assert(ragmeter_dataset, "context_recall", ge=0.8)
            assert result.aggregates["context_recall"].n_ok == 2

        def test_recall_too_high(ragmeter_dataset, ragmeter_assert):
            ragmeter_assert(ragmeter_dataset, "context_recall", ge=0.9)
        """
    )
    result = inner.runpytest("--ragmeter-dataset", "golden.jsonl")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: context_recall mean = 0.8000 over 2/2 scored samples, "
            "expected >= 0.9: the mean is outside the bound",
            "*samples outside the bound (2 of 2 scored, worst first):",
            "*- 'airpods-1': 0.8000",
            "*reference statements not found in the contexts (1 of 5):",
            "*- 需保留发票",
            "*- 'airpods-2': 0.8000",
        ]
    )
    result.stdout.fnmatch_lines(["FAIL*context_recall*0.8000*>= 0.9*mean of 2*"])

    (inner.path / "data").mkdir()
    write_dataset(inner.path / "data" / "golden.jsonl")
    inner.makeini("[pytest]\nragmeter_dataset = data/golden.jsonl\n")
    from_ini = inner.runpytest()
    from_ini.assert_outcomes(passed=1, failed=1)


def test_dataset_fixture_skips_or_fails_when_not_usable(inner: pytest.Pytester) -> None:
    inner.makepyfile(
        """
        def test_needs_data(ragmeter_dataset):
            pass
        """
    )
    skipped = inner.runpytest("-rs")
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(["*ragmeter: no dataset configured (give --ragmeter-dataset*"])
    missing = inner.runpytest("--ragmeter-dataset", "nowhere.jsonl")
    missing.assert_outcomes(errors=1)
    missing.stdout.fnmatch_lines(["*ragmeter: dataset file 'nowhere.jsonl' does not exist*"])


@pytest.mark.parametrize("how", ["option", "env"])
def test_skip_judge_skips_marked_tests(
    inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    inner.makepyfile(
        """
        import pytest
        from tests.metrics.llm import scripts

        @pytest.mark.ragmeter_judge
        def test_judged(ragmeter_assert):
            ragmeter_assert(scripts.SAMPLE, "faithfulness", ge=0.6)

        def test_retrieval(ragmeter_assert):
            sample = {"retrieved_context_ids": ["a", "b"], "reference_context_ids": ["b"]}
            ragmeter_assert(sample, "precision@2", ge=0.5)
        """
    )
    args = ["-rs", "--strict-markers"]
    if how == "option":
        args.append("--ragmeter-skip-judge")
    else:
        monkeypatch.setenv("RAGMETER_SKIP_JUDGE", "1")
    result = inner.runpytest(*args)
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["*SKIPPED*ragmeter: judge-using tests are skipped (--ragmeter-skip-judge*"]
    )
    monkeypatch.delenv("RAGMETER_SKIP_JUDGE", raising=False)
    inner.runpytest("--strict-markers").assert_outcomes(passed=2)


def test_default_judge_fixture_skips_without_a_judge(pytester: pytest.Pytester) -> None:
    """The plugin's own judge (no override) skips under --ragmeter-skip-judge, also when
    ``ragmeter_assert`` asks for it; a retrieval metric never sets it up."""
    pytester.makepyfile(
        """
        def test_direct(ragmeter_judge):
            raise AssertionError("not reached")

        def test_through_assert(ragmeter_assert):
            ragmeter_assert({"user_input": "q", "response": "a", "retrieved_contexts": ["c"]},
                            "faithfulness", ge=0.5)

        def test_retrieval_needs_no_judge(ragmeter_assert):
            ragmeter_assert({"retrieved_context_ids": ["a"], "reference_context_ids": ["a"]},
                            "hit@1", ge=1)
        """
    )
    result = pytester.runpytest("--ragmeter-skip-judge", "-rs")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["judge: not used"])


def test_explicit_judge_style_is_counted_in_the_summary(inner: pytest.Pytester) -> None:
    inner.makepyfile(
        """
        from ragmeter.testing import assert_metric
        from tests.metrics.llm import scripts

        def test_plain(ragmeter_judge):
            assert_metric(scripts.SAMPLE, "context_precision", ge=0.8, judge=ragmeter_judge)

        def test_own_judge():
            judge = scripts.judge()
            assert_metric(scripts.SAMPLE, "context_recall", ge=0.8, judge=judge)
        """
    )
    result = inner.runpytest()
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "PASS*context_precision*0.8333*>= 0.8*1*::test_plain",
            "PASS*context_recall*0.8000*>= 0.8*1*::test_own_judge",
            "judge: 2 calls, 0 cached,*",
        ]
    )


# -- assert_metric on its own --------------------------------------------------------------


class Broken(Metric):
    """Always raises (a metric with a bug)."""

    name = "broken"

    def score(self, sample: Sample) -> MetricResult:
        raise RuntimeError("boom")


RANKED: dict[str, Any] = {"retrieved_context_ids": ["a", "b"], "reference_context_ids": ["b"]}
UNANSWERABLE = {"id": "q-none", "retrieved_context_ids": ["a"], "reference_context_ids": []}


def test_single_sample_returns_its_result() -> None:
    result = assert_metric(RANKED, "mrr", ge=0.5, le=0.5)
    assert isinstance(result, MetricResult)
    assert result.score == 0.5
    assert assert_metric(Sample(**RANKED), "precision@2", ge=0.5).score == 0.5


def test_single_sample_failure_message() -> None:
    with pytest.raises(AssertionError) as caught:
        assert_metric(scripts.SAMPLE, "faithfulness", ge=0.9, judge=scripts.judge())
    message = str(caught.value)
    assert message.startswith("faithfulness = 0.6667, expected >= 0.9 (sample 'row-1')")
    claim = "购买 AppleCare+ 可延保至 3 年 (judge: reason 3)"
    assert f"unsupported claims (1 of 3):\n    - {claim}" in message
    assert "question: AirPods Pro 2 保修多久？" in message


def test_upper_bound_and_range() -> None:
    with pytest.raises(AssertionError, match=r"mrr = 0.5000, expected <= 0.4"):
        assert_metric(RANKED, "mrr", le=0.4)
    with pytest.raises(AssertionError, match=r"expected in \[0.6, 0.9\]"):
        assert_metric(RANKED, "mrr", ge=0.6, le=0.9)


def test_not_applicable_never_passes_unless_allowed() -> None:
    with pytest.raises(AssertionError) as caught:
        assert_metric(UNANSWERABLE, "mrr", ge=0.0)
    message = str(caught.value)
    assert "mrr was not scored (sample 'q-none'): status not_applicable" in message
    assert "reason: no relevant context exists for this sample" in message
    assert "allow_not_applicable=True" in message
    allowed = assert_metric(UNANSWERABLE, "mrr", ge=0.5, allow_not_applicable=True)
    assert allowed.status is Status.NOT_APPLICABLE


def test_failed_result_never_passes() -> None:
    with pytest.raises(AssertionError) as caught:
        assert_metric(RANKED, Broken(), ge=0.0, allow_not_applicable=True)
    message = str(caught.value)
    assert "broken was not scored (sample 'row-1'): status failed" in message
    assert "error: RuntimeError: boom" in message

    judge = ScriptedJudge(lambda messages, schema: JudgeOutputError("nonsense answer"))
    with pytest.raises(AssertionError, match="error: JudgeOutputError: nonsense answer"):
        assert_metric(scripts.SAMPLE, "faithfulness", ge=0.0, judge=judge)


def test_dataset_mean_and_return_value(tmp_path: Path) -> None:
    rows = [RANKED, {"retrieved_context_ids": ["b"], "reference_context_ids": ["b"]}]
    result = assert_metric(rows, "mrr", ge=0.75)
    assert result.aggregates["mrr"].mean == 0.75
    assert assert_metric(Dataset.from_records(rows), "mrr", ge=0.75).aggregates["mrr"].n_ok == 2
    path = write_dataset(tmp_path / "airpods.jsonl", n=3)
    by_path = assert_metric(path, "context_recall", ge=0.8, judge=scripts.judge())
    assert by_path.scores("context_recall") == pytest.approx([0.8, 0.8, 0.8])
    assert assert_metric(str(path), "context_recall", ge=0.8, judge=scripts.judge())


def test_dataset_lists_failed_and_not_applicable_samples() -> None:
    rows = [dict(RANKED, id="q-ok"), UNANSWERABLE]
    with pytest.raises(AssertionError) as caught:
        assert_metric(rows, "mrr", ge=0.1)
    message = str(caught.value)
    assert "mrr mean = 0.5000 over 1/2 scored samples, expected >= 0.1" in message
    assert "1 sample(s) not applicable" in message
    assert "- 'q-none': not_applicable" in message
    assert_metric(rows, "mrr", ge=0.1, allow_not_applicable=True)

    with pytest.raises(AssertionError) as failed:
        assert_metric(rows, Broken(), ge=0.0, allow_not_applicable=True)
    assert "mean = none over 0/2 scored samples" in str(failed.value)
    assert "no sample of 2 got a score; 2 sample(s) failed" in str(failed.value)
    assert "- 'q-ok': failed\n      error: RuntimeError: boom" in str(failed.value)


def test_dataset_every_sample_with_mean_false() -> None:
    rows = [
        dict(RANKED, id="half"),
        {"id": "full", "retrieved_context_ids": ["b"], "reference_context_ids": ["b"]},
    ]
    assert_metric(rows, "mrr", ge=0.7)  # the mean (0.75) passes
    with pytest.raises(AssertionError) as caught:
        assert_metric(rows, "mrr", ge=0.7, mean=False)
    message = str(caught.value)
    assert "expected every sample >= 0.7: 1 of 2 scored samples are outside the bound" in message
    assert "- 'half': 0.5000" in message
    assert "'full'" not in message


def test_worst_samples_come_first_and_are_capped() -> None:
    rows = [
        {"id": f"s{i}", "retrieved_context_ids": ["x"] * i + ["b"], "reference_context_ids": ["b"]}
        for i in range(8)
    ]
    with pytest.raises(AssertionError) as caught:
        assert_metric(rows, "mrr", ge=0.9)
    message = str(caught.value)
    assert "samples outside the bound (7 of 8 scored, worst first)" in message
    assert message.index("'s7'") < message.index("'s6'") < message.index("'s3'")
    assert "'s2'" not in message and "... and 2 more" in message


def test_bad_bounds_are_errors_not_failures() -> None:
    with pytest.raises(ValueError, match="needs a bound"):
        assert_metric(RANKED, "mrr")
    with pytest.raises(ValueError, match="no score can pass"):
        assert_metric(RANKED, "mrr", ge=0.9, le=0.1)
    with pytest.raises(ValueError, match="finite"):
        assert_metric(RANKED, "mrr", ge=float("nan"))


def test_findings_of_the_judged_metrics() -> None:
    """What the failure message shows, from the real details of the judged metrics."""
    from ragmeter import evaluate

    names = ["faithfulness", "context_precision", "context_recall", "answer_relevancy"]
    result = evaluate(
        [scripts.SAMPLE], names, judge=scripts.judge(), embeddings=scripts.embeddings()
    )
    entry = result.samples[0]
    found = {name: dict(findings(entry.scores[name].details, entry.sample)) for name in names}
    assert found["faithfulness"] == {
        "unsupported claims (1 of 3)": ["购买 AppleCare+ 可延保至 3 年 (judge: reason 3)"]
    }
    assert found["context_precision"]["contexts judged not useful (3 of 5)"] == [
        "#2 扫地机器人使用手册。 (judge: r)",
        "#4 电视遥控器配对说明。 (judge: r)",
        "#5 耳机清洁指南。 (judge: r)",
    ]
    assert found["context_recall"] == {
        "reference statements not found in the contexts (1 of 5)": ["需保留发票"]
    }
    questions = found["answer_relevancy"][
        "questions the response answers, by similarity to the question"
    ]
    assert questions[0] == "退款多久到账？ (similarity 0.55)"


def test_findings_of_claim_comparisons() -> None:
    details = {
        "claims": [
            {"claim": "a", "side": "response", "in_reference": True},
            {"claim": "b", "side": "response", "in_reference": False},
            {"claim": "c", "side": "reference", "in_response": False},
        ]
    }
    assert findings(details) == [
        ("response claims the reference does not support (1 of 2)", ["b"]),
        ("reference statements missing from the response (1 of 1)", ["c"]),
    ]
    assert findings({"noncommittal": True, "questions": ["q"], "similarities": []}) == [
        ("the response is noncommittal", [])
    ]
    assert findings({}) == []


def test_findings_read_typed_details() -> None:
    from ragmeter.metrics import (
        ClaimCheck,
        ClaimVerdict,
        ContextCriterion,
        ContextJudgment,
        Details,
        NoiseClaimVerdict,
    )

    details = Details(
        claims=(
            ClaimVerdict("listed only"),  # multi-hop completeness: no verdict, no finding
            ClaimVerdict("a", ClaimCheck.SUPPORTED, False, "not said"),
            NoiseClaimVerdict("n", ClaimCheck.CORRECT, False, counted=True),
        ),
        contexts=(ContextJudgment(2, ContextCriterion.RELEVANT, False, "off topic"),),
    )
    assert findings(details) == [
        ("unsupported claims (1 of 1)", ["a (judge: not said)"]),
        ("incorrect claims counted as noise (1 of 1)", ["n"]),
        ("contexts judged not relevant (1 of 1)", ["#2 (judge: off topic)"]),
    ]


def test_summary_lines_without_a_session() -> None:
    log = plugin.SessionLog()
    assert plugin.summary_lines(log) == []
    log.add_record(
        test="t.py::test_a", metric="mrr", score=0.5, bound=">= 0.4", passed=True, n_samples=1
    )
    judge = scripts.judge()
    log.add_judge(judge)
    assert_metric(scripts.SAMPLE, "faithfulness", ge=0.6, judge=judge)
    lines = plugin.summary_lines(log)
    assert lines[1].split() == ["PASS", "mrr", "0.5000", ">=", "0.4", "1", "-", "t.py::test_a"]
    assert lines[-1].startswith("judge: 2 calls, 0 cached, ")


def test_plugin_import_is_light() -> None:
    """Loading the plugin imports no ragmeter module beyond its parent packages'."""
    code = (
        "import sys; before = set(sys.modules); import ragmeter.testing.pytest_plugin; "
        "new = {m for m in set(sys.modules) - before if m.startswith('ragmeter.testing')}; "
        "print(sorted(new))"
    )
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['ragmeter.testing', 'ragmeter.testing.pytest_plugin']"
