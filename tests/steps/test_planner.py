"""The planner on its own: which judgments a set of needs asks for, how they are grouped into
calls, what waits for what, per-verdict judges, and the re-ask."""

import asyncio
import re

import pytest

from ragmeter import Sample
from ragmeter.judge import BinaryVerdict, JudgeConfigError, JudgeError
from ragmeter.steps import JUDGMENTS, Need, StepRunner, schema_for
from ragmeter.testing import ScriptedJudge
from tests.metrics.llm import scripts
from tests.steps.calls import batched_answer, verdict_answer

SAMPLE = Sample(**scripts.SAMPLE)
CLAIMS_VS_CONTEXTS = Need("support", claims_of="response", against=("contexts",))
ATTRIBUTED = Need("statements", against=("contexts",))


def gather(judge, needs, **options):
    return asyncio.run(StepRunner(judge, **options).gather(SAMPLE, needs))


def judge(answer=batched_answer, *, batched=True):
    scripted = ScriptedJudge(answer)
    scripted.supports_batched_verdicts = batched
    return scripted


def kinds(judge):
    return [c.schema.__name__ for c in judge.calls]


# -- which judgments ----------------------------------------------------------------------------
def test_a_need_plans_its_judgment_and_those_it_depends_on_in_table_order():
    planned = StepRunner.plan([CLAIMS_VS_CONTEXTS, Need("usefulness_reference")])
    assert [(p.kind.name, p.name) for p in planned] == [
        ("response_claims", "response_claims"),  # what the verification reads
        ("usefulness_reference", "usefulness_reference"),
        ("support:response", "support:response"),
    ]
    assert planned[2].needs == [CLAIMS_VS_CONTEXTS] and planned[0].needs == []


def test_equal_needs_are_one_request_and_custom_prompts_one_each():
    from tests.steps.calls import Politeness

    planned = StepRunner.plan(
        [Need("questions", n=2), Need("questions", n=3), Need("custom", prompt=Politeness())]
    )
    # answer_relevance serves the questions' need too; it applies only to a judge whose
    # verdicts are likelihoods, and questions only to the others (decided when run)
    assert [p.name for p in planned] == ["questions", "answer_relevance", "custom:politeness@1"]
    assert planned[0].needs == [Need("questions", n=2), Need("questions", n=3)]


def test_every_builtin_judgment_has_a_template_task_or_its_own_way_of_asking():
    for kind in JUDGMENTS.values():
        assert (kind.template and kind.task and kind.output) or kind.call or kind.by_verdicts


# -- grouping --------------------------------------------------------------------------------------
def test_judgments_sharing_a_template_are_one_call_doing_all_their_tasks():
    j = judge()
    needs = [Need("response_claims"), Need("questions", n=3), Need("statements")]
    needs += [Need("usefulness_reference"), Need("entities")]
    facts = gather(j, needs, language="en")
    # the questions are written from the answer alone: a template (and a call) of their own
    assert sorted(kinds(j)) == [
        "ReferenceReviewStatementsUsefulnessEntities",
        "ResponseAnalysisClaims",
        "ReverseQuestionsQuestions",
    ]
    review = next(c for c in j.calls if c.schema.__name__.startswith("ReferenceReview"))
    system = review.messages[0].content
    assert all(f'Task "{t}"' in system for t in ("statements", "usefulness", "entities"))
    assert facts.response_claims == scripts.CLAIMS and facts.questions == scripts.QUESTIONS
    assert len(facts.statements) == 5 and len(facts.usefulness_reference) == 5
    assert [e.text for e in facts.entities] == ["AirPods Pro 2", "1 年", "发票"]


def test_a_task_is_asked_once_per_call_so_both_verifications_are_separate_calls():
    j = judge()
    back = Need("support", claims_of="reference", against=("response",))
    facts = gather(j, [CLAIMS_VS_CONTEXTS, back])
    assert sorted(kinds(j)) == [
        "ReferenceReviewStatements",
        "ResponseAnalysisClaims",
        "VerifySupport",
        "VerifySupport",
    ]
    assert facts.support_for(back).passages == ("response",)
    assert len(facts.support_for(CLAIMS_VS_CONTEXTS).passages) == 5


