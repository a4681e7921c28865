"""Scripted judge answers for the seeds' AirPods example (000_*), by the requested schema."""

import re
from typing import Any

from ragmeter.testing import ScriptedEmbeddings, ScriptedJudge, unit_vector_with_cosine

QUESTION = "AirPods Pro 2 保修多久？"
RESPONSE = "AirPods Pro 2 标准保修 1 年，自购买之日起算。如果购买 AppleCare+ 可延保至 3 年。"
REFERENCE = (
    "AirPods Pro 2 标准保修期为 1 年，自购买之日起算，覆盖非人为硬件故障，可在线申请，需保留发票。"
)
CONTEXTS = [
    "AirPods Pro 2 售后政策：标准保修期自购买之日起 1 年。",
    "扫地机器人使用手册。",
    "AirPods Pro 2 产品规格与保修范围：非人为损坏的硬件故障。",
    "电视遥控器配对说明。",
    "耳机清洁指南。",
]
CLAIMS = ["AirPods Pro 2 标准保修期为 1 年", "保修自购买之日起算", "购买 AppleCare+ 可延保至 3 年"]
STATEMENTS = ["保修期为 1 年", "自购买之日起算", "覆盖非人为硬件故障", "可在线申请", "需保留发票"]
QUESTIONS = ["退款多久到账？", "信用卡退款需要多长时间？", "退款到账时间是多少？"]
#: Which passage (1-based) supports each claim: the response's first two claims are in the
#: first passage (context 1, or the reference); AppleCare+ is nowhere. Of the reference's
#: statements the response states the first two.
SUPPORTED = {CLAIMS[0]: [1], CLAIMS[1]: [1], STATEMENTS[0]: [1], STATEMENTS[1]: [1]}
SAMPLE: dict[str, Any] = {
    "user_input": QUESTION,
    "response": RESPONSE,
    "reference": REFERENCE,
    "retrieved_contexts": CONTEXTS,
}


def answer(messages, schema):
    """The judge's answers: claims 1-2 supported by context 1, claim 3 by nothing; contexts 1
    and 3 useful; 4 of 5 reference statements found (the seeds' 0.8)."""
    name = schema.__name__
    out = {}
    if name.startswith("ReverseQuestions"):
        out |= {"questions": QUESTIONS, "noncommittal": 0}
    elif name.startswith("ResponseAnalysis"):
        if "claims" in schema.model_fields:
            out["claims"] = CLAIMS
        if "questions" in schema.model_fields:
            out |= {"questions": QUESTIONS, "noncommittal": 0}
    elif name.startswith("ReferenceReview"):
        if "statements" in schema.model_fields:
            found = [[1], [1], [3], [3], []]
            out["statements"] = [{"text": s, "contexts": c} for s, c in zip(STATEMENTS, found)]
        if "usefulness" in schema.model_fields:
            out["usefulness"] = [
                {"index": i, "useful": int(i in (1, 3)), "reason": "r"} for i in range(1, 6)
            ]
        if "entities" in schema.model_fields:
            out["entities"] = [
                {"entity": "AirPods Pro 2", "in_contexts": 1},
                {"entity": "1 年", "in_contexts": 0},
                {"entity": "发票", "in_contexts": 0},
            ]
    elif name.startswith("ContextUtilization"):
        out["usefulness"] = [
            {"index": i, "useful": int(i in (4, 5)), "reason": "r"} for i in range(1, 6)
        ]
    elif name.startswith("VerifySupport"):
        block = messages[-1].content.split("<claims>")[1].split("</claims>")[0]
        claims = re.findall(r'<item index="\d+">(.*?)</item>', block, flags=re.DOTALL)
        out["support"] = [
            {"claim": i, "passages": SUPPORTED.get(c, []), "reason": f"reason {i}"}
            for i, c in enumerate(claims, start=1)
        ]
    else:
        raise AssertionError(f"unexpected schema {name}")
    return out


def judge(**kwargs):
    return ScriptedJudge(answer, **kwargs)


def embeddings(similarities=(0.55, 0.50, 0.52)):
    vectors = {QUESTION: unit_vector_with_cosine(1.0, 1)}
    for axis, (question, cosine) in enumerate(zip(QUESTIONS, similarities), start=2):
        vectors[question] = unit_vector_with_cosine(cosine, axis)
    return ScriptedEmbeddings(vectors)
