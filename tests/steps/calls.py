"""Every judge call the steps make for a set of scenarios, recorded with what makes its cache
key (messages, schema, prompt version, salt): the planner must keep making exactly these.

``python -m tests.steps.calls > tests/steps/calls_current.json`` wrote the fixture that
``test_calls_unchanged.py`` compares against (first from commit ae19e48's code; again for
issue 35's reverse-generated questions). Messages and schemas are kept as digests (their
start is kept readable).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, create_model

from ragmeter import Sample
from ragmeter.judge import BinaryVerdict, JudgeError, Message
from ragmeter.steps import Need, StepRunner
from ragmeter.testing import ScriptedJudge
from tests.metrics.llm import scripts

ENGLISH = {
    "user_input": "How long is the AirPods Pro 2 warranty?",
    "response": "One year from purchase. AppleCare+ extends it to three years.",
    "reference": "The AirPods Pro 2 warranty lasts one year from the date of purchase.",
    "retrieved_contexts": [
        "AirPods Pro 2 warranty: one year from the date of purchase.",
        "Robot vacuum manual.",
    ],
    "reference_contexts": ["The warranty lasts one year.", "Keep the receipt."],
}
NO_CONTEXTS = {**scripts.SAMPLE, "retrieved_contexts": []}


@dataclass(frozen=True)
class Politeness:
    """A custom prompt as the steps see one (``PromptSpec`` has the same three members)."""

    key: str = "custom:politeness@1"

    def render(self, sample: Sample, language: str) -> list[Message]:
        return [Message("system", f"Rate politeness ({language})."), Message("user", "x")]

    def schema(self) -> type[BaseModel]:
        return _politeness_schema()


_SCHEMAS: dict[str, type[BaseModel]] = {}


def _politeness_schema() -> type[BaseModel]:
    if "p" not in _SCHEMAS:
        _SCHEMAS["p"] = create_model("Politeness", label=(str, ...))
    return _SCHEMAS["p"]


EVERY_NEED = [
    Need("response_claims"),
    Need("questions", n=3),
    Need("statements", against=("contexts",)),
    Need("usefulness_reference"),
    Need("usefulness_response"),
    Need("usefulness_question"),
    Need("entities"),
    Need("support", claims_of="response", against=("contexts",)),
    Need("support", claims_of="response", against=("reference", "contexts")),
    Need("support", claims_of="response", against=("reference",)),
    Need("support", claims_of="reference", against=("response",)),
    Need("custom", prompt=Politeness()),
]
STANDARD = [
    Need("response_claims"),
    Need("support", claims_of="response", against=("contexts",)),
    Need("questions", n=3),
    Need("usefulness_reference"),
    Need("statements", against=("contexts",)),
]


def batched_answer(messages: Any, schema: type[BaseModel]) -> dict[str, Any]:
    name = schema.__name__
    if name == "Politeness":
        return {"label": "polite"}
    if name.startswith("ContextRelevance"):
        n = messages[-1].content.count("<item index=")
        return {"usefulness": [{"index": i, "useful": 1, "reason": "r"} for i in range(1, n + 1)]}
    if name.startswith(
        ("ResponseAnalysis", "ReverseQuestions", "ReferenceReview", "ContextUtilization")
    ):
        out = scripts.answer(messages, schema)
        if "claims" in out and ENGLISH["response"] in messages[-1].content:
            # the English response's own claims (claims not from the response are left out)
            out["claims"] = ["One year from purchase.", "AppleCare+ extends it to three years."]
        if "usefulness" in out:  # as many verdicts as there are contexts
            n = messages[-1].content.count("<item index=")
            out["usefulness"] = out["usefulness"][:n]
        return out
    if name.startswith("VerifySupport"):
        block = messages[-1].content.split("<claims>")[1].split("</claims>")[0]
        n = len(re.findall(r'<item index="\d+">', block))
        return {"support": [{"claim": i, "passages": [1], "reason": "r"} for i in range(1, n + 1)]}
    raise AssertionError(name)


def verdict_answer(messages: Any, schema: type[BaseModel]) -> dict[str, Any]:
    if schema is BinaryVerdict:
        return {"verdict": int("AirPods" in messages[-1].content)}
    return batched_answer(messages, schema)


def flaky(answer: Any) -> Any:
    """The first answer of each kind of call leaves a verdict out (the check re-asks)."""
    seen: set[str] = set()

    def reply(messages: Any, schema: type[BaseModel]) -> dict[str, Any]:
        out = answer(messages, schema)
        if schema.__name__ not in seen and schema is not BinaryVerdict:
            seen.add(schema.__name__)
            for key in ("usefulness", "support"):
                if out.get(key):
                    out[key] = out[key][:-1]
        return out

    return reply


def short(answer: Any) -> Any:
    """Every answer leaves a verdict out: the re-ask does not help either."""

    def reply(messages: Any, schema: type[BaseModel]) -> dict[str, Any]:
        out = answer(messages, schema)
        for key in ("usefulness", "support"):
            if out.get(key):
                out[key] = out[key][:-1]
        return out

    return reply


def failing(prefix: str, answer: Any) -> Any:
    """Calls whose schema starts with ``prefix`` fail."""

    def reply(messages: Any, schema: type[BaseModel]) -> Any:
        if schema.__name__.startswith(prefix):
            return JudgeError("the judge is down")
        return answer(messages, schema)

    return reply


def _digest(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class RecordingJudge(ScriptedJudge):
    """Records what makes each call's cache key, cached calls included."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.keys: list[dict[str, Any]] = []

    async def generate(
        self, messages, schema, *, prompt_version, scope=None, sample_id=None, salt=""
    ):  # type: ignore[no-untyped-def]
        self.keys.append(
            {
                "messages": _digest([[m.role, m.content] for m in messages]),
                "system": messages[0].content[:60],
                "data": messages[-1].content[:200],
                "schema": schema.__name__,
                "json_schema": _digest(schema.model_json_schema()),
                "prompt_version": prompt_version,
                "scope": scope,
                "sample_id": sample_id,
                "salt": salt,
            }
        )
        return await super().generate(
            messages,
            schema,
            prompt_version=prompt_version,
            scope=scope,
            sample_id=sample_id,
            salt=salt,
        )