def test_the_combined_schema_is_named_after_template_and_tasks():
    model = schema_for("reference_review", ("statements", "entities"))
    assert model.__name__ == "ReferenceReviewStatementsEntities"
    assert list(model.model_fields) == ["statements", "entities"]


# -- dependencies --------------------------------------------------------------------------------
def test_the_verification_waits_for_the_claims_and_checks_exactly_them():
    j = judge()
    seen_in_time = {}

    async def while_verifying(facts):
        seen_in_time["claims"] = facts.response_claims

    asyncio.run(StepRunner(j).gather(SAMPLE, [CLAIMS_VS_CONTEXTS], while_verifying=while_verifying))
    assert kinds(j) == ["ResponseAnalysisClaims", "VerifySupport"]
    block = j.calls[1].messages[-1].content.split("<claims>")[1].split("</claims>")[0]
    assert re.findall(r'<item index="\d+">(.*?)</item>', block) == scripts.CLAIMS
    # what needs no verdict is known when the verification starts
    assert seen_in_time == {"claims": scripts.CLAIMS}


def test_when_the_claims_fail_nothing_is_verified_and_the_need_reports_the_claims_error():
    def answer(messages, schema):
        if schema.__name__.startswith("ResponseAnalysis"):
            return JudgeError("down")
        return batched_answer(messages, schema)

    j = judge(answer)
    facts = gather(j, [CLAIMS_VS_CONTEXTS])
    assert kinds(j) == ["ResponseAnalysisClaims"]
    assert facts.error_for([CLAIMS_VS_CONTEXTS]) == "JudgeError: down"
    assert "support:response" not in facts.errors and facts.support == {}


def test_statements_are_attributed_by_verdicts_before_what_needs_no_verdict_runs():
    j = judge(verdict_answer, batched=False)
    seen = {}

    async def while_verifying(facts):
        seen["statements"] = [s.contexts for s in facts.statements]

    asyncio.run(StepRunner(j).gather(SAMPLE, [ATTRIBUTED], while_verifying=while_verifying))
    review = j.calls[0]
    assert review.schema.__name__ == "ReferenceReviewStatements"
    assert "<contexts>" not in review.messages[-1].content  # attribution is asked per verdict
    verdicts = [c for c in j.calls[1:] if c.schema is BinaryVerdict]
    assert len(verdicts) == len(j.calls) - 1 == 5 * 5  # statements x contexts
    assert all("<statement>" in c.messages[-1].content for c in verdicts)
    # contexts 1 and 3 mention AirPods: every statement "supported" by them
    assert seen["statements"] == [(0, 2)] * 5


def test_a_batching_judge_attributes_statements_in_the_review_call():
    j = judge()
    facts = gather(j, [ATTRIBUTED])
    assert kinds(j) == ["ReferenceReviewStatements"]
    assert "<contexts>" in j.calls[0].messages[-1].content
    assert [s.contexts for s in facts.statements] == [(0,), (0,), (2,), (2,), ()]


# -- batching vs one verdict per call -----------------------------------------------------------
def by_text(messages, schema):
    """Yes when the passage under judgment mentions AirPods."""
    if schema is BinaryVerdict:
        text = re.search(r"<text>\n(.*?)\n</text>", messages[-1].content, re.DOTALL).group(1)
        return {"verdict": int("AirPods" in text)}
    return batched_answer(messages, schema)


def test_a_judge_that_cannot_batch_verdicts_rates_each_context_in_its_own_call():
    batching, single = judge(), judge(by_text, batched=False)
    needs = [Need("statements"), Need("usefulness_reference"), Need("usefulness_question")]
    gather(batching, needs)
    facts = gather(single, needs, language="en")
    assert sorted(kinds(batching)) == [
        "ContextRelevanceUsefulness",
        "ReferenceReviewStatementsUsefulness",
    ]
    assert sorted(set(kinds(single))) == ["BinaryVerdict", "ReferenceReviewStatements"]
    assert kinds(single).count("BinaryVerdict") == 5 + 5
    useful = [c for c in single.calls if "with the given answer?" in c.messages[0].content]
    relevant = [c for c in single.calls if "information needed" in c.messages[0].content]
    assert len(useful) == len(relevant) == 5
    assert all("<answer>" in c.messages[-1].content for c in useful)
    assert [v.useful for v in facts.usefulness_reference] == [True, False, True, False, False]


