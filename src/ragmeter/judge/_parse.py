"""The one place judge output is parsed: tolerant JSON extraction, then schema validation."""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from ragmeter.judge._errors import JudgeOutputError
from ragmeter.judge._types import OutputT

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def _balanced_objects(text: str) -> list[str]:
    """Every top-level ``{...}`` or ``[...]`` span, respecting strings and escapes."""
    spans: list[str] = []
    depth, start, in_string, escaped = 0, -1, False, False
    closing = {"{": "}", "[": "]"}
    stack: list[str] = []
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"' and depth > 0:
            in_string = True
        elif char in closing:
            if depth == 0:
                start = index
            stack.append(closing[char])
            depth += 1
        elif depth > 0 and char == stack[-1]:
            stack.pop()
            depth -= 1
            if depth == 0:
                spans.append(text[start : index + 1])
    return spans


def extract_json(text: str) -> Any:
    """The JSON value in a model's answer: plain JSON, fenced, or embedded in prose.

    >>> extract_json('Sure! ```json\\n{"verdict": 1}\\n``` done')
    {'verdict': 1}
    >>> extract_json('The answer is {"claims": ["a {b}", "c"]}.')
    {'claims': ['a {b}', 'c']}
    """
    stripped = text.strip()
    candidates = [stripped]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    candidates += _balanced_objects(text)
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise JudgeOutputError("no JSON value found in the judge's answer", raw=text)


def parse_output(text: str, schema: type[OutputT]) -> OutputT:
    """Validate the judge's answer against ``schema``; raise :class:`JudgeOutputError` with a
    message a repair re-ask can quote.

    >>> class Verdict(BaseModel):
    ...     verdict: int
    >>> parse_output('{"verdict": 1}', Verdict)
    Verdict(verdict=1)
    """
    value = extract_json(text)
    if isinstance(value, list) and len(schema.model_fields) == 1:
        # Small models often answer with the bare list for a one-field object.
        value = {next(iter(schema.model_fields)): value}
    try:
        return schema.model_validate(value)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in error.errors()[:5]
        )
        raise JudgeOutputError(f"answer does not match the schema: {problems}", raw=text) from None


def schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent to endpoints and included in cache keys (a fresh copy)."""
    return copy.deepcopy(_schema_of(schema))


@functools.lru_cache(maxsize=256)
def _schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    # Generating it costs about a millisecond; every call of a step asks for the same one.
    return schema.model_json_schema()


_YES = {"1", "yes", "true", "是"}
_NO = {"0", "no", "false", "否"}


def verdict_probabilities(logprobs: list[dict[str, Any]] | None) -> list[float] | None:
    """P(yes) for each binary verdict token in an answer, from OpenAI-style ``logprobs.content``.

    A verdict token is one whose text (stripped, lower case) is 0/1, yes/no or true/false;
    its P(yes) is the yes-mass over the yes+no mass among the top alternatives.

    >>> import math
    >>> content = [{"token": '{"verdicts": [', "top_logprobs": []},
    ...            {"token": "1", "top_logprobs": [{"token": "1", "logprob": math.log(0.8)},
    ...                                            {"token": "0", "logprob": math.log(0.2)}]}]
    >>> [round(p, 3) for p in verdict_probabilities(content)]
    [0.8]
    """
    if not logprobs:
        return None
    probabilities: list[float] = []
    for entry in logprobs:
        token = str(entry.get("token", "")).strip().strip('"').lower()
        if token not in _YES and token not in _NO:
            continue
        alternatives = entry.get("top_logprobs") or [entry]
        yes = no = 0.0
        for alternative in alternatives:
            text = str(alternative.get("token", "")).strip().strip('"').lower()
            mass = math.exp(float(alternative.get("logprob", -math.inf)))
            if text in _YES:
                yes += mass
            elif text in _NO:
                no += mass
        if yes + no > 0:
            probabilities.append(yes / (yes + no))
        else:
            probabilities.append(1.0 if token in _YES else 0.0)
    return probabilities or None


def enum_distribution(
    logprobs: list[dict[str, Any]] | None, schema: dict[str, Any]
) -> dict[str, float] | None:
    """P(value) over the allowed values of the schema's first enumerated field (a label or
    a rubric score), from the top alternatives at the token where that value starts.

    ``None`` without token probabilities, without an enumerated field, or when the values
    cannot be told apart by their first token.

    >>> import math
    >>> schema = {"properties": {"reason": {"type": "string"}, "score": {"enum": [1, 2, 3]}}}
    >>> content = [{"token": '{"reason": "ok", "score": ', "top_logprobs": []},
    ...            {"token": "3", "top_logprobs": [{"token": "3", "logprob": math.log(0.6)},
    ...                                            {"token": "2", "logprob": math.log(0.3)}]}]
    >>> {k: round(v, 3) for k, v in enum_distribution(content, schema).items()}
    {'1': 0.0, '2': 0.333, '3': 0.667}
    """
    if not logprobs:
        return None
    field, values = next(
        (
            (name, [str(v) for v in spec["enum"]])
            for name, spec in (schema.get("properties") or {}).items()
            if isinstance(spec, dict) and spec.get("enum")
        ),
        (None, []),
    )
    if field is None:
        return None
    seen = ""
    for entry in logprobs:
        token = str(entry.get("token", ""))
        before = seen
        seen += token
        if f'"{field}"' not in before or not token.strip().strip('"'):
            continue
        start = token.strip().strip('"')
        if not any(v.startswith(start) for v in values):
            continue
        mass = dict.fromkeys(values, 0.0)
        for alternative in entry.get("top_logprobs") or [entry]:
            text = str(alternative.get("token", "")).strip().strip('"')
            matches = [v for v in values if text and v.startswith(text)]
            if len(matches) > 1:
                return None  # "pass" and "partial" both start with "pa"
            if matches:
                mass[matches[0]] += math.exp(float(alternative.get("logprob", -math.inf)))
        total = sum(mass.values())
        return {v: m / total for v, m in mass.items()} if total > 0 else None
    return None


def schema_instruction(schema: dict[str, Any]) -> str:
    """The instruction that carries the output schema when the endpoint does not enforce it."""
    return (
        "Answer with one JSON object only, no prose and no code fences, valid against this "
        f"JSON schema:\n{json.dumps(schema, ensure_ascii=False)}"
    )


def repair_request(
    conversation: list[dict[str, str]], answer: str, error: Exception, schema: dict[str, Any]
) -> list[dict[str, str]]:
    """The one repair re-ask: the conversation, the invalid answer, and what was wrong."""
    return [
        *conversation,
        {"role": "assistant", "content": answer},
        {
            "role": "user",
            "content": f"That answer is invalid ({error}). " + schema_instruction(schema),
        },
    ]
