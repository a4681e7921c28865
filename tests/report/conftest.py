"""A small mixed Chinese/English run, scored by a scripted judge, for the report tests."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest

from ragmeter import Direction, EvaluationResult, MetricResult, Sample, evaluate
from ragmeter.diagnosis import Figure, Finding
from ragmeter.judge import JudgeOutputError
from ragmeter.results import MetricInfo, SampleResult
from ragmeter.testing import ScriptedJudge

METRICS = ["faithfulness", "context_precision", "context_recall", "mrr", "precision@2", "rouge_l"]
XSS = "<script>alert('x')</script>"

#: Per sample: the record, the response's claims with the contexts (1-based) that support
#: them, the reference statements with the contexts that hold them, and the useful contexts.
CASES: list[dict[str, Any]] = [
    {
        "record": {
            "id": "zh-warranty",
            "user_input": "岚屿 S3 耳机保修多久？",
            "response": "岚屿 S3 耳机保修 1 年，可延保至 3 年。",
            "reference": "岚屿 S3 耳机标准保修期为 1 年，自签收之日起算。",
            "retrieved_contexts": [
                "岚屿 S3 耳机标准保修期自签收之日起 1 年。",
                "扫地机器人使用手册。",
            ],
            "retrieved_context_ids": ["kb-1", "kb-9"],
            "reference_context_ids": ["kb-1"],
            "metadata": {"language": "zh", "question_type": "single_hop"},
        },
        "claims": {"岚屿 S3 耳机保修 1 年": [1], "可延保至 3 年": []},
        "statements": [("标准保修期为 1 年", [1]), ("自签收之日起算", [1])],
        "useful": [1],
    },
    {
        "record": {
            "id": "zh-refund",
            "user_input": "退款多久到账？",
            "response": "退款会在 3 个工作日内原路退回。",
            "reference": "审核通过后，退款在 3 个工作日内原路退回。",
            "retrieved_contexts": [
                "电视遥控器配对说明。",
                "退货审核通过后，退款会在 3 个工作日内原路退回。",
            ],
            "retrieved_context_ids": ["kb-7", "kb-3"],
            "reference_context_ids": ["kb-3"],
            "metadata": {"language": "zh", "question_type": "single_hop"},
        },
        "claims": {"退款会在 3 个工作日内原路退回": [2]},
        "statements": [("退款在 3 个工作日内原路退回", [2])],
        "useful": [2],
    },
    {
        "record": {
            "id": "en-capital",
            "user_input": "What is the capital of Australia?",
            "response": f"Sydney is the capital. {XSS}",
            "reference": "Canberra is the capital of Australia.",
            "retrieved_contexts": [
                "Sydney is the largest city in Australia.",
                "Koalas eat leaves.",
            ],
            "retrieved_context_ids": ["au-2", "au-9"],
            "reference_context_ids": ["au-1"],
            "metadata": {"language": "en", "question_type": "single_hop"},
        },
        "claims": {"Sydney is the capital": []},
        "statements": [("Canberra is the capital", [])],
        "useful": [],
    },
    {
        "record": {
            "id": "en-everest",
            "user_input": "How high is Mount Everest and where is it?",
            "response": "Mount Everest is 8,849 m high and lies in the Himalayas.",
            "reference": "Everest is 8,849 metres high, in the Himalayas on the Nepal border.",
            "retrieved_contexts": ["Everest lies in the Himalayas.", "Everest is 8,849 m high."],
            "retrieved_context_ids": ["ev-2", "ev-1"],
            "reference_context_ids": ["ev-1", "ev-2"],
            "metadata": {"language": "en", "question_type": "multi_hop"},
        },
        "claims": {"Mount Everest is 8,849 m high": [2], "It lies in the Himalayas": [1]},
        "statements": [("8,849 metres high", [2]), ("in the Himalayas", [1]), ("border", [])],
        "useful": [1, 2],
    },
]


#: The run after a change: en-capital fixed, zh-refund ranked better, en-everest gone, a new
#: sample whose judge calls fail. Every text differs from ``CASES`` (the judge tells them apart).
IMPROVED: list[dict[str, Any]] = [
    CASES[0],
    {
        "record": {
            **CASES[1]["record"],
            "response": "审核通过后 3 个工作日内退款。",
            "reference": "退款在审核通过后 3 个工作日内退回。",
            "retrieved_contexts": ["退款审核通过后，3 个工作日内退回原账户。", "门店营业时间。"],
            "retrieved_context_ids": ["kb-3", "kb-7"],
        },
        "claims": {"审核通过后 3 个工作日内退款": [1]},
        "statements": [("3 个工作日内退回", [1])],
        "useful": [1],
    },
    {
        "record": {
            **CASES[2]["record"],
            "response": "The capital is Canberra.",
            "reference": "Canberra is Australia's capital city.",
            "retrieved_contexts": ["Canberra is the capital city of Australia."],
            "retrieved_context_ids": ["au-1"],
        },
        "claims": {"The capital is Canberra": [1]},
        "statements": [("Canberra is the capital", [1])],
        "useful": [1],
    },
    {
        "record": {
            "id": "en-broken",
            "user_input": "Which judge call breaks?",
            "response": "This one breaks the judge.",
            "reference": "The broken one.",
            "retrieved_contexts": ["A context nobody can judge."],
            "retrieved_context_ids": ["x-1"],
            "reference_context_ids": ["x-1"],
            "metadata": {"language": "en", "question_type": "multi_hop"},
        },
        "fail": True,
    },
]


def _case(prompt: str) -> dict[str, Any]:
    for case in [*CASES, *IMPROVED[1:]]:
        record = case["record"]
        if any(record[k] in prompt for k in ("response", "reference")) or any(
            c in prompt for c in record["retrieved_contexts"]
        ):
            return case
    raise AssertionError("the prompt names no known sample")


def answer(messages: Sequence[Any], schema: Any) -> dict[str, Any]:
    """The scripted judge's verdicts for ``CASES``."""
    prompt = "\n".join(m.content for m in messages)
    case = _case(prompt)
    if case.get("fail"):
        raise JudgeOutputError("the judge answered with malformed JSON")
    name, fields = schema.__name__, schema.model_fields
    out: dict[str, Any] = {}
    if name.startswith("ResponseAnalysis"):
        out["claims"] = list(case["claims"])
    elif name.startswith("ReferenceReview"):
        if "statements" in fields:
            out["statements"] = [{"text": t, "contexts": c} for t, c in case["statements"]]
        if "usefulness" in fields:
            n = len(case["record"]["retrieved_contexts"])
            out["usefulness"] = [
                {"index": i, "useful": int(i in case["useful"]), "reason": f"why {i}"}
                for i in range(1, n + 1)
            ]
    elif name.startswith("VerifySupport"):
        block = messages[-1].content.split("<claims>")[1].split("</claims>")[0]
        claims = re.findall(r'<item index="\d+">(.*?)</item>', block, flags=re.DOTALL)
        out["support"] = [
            {"claim": i, "passages": case["claims"].get(c, []), "reason": f"because {i}"}
            for i, c in enumerate(claims, start=1)
        ]
    else:
        raise AssertionError(f"unexpected schema {name}")
    return out