def test_no_contexts_no_usefulness_call():
    j = judge()
    facts = asyncio.run(
        StepRunner(j).gather(
            Sample(**{**scripts.SAMPLE, "retrieved_contexts": []}),
            [Need("usefulness_reference"), Need("usefulness_response")],
        )
    )
    assert j.calls == [] and facts.usefulness_reference == [] and facts.usefulness_response == []


# -- re-ask ----------------------------------------------------------------------------------------
class SaltJudge(ScriptedJudge):
    def __init__(self, answer):
        super().__init__(answer)
        self.salts = []

    async def generate(self, messages, schema, **options):
        self.salts.append((schema.__name__, options["salt"]))
        return await super().generate(messages, schema, **options)


def leaving_out_one_context(times):
    left = {"n": times}

    def answer(messages, schema):
        out = batched_answer(messages, schema)
        if "usefulness" in out and left["n"]:
            left["n"] -= 1
            out["usefulness"] = out["usefulness"][:-1]
        return out

    return answer


@pytest.mark.parametrize(
    "repeat, salts", [(0, ["", "re-ask"]), (2, ["repeat-2", "repeat-2|re-ask"])]
)
def test_an_incomplete_answer_is_asked_again_once_with_the_re_ask_salt(repeat, salts):
    j = SaltJudge(leaving_out_one_context(1))
    facts = gather(j, [Need("usefulness_reference"), Need("statements")], repeat=repeat)
    assert j.salts == [("ReferenceReviewStatementsUsefulness", s) for s in salts]
    assert j.calls[0].messages == j.calls[1].messages
    assert len(facts.usefulness_reference) == 5 and facts.errors == {}
    assert facts.usage.calls == 2


def test_incomplete_twice_fails_every_judgment_of_the_call():
    j = SaltJudge(leaving_out_one_context(2))
    facts = gather(j, [Need("usefulness_reference"), Need("statements")])
    assert len(j.calls) == 2
    error = "StepError: the judge rated 4 of 5 contexts (also after a re-ask)"
    assert facts.errors == {"statements": error, "usefulness_reference": error}
    assert facts.statements is None and facts.usefulness_reference is None


def test_a_configuration_error_stops_the_run():
    j = judge(lambda m, s: JudgeConfigError("bad key"))
    with pytest.raises(JudgeConfigError):
        gather(j, [Need("response_claims")])


def test_only_verdicts_on_claims_wait_for_the_verification():
    from ragmeter.steps import verifies

    assert verifies(CLAIMS_VS_CONTEXTS)
    assert verifies(Need("support", claims_of="reference", against=("response",)))
    assert not any(verifies(n) for n in (ATTRIBUTED, Need("questions", n=3), Need("entities")))


def test_a_judgment_depending_on_another_is_asked_after_it_with_its_fact():
    from typing import Literal

    from pydantic import BaseModel

    from ragmeter.prompts import parse_prompt
    from ragmeter.steps import JudgmentKind, register, unregister

    toml = """
name = "claim_check"
version = "1"
[en]
system = "Check claims."
[en.tasks]
check = "Is every claim true?"
"""

    class Check(BaseModel):
        verdict: Literal[0, 1]

    kind = JudgmentKind(
        name="claims_true",
        template="claim_check",
        task="check",
        output=Check,
        inputs=lambda r: {"claims": r.facts.response_claims or []},
        read=lambda judgment, r: bool(judgment.output.verdict),
        depends_on=("response_claims",),
        prompt=lambda language: parse_prompt(toml, language),
    )
    register(kind)
    try:

        def answer(messages, schema):
            if schema.__name__ == "ClaimCheckCheck":
                return {"verdict": 1}
            return batched_answer(messages, schema)

        j = judge(answer)
        facts = gather(j, [Need("claims_true"), Need("usefulness_reference")], language="en")
        assert facts.error_for([Need("claims_true")]) is None
    finally:
        unregister("claims_true")
    assert kinds(j) == ["ResponseAnalysisClaims", "ReferenceReviewUsefulness", "ClaimCheckCheck"]
    assert j.calls[2].messages[-1].content.count("<item index=") == len(scripts.CLAIMS)
    assert facts.value(kind) is True