#: name -> (sample, needs, batched, answer, runner options)
SCENARIOS: dict[str, tuple[dict[str, Any], list[Need], bool, Any, dict[str, Any]]] = {
    "standard": (scripts.SAMPLE, STANDARD, True, batched_answer, {}),
    "every_need": (scripts.SAMPLE, EVERY_NEED, True, batched_answer, {}),
    "every_need_en": (ENGLISH, EVERY_NEED, True, batched_answer, {}),
    "every_need_forced_en": (scripts.SAMPLE, EVERY_NEED, True, batched_answer, {"language": "en"}),
    "every_need_repeat": (scripts.SAMPLE, EVERY_NEED, True, batched_answer, {"repeat": 2}),
    "every_need_no_contexts": (NO_CONTEXTS, EVERY_NEED, True, batched_answer, {}),
    "every_need_reask": (scripts.SAMPLE, EVERY_NEED, True, flaky(batched_answer), {}),
    "every_need_reask_repeat": (
        scripts.SAMPLE,
        EVERY_NEED,
        True,
        flaky(batched_answer),
        {"repeat": 1},
    ),
    "every_need_short": (scripts.SAMPLE, EVERY_NEED, True, short(batched_answer), {}),
    "claims_fail": (
        scripts.SAMPLE,
        EVERY_NEED,
        True,
        failing("ResponseAnalysis", batched_answer),
        {},
    ),
    "statements_fail": (
        scripts.SAMPLE,
        EVERY_NEED,
        False,
        failing("ReferenceReview", verdict_answer),
        {},
    ),
    "verdicts_fail": (
        scripts.SAMPLE,
        EVERY_NEED,
        False,
        failing("BinaryVerdict", verdict_answer),
        {},
    ),
    "verdicts_standard": (scripts.SAMPLE, STANDARD, False, verdict_answer, {}),
    "verdicts_every_need": (scripts.SAMPLE, EVERY_NEED, False, verdict_answer, {}),
    "verdicts_every_need_en": (ENGLISH, EVERY_NEED, False, verdict_answer, {}),
    "verdicts_per_passage": (
        ENGLISH,
        [
            Need("support", claims_of="response", against=("contexts",), per_passage=True),
            Need("support", claims_of="response", against=("reference_contexts",)),
        ],
        False,
        verdict_answer,
        {},
    ),
    "verdicts_no_contexts": (NO_CONTEXTS, EVERY_NEED, False, verdict_answer, {}),
    "statements_only": (scripts.SAMPLE, [Need("statements")], True, batched_answer, {}),
    "reference_support_only": (
        ENGLISH,
        [Need("support", claims_of="reference", against=("response",))],
        True,
        batched_answer,
        {},
    ),
}


def record(name: str) -> dict[str, Any]:
    """The calls of scenario ``name`` (in a stable order) and the facts they gave."""
    sample, needs, batched, answer, options = SCENARIOS[name]
    judge = RecordingJudge(answer)
    judge.supports_batched_verdicts = batched
    runner = StepRunner(judge, sample_id="s1", **options)
    facts = asyncio.run(runner.gather(Sample(**sample), needs))
    calls = sorted(judge.keys, key=lambda k: json.dumps(k, sort_keys=True, ensure_ascii=False))
    found = {
        "response_claims": facts.response_claims,
        "questions": facts.questions,
        "noncommittal": facts.noncommittal,
        "statements": [[s.text, list(s.contexts)] for s in facts.statements or []],
        "usefulness": [
            [v.useful for v in getattr(facts, f"usefulness_{t}") or []]
            for t in ("reference", "response", "question")
        ],
        "entities": [[e.text, e.in_contexts] for e in facts.entities or []],
        "support": sorted(
            [repr(key), [list(row) for row in value.matrix], list(value.passages)]
            for key, value in facts.support.items()
        ),
        "custom": sorted(facts.custom),
        "errors": dict(sorted(facts.errors.items())),
        "prompt_versions": sorted(facts.prompt_versions),
        "calls": facts.usage.calls,
    }
    return {"calls": calls, "facts": found}


if __name__ == "__main__":
    json.dump({name: record(name) for name in SCENARIOS}, sys.stdout, ensure_ascii=False, indent=1)
