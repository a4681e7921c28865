"""The two metric protocols, the per-sample orchestrator, Fallback, and the shared helpers."""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path

import pytest

import ragmeter.metrics as metrics_package
from ragmeter import MetricResult, Sample, Status, evaluate
from ragmeter.dataset import Dataset, DatasetError
from ragmeter.embed import Embeddings
from ragmeter.metrics import (
    BatchMetric,
    CannotScore,
    Direction,
    Fallback,
    Metric,
    Requirements,
    SampleMetric,
    UnknownMetricError,
    is_async,
    parse_direction,
    resolve_metric,
    score_sample,
)
from ragmeter.metrics.custom import PromptMetric, metric
from ragmeter.metrics.llm import JudgedMetric
from ragmeter.runner import check_inputs
from ragmeter.steps import Facts, Need
from ragmeter.testing import ScriptedJudge

CLAIMS = Need("response_claims")


class ClaimCount(SampleMetric):
    """Number of the response's claims."""

    name = "claim_count"
    requires: Requirements = (("response",),)

    def needs(self, sample: Sample) -> list[Need]:
        return [CLAIMS]

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        return MetricResult.ok(len(facts.response_claims or []), "counted")


class HasClaims(ClaimCount):
    name = "has_claims"

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        return MetricResult.ok(float(bool(facts.response_claims)))


class Tagged(SampleMetric):
    """1 where the metadata has a tag; cannot decide without one (known beforehand)."""

    name = "tagged"
    requires: Requirements = (("response",),)
    _uses_judge = False

    def __init__(self, *, announce: bool = True) -> None:
        super().__init__()
        self.announce = announce
        self.asked: list[str | None] = []

    def cannot_score(self, sample: Sample) -> str | None:
        self.asked.append(sample.id)
        if not self.announce:
            return None
        return None if "tag" in sample.metadata else "no tag"

    async def compute(
        self, sample: Sample, facts: Facts, embeddings: Embeddings | None
    ) -> MetricResult:
        if "tag" not in sample.metadata:
            raise CannotScore("no tag")
        return MetricResult.ok(1.0, "tagged")


def claims(messages, schema):
    """Two claims made of the response's own words (claims not from it are left out)."""
    assert schema.__name__.startswith("ResponseAnalysis"), schema.__name__
    answer = re.search(r"<answer>\n(.*?)\n</answer>", messages[-1].content, re.DOTALL)
    return {"claims": [f"{answer.group(1)} one", f"{answer.group(1)} two"]}


def test_judged_metric_is_the_per_sample_protocol():
    assert JudgedMetric is SampleMetric
    assert issubclass(SampleMetric, Metric) and not issubclass(SampleMetric, BatchMetric)
    assert isinstance(metrics_package.get_metric("mrr"), BatchMetric)
    assert isinstance(metrics_package.get_metric("exact_match"), BatchMetric)
    assert isinstance(metrics_package.get_metric("faithfulness"), SampleMetric)


def test_uses_judge_and_embeddings_are_instance_properties():
    count = ClaimCount()
    assert count.uses_judge and not count.uses_embeddings
    count.uses_judge = False
    assert not count.uses_judge and ClaimCount().uses_judge
    assert not Fallback(Tagged()).uses_judge
    assert Fallback(Tagged(), ClaimCount()).uses_judge
    assert Fallback(Tagged(), metrics_package.get_metric("semantic_similarity")).uses_embeddings


def test_score_sample_shares_one_gather_and_asks_services_past_the_precheck():
    judge = ScriptedJudge(claims)
    asked: list[str] = []

    def services(metric_: SampleMetric):
        asked.append(metric_.name)
        return judge, None

    outcome = asyncio.run(
        score_sample(
            Sample(response="Paris is big. It is old."),
            [ClaimCount(), HasClaims()],
            services,
            sample_id="s1",
        )
    )
    assert outcome.results["claim_count"].score == 2.0
    assert outcome.results["has_claims"].score == 1.0
    assert len(judge.calls) == 1  # one extraction for both metrics
    assert outcome.usage.calls == 1 and outcome.prompt_versions
    assert asked == ["claim_count", "has_claims"]

    asked.clear()
    blank = asyncio.run(
        score_sample(Sample(response="  "), [ClaimCount()], services, sample_id="s2")
    )
    missing = asyncio.run(score_sample(Sample(), [ClaimCount()], services))
    assert blank.results["claim_count"].status is Status.NOT_APPLICABLE
    assert missing.results["claim_count"].error == "missing field(s): response"
    assert asked == [] and len(judge.calls) == 1


def test_score_and_score_batch_go_through_the_orchestrator():
    judge = ScriptedJudge(claims)
    count = ClaimCount(judge=judge)
    assert count.score(Sample(response="a. b.")).score == 2.0
    results = count.score_batch([Sample(response="c."), Sample(response="d.")])
    assert [r.score for r in results] == [2.0, 2.0]
    assert len(judge.calls) == 3


def test_a_metric_that_cannot_score_alone_is_not_applicable():
    result = Tagged().score(Sample(response="x"))
    assert result.status is Status.NOT_APPLICABLE and result.reason == "no tag"


