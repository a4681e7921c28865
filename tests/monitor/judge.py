"""A scripted judge for faithfulness whose score is written in the response: "answer K of 4"
gets 4 claims of which the first K are supported, so faithfulness = K / 4; context
utilization is always 1 (the one context is used)."""

import re

from ragmeter.testing import ScriptedJudge


def answer(messages, schema):
    name = schema.__name__
    text = messages[-1].content
    if name.startswith("ResponseAnalysis"):
        k = int(re.search(r"answer (\d) of 4", text).group(1))
        return {"claims": [f"claim {i} {'yes' if i <= k else 'no'}" for i in range(1, 5)]}
    if name.startswith("VerifySupport"):
        block = text.split("<claims>")[1].split("</claims>")[0]
        claims = re.findall(r'<item index="\d+">(.*?)</item>', block, flags=re.DOTALL)
        return {
            "support": [
                {"claim": i, "passages": [1] if c.endswith("yes") else [], "reason": "r"}
                for i, c in enumerate(claims, start=1)
            ]
        }
    if name.startswith("ContextUtilization"):  # the one context is always used: score 1
        return {"usefulness": [{"index": 1, "useful": 1, "reason": "r"}]}
    raise AssertionError(f"unexpected schema {name}")


def judge():
    return ScriptedJudge(answer)


def row(i, k, **extra):
    """Sample ``i`` whose faithfulness is ``k / 4``."""
    return {
        "id": f"s{i}",
        "user_input": f"question {i}?",
        "response": f"answer {k} of 4",
        "retrieved_contexts": [f"context {i}"],
        **extra,
    }