def run(cases: Sequence[dict[str, Any]] = CASES) -> EvaluationResult:
    """``cases`` evaluated with ``METRICS`` by the scripted judge."""
    return evaluate([c["record"] for c in cases], METRICS, judge=ScriptedJudge(answer))


@pytest.fixture(scope="session")
def llm_result() -> EvaluationResult:
    return run()


@pytest.fixture(scope="session")
def improved_result() -> EvaluationResult:
    return run(IMPROVED)


FINDINGS = [
    Finding(
        rule_id="retrieval.missed",
        area="retrieval",
        severity="high",
        title="检索漏掉相关上下文 <b>retrieval misses</b>",
        explanation="The relevant context is often not retrieved.",
        advice=["Increase top-k", "Try a hybrid retriever"],
        n_matching=1,
        n_evaluated=4,
        figures=[Figure("context_recall", 0.0, 1, 0.6667, 4)],
        sample_ids=["en-capital", "not-in-run"],
    ),
    Finding(
        rule_id="generation.unfaithful",
        area="generation",
        severity="medium",
        title="Answers add unsupported claims",
        explanation="",
        advice=["Tell the generator to answer only from the contexts"],
        n_matching=2,
        n_evaluated=4,
        figures=[Figure("faithfulness", 0.25, 2, 0.5, 4)],
        sample_ids=["zh-warranty"],
    ),
]


@pytest.fixture(scope="session")
def findings() -> list[Finding]:
    return list(FINDINGS)


def built(
    scores: dict[str, list[MetricResult]],
    *,
    direction: Direction = Direction.HIGHER_IS_BETTER,
    ids: Sequence[str] | None = None,
    texts: Sequence[str] | None = None,
) -> EvaluationResult:
    """A result made by hand: per metric, one result per sample."""
    n = len(next(iter(scores.values())))
    ids = list(ids or [f"s{i}" for i in range(n)])
    texts = list(texts or [f"question {i}" for i in range(n)])
    samples = [
        SampleResult(
            i,
            i + 1,
            ids[i],
            Sample(id=ids[i], user_input=texts[i], response=f"answer {i}"),
            {name: results[i] for name, results in scores.items()},
        )
        for i in range(n)
    ]
    return EvaluationResult(samples, [MetricInfo(name, direction) for name in scores])


def ranking(ranks: Sequence[int | None]) -> list[dict[str, Any]]:
    """Records whose single relevant id is retrieved at ``ranks`` (``None``: not retrieved), so
    that MRR is 1/rank (0 when not retrieved)."""
    records = []
    for i, rank in enumerate(ranks):
        retrieved = [f"d{i}-{j}" for j in range(1, 4)]
        relevant = retrieved[rank - 1] if rank else f"d{i}-missing"
        records.append(
            {
                "id": f"q{i}",
                "user_input": f"问题 {i}",
                "retrieved_context_ids": retrieved,
                "reference_context_ids": [relevant],
            }
        )
    return records