def test_fallback_records_which_metric_scored():
    judge = ScriptedJudge(claims)
    composed = Fallback(Tagged(), ClaimCount(judge=judge))
    assert composed.name == "tagged" and composed.judge is judge
    primary = composed.score(Sample(response="x", metadata={"tag": 1}))
    assert (primary.score, primary.reason) == (1.0, "tagged")
    assert "fallback" not in primary.details and not judge.calls
    secondary = composed.score(Sample(response="x"))
    assert secondary.score == 2.0
    assert secondary.details["fallback"] == "claim_count"
    assert secondary.details["fallback_because"] == "no tag"
    assert secondary.reason == "judged by claim_count (no tag): counted"
    assert len(judge.calls) == 1
    assert composed.params() == {"fallback": {"name": "claim_count", "params": {}}}
    alone = Fallback(Tagged(), name="tag_or_nothing").score(Sample(response="x"))
    assert alone.reason == "cannot score: no tag"


def test_fallback_gathers_the_secondarys_facts_only_where_the_primary_cannot():
    judge = ScriptedJudge(claims)
    composed = Fallback(Tagged(), ClaimCount())
    records = [
        {"id": "a", "response": "x", "metadata": {"tag": "y"}},
        {"id": "b", "response": "y"},
        {"id": "c", "response": "z"},
    ]
    result = evaluate(records, [composed], judge=judge)
    assert result.scores("tagged") == [1.0, 2.0, 2.0]
    assert len(judge.calls) == 2  # b and c only


def test_a_late_cannot_score_falls_back_on_the_secondarys_own_judge():
    # The primary did not announce it: the secondary's facts were not gathered, so it
    # scores on its own, with its own judge.
    judge = ScriptedJudge(claims)
    composed = Fallback(Tagged(announce=False), ClaimCount(judge=judge))
    result = composed.score(Sample(response="x"))
    assert result.score == 2.0 and result.details["fallback"] == "claim_count"
    assert len(judge.calls) == 1


def test_fallback_to_a_batch_metric_and_its_failures():
    @metric(name="boom", requires=["response"])
    def boom(sample):
        raise RuntimeError("no")

    failed = Fallback(Tagged(), boom).score(Sample(response="x"))
    assert failed.status is Status.FAILED and failed.error == "RuntimeError: no"
    assert failed.details == {"fallback": "boom", "fallback_because": "no tag"}
    with pytest.raises(TypeError, match="fallback must be a Metric"):
        Fallback(Tagged(), "exact_match")  # type: ignore[arg-type]  # checked at run time


def test_parse_direction_is_the_one_parser():
    assert parse_direction(Direction.LOWER_IS_BETTER) is Direction.LOWER_IS_BETTER
    assert parse_direction(" Higher ") is Direction.HIGHER_IS_BETTER
    assert parse_direction("lower_is_better") is Direction.LOWER_IS_BETTER
    for word in ("up", "down", "best"):
        with pytest.raises(ValueError, match="direction must be 'higher' or 'lower'"):
            parse_direction(word)
    with pytest.raises(ValueError, match="direction must be 'higher' or 'lower'"):
        metric(name="m", direction="down")(len)
    with pytest.raises(ValueError, match="direction must be 'higher' or 'lower'"):
        PromptMetric("p", kind="discrete", instruction="i", labels=("a", "b"), direction="up")
    assert metric(name="m", direction="LOWER")(len).direction is Direction.LOWER_IS_BETTER


def test_is_async_tells_async_functions_and_callables():
    class Pipeline:
        async def __call__(self, sample):
            return ""

    async def pipeline(sample):
        return ""

    assert is_async(pipeline) and is_async(Pipeline()) and not is_async(len)


@pytest.mark.parametrize("suffix", [".toml", ".yaml", ".json"])
def test_one_resolver_reads_every_metric_file(tmp_path: Path, suffix):
    if suffix == ".yaml":
        pytest.importorskip("yaml")
    tone = PromptMetric("tone", kind="discrete", instruction="Polite?", labels=("yes", "no"))
    path = tone.save(tmp_path / f"tone{suffix}")
    assert resolve_metric(str(path)).name == "tone"
    with pytest.raises(UnknownMetricError, match="no such metric file") as error:
        resolve_metric(str(tmp_path / f"nothing{suffix}"))
    assert "no metric file" in str(error.value)


def test_the_ranking_metrics_resolve_their_names_without_the_registry():
    retrieval = Path(metrics_package.__file__).parent / "retrieval"
    for module in retrieval.glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        imported = [
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
        ]
        assert "ragmeter.metrics._registry" not in imported, module.name
    ranking = metrics_package.retrieval.ranking_metric
    assert ranking("hit_rate@3").name == "hit@3"
    with pytest.raises(UnknownMetricError, match="unknown ranking metric 'faithfulness'"):
        ranking("faithfulness")
    with pytest.raises(UnknownMetricError, match="needs a cutoff"):
        ranking("precision")


def test_one_input_checker_for_the_runner_and_the_experiments():
    data = Dataset.from_records([{"id": "a", "user_input": "q"}, {"id": "b", "response": "r"}])
    needs_response = [metric(name="m", requires=["response"])(len)]
    with pytest.raises(DatasetError, match="skip_invalid"):
        check_inputs(data, needs_response, skip_invalid=False)
    kept = check_inputs(data, needs_response, skip_invalid=True)
    assert kept.ids == ["b"] and [r.row for r in kept.invalid] == [1]
    # the response is given later (by a pipeline): not checked here
    later = check_inputs(data, needs_response, skip_invalid=True, given_later=("response",))
    assert later.ids == ["a", "b"]
